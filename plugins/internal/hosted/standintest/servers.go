// Package standintest runs the hosted-service stand-ins (plugins/standin) for the tests
// of plugins/openai and plugins/anthropic: each on its own httptest server, closed when
// the test ends, and the plugin under test as a real process configured against it.
package standintest

import (
	"net/http/httptest"
	"testing"

	"github.com/duplexmpe/duplexmpe/plugins/standin"
)

// OpenAI is an OpenAI stand-in on a test server: URL from the server, Fault, Count,
// Bodies and SetProseSpeech from the stand-in.
type OpenAI struct {
	*httptest.Server
	*standin.OpenAI
}

// NewOpenAI starts an OpenAI stand-in that wants key (none: no check); t closes it.
func NewOpenAI(t testing.TB, key string) *OpenAI {
	h := standin.NewOpenAI(key)
	s := &OpenAI{Server: httptest.NewServer(h), OpenAI: h}
	t.Cleanup(s.Close)
	return s
}

// Anthropic is an Anthropic stand-in on a test server.
type Anthropic struct {
	*httptest.Server
	*standin.Anthropic
}

// NewAnthropic starts an Anthropic stand-in that wants key (none: no check); t closes it.
func NewAnthropic(t testing.TB, key string) *Anthropic {
	h := standin.NewAnthropic(key)
	s := &Anthropic{Server: httptest.NewServer(h), Anthropic: h}
	t.Cleanup(s.Close)
	return s
}
