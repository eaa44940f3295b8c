package judge

import (
	"strings"
	"testing"

	"github.com/duplexmpe/duplexmpe/sdk"
)

func TestRenderAnswer(t *testing.T) {
	p, err := RenderAnswer(sdk.AnswerQuery{
		Context:    []sdk.DialogueTurn{{Speaker: "A", Text: "The bus leaves at six."}, {Speaker: "B", Text: "Aria, when does the bus leave?"}},
		Request:    "Aria, when does the bus leave?",
		GoldAnswer: "6 pm",
		Response:   "um it leaves at six",
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"A: The bus leaves at six.\nB: Aria, when does the bus leave?", "Gold answer: 6 pm", "Aria's reply (transcript): um it leaves at six"} {
		if !strings.Contains(p.User, want) {
			t.Errorf("user message lacks %q:\n%s", want, p.User)
		}
	}
	if !strings.Contains(p.System, `"verdict":"correct"`) || strings.Contains(p.System, "USER:") || strings.Contains(p.User, "{{") {
		t.Errorf("system message:\n%s\nuser:\n%s", p.System, p.User)
	}
}

// The scenario's accepted variants reach the judge (version 1 of the prompt dropped them,
// so a reply saying "quarter past seven" for a gold "7:15" depended on the judge's
// guess); without any, the prompt has no "Also accepted" line.
func TestRenderAnswerAccepted(t *testing.T) {
	q := sdk.AnswerQuery{Request: "Aria, when does it start?", GoldAnswer: "7:15",
		GoldAccepted: []string{"quarter past seven", "seven fifteen"}, Response: "quarter past seven"}
	p, err := RenderAnswer(q)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p.User, "Gold answer: 7:15\nAlso accepted: quarter past seven; seven fifteen\nAria's reply") {
		t.Errorf("user message:\n%s", p.User)
	}
	q.GoldAccepted = nil
	if p, err = RenderAnswer(q); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(p.User, "Also accepted") || !strings.Contains(p.User, "Gold answer: 7:15\nAria's reply") {
		t.Errorf("user message without variants:\n%s", p.User)
	}
}

func TestRenderSpeechNoContext(t *testing.T) {
	p, err := RenderSpeech(sdk.SpeechQuery{Transcript: "mm-hm"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p.User, "(none)") || !strings.Contains(p.User, "transcript): mm-hm") || !strings.Contains(p.System, "acknowledgement") {
		t.Errorf("%+v", p)
	}
}

func TestHash(t *testing.T) {
	h := Hash()
	if !strings.HasPrefix(h, "sha256:") || len(h) != len("sha256:")+64 || h != Hash() {
		t.Fatalf("Hash() = %q", h)
	}
}

func TestParse(t *testing.T) {
	cases := []struct {
		raw    string
		speech bool
		label  string
		parsed bool
	}{
		{`{"verdict":"correct","reason":"says six"}`, false, sdk.LabelCorrect, true},
		{"  \n{\"reason\":\"no\",\"verdict\":\"incorrect\"}\n", false, sdk.LabelIncorrect, true},
		{`{"verdict":"acknowledgement","reason":"filler"}`, true, sdk.LabelAcknowledgement, true},
		{`{"verdict":"intrusion","reason":"content"}`, true, sdk.LabelIntrusion, true},
		// Unparseable: the failure label, Parsed false.
		{`{"verdict":"acknowledgement","reason":"wrong kind"}`, false, sdk.LabelIncorrect, false},
		{`{"verdict":"Correct","reason":"case"}`, false, sdk.LabelIncorrect, false},
		{`{"verdict":"correct"}`, false, sdk.LabelIncorrect, false},
		{`{"verdict":"correct","reason":"x","score":1}`, false, sdk.LabelIncorrect, false},
		{`{"verdict":"correct","reason":"x"} {"verdict":"incorrect","reason":"y"}`, false, sdk.LabelIncorrect, false},
		{"```json\n{\"verdict\":\"correct\",\"reason\":\"x\"}\n```", false, sdk.LabelIncorrect, false},
		{`Correct.`, false, sdk.LabelIncorrect, false},
		{``, true, sdk.LabelIntrusion, false},
		{`null`, true, sdk.LabelIntrusion, false},
		{`{"verdict":null,"reason":"x"}`, true, sdk.LabelIntrusion, false},
		{`["intrusion"]`, true, sdk.LabelIntrusion, false},
	}
	for _, c := range cases {
		var v sdk.Verdict
		if c.speech {
			v = ParseSpeech(c.raw)
		} else {
			v = ParseAnswer(c.raw)
		}
		if v.Label != c.label || v.Parsed != c.parsed || v.Raw != c.raw {
			t.Errorf("parse %q = %+v; want label %s parsed %v", c.raw, v, c.label, c.parsed)
		}
		if !c.parsed && !strings.HasPrefix(v.Rationale, "unparseable") {
			t.Errorf("parse %q: rationale %q", c.raw, v.Rationale)
		}
	}
}

// Whatever a model replies, parsing never panics, keeps the raw text, and gives one of
// the two labels; a parsed verdict always has its reason.
func FuzzParse(f *testing.F) {
	for _, s := range []string{`{"verdict":"correct","reason":"x"}`, `{"verdict":"intrusion","reason":""}`, "{", "", `{"verdict":1}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		for _, v := range []sdk.Verdict{ParseAnswer(raw), ParseSpeech(raw)} {
			if v.Raw != raw {
				t.Fatalf("raw lost")
			}
			ok := v.Label == sdk.LabelCorrect || v.Label == sdk.LabelIncorrect || v.Label == sdk.LabelAcknowledgement || v.Label == sdk.LabelIntrusion
			if !ok || (!v.Parsed && v.Rationale == "") {
				t.Fatalf("parse %q = %+v", raw, v)
			}
		}
	})
}
