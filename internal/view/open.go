package view

import (
	"context"
	"errors"
	"os/exec"
	"time"
)

// ErrNoOpener says the system has no opener (xdg-open) to show the page
// with: the address printed is the way in.
var ErrNoOpener = errors.New("no xdg-open on this system")

// Open asks the system's opener to show url in a browser. xdg-open hands
// the address to the browser and returns; it is waited for (at most 10 s)
// so that it never outlives reins. The browser it starts is the user's
// own and is not reins's to stop.
func Open(ctx context.Context, url string) error {
	p, err := exec.LookPath("xdg-open")
	if err != nil {
		return ErrNoOpener
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, p, url)
	cmd.WaitDelay = time.Second
	return cmd.Run()
}
