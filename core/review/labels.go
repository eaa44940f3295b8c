package review

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/duplexmpe/duplexmpe/core/dataset"
	"github.com/duplexmpe/duplexmpe/core/protocol"
)

// The blind validation of a release (docs/datasheet.md, "Validation"): reviewers who did
// not write the scenarios label every turn of a sample without seeing the labels, say
// which turn (if any) asks Aria for something, and derive the answer from what was said.
// These types read their files and compute the figures the datasheet reports.

// Reviewer labels: the protocol's labels with N2 split by addressee.
var ReviewLabels = []string{"T", "N1", "N2-human", "N2-device", "N3", "N4_Q", "N4_R"}

// LabelReview is one reviewer's answer for one blind item (validation/review-X.jsonl).
type LabelReview struct {
	Item  string `json:"item"`
	Turns []struct {
		I     int    `json:"i"`
		Label string `json:"label"`
	} `json:"turns"`
	// AriaRequest is the turn the reviewer heard as the request to Aria that nobody
	// answers, or nil for none.
	AriaRequest *int `json:"aria_request"`
	// Answer is what Aria should say, derived from the conversation; nil when the
	// reviewer found it cannot be derived.
	Answer *string `json:"answer"`
	Notes  string  `json:"notes,omitempty"`
}

// LabelFigures are the validation figures of one sample.
type LabelFigures struct {
	Reviewers int `json:"reviewers"`
	Scenarios int `json:"scenarios"`
	Turns     int `json:"turns"`
	// Agree counts turns where the reviewer's label is the release's.
	Agree     int     `json:"agree"`
	Agreement float64 `json:"agreement"`
	Kappa     float64 `json:"kappa"`
	// PerLabel: for each label, how many turns carry it in the release, how many the
	// reviewers gave it, and how many both.
	PerLabel []LabelCount `json:"per_label"`
	// Implicit versions in the sample, and those whose T the reviewer found (the request
	// heard as Aria's, at T's turn).
	Implicit  int `json:"implicit"`
	Inferable int `json:"inferable"`
	Explicit  int `json:"explicit"`
	// ExplicitFound: explicit versions whose T the reviewer found.
	ExplicitFound int `json:"explicit_found"`
	// Derivable: scenarios whose gold answer the reviewer derived (matched by
	// SameAnswer, or adjudicated as the same answer in adjudication.tsv).
	Derivable int `json:"derivable"`
	// HardNegatives: per hard-negative tag (dataset.TurnTags), the tagged turns in the
	// sample and those the reviewers labelled as the release does. The role cue aimed at
	// a named human (role_cue_to_human) is the mirror case of the implicit role cue: a
	// reviewer who labels it N2-human attributed it to the human.
	HardNegatives []TagCount `json:"hard_negatives,omitempty"`
	// Disagreements, one line each, for the datasheet.
	Disagreements []string `json:"disagreements"`
}

// TagCount is one row of LabelFigures.HardNegatives.
type TagCount struct {
	Tag   string `json:"tag"`
	Turns int    `json:"turns"`
	Agree int    `json:"agree"`
}

// LabelCount is one row of LabelFigures.PerLabel.
type LabelCount struct {
	Label    string `json:"label"`
	Release  int    `json:"release"`
	Reviewer int    `json:"reviewer"`
	Both     int    `json:"both"`
}

// releaseLabel is a turn's label as a reviewer label.
func releaseLabel(t dataset.Turn) string {
	if t.Label == protocol.LabelN2 {
		return "N2-" + t.Addressee
	}
	return t.Label
}

// SameAnswer compares a derived answer with the gold answer and its accepted variants:
// the answer without its working (parentheses, and anything after ";"), lower-cased with
// everything but letters and digits dropped, equals one of them or holds it as whole
// words ("about 7:45 pm" holds "7:45").
func SameAnswer(got string, sc *dataset.Scenario) bool {
	g := normAnswer(stripWorking(got))
	if g == "" {
		return false
	}
	for _, want := range append([]string{sc.GoldAnswer}, sc.GoldAccepted...) {
		w := normAnswer(want)
		if w == "" {
			continue
		}
		if g == w || strings.Contains(" "+g+" ", " "+w+" ") {
			return true
		}
	}
	return false
}

