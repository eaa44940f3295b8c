// Package judge holds the versioned prompt templates of the LLM judges (plugins/openai,
// plugins/anthropic) and the strict parser of their replies. A template's file name
// carries its version; Hash covers both templates, and the hosted judges report it (with
// Version) in their identity, so the run manifest and the report name the exact prompt.
package judge

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/duplexmpe/duplexmpe/prompts"
	"github.com/duplexmpe/duplexmpe/sdk"
)

//go:embed *.tmpl
var files embed.FS

// Version names the prompt set; it changes whenever a template changes meaning.
const Version = "judge-v2"

// Template names.
const (
	Answer = "answer-v2.tmpl"
	Speech = "speech-v1.tmpl"
)

// Prompt is a rendered template: a system message and a user message.
type Prompt = prompts.Prompt

// Hash is "sha256:<hex>" over both templates (name, NUL, bytes, NUL; in name order).
func Hash() string {
	h := sha256.New()
	for _, name := range []string{Answer, Speech} {
		raw, err := files.ReadFile(name)
		if err != nil {
			panic(err) // embedded: cannot happen
		}
		h.Write([]byte(name))
		h.Write([]byte{0})
		h.Write(raw)
		h.Write([]byte{0})
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// RenderAnswer is the prompt asking whether q.Response answers q.Request with q.GoldAnswer.
func RenderAnswer(q sdk.AnswerQuery) (Prompt, error) { return render(Answer, q) }

// RenderSpeech is the prompt asking whether q.Transcript is an acknowledgement or an intrusion.
func RenderSpeech(q sdk.SpeechQuery) (Prompt, error) { return render(Speech, q) }

func render(name string, data any) (Prompt, error) {
	p, err := prompts.RenderFS(files, name, data)
	if err != nil {
		return Prompt{}, fmt.Errorf("judge %w", err)
	}
	return p, nil
}

// ParseAnswer reads a reply to RenderAnswer. Anything but exactly one JSON object
// {"verdict": "correct"|"incorrect", "reason": "..."} (surrounding white space allowed)
// is unparseable: label incorrect, Parsed false.
func ParseAnswer(raw string) sdk.Verdict {
	return parse(raw, sdk.LabelIncorrect, sdk.LabelCorrect, sdk.LabelIncorrect)
}

// ParseSpeech reads a reply to RenderSpeech, as ParseAnswer; unparseable is an intrusion.
func ParseSpeech(raw string) sdk.Verdict {
	return parse(raw, sdk.LabelIntrusion, sdk.LabelAcknowledgement, sdk.LabelIntrusion)
}

func parse(raw, failed string, labels ...string) sdk.Verdict {
	fail := sdk.Verdict{Label: failed, Parsed: false, Raw: raw}
	var reply struct {
		Verdict *string `json:"verdict"`
		Reason  *string `json:"reason"`
	}
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&reply); err != nil {
		fail.Rationale = "unparseable judge reply: " + err.Error()
		return fail
	}
	if _, err := dec.Token(); err != io.EOF {
		fail.Rationale = "unparseable judge reply: text after the JSON object"
		return fail
	}
	if !bytes.HasPrefix(bytes.TrimSpace([]byte(raw)), []byte("{")) {
		fail.Rationale = "unparseable judge reply: not a JSON object"
		return fail
	}
	if reply.Verdict == nil || reply.Reason == nil {
		fail.Rationale = `unparseable judge reply: want both "verdict" and "reason"`
		return fail
	}
	for _, l := range labels {
		if *reply.Verdict == l {
			return sdk.Verdict{Label: l, Parsed: true, Raw: raw, Rationale: *reply.Reason}
		}
	}
	fail.Rationale = fmt.Sprintf("unparseable judge reply: verdict %q is not one of %q", *reply.Verdict, labels)
	return fail
}
