// Command anthropic is a duplexmpe plugin for the Anthropic Messages API: kinds llm and
// judge (the prompts/judge templates). See README.md.
package main

import "github.com/duplexmpe/duplexmpe/sdk"

func main() { sdk.Serve(newPlugin()) }
