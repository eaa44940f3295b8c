// Package reference holds the versioned prompt of the text reference track
// (core/reference): one RESPOND/SILENT decision per human turn. The template's file name
// carries its version; its SHA-256 is recorded in every reference run, so a changed
// prompt shows up as a changed run identity.
package reference

import (
	"embed"
	"strings"

	"github.com/duplexmpe/duplexmpe/prompts"
)

//go:embed *.tmpl
var files embed.FS

// Decide is the name of the current decision template.
const Decide = "decide-v1.tmpl"

// Line is one speaker-attributed line of the transcript.
type Line struct {
	Speaker string
	Text    string
}

// Data fills the decision template.
type Data struct {
	Duty    string // the duty instruction (the dataset's spoken preamble)
	History []Line // the turns before the current one, in order
	Current Line
}

// Prompt is a rendered template: a system message and a user message.
type Prompt = prompts.Prompt

// Hash is "sha256:<hex>" of a template's bytes.
func Hash(name string) (string, error) { return prompts.HashFS(files, name) }

// Render fills a template and splits it at its "SYSTEM:" and "USER:" markers. Line
// breaks inside a turn's text are folded to spaces, so every turn stays one line and
// the current turn stays the last line of the user message.
func Render(name string, d Data) (Prompt, error) {
	d.Current = oneLine(d.Current)
	hist := make([]Line, len(d.History))
	for i, l := range d.History {
		hist[i] = oneLine(l)
	}
	d.History = hist
	return prompts.RenderFS(files, name, d)
}

func oneLine(l Line) Line {
	return Line{Speaker: strings.Join(strings.Fields(l.Speaker), " "), Text: strings.Join(strings.Fields(l.Text), " ")}
}
