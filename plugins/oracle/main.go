package main

import (
	"github.com/duplexmpe/duplexmpe/plugins/always-talk/speech"
	"github.com/duplexmpe/duplexmpe/plugins/onnx-tts/synth"
	"github.com/duplexmpe/duplexmpe/sdk"
)

func main() { sdk.Serve(&oracle{tts: synth.New(), format: speech.DefaultFormat}) }
