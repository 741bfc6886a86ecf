package cli

// Presize grows the calling goroutine's stack once, while the stack is
// shallow. Call it first in the RunE of a command that runs turns on its
// own goroutine (`reins run`).
//
// What a reins process costs in memory is mostly pages of its own binary:
// the kernel maps the 64 KiB around every page the process reads. A
// goroutine starts with a small stack and, each time a call needs more,
// doubles it, copying it and walking every frame on it; each walk reads the
// function tables of every function on the stack, scattered through the
// binary. The main goroutine of `reins run` grew four times, deep inside
// JSON and HTTP calls, and those walks mapped 576 KiB. Grown once here it
// has room for the rest of the run (BENCHMARKS.md, "Stack walks"). Not in
// main: a command that only prints, like `reins version`, would pay for a
// walk it never needed (0.2 MiB).
//
// Its frame holds presizeBytes, so its prologue grows the stack to fit
// before it runs; keep stops the compiler from dropping the array.
//
//go:noinline
func Presize() {
	var b [presizeBytes]byte
	keep(b[:])
}

// presizeBytes is the frame Presize asks for: with what is already on the
// stack the runtime rounds the stack up to 32 KiB, which the main
// goroutine of a two-step `reins run` stays within; a run that needs more
// grows as usual. The frame is zeroed, so each KiB of it is memory the
// process touches (16 rather than 32 KiB: four pages fewer, the same
// walks saved).
const presizeBytes = 16 << 10

//go:noinline
func keep([]byte) {}
