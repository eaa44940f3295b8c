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

// Hash is "sha256:<hex>" of a template's bytes.
func Hash(name string) (string, error) {
	raw, err := files.ReadFile(name)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(raw)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

// Render fills a template and splits it at its "SYSTEM:" and "USER:" markers.
func Render(name string, data any) (Prompt, error) {
	raw, err := files.ReadFile(name)
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
	text := b.String()
	_, rest, ok := strings.Cut(text, "SYSTEM:\n")
	if !ok {
		return Prompt{}, fmt.Errorf("prompt %s: no SYSTEM: section", name)
	}
	sys, user, ok := strings.Cut(rest, "\nUSER:\n")
	if !ok {
		return Prompt{}, fmt.Errorf("prompt %s: no USER: section", name)
	}
	return Prompt{System: strings.TrimSpace(sys), User: strings.TrimSpace(user)}, nil
}
