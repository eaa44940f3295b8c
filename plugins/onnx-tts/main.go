package main

import "github.com/duplexmpe/duplexmpe/sdk"

func main() { sdk.Serve(newPlugin()) }
