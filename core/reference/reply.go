package reference

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// The two decisions a reply can carry.
const (
	Respond = "RESPOND"
	Silent  = "SILENT"
)

// Reply is a parsed LLM reply: the decision and, for RESPOND, what Aria says.
type Reply struct {
	Decision string `json:"decision"`
	Answer   string `json:"answer"`
}

// ParseReply reads a reply strictly: the whole text (surrounding white space aside) is
// one JSON object with a "decision" of exactly "RESPOND" or "SILENT" and an optional
// string "answer", and nothing else. Prose, code fences, unknown fields, a second
// object or another spelling of the decision are errors: the protocol counts such a
// reply as unparseable, never guesses.
func ParseReply(text string) (Reply, error) {
	raw := bytes.TrimSpace([]byte(text))
	if len(raw) == 0 {
		return Reply{}, errors.New("empty reply")
	}
	if raw[0] != '{' {
		return Reply{}, fmt.Errorf("reply is not a JSON object (starts with %q)", clip(string(raw), 20))
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var r struct {
		Decision *string `json:"decision"`
		Answer   *string `json:"answer"`
	}
	if err := dec.Decode(&r); err != nil {
		return Reply{}, fmt.Errorf("reply is not the expected JSON object: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return Reply{}, errors.New("reply has text after its JSON object")
	}
	if r.Decision == nil {
		return Reply{}, errors.New(`reply has no "decision"`)
	}
	if *r.Decision != Respond && *r.Decision != Silent {
		return Reply{}, fmt.Errorf(`"decision" is %q, not %q or %q`, clip(*r.Decision, 40), Respond, Silent)
	}
	out := Reply{Decision: *r.Decision}
	if r.Answer != nil {
		out.Answer = *r.Answer
	}
	return out, nil
}

// clip shortens s to at most n runes for an error message.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "..."
}
