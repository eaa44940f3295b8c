// Command duplexmpe is the Duplex-MPE harness. All logic lives in core/cli.
package main

import (
	"os"

	"github.com/duplexmpe/duplexmpe/core/cli"
)

func main() {
	st, cancel := cli.NewOSState()
	code := cli.Run(st)
	cancel()
	os.Exit(code)
}