// stripWorking drops a reviewer's working from an answer: parenthesised parts and
// anything after a semicolon ("85 (38 + 22 + 25); 60 for the parts" is "85").
func stripWorking(s string) string {
	if i := strings.IndexByte(s, ';'); i >= 0 {
		s = s[:i]
	}
	var b strings.Builder
	depth := 0
	for _, r := range s {
		switch {
		case r == '(':
			depth++
		case r == ')' && depth > 0:
			depth--
		case depth == 0:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func normAnswer(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		case r == ':' || r == '.' || r == '$':
			// "7:15" and "715" and "$42" and "42" compare equal.
		default:
			b.WriteRune(' ')
		}
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

// ValidationSet is a release's validation directory read: the blind items' keys (item ->
// scenario id), the reviews and the adjudications.
type ValidationSet struct {
	Keys    map[string]string
	Reviews map[string][]LabelReview // reviewer name -> reviews
	// Adjudicated maps an item to the verdict on a derived answer that SameAnswer did
	// not match: true when it is the gold answer said another way.
	Adjudicated map[string]bool
}

// ReadValidation reads dir: key-<R>.tsv and review-<R>.jsonl for each reviewer R, and
// adjudication.tsv (item, same|different, reason) if present.
func ReadValidation(dir string) (*ValidationSet, error) {
	v := &ValidationSet{Keys: map[string]string{}, Reviews: map[string][]LabelReview{}, Adjudicated: map[string]bool{}}
	keys, _ := filepath.Glob(filepath.Join(dir, "key-*.tsv"))
	if len(keys) == 0 {
		return nil, fmt.Errorf("%s: no key-*.tsv", dir)
	}
	for _, k := range keys {
		r := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(k), "key-"), ".tsv")
		if err := eachTSV(k, 2, func(f []string) { v.Keys[f[0]] = f[1] }); err != nil {
			return nil, err
		}
		raw, err := os.ReadFile(filepath.Join(dir, "review-"+r+".jsonl"))
		if err != nil {
			return nil, err
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		for {
			var lr LabelReview
			if err := dec.Decode(&lr); err == io.EOF {
				break
			} else if err != nil {
				return nil, fmt.Errorf("review-%s.jsonl: %w", r, err)
			}
			v.Reviews[r] = append(v.Reviews[r], lr)
		}
	}
	adj := filepath.Join(dir, "adjudication.tsv")
	if _, err := os.Stat(adj); err == nil {
		if err := eachTSV(adj, 3, func(f []string) { v.Adjudicated[f[0]] = f[1] == "same" }); err != nil {
			return nil, err
		}
	}
	return v, nil
}

func eachTSV(path string, fields int, f func([]string)) error {
	fh, err := os.Open(path)
	if err != nil {
		return err
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fs := strings.Split(line, "\t")
		if len(fs) < fields {
			return fmt.Errorf("%s:%d: want %d tab-separated fields", path, n, fields)
		}
		f(fs)
	}
	return sc.Err()
}

// Figures scores the reviews against the release's scenarios.
func (v *ValidationSet) Figures(scs []dataset.Scenario) (*LabelFigures, error) {
	byID := map[string]*dataset.Scenario{}
	for i := range scs {
		byID[scs[i].ScenarioID] = &scs[i]
	}
	fig := &LabelFigures{Reviewers: len(v.Reviews)}
	var rel, rev []string
	per := map[string]*LabelCount{}
	tags := map[string]*TagCount{}
	for _, l := range ReviewLabels {
		per[l] = &LabelCount{Label: l}
	}
	var names []string
	for r := range v.Reviews {
		names = append(names, r)
	}
	sort.Strings(names)
	for _, r := range names {
		for _, lr := range v.Reviews[r] {
			sid, ok := v.Keys[lr.Item]
			if !ok {
				return nil, fmt.Errorf("reviewer %s: item %s is in no key file", r, lr.Item)
			}
			sc := byID[sid]
			if sc == nil {
				return nil, fmt.Errorf("item %s: scenario %s is not in the release", lr.Item, sid)
			}
			if len(lr.Turns) != len(sc.Turns) {
				return nil, fmt.Errorf("reviewer %s item %s: %d labels for %d turns", r, lr.Item, len(lr.Turns), len(sc.Turns))
			}
			fig.Scenarios++
			for _, t := range lr.Turns {
				if t.I < 0 || t.I >= len(sc.Turns) {
					return nil, fmt.Errorf("reviewer %s item %s: turn %d", r, lr.Item, t.I)
				}
				want := releaseLabel(sc.Turns[t.I])
				got := t.Label
				if per[got] == nil {
					return nil, fmt.Errorf("reviewer %s item %s turn %d: label %q is not one of %s", r, lr.Item, t.I, got, strings.Join(ReviewLabels, ", "))
				}
				rel, rev = append(rel, want), append(rev, got)
				per[want].Release++
				per[got].Reviewer++
				for _, tag := range sc.Turns[t.I].Tags {
					if tags[tag] == nil {
						tags[tag] = &TagCount{Tag: tag}
					}
					tags[tag].Turns++
					if want == got {
						tags[tag].Agree++
					}
				}
				if want == got {
					per[got].Both++
					fig.Agree++
				} else {
					fig.Disagreements = append(fig.Disagreements, fmt.Sprintf("%s turn %d (reviewer %s): release %s, reviewer %s: %q", sid, t.I, r, want, got, sc.Turns[t.I].Text))
				}
			}
			found := lr.AriaRequest != nil && *lr.AriaRequest == sc.TIndex()
			if sc.Condition == protocol.Implicit {
				fig.Implicit++
				if found {
					fig.Inferable++
				}
			} else {
				fig.Explicit++
				if found {
					fig.ExplicitFound++
				}
			}
			if !found {
				heard := "none"
				if lr.AriaRequest != nil {
					heard = fmt.Sprintf("turn %d", *lr.AriaRequest)
				}
				fig.Disagreements = append(fig.Disagreements, fmt.Sprintf("%s (reviewer %s): request to Aria heard at %s, T is turn %d", sid, r, heard, sc.TIndex()))
			}
			switch {
			case lr.Answer != nil && SameAnswer(*lr.Answer, sc):
				fig.Derivable++
			case lr.Answer != nil && v.Adjudicated[lr.Item]:
				fig.Derivable++
			default:
				got := "none"
				if lr.Answer != nil {
					got = fmt.Sprintf("%q", *lr.Answer)
				}
				fig.Disagreements = append(fig.Disagreements, fmt.Sprintf("%s (reviewer %s): derived answer %s, gold %q", sid, r, got, sc.GoldAnswer))
			}
		}
	}
	fig.Turns = len(rel)
	if fig.Turns > 0 {
		fig.Agreement = float64(fig.Agree) / float64(fig.Turns)
	}
	fig.Kappa, _ = Kappa(rel, rev)
	for _, l := range ReviewLabels {
		fig.PerLabel = append(fig.PerLabel, *per[l])
	}
	for _, tag := range dataset.SortedKeys(tags) {
		fig.HardNegatives = append(fig.HardNegatives, *tags[tag])
	}
	return fig, nil
}

// Print writes the figures as the datasheet shows them.
func (f *LabelFigures) Print(w io.Writer) {
	fmt.Fprintf(w, "%d reviewers, %d scenarios, %d turns\n", f.Reviewers, f.Scenarios, f.Turns)
	fmt.Fprintf(w, "label agreement %d/%d = %.3f, Cohen's kappa %.3f\n", f.Agree, f.Turns, f.Agreement, f.Kappa)
	fmt.Fprintf(w, "%-10s %8s %8s %6s\n", "label", "release", "reviewer", "both")
	for _, c := range f.PerLabel {
		fmt.Fprintf(w, "%-10s %8d %8d %6d\n", c.Label, c.Release, c.Reviewer, c.Both)
	}
	fmt.Fprintf(w, "implicit T inferable %d/%d, explicit T found %d/%d, gold derivable %d/%d\n", f.Inferable, f.Implicit, f.ExplicitFound, f.Explicit, f.Derivable, f.Scenarios)
	if len(f.HardNegatives) > 0 {
		var parts []string
		for _, c := range f.HardNegatives {
			parts = append(parts, fmt.Sprintf("%s %d/%d", c.Tag, c.Agree, c.Turns))
		}
		fmt.Fprintf(w, "hard negatives labelled as the release: %s\n", strings.Join(parts, ", "))
	}
	if len(f.Disagreements) > 0 {
		fmt.Fprintf(w, "disagreements (%d):\n", len(f.Disagreements))
		for _, d := range f.Disagreements {
			fmt.Fprintf(w, "  %s\n", d)
		}
	}
}
