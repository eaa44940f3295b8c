// Command onnx-tts serves the offline neural TTS of package synth as a plugin.
package main

import (
	"github.com/duplexmpe/duplexmpe/plugins/onnx-tts/synth"
	"github.com/duplexmpe/duplexmpe/sdk"
)

func main() { sdk.Serve(synth.New()) }
