package compact

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/session"
)

func user(s string) llm.Message {
	return llm.Message{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockText, Text: s}}}
}

func said(s string) llm.Message {
	return llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{{Type: llm.BlockText, Text: s}}}
}

func call(id string) llm.Message {
	return llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{{Type: llm.BlockToolCall, ID: id, Name: "read", Arguments: `{"path":"x"}`}}}
}

func result(id, s string) llm.Message {
	return llm.Message{Role: llm.RoleTool, Content: []llm.Block{{Type: llm.BlockToolResult, CallID: id, Content: s}}}
}

func raws(h []llm.Message) []int {
	out := make([]int, len(h))
	for i, m := range h {
		out[i] = Raw(m)
	}
	return out
}

// loop is a first prompt and n steps of one call and its result each.
func loop(n int) []llm.Message {
	h := []llm.Message{user("do it")}
	for i := range n {
		id := "c" + string(rune('a'+i%26))
		h = append(h, call(id), result(id, strings.Repeat("r", 400)))
	}
	return h
}

func TestChoose(t *testing.T) {
	big := strings.Repeat("x", 4000)
	tests := []struct {
		name   string
		h      []llm.Message
		keep   int
		want   Range
		wantOK bool
	}{
		{"empty", nil, 100, Range{}, false},
		{"no user message", []llm.Message{said("hi")}, 0, Range{}, false},
		{"one step only", loop(1), 0, Range{}, false},
		{"two steps keep nothing: the last step stays", loop(2), 0, Range{1, 3}, true},
		{"keep covers everything", loop(5), 1 << 20, Range{}, false},
		// Each step is ~2 + ~104 tokens; 250 keeps two steps.
		{"keep two steps", loop(10), 250, Range{1, 17}, true},
		{"system-like prefix before the first user message stays", append([]llm.Message{said("preface")}, loop(3)...), 0, Range{2, 6}, true},
		{"a huge last result is still kept whole", append(loop(3), call("z"), result("z", big)), 10, Range{1, 7}, true},
		{"cut never lands on a tool result", []llm.Message{user("p"), call("a"), result("a", big), result("a2", big), said("done"), user("more")}, 1, Range{1, 5}, true},
		{"only an earlier summary: nothing to gain", []llm.Message{user("p"), session.SummaryMessage("s"), call("a"), result("a", "r")}, 0, Range{}, false},
		{"an earlier summary is folded in", []llm.Message{user("p"), session.SummaryMessage("s"), call("a"), result("a", "r"), call("b"), result("b", "r")}, 0, Range{1, 4}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var e Estimator
			got, ok := Choose(tt.h, raws(tt.h), &e, tt.keep)
			if ok != tt.wantOK || got != tt.want {
				t.Fatalf("Choose = %v %v, want %v %v", got, ok, tt.want, tt.wantOK)
			}
			if !ok {
				return
			}
			if tt.h[got.To].Role == llm.RoleTool {
				t.Fatalf("kept part starts with a tool result")
			}
			if tt.h[got.From-1].Role != llm.RoleUser {
				t.Fatalf("the first user message is replaced")
			}
		})
	}
}

func TestEstimatorCalibrates(t *testing.T) {
	var e Estimator
	if got := e.Tokens(100); got != 100 {
		t.Fatalf("uncalibrated Tokens(100) = %d", got)
	}
	e.Calibrate(100, 150)
	if got := e.Tokens(100); got != 150 {
		t.Fatalf("after 100→150: Tokens(100) = %d", got)
	}
	// Reports that cannot be a real measure leave the estimate alone.
	for _, rep := range []int{0, -5, 1, 100000} {
		e.Calibrate(100, rep)
		if got := e.Tokens(100); got != 150 {
			t.Fatalf("report %d moved the estimate to %d", rep, got)
		}
	}
	e.Calibrate(0, 100)
	if got := e.Tokens(100); got != 150 {
		t.Fatalf("raw 0 moved the estimate to %d", got)
	}
}

