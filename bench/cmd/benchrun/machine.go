//go:build linux

package main

import (
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strings"
	"syscall"
	"time"
)

func signalNotify(ch chan os.Signal) { signal.Notify(ch, os.Interrupt, syscall.SIGTERM) }

// machine describes the host in one line: CPU, cores, memory, load,
// toolchains and the date, so a table is never read without its context.
func machine() string {
	cpu := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "model name") {
				_, v, _ := strings.Cut(l, ":")
				cpu = strings.TrimSpace(v)
				break
			}
		}
	}
	mem := ""
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		l, _, _ := strings.Cut(string(b), "\n")
		mem = strings.Join(strings.Fields(l)[1:], " ")
	}
	load := ""
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		f := strings.Fields(string(b))
		if len(f) >= 3 {
			load = strings.Join(f[:3], " ")
		}
	}
	node := "none"
	if out, err := exec.Command("node", "--version").Output(); err == nil {
		node = strings.TrimSpace(string(out))
	}
	return "machine: " + cpu + ", " + itoa(runtime.NumCPU()) + " cores, MemTotal " + mem +
		"; load average at start " + load + "; " + runtime.Version() + " (benchrun), node " + node +
		"; " + time.Now().UTC().Format("2006-01-02 15:04 UTC")
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}
