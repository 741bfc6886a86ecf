package tool

import "testing"

// TestRefusal (issue 48 item 4): a refusal the mode made names the mode
// and what changes it; every refusal the gate gives is one IsRefusal
// recognizes, and nothing else is.
func TestRefusal(t *testing.T) {
	for _, c := range []struct {
		ans  Answer
		want string
	}{
		{Answer{}, "the write call was not approved"},
		{Answer{Note: "use docs/"}, "the write call was not approved. The user says instead: use docs/"},
		{Answer{Mode: "read-only", How: "Shift-Tab in the terminal"}, "the write call was refused: the session is in read-only mode, so it was refused without asking anyone; the user can change the mode with Shift-Tab in the terminal"},
	} {
		r := Refusal("write", c.ans)
		if !r.IsError || r.Content != c.want {
			t.Errorf("%+v: %+v, want %q", c.ans, r, c.want)
		}
		if !IsRefusal("write", r.Content) {
			t.Errorf("IsRefusal(%q) = false", r.Content)
		}
		if IsRefusal("bash", r.Content) {
			t.Errorf("IsRefusal(bash, %q) = true", r.Content)
		}
	}
	for _, s := range []string{"write x: permission denied", "", "tool writer is not permitted"} {
		if IsRefusal("write", s) {
			t.Errorf("IsRefusal(%q) = true", s)
		}
	}
	if !IsRefusal("write", "the write call is denied by the permission rule write(*)") {
		t.Error("a rule's denial is a refusal")
	}
}

// TestCeilingRefusal (issue 48 item 4): a tool above the session's
// --permission is refused with the mode named and the flag that lifts it,
// and the refusal is one IsRefusal recognizes.
func TestCeilingRefusal(t *testing.T) {
	env := newEnv(t, ReadOnly)
	res := call(t, env, "write", map[string]any{"path": "a.txt", "content": "x"})
	want := "tool write is not permitted in read-only mode (--permission read-only), so it was refused without asking anyone; the user can allow it by starting reins with --permission workspace-write"
	if !res.IsError || res.Content != want {
		t.Errorf("%+v, want %q", res, want)
	}
	if !IsRefusal("write", res.Content) {
		t.Error("not recognized as a refusal")
	}
}
