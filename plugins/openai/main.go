// Command openai is a duplexmpe plugin for any OpenAI-compatible server (the OpenAI API,
// vLLM, llama.cpp server, proxies): kinds llm (chat completions), judge (the
// prompts/judge templates over chat completions), asr (/audio/transcriptions) and tts
// (/audio/speech). See README.md.
package main

import "github.com/duplexmpe/duplexmpe/sdk"

func main() { sdk.Serve(newPlugin()) }
