package lexical

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/duplexmpe/duplexmpe/sdk"
)

func TestNormalize(t *testing.T) {
	cases := []struct{ in, want string }{
		{"nine", "9"},
		{"$9", "9 dollar"},
		{"Nine dollars.", "9 dollar"},
		{"It's $9.50!", "its 9.5 dollar"},
		{"nine point five", "9.5"},
		{"twenty one", "21"},
		{"one hundred and five", "105"},
		{"a thousand", "1000"},
		{"three thousand two hundred", "3200"},
		{"1,000", "1000"},
		{"five thirty", "5 30"},
		{"5:30", "5:30"},
		{"05:30 PM", "5:30 pm"},
		{"half past three", "3:30"},
		{"a quarter to one", "a 12:45"},
		{"seven o'clock", "7:00"},
		{"two and a half", "2.5"},
		{"half a dozen eggs", "6 egg"},
		{"3.30", "3.3"},
		{"one two three", "1 2 3"},
		{"the twenty first", "the 21th"},
		{"21st", "21th"},
		{"third", "3th"},
		{"one second", "1 second"},
		{"twenty second", "22th"},
		{"50%", "50 percent"},
		{"$2 million", "2 million dollar"},
		{"five p m", "5 pm"},
		{"5 PM", "5 pm"},
		{"nine dollars and fifty cents", "9.5 dollar"},
		{"nine dollars fifty", "9.5 dollar"},
		{"two pounds five", "2.05 pound"},
		{"nine dollars and a coffee", "9 dollar and a coffee"},
		{"zero", "0"},
		{"classes bus is cities boxes", "class bus is city box"},
		{"", ""},
	}
	for _, tc := range cases {
		if got := strings.Join(Normalize(tc.in), " "); got != tc.want {
			t.Errorf("Normalize(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestMatchAnswer(t *testing.T) {
	cases := []struct {
		gold, response string
		ok             bool
	}{
		{"$9", "nine dollars", true},
		{"$9", "It costs nine.", true}, // unit words are optional next to a number
		{"nine dollars", "$9", true},   // and the other way round
		{"$9", "ten dollars", false},   // wrong number
		{"$9", "dollars", false},       // the number is required
		{"9", "ninety", false},         // 90 is not 9
		{"Room 21", "it's in room twenty one", true},
		{"Room 21", "room twenty", false},
		{"the blue folder", "The blue one. The blue folder!", true},
		{"the blue folder", "the red folder", false},
		{"Paris", "paris", true},
		{"3.5 kilometers", "three point five", true},
		{"$9.50", "nine dollars and fifty cents", true},
		{"$9.50", "nine dollars", false},
		{"half past five", "half past five", true},
		{"Tuesday", "", false},
		{"the", "the", true},                         // only function words: all of them are required
		{"two apples", "apples and two pears", true}, // multiset, any order
		{"two two", "two", false},                    // multiset: both needed
	}
	for _, tc := range cases {
		ok, missing := MatchAnswer(tc.gold, tc.response)
		if ok != tc.ok {
			t.Errorf("MatchAnswer(%q, %q) = %v (missing %q), want %v", tc.gold, tc.response, ok, missing, tc.ok)
		}
	}
}

func TestIsAcknowledgement(t *testing.T) {
	cases := []struct {
		in      string
		ok      bool
		content string
	}{
		{"mm-hm", true, ""},
		{"Understood.", true, ""},
		{"okay okay yeah mm hm got it", true, ""}, // long, but no content
		{"uh huh", true, ""},
		{"nine dollars", false, "nine"}, // short, but content
		{"okay it's nine", false, "its"},
		{"yes", false, "yes"}, // answers a question: content, not a backchannel
		{"I see", true, ""},
		{"I think so", false, "i"},
		{"", false, ""},
		{"  ", false, ""},
	}
	for _, tc := range cases {
		ok, w := IsAcknowledgement(tc.in)
		if ok != tc.ok || w != tc.content {
			t.Errorf("IsAcknowledgement(%q) = %v %q, want %v %q", tc.in, ok, w, tc.ok, tc.content)
		}
	}
}

func TestJudgeVerdicts(t *testing.T) {
	ctx := context.Background()
	var j Judge
	v, err := j.JudgeAnswer(ctx, sdk.AnswerQuery{GoldAnswer: "$9", Response: "nine dollars"})
	if err != nil || v.Label != sdk.LabelCorrect || !v.Parsed || !strings.Contains(v.Raw, `"label":"correct"`) {
		t.Errorf("answer verdict %+v, %v", v, err)
	}
	v, _ = j.JudgeAnswer(ctx, sdk.AnswerQuery{GoldAnswer: "$9", Response: "ten"})
	if v.Label != sdk.LabelIncorrect || !strings.Contains(v.Raw, `"missing":["9"]`) {
		t.Errorf("wrong answer verdict %+v", v)
	}
	v, _ = j.JudgeAnswer(ctx, sdk.AnswerQuery{GoldAnswer: " ", Response: "ten"})
	if v.Label != sdk.LabelIncorrect {
		t.Errorf("no gold: %+v", v)
	}
	v, _ = j.ClassifySpeech(ctx, sdk.SpeechQuery{Transcript: "nine dollars"})
	if v.Label != sdk.LabelIntrusion || !strings.Contains(v.Rationale, "nine") {
		t.Errorf("speech verdict %+v", v)
	}
	v, _ = j.ClassifySpeech(ctx, sdk.SpeechQuery{Transcript: "mm-hm"})
	if v.Label != sdk.LabelAcknowledgement {
		t.Errorf("speech verdict %+v", v)
	}
	if err := j.Configure(ctx, map[string]any{"threshold": 1.0}); err == nil || !strings.Contains(err.Error(), "threshold") {
		t.Errorf("unknown setting accepted: %v", err)
	}
	if err := j.Configure(ctx, map[string]any{}); err != nil {
		t.Error(err)
	}
}

// The identity changes when a list changes, so a run records which lexicon judged it.
func TestIdentityCoversTheLexicon(t *testing.T) {
	before := Identity()
	if len(before) != 64 || Identity() != before {
		t.Fatalf("identity %q is not a stable sha256", before)
	}
	saved := Backchannels
	Backchannels = append(append([]string(nil), saved...), "yes")
	defer func() { Backchannels = saved }()
	if Identity() == before {
		t.Error("adding a backchannel did not change the identity")
	}
	info, _ := Judge{}.Describe(context.Background())
	if !reflect.DeepEqual(info.Identity["rules_version"], RulesVersion) {
		t.Errorf("identity %v", info.Identity)
	}
}

func FuzzNormalize(f *testing.F) {
	for _, s := range []string{"$9.50", "twenty first", "one hundred and five", "a thousand", "1,000.5%", "€", "three point",
		"3:30", "03:30pm", "3.30", "half past twelve", "quarter to one", "seven oh five", "two and a half dozen", "99:99", "1:2:3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		Normalize(s)
		IsAcknowledgement(s)
		// Every text answers itself: a response's readings hold all its own tokens.
		if ok, missing := MatchAnswer(s, s); !ok && len(Required(s)) > 0 {
			t.Errorf("%q does not answer itself (missing %q)", s, missing)
		}
	})
}
