package main

import "github.com/reinsdev/reins/internal/cli"

// isTerminal reports whether v (a stream: stdin, stdout, stderr) is a
// terminal (cli.IsTerminal: the terminal ioctl, not a character device).
func isTerminal(v any) bool { return cli.IsTerminal(v) }
