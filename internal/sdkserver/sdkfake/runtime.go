package sdkfake

import (
	"context"
	"flag"
	"os"
	"os/signal"
	"syscall"

	"github.com/reinsdev/reins/internal/sdkserver"
)

// EnvAsSDK "1" makes a test binary act as the real runtime, `reins sdk`
// (the same server the command runs), with the command's main flags.
const EnvAsSDK = "REINS_TEST_AS_SDK"

// Dispatch turns the test binary into the fake or the real runtime when
// the environment says so, and returns otherwise. Call it first in
// TestMain.
func Dispatch() {
	if Active() {
		Main()
	}
	if os.Getenv(EnvAsSDK) == "1" {
		os.Exit(RuntimeMain(os.Args[1:]))
	}
}

// RuntimeMain serves the real runtime on stdio. args are `reins sdk`'s:
// an optional leading "sdk", then --cwd, --config, -m/--model, --base-url.
func RuntimeMain(args []string) int {
	if len(args) > 0 && args[0] == "sdk" {
		args = args[1:]
	}
	var cfg sdkserver.Config
	fs := flag.NewFlagSet("reins sdk", flag.ContinueOnError)
	fs.StringVar(&cfg.Cwd, "cwd", "", "")
	fs.StringVar(&cfg.ConfigFile, "config", "", "")
	fs.StringVar(&cfg.Model, "model", "", "")
	fs.StringVar(&cfg.Model, "m", "", "")
	fs.StringVar(&cfg.BaseURL, "base-url", "", "")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	cfg.Stderr = os.Stderr
	cfg.Version = "test"
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	sdkserver.New(cfg).Serve(ctx, os.Stdin, os.Stdout)
	return 0
}
