// Command toolbench runs one reins built-in tool call in-process, the way
// the agent loop does, and prints the size of its result: the reins side of
// bench/search.sh (grep and glob against ripgrep).
//
//	toolbench -C WORKSPACE TOOL 'JSON-ARGS'
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime/pprof"
	"strings"

	"github.com/reinsdev/reins/internal/tool"
)

func main() {
	dir := flag.String("C", ".", "workspace")
	full := flag.Bool("full", false, "print the whole result")
	cpu := flag.String("cpuprofile", "", "write a CPU profile to `FILE`")
	flag.Parse()
	if flag.NArg() != 2 {
		fmt.Fprintln(os.Stderr, "usage: toolbench -C WORKSPACE TOOL 'JSON-ARGS'")
		os.Exit(2)
	}
	if *cpu != "" {
		f, err := os.Create(*cpu)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	env := &tool.Env{Workspace: *dir, Permission: tool.ReadOnly, OutputCap: 1 << 20}
	res := tool.NewBuiltinRegistry().Run(context.Background(), env, flag.Arg(0), json.RawMessage(flag.Arg(1)))
	if *full {
		fmt.Print(res.Content)
		return
	}
	first, _, _ := strings.Cut(res.Content, "\n")
	fmt.Printf("%d bytes, %d lines, error=%v, first: %.80s\n", len(res.Content), strings.Count(res.Content, "\n"), res.IsError, first)
}
