package review

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

func TestKappaHandWorked(t *testing.T) {
	// 50 items: both yes 20, A yes B no 5, A no B yes 10, both no 15.
	// po = 35/50 = 0.7; A says yes 25/50, B 30/50; pe = 0.5*0.6 + 0.5*0.4 = 0.5;
	// kappa = (0.7 - 0.5) / (1 - 0.5) = 0.4.
	var a, b []string
	for _, c := range []struct {
		x, y string
		n    int
	}{{"yes", "yes", 20}, {"yes", "no", 5}, {"no", "yes", 10}, {"no", "no", 15}} {
		a = append(a, repeat(c.x, c.n)...)
		b = append(b, repeat(c.y, c.n)...)
	}
	k, ok := Kappa(a, b)
	if !ok || math.Abs(k-0.4) > 1e-12 {
		t.Errorf("kappa %v %v, want 0.4", k, ok)
	}
	if k, ok := Kappa([]string{"a", "b", "a"}, []string{"a", "b", "a"}); !ok || k != 1 {
		t.Errorf("perfect agreement: %v %v", k, ok)
	}
	if _, ok := Kappa([]string{"a", "a"}, []string{"a", "a"}); ok {
		t.Error("kappa defined when both raters use one label (pe = 1)")
	}
	if _, ok := Kappa(nil, nil); ok {
		t.Error("kappa of nothing")
	}
	if _, ok := Kappa([]string{"a"}, []string{"a", "b"}); ok {
		t.Error("kappa of unequal lengths")
	}
	// Worse than chance is negative: a = [x y], b = [y x]: po 0, pe 0.5, kappa -1.
	if k, _ := Kappa([]string{"x", "y"}, []string{"y", "x"}); k != -1 {
		t.Errorf("systematic disagreement: %v", k)
	}
}

const filled = `id,event,judge_label,reviewer,reviewer_2,notes
a1,answer,correct,correct,correct,
a2,answer,correct,Incorrect,correct,hm
a3,answer,incorrect,incorrect,incorrect,
a4,answer,incorrect,incorrect,,skipped
s1,silence,acknowledgement,acknowledgement,intrusion,
s2,silence,intrusion,intrusion,intrusion,
`

func TestAgreementOnFilledSheet(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sheet.csv")
	os.WriteFile(path, []byte("\ufeff"+filled), 0o644) // as a spreadsheet saves it
	sh, err := ReadSheet(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(sh.Reviewers, ",") != "reviewer,reviewer_2" || len(sh.Rows) != 6 {
		t.Fatalf("%+v", sh)
	}
	got := map[string]Pair{}
	for _, p := range Agreement(sh) {
		got[p.A+"|"+p.B+"|"+p.Event] = p
	}
	check := func(key string, n, agree int, kappa float64, kappaOK bool) {
		t.Helper()
		p, ok := got[key]
		if !ok {
			t.Fatalf("no pair %s in %v", key, got)
		}
		if p.N != n || p.Agree != agree || p.KappaOK != kappaOK || (kappaOK && math.Abs(p.Kappa-kappa) > 1e-12) {
			t.Errorf("%s: %+v, want n=%d agree=%d kappa=%v (%v)", key, p, n, agree, kappa, kappaOK)
		}
	}
	// judge vs reviewer, all 6 rows: 5 agree (a2 differs). Labels judge: c c i i a n;
	// reviewer: c i i i a n. pe = (2*1 + 2*3 + 1*1 + 1*1)/36 = 10/36; po = 5/6;
	// kappa = (5/6 - 10/36) / (26/36) = 20/26.
	check("judge|reviewer|all", 6, 5, 20.0/26, true)
	// answers only: judge c c i i, reviewer c i i i: po 3/4, pe = (2*1 + 2*3)/16 = 1/2, kappa 1/2.
	check("judge|reviewer|answer", 4, 3, 0.5, true)
	check("judge|reviewer|silence", 2, 2, 1, true)
	// reviewer_2 left a4 empty: 5 rows; judge c c i a n vs r2 c c i n n: 4 agree.
	// pe = (2*2 + 1*1 + 1*0 + 1*2)/25 = 7/25; kappa = (4/5 - 7/25)/(18/25) = 13/18.
	check("judge|reviewer_2|all", 5, 4, 13.0/18, true)
	// silence: judge a n, r2 n n: po 1/2, pe = (1*0 + 1*2)/4 = 1/2, kappa 0.
	check("judge|reviewer_2|silence", 2, 1, 0, true)
	// reviewers: rows both filled a1 a2 a3 s1 s2: r1 c i i a n, r2 c c i n n: 3 agree.
	// pe = (1*2 + 2*1 + 1*0 + 1*2)/25 = 6/25; kappa = (15/25 - 6/25)/(19/25) = 9/19.
	check("reviewer|reviewer_2|all", 5, 3, 9.0/19, true)

	text := Text(Agreement(sh), len(sh.Rows))
	for _, want := range []string{"| judge | reviewer | all | 6 | 83.3% (5/6) | 0.769 |", "| reviewer | reviewer_2 | answer |"} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
}

func TestReadSheetErrors(t *testing.T) {
	for name, c := range map[string]struct{ csv, want string }{
		"empty":       {"", "empty"},
		"no reviewer": {"id,event,judge_label\na,answer,correct\n", "no reviewer column"},
		"no id":       {"event,judge_label,reviewer\nanswer,correct,\n", `no "id" column`},
		"bad label":   {"id,event,judge_label,reviewer\na,answer,correct,correct\nb,silence,intrusion,maybe\n", `line 3, column reviewer: "maybe" is not a label for a silence row`},
		"bad event":   {"id,event,judge_label,reviewer\na,speech,correct,\n", `line 2: event "speech"`},
		"dup id":      {"id,event,judge_label,reviewer\na,answer,correct,\na,answer,correct,\n", `id "a" already on line 2`},
		"dup column":  {"id,event,judge_label,reviewer,reviewer\n", `column "reviewer" appears twice`},
		"quote":       {"id,event,judge_label,reviewer\n\"a,answer\n", "sheet.csv"},
	} {
		_, err := parseSheet(strings.NewReader(c.csv), "sheet.csv")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", name, err, c.want)
		}
	}
	if _, err := ReadSheet(filepath.Join(t.TempDir(), "missing.csv")); err == nil {
		t.Error("missing file read")
	}
}

func FuzzReadSheet(f *testing.F) {
	f.Add(filled)
	f.Add("id,event,judge_label,reviewer\na,answer,correct,\n")
	f.Fuzz(func(t *testing.T, s string) {
		sh, err := parseSheet(strings.NewReader(s), "fuzz.csv")
		if err != nil {
			return
		}
		for _, r := range sh.Rows {
			if len(r.Reviewers) != len(sh.Reviewers) {
				t.Fatalf("row %q has %d reviewer labels for %d columns", r.ID, len(r.Reviewers), len(sh.Reviewers))
			}
		}
		for _, p := range Agreement(sh) {
			if p.Agree > p.N || (p.KappaOK && (math.IsNaN(p.Kappa) || p.Kappa > 1+1e-9)) {
				t.Fatalf("pair %+v", p)
			}
		}
	})
}