func TestCut(t *testing.T) {
	tests := []struct {
		name string
		s    string
		max  int
	}{
		{"fits", "hello", 5},
		{"no limit", strings.Repeat("a", 100), 0},
		{"ascii", strings.Repeat("a", 1000), 100},
		{"multibyte at the edges", strings.Repeat("é€𝄞", 300), 101},
		{"invalid utf-8 stays as it was", strings.Repeat("\xff", 500), 50},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Cut(tt.s, tt.max)
			if tt.max <= 0 || len(tt.s) <= tt.max {
				if got != tt.s {
					t.Fatalf("changed a text that fits")
				}
				return
			}
			if !strings.Contains(got, "bytes cut from the middle") {
				t.Fatalf("no marker in %q", got)
			}
			if len(got) > tt.max+len(cutMarker)+10 {
				t.Fatalf("len %d, over %d plus the marker", len(got), tt.max)
			}
			if utf8.ValidString(tt.s) && !utf8.ValidString(got) {
				t.Fatalf("cut split a UTF-8 sequence")
			}
		})
	}
}

func TestCutToolResults(t *testing.T) {
	small := result("a", "short")
	if got := CutToolResults(small, 10); &got.Content[0] != &small.Content[0] {
		t.Fatalf("an unchanged message was copied")
	}
	big := result("a", strings.Repeat("z", 1000))
	got := CutToolResults(big, 100)
	if len(got.Content[0].Content) >= 1000 || got.Content[0].CallID != "a" {
		t.Fatalf("not cut: %d bytes, call %q", len(got.Content[0].Content), got.Content[0].CallID)
	}
	if len(big.Content[0].Content) != 1000 {
		t.Fatalf("the original message was modified")
	}
}

func TestToolResultLimit(t *testing.T) {
	tests := []struct{ max, window, want int }{
		{1000, 0, 1000},
		{1000, 100000, 1000},
		{100000, 8000, 8000},
		{0, 8000, 8000},
		{0, 0, 0},
	}
	for _, tt := range tests {
		if got := ToolResultLimit(tt.max, tt.window); got != tt.want {
			t.Errorf("ToolResultLimit(%d, %d) = %d, want %d", tt.max, tt.window, got, tt.want)
		}
	}
}

func TestRequestIsBounded(t *testing.T) {
	h := []llm.Message{session.SummaryMessage("EARLIER-SUMMARY")}
	for i := range 200 {
		id := "c" + strings.Repeat("x", i%3)
		h = append(h, call(id), result(id, "OLDEST-"+strings.Repeat("y", 3000)))
	}
	h = append(h, said("NEWEST"))
	var e Estimator
	b := BudgetFor(8000, 0)
	req := Request("m", h, &e, b)
	if len(req.Tools) != 0 || req.MaxTokens != b.Output || req.Model != "m" {
		t.Fatalf("request = %+v", req)
	}
	text := req.Messages[0].Text()
	if got := e.Tokens(RawText(text)); got > b.Input+200 {
		t.Fatalf("transcript is %d tokens, budget %d", got, b.Input)
	}
	for _, want := range []string{"EARLIER-SUMMARY", "NEWEST", "earlier messages omitted"} {
		if !strings.Contains(text, want) {
			t.Errorf("transcript lacks %q", want)
		}
	}
}

func TestBudgetFor(t *testing.T) {
	tests := []struct{ window, maxOut, in, out int }{
		{8000, 0, 5000, 1000},
		{200000, 0, 141808, 8192},
		{200000, 4096, 145904, 4096},
		{1000, 0, 494, 256},
		{0, 0, 256, 256},
	}
	for _, tt := range tests {
		if got := BudgetFor(tt.window, tt.maxOut); got != (Budget{tt.in, tt.out}) {
			t.Errorf("BudgetFor(%d, %d) = %+v, want {%d %d}", tt.window, tt.maxOut, got, tt.in, tt.out)
		}
	}
}
