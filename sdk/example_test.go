package sdk_test

import (
	"context"
	"fmt"

	"github.com/reinsdev/reins/sdk"
)

// Start a runtime (`reins sdk` on the built-in mock model, which echoes),
// run one prompt to the end of its turn, and close the runtime.
func Example() {
	ctx := context.Background()
	c, err := sdk.Start(ctx, sdk.Options{
		Command: "reins",
		Args:    []string{"sdk", "--model", "mock/echo"},
	})
	if err != nil {
		fmt.Println("start:", err)
		return
	}
	defer c.Close()

	res, err := c.Run(ctx, "hello")
	if err != nil {
		fmt.Println("run:", err)
		return
	}
	fmt.Println(res.StopReason)
	fmt.Println(sdk.Text(res.Output))
	// Output:
	// completed
	// mock: hello
}
