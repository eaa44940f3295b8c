// Package prompts holds the versioned LLM prompt templates used to write scenario
// scripts (core/construct). A template's file name carries its version; its SHA-256 is
// recorded in every dataset built with it, so a changed prompt shows up as a changed
// dataset identity.
package prompts

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"strings"
	"text/template"
)

//go:embed *.tmpl
var files embed.FS

// Template names.
const (
	Scenario = "scenario-v1.tmpl"
	Rewrite  = "rewrite-v1.tmpl"
)

// Prompt is a rendered template: a system message and a user message.
type Prompt struct {
	System string
	User   string
}

// Hash is "sha256:<hex>" of one of this package's templates.
func Hash(name string) (string, error) { return HashFS(files, name) }

// Render fills one of this package's templates (see RenderFS).
func Render(name string, data any) (Prompt, error) { return RenderFS(files, name, data) }

// HashFS is "sha256:<hex>" of a template's bytes in fsys.
func HashFS(fsys fs.FS, name string) (string, error) {
	raw, err := fs.ReadFile(fsys, name)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(raw)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

// RenderFS fills the template name of fsys (missing keys are errors) and splits the
// text at its "SYSTEM:" and "USER:" markers. Every prompt package of the harness (script
// generation, judge, text reference) renders through it.
func RenderFS(fsys fs.FS, name string, data any) (Prompt, error) {
	raw, err := fs.ReadFile(fsys, name)
	if err != nil {
		return Prompt{}, err
	}
	t, err := template.New(name).Option("missingkey=error").Parse(string(raw))
	if err != nil {
		return Prompt{}, fmt.Errorf("prompt %s: %w", name, err)
	}
	var b strings.Builder
	if err := t.Execute(&b, data); err != nil {
		return Prompt{}, fmt.Errorf("prompt %s: %w", name, err)
	}
	_, rest, ok := strings.Cut(b.String(), "SYSTEM:\n")
	if !ok {
		return Prompt{}, fmt.Errorf("prompt %s: no SYSTEM: section", name)
	}
	sys, user, ok := strings.Cut(rest, "\nUSER:\n")
	if !ok {
		return Prompt{}, fmt.Errorf("prompt %s: no USER: section", name)
	}
	return Prompt{System: strings.TrimSpace(sys), User: strings.TrimSpace(user)}, nil
}
