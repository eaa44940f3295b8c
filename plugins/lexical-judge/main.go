// Command lexical-judge is the embedded default judge plugin: deterministic answer
// matching and a backchannel lexicon (see lexical and README.md).
package main

import (
	"github.com/duplexmpe/duplexmpe/plugins/lexical-judge/lexical"
	"github.com/duplexmpe/duplexmpe/sdk"
)

func main() { sdk.Serve(lexical.Judge{}) }
