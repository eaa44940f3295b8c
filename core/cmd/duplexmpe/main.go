// Command duplexmpe is the Duplex-MPE harness. All logic lives in core/cli.
package main

import (
	"os"

	"github.com/duplexmpe/duplexmpe/core/cli"
	"github.com/duplexmpe/duplexmpe/core/pluginhost"
)

func main() {
	st, cancel := cli.NewOSState()
	// On SIGINT/SIGTERM, stop every plugin at once; the command then fails its calls and
	// returns. os.Exit skips defers, so the normal path calls KillAll itself.
	go func() {
		<-st.Ctx.Done()
		pluginhost.KillAll()
	}()
	code := cli.Run(st)
	pluginhost.KillAll()
	cancel()
	os.Exit(code)
}
