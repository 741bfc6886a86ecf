package tinyinit

import (
	"bytes"
	"debug/elf"
	"testing"
)

// TestImageIsAnELF: debug/elf reads the image as a static executable of
// this machine whose one loaded segment holds the entry point and is not
// writable, with a non-executable stack.
func TestImageIsAnELF(t *testing.T) {
	for name, img := range map[string][]byte{"init": Image(), "watch": WatchImage()} {
		t.Run(name, func(t *testing.T) { isELF(t, img) })
	}
}

func isELF(t *testing.T, img []byte) {
	if img == nil {
		t.Skip("no tiny init on this architecture: the sandbox runs its Go init (tinyinit.go)")
	}
	if len(img) > 2048 {
		t.Errorf("the image is %d bytes; the init should be a few hundred", len(img))
	}
	f, err := elf.NewFile(bytes.NewReader(img))
	if err != nil {
		t.Fatal(err)
	}
	if f.Type != elf.ET_EXEC || f.Machine != elf.Machine(machine) || f.Class != elf.ELFCLASS64 {
		t.Errorf("type %v machine %v class %v", f.Type, f.Machine, f.Class)
	}
	var load, stack int
	for _, p := range f.Progs {
		switch p.Type {
		case elf.PT_LOAD:
			load++
			if f.Entry < p.Vaddr || f.Entry >= p.Vaddr+p.Memsz {
				t.Errorf("entry %#x outside the segment %#x+%#x", f.Entry, p.Vaddr, p.Memsz)
			}
			if p.Flags&elf.PF_W != 0 {
				t.Errorf("the code is writable: %v", p.Flags)
			}
		case elf.PT_GNU_STACK:
			stack++
			if p.Flags&elf.PF_X != 0 {
				t.Errorf("the stack is executable: %v", p.Flags)
			}
		}
	}
	if load != 1 || stack != 1 {
		t.Errorf("%d loaded segments and %d stack headers", load, stack)
	}
}
