package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"
)

func TestPromptWithPiped(t *testing.T) {
	var errb bytes.Buffer
	s := &streams{in: strings.NewReader("a\n```go\nx\n```\n"), err: &errb}
	got, err := runPrompt(s, []string{"summarize", "this"})
	if err != nil {
		t.Fatal(err)
	}
	// The fence outgrows any backtick run inside the text.
	if want := "summarize this\n\n````\na\n```go\nx\n```\n````"; got != want {
		t.Errorf("prompt = %q, want %q", got, want)
	}

	// Over the bound: cut, and said so in the prompt and on stderr.
	big := strings.Repeat("x", maxPiped+10)
	s = &streams{in: strings.NewReader(big), err: &errb}
	got, err = runPrompt(s, []string{"p"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(got, "[reins: the piped input was cut at its first 1024 KiB]") || strings.Count(got, "x") != maxPiped {
		t.Errorf("cut prompt: %d x, ends %q", strings.Count(got, "x"), got[len(got)-60:])
	}
	if !strings.Contains(errb.String(), "piped input is over 1024 KiB") {
		t.Errorf("stderr: %q", errb.String())
	}

	// Nothing piped: the prompt alone.
	s = &streams{in: strings.NewReader(" \n"), err: &errb}
	if got, _ := runPrompt(s, []string{"p"}); got != "p" {
		t.Errorf("empty stdin: %q", got)
	}
}

// TestPromptPipeNeverWritten: a pipe left open with no writer writing
// (a CI step, an editor task) does not hang the run: after the wait it
// runs without stdin and says so. The wait starts only then: a writer
// that starts in time is waited for to its end.
func TestPromptPipeNeverWritten(t *testing.T) {
	old := pipedWait
	pipedWait = 50 * time.Millisecond
	defer func() { pipedWait = old }()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var errb bytes.Buffer
	got, err := runPrompt(&streams{in: r, err: &errb}, []string{"p"})
	w.Close() // lets the reader goroutine end
	if err != nil || got != "p" || !strings.Contains(errb.String(), "nothing arrived on stdin") {
		t.Errorf("got %q, %v, stderr %q", got, err, errb.String())
	}

	r2, w2, _ := os.Pipe()
	defer r2.Close()
	w2.Write([]byte("first ")) // in the pipe before the wait starts
	go func() {
		// The rest arrives after the wait would have run out.
		time.Sleep(4 * pipedWait)
		w2.Write([]byte("second"))
		w2.Close()
	}()
	got, err = runPrompt(&streams{in: r2, err: &errb}, []string{"p"})
	if err != nil || !strings.Contains(got, "first second") {
		t.Errorf("slow writer: %q, %v", got, err)
	}
}
