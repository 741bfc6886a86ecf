package scrollback

import (
	"io"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type quitAtOnce struct{}

func (quitAtOnce) Init() tea.Cmd                       { return tea.Quit }
func (quitAtOnce) Update(tea.Msg) (tea.Model, tea.Cmd) { return quitAtOnce{}, nil }
func (quitAtOnce) View() tea.View                      { return tea.NewView("") }

// TestPrinterAfterExit: text committed as the program stops never
// blocks the printer (Run waits for it before closing the session).
func TestPrinterAfterExit(t *testing.T) {
	prog := tea.NewProgram(quitAtOnce{}, tea.WithInput(strings.NewReader("")), tea.WithOutput(io.Discard), tea.WithoutSignals())
	if _, err := prog.Run(); err != nil {
		t.Fatal(err)
	}
	pr := New()
	pr.Push("late line")
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		pr.Loop(prog, done)
	}()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Millisecond) {
		pr.mu.Lock()
		n := len(pr.text)
		pr.mu.Unlock()
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the printer never took the line")
		}
	}
	close(done)
	select {
	case <-stopped:
	case <-time.After(30 * time.Second):
		t.Fatal("the printer is stuck printing to a program that has stopped")
	}
}
