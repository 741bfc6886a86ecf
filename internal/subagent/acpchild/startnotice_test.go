package acpchild

import (
	"strings"
	"testing"
)

func TestStartNotice(t *testing.T) {
	long := strings.Repeat("é", 300)
	for _, tt := range []struct {
		name, tail, log, want string
	}{
		{"last line", "a\nboom: missing config\n\n", "/h/logs/reins.log", "its stderr said: boom: missing config; details in /h/logs/reins.log"},
		{"escaped", "\x1b]0;title\x07x\r\n", "", `its stderr said: \x1b]0;title\x07x`},
		{"nothing said", "", "/l", "it wrote nothing on stderr; details in /l"},
		{"cut", long, "", "its stderr said: " + strings.Repeat("é", 100) + "…"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := startNotice(tt.tail, tt.log); got != tt.want {
				t.Errorf("startNotice = %q, want %q", got, tt.want)
			}
		})
	}
}
