package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/protocol"
	"github.com/duplexmpe/duplexmpe/core/score"
	"github.com/duplexmpe/duplexmpe/core/score/textfmt"
	"github.com/duplexmpe/duplexmpe/core/stats"
)

func summary(pairs, minEligible int) score.Summary {
	return score.Summarize(fixture(pairs), testParams(minEligible))
}

func writeAll(t *testing.T, s score.Summary) string {
	t.Helper()
	dir := t.TempDir()
	if err := WriteAll(dir, s, testMeta()); err != nil {
		t.Fatal(err)
	}
	return dir
}

func read(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

var (
	rateRE = regexp.MustCompile(`^(\d\.\d{3}) \((\d+)/(\d+)\) \[(\d\.\d{3}), (\d\.\d{3})\]$`)
	naRE   = regexp.MustCompile(`^n/a \(n=(\d+)\)$`)
)

// checkRateCell asserts that a printed cell is the rate r: its k/n, the rate k/n and the
// Wilson 95% interval computed here, to the printed precision; or n/a (n=N) exactly when
// the rate is not available.
func checkRateCell(t *testing.T, where, cellText string, r score.Rate, minN int) {
	t.Helper()
	if r.N == 0 || r.N < minN {
		m := naRE.FindStringSubmatch(cellText)
		if m == nil || m[1] != strconv.Itoa(r.N) {
			t.Errorf("%s: %q, want n/a (n=%d)", where, cellText, r.N)
		}
		return
	}
	m := rateRE.FindStringSubmatch(cellText)
	if m == nil {
		t.Errorf("%s: %q is not rate (k/n) [lo, hi]", where, cellText)
		return
	}
	k, _ := strconv.Atoi(m[2])
	n, _ := strconv.Atoi(m[3])
	if k != r.K || n != r.N {
		t.Errorf("%s: %q shows %d/%d, want %d/%d", where, cellText, k, n, r.K, r.N)
	}
	lo, hi := stats.Wilson(k, n, 0.95)
	vals := []string{m[1], m[4], m[5]}
	for i, want := range []float64{float64(k) / float64(n), lo, hi} {
		got, _ := strconv.ParseFloat(vals[i], 64)
		if math.Abs(got-want) > 0.0005+1e-12 {
			t.Errorf("%s: %q: value %d is %g, want %.4f", where, cellText, i, got, want)
		}
	}
}

// mdRows returns the cells of the Markdown table rows, in the section with the given
// heading, whose first cells are prefix.
func mdRows(md, heading string, prefix ...string) [][]string {
	var out [][]string
	_, sec, _ := strings.Cut(md, "## "+heading+"\n")
	sec, _, _ = strings.Cut(sec, "\n## ")
	for _, line := range strings.Split(sec, "\n") {
		if !strings.HasPrefix(line, "| ") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), " | ")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		if len(cells) >= len(prefix) && reflect.DeepEqual(cells[:len(prefix)], prefix) {
			out = append(out, cells)
		}
	}
	return out
}

func TestMarkdownEveryRateShowsCountsAndInterval(t *testing.T) {
	s := summary(12, 30)
	md := read(t, writeAll(t, s), MarkdownFile)
	if len(s.Entries) != 4 {
		t.Fatalf("fixture gave %d entries, want 4", len(s.Entries))
	}
	for _, e := range s.Entries {
		rows := mdRows(md, "Main results", e.Model, score.RoleTest, e.Condition, strconv.Itoa(e.Items))
		if len(rows) != 1 {
			t.Fatalf("main table rows for %s %s: %d, want 1", e.Model, e.Condition, len(rows))
		}
		for i, mi := range score.MeasureTable {
			minN := 0
			if mi.Key == score.MeasureYield {
				minN = 30
			}
			checkRateCell(t, e.Model+"/"+e.Condition+"/"+mi.Key, rows[0][4+i], e.Rate(mi.Key), minN)
		}
		// Breakdowns by T position and third: every cell a rate with k/n or n/a.
		for _, pos := range []string{"early-middle", "middle", "late-middle"} {
			r := mdRows(md, "Scored measures by T position", e.Model, e.Condition, pos)
			if len(r) != 1 {
				t.Fatalf("%s %s %s: %d rows", e.Model, e.Condition, pos, len(r))
			}
			ms := e.ByTPosition[pos]
			for i, rt := range []score.Rate{ms.FreshOnset, ms.Accuracy, ms.Silence, ms.Yield} {
				checkRateCell(t, pos, r[0][3+i], rt, map[bool]int{true: 30}[i == 3])
			}
		}
		for th, name := range thirdNames {
			r := mdRows(md, "Scored measures by elapsed-time third", e.Model, e.Condition, name)
			if len(r) != 1 {
				t.Fatalf("%s %s %s: %d rows", e.Model, e.Condition, name, len(r))
			}
			ms := e.ByThird[th]
			for i, rt := range []score.Rate{ms.FreshOnset, ms.Accuracy, ms.Silence, ms.Yield} {
				checkRateCell(t, name, r[0][3+i], rt, map[bool]int{true: 30}[i == 3])
			}
		}
	}
	// Unparseable silence verdicts are out of the windows that had speech to judge.
	withSpeech := map[string]int{}
	for _, it := range fixture(12) {
		for _, ev := range it.Events {
			if ev.Silence != nil && !ev.Silence.Silent() {
				withSpeech[it.Model+"/"+it.Condition]++
			}
		}
	}
	for _, e := range s.Entries {
		r := mdRows(md, "Answer accuracy and judge verdicts", e.Model, e.Condition)
		if len(r) != 2 || len(r[1]) != 4 || !strings.HasPrefix(r[1][3], fmt.Sprintf("0/%d", withSpeech[e.Model+"/"+e.Condition])) {
			t.Errorf("%s %s: unparseable silence verdicts row %v, want 0/%d", e.Model, e.Condition, r, withSpeech[e.Model+"/"+e.Condition])
		}
	}
	for _, want := range []string{"Explicit vs implicit", "T outcome partition", "N2 to human", "N2 to device",
		"| still voicing |", "| no onset in gap |", "| spoke during question |", "| resumed |", "fails above 500 ms", "Spearman", "Model comparisons",
		"lexical-judge", "unparseable answer verdicts", "smoke-&lt;1&gt;", "sha256:00ff", "min_eligible 30",
		"180, of which 3 unparseable", "beta: 2 (not scored",
		"- [Explicit vs implicit (paired McNemar)](#explicit-vs-implicit-paired-mcnemar)", "\n## Explicit vs implicit (paired McNemar)\n"} {
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
}

func TestYieldBelowMinEligibleIsNotARate(t *testing.T) {
	// alpha explicit has an eligible N4 event in every other conversation: 6 of 12, all
	// yielded; beta explicit voices over every resolution: 12 eligible, none yielded.
	s := summary(12, 30)
	md := read(t, writeAll(t, s), MarkdownFile)
	want := map[string]string{"alpha/explicit": "n/a (n=6)", "beta/explicit": "n/a (n=12)", "alpha/implicit": "n/a (n=0)"}
	for _, e := range s.Entries {
		w, ok := want[e.Model+"/"+e.Condition]
		if !ok {
			continue
		}
		row := mdRows(md, "Main results", e.Model, score.RoleTest, e.Condition, strconv.Itoa(e.Items))[0]
		if got := row[4+3]; got != w {
			t.Errorf("%s %s yield = %q, want %q", e.Model, e.Condition, got, w)
		}
	}
	var term bytes.Buffer
	if err := MainTable(&term, s); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(term.String(), "n/a (n=6)") || !strings.Contains(term.String(), "n/a (n=12)") {
		t.Errorf("terminal table does not show yield as n/a:\n%s", term.String())
	}

	// The same events with min_eligible 5 are rates.
	s = summary(12, 5)
	md = read(t, writeAll(t, s), MarkdownFile)
	for _, e := range s.Entries {
		row := mdRows(md, "Main results", e.Model, score.RoleTest, e.Condition, strconv.Itoa(e.Items))[0]
		switch e.Model + "/" + e.Condition {
		case "alpha/explicit":
			if !strings.HasPrefix(row[7], "1.000 (6/6) [") {
				t.Errorf("alpha explicit yield with min_eligible 5 = %q", row[7])
			}
		case "beta/explicit":
			if !strings.HasPrefix(row[7], "0.000 (0/12) [0.000, ") {
				t.Errorf("beta explicit yield with min_eligible 5 = %q", row[7])
			}
		}
	}
}

func TestCSVParsesBackToTheSummary(t *testing.T) {
	s := summary(12, 5)
	f, err := os.Open(filepath.Join(writeAll(t, s), CSVFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("results.csv does not parse: %v", err)
	}
	if !reflect.DeepEqual(recs[0], CSVHeader) {
		t.Fatalf("header %v", recs[0])
	}
	idx := map[string]int{}
	for i, h := range recs[0] {
		idx[h] = i
	}
	type key struct{ section, model, modelB, cond, measure, group string }
	rows := map[key][]string{}
	for _, r := range recs[1:] {
		if len(r) != len(CSVHeader) {
			t.Fatalf("row has %d fields: %v", len(r), r)
		}
		k := key{r[idx["section"]], r[idx["model"]], r[idx["model_b"]], r[idx["condition"]], r[idx["measure"]], r[idx["group"]]}
		if _, dup := rows[k]; dup {
			t.Fatalf("duplicate row %v", k)
		}
		rows[k] = r
	}
	get := func(k key) []string {
		t.Helper()
		r, ok := rows[k]
		if !ok {
			t.Fatalf("no CSV row %+v", k)
		}
		return r
	}
	checkRate := func(k key, rt score.Rate, suffix string) {
		t.Helper()
		r := get(k)
		if r[idx["k"+suffix]] != strconv.Itoa(rt.K) || r[idx["n"+suffix]] != strconv.Itoa(rt.N) || r[idx["available"+suffix]] != strconv.FormatBool(rt.Available) {
			t.Errorf("%+v: k, n, available = %s, %s, %s; want %d, %d, %v", k, r[idx["k"+suffix]], r[idx["n"+suffix]], r[idx["available"+suffix]], rt.K, rt.N, rt.Available)
		}
		for name, want := range map[string]float64{"rate": rt.Rate, "lo": rt.Lo, "hi": rt.Hi} {
			txt := r[idx[name+suffix]]
			if !rt.Available {
				if txt != "" {
					t.Errorf("%+v: %s = %q for an unavailable rate, want empty", k, name, txt)
				}
				continue
			}
			got, err := strconv.ParseFloat(txt, 64)
			if err != nil || got != want {
				t.Errorf("%+v: %s = %q, want %v exactly", k, name, txt, want)
			}
		}
	}
	for _, e := range s.Entries {
		for _, mi := range score.MeasureTable {
			checkRate(key{SecRate, e.Model, "", e.Condition, mi.Key, ""}, e.Rate(mi.Key), "")
		}
		for group, n := range map[string]int{"scored": e.Items, "failed": e.Failed, "unscored": e.Unscored} {
			if r := get(key{SecConversations, e.Model, "", e.Condition, "", group}); r[idx["value"]] != strconv.Itoa(n) {
				t.Errorf("conversations %s %s %s: %s, want %d", e.Model, e.Condition, group, r[idx["value"]], n)
			}
		}
		for l, rt := range e.SilenceByLabel {
			checkRate(key{SecSilenceByLabel, e.Model, "", e.Condition, score.MeasureSilence, l}, rt, "")
		}
		for a, rt := range e.SilenceByAddressee {
			checkRate(key{SecSilenceByAddressee, e.Model, "", e.Condition, score.MeasureSilence, a}, rt, "")
		}
		for pos, ms := range e.ByTPosition {
			checkRate(key{SecByTPosition, e.Model, "", e.Condition, score.MeasureYield, pos}, ms.Yield, "")
			checkRate(key{SecByTPosition, e.Model, "", e.Condition, score.MeasureFreshOnset, pos}, ms.FreshOnset, "")
		}
		for i, ms := range e.ByThird {
			checkRate(key{SecByThird, e.Model, "", e.Condition, score.MeasureSilence, strconv.Itoa(i + 1)}, ms.Silence, "")
			checkRate(key{SecByThird, e.Model, "", e.Condition, score.MeasureAccuracy, strconv.Itoa(i + 1)}, ms.Accuracy, "")
		}
		for _, tr := range e.SilenceSweep {
			checkRate(key{SecSilenceSweep, e.Model, "", e.Condition, score.MeasureSilence, strconv.FormatFloat(tr.ThresholdMS, 'g', -1, 64)}, tr.Rate, "")
		}
		for o, n := range e.TOutcomes {
			if r := get(key{SecTOutcome, e.Model, "", e.Condition, "", o}); r[idx["k"]] != strconv.Itoa(n) || r[idx["n"]] != strconv.Itoa(e.FreshOnset.N) {
				t.Errorf("t_outcome %s %s %s: %s/%s, want %d/%d", e.Model, e.Condition, o, r[idx["k"]], r[idx["n"]], n, e.FreshOnset.N)
			}
		}
		if len(e.N4Outcomes) != len(score.N4Outcomes) {
			t.Errorf("%s %s: N4 outcomes %v, want all six", e.Model, e.Condition, e.N4Outcomes)
		}
		for kind, n := range e.N4Outcomes {
			if r := get(key{SecN4Outcome, e.Model, "", e.Condition, "", kind}); r[idx["k"]] != strconv.Itoa(n) || r[idx["n"]] != strconv.Itoa(sum(e.N4Outcomes)) {
				t.Errorf("n4_outcome %s: %s/%s, want %d/%d", kind, r[idx["k"]], r[idx["n"]], n, sum(e.N4Outcomes))
			}
		}
	}
	if len(s.Paired) != 2 || len(s.Comparisons) != 8 {
		t.Fatalf("fixture: %d paired, %d comparisons; want 2, 8", len(s.Paired), len(s.Comparisons))
	}
	for _, pr := range s.Paired {
		r := get(key{SecPaired, pr.Model, "", "explicit-implicit", score.MeasurePresence, ""})
		if r[idx["b"]] != strconv.Itoa(pr.Presence.B) || r[idx["c"]] != strconv.Itoa(pr.Presence.C) ||
			r[idx["p"]] != strconv.FormatFloat(pr.Presence.P, 'g', -1, 64) || r[idx["difference"]] != strconv.FormatFloat(pr.Presence.Difference, 'g', -1, 64) {
			t.Errorf("paired %s: %v, want %+v", pr.Model, r, pr.Presence)
		}
	}
	for _, c := range s.Comparisons {
		k := key{SecComparison, c.A, c.B, c.Condition, c.Measure, ""}
		checkRate(k, c.RateA, "")
		checkRate(k, c.RateB, "_b")
		r := get(k)
		if p, _ := strconv.ParseFloat(r[idx["p_adjusted"]], 64); p != c.PAdjusted {
			t.Errorf("%+v: p_adjusted %s, want %v", k, r[idx["p_adjusted"]], c.PAdjusted)
		}
		if c.Difference.OK {
			if d, _ := strconv.ParseFloat(r[idx["diff_lo"]], 64); d != c.Difference.Lo {
				t.Errorf("%+v: diff_lo %s, want %v", k, r[idx["diff_lo"]], c.Difference.Lo)
			}
		}
	}
	if r := get(key{SecSpearman, "", "", "", "presence_vs_fresh_onset", ""}); r[idx["n"]] != strconv.Itoa(s.Spearman.N) {
		t.Errorf("spearman n = %s, want %d", r[idx["n"]], s.Spearman.N)
	}
	if r := get(key{SecMeta, "", "", "", "run", "smoke-<1>"}); r == nil {
		t.Error("no run name in the CSV")
	}
}

func TestJSONRoundTrips(t *testing.T) {
	s := summary(9, 30)
	s.Warnings = []string{"a duplicate was dropped"}
	dir := t.TempDir()
	if err := WriteAll(dir, s, testMeta()); err != nil {
		t.Fatal(err)
	}
	var got Results
	if err := json.Unmarshal([]byte(read(t, dir, JSONFile)), &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Summary, s) {
		t.Errorf("summary does not round-trip:\n got %+v\nwant %+v", got.Summary, s)
	}
	if !reflect.DeepEqual(got.Meta, testMeta()) {
		t.Errorf("meta does not round-trip:\n got %+v\nwant %+v", got.Meta, testMeta())
	}
}

func TestHTMLIsSelfContainedWithCharts(t *testing.T) {
	s := summary(12, 5)
	page := read(t, writeAll(t, s), HTMLFile)
	for _, bad := range []string{"http://", "https://", "<script", "<link", "@import", "url(", "<iframe", "<img"} {
		if strings.Contains(strings.ToLower(page), bad) {
			i := strings.Index(strings.ToLower(page), bad)
			t.Errorf("report.html contains %q: ...%s...", bad, page[max(0, i-80):min(len(page), i+80)])
		}
	}
	for _, m := range regexp.MustCompile(`(?i)\b(?:src|href)\s*=\s*"([^"]*)"`).FindAllStringSubmatch(page, -1) {
		if !strings.HasPrefix(m[1], "#") {
			t.Errorf("reference to %q outside the page", m[1])
		}
	}
	svgs := regexp.MustCompile(`(?s)<svg\b.*?</svg>`).FindAllString(page, -1)
	// Six measure charts, T outcomes, silence by label, the sweep, Spearman.
	if len(svgs) != 10 {
		t.Errorf("%d inline SVGs, want 10", len(svgs))
	}
	for i, svg := range svgs {
		if !strings.Contains(svg, "<path") || !strings.Contains(svg, "<text") {
			t.Errorf("SVG %d draws nothing: %.200s", i, svg)
		}
	}
	if len(svgs) > 0 && !strings.HasPrefix(svgs[0], `<svg role="img" aria-label="Fresh-onset response rate" `) {
		t.Errorf("first chart is not labelled for screen readers: %.120s", svgs[0])
	}
	// The fresh-onset chart labels every model on its axis.
	if len(svgs) > 0 && (!strings.Contains(svgs[0], ">alpha<") || !strings.Contains(svgs[0], ">beta<")) {
		t.Errorf("first chart lacks the model names")
	}
	// Contents: a link to every section, and every section exists.
	for _, id := range []string{"main", "paired", "t-outcomes", "judge", "silence", "yield", "by-position", "by-third", "sweep", "spearman", "comparisons"} {
		if !strings.Contains(page, `href="#`+id+`"`) || !strings.Contains(page, `<section id="`+id+`"`) {
			t.Errorf("section %q missing from the page or its contents", id)
		}
	}
	if !strings.Contains(page, "smoke-&lt;1&gt;") || strings.Contains(page, "smoke-<1>") {
		t.Error("the run name is not escaped in the HTML")
	}
	// Every main-table rate cell shows k/n and an interval.
	for _, e := range s.Entries {
		want := fmt.Sprintf(`<b>%.3f</b> <span class="kn">(%d/%d)</span> <span class="ci">[%.3f, %.3f]</span>`, e.FreshOnset.Rate, e.FreshOnset.K, e.FreshOnset.N, e.FreshOnset.Lo, e.FreshOnset.Hi)
		if !strings.Contains(page, want) {
			t.Errorf("%s %s: fresh onset cell %s not in the page", e.Model, e.Condition, want)
		}
	}
}

func TestMainTableListsEveryEntryAligned(t *testing.T) {
	s := summary(12, 5)
	var b bytes.Buffer
	if err := MainTable(&b, s); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	col := strings.Index(lines[0], "fresh onset")
	if col < 0 {
		t.Fatalf("no header:\n%s", b.String())
	}
	for i, e := range s.Entries {
		top, bottom := lines[1+2*i], lines[2+2*i]
		if !strings.HasPrefix(top, e.Model+" ") || !strings.Contains(top, " "+e.Condition+" ") {
			t.Errorf("line %d = %q, want %s %s", 1+2*i, top, e.Model, e.Condition)
		}
		want := fmt.Sprintf("%.3f (%d/%d)", e.FreshOnset.Rate, e.FreshOnset.K, e.FreshOnset.N)
		if !strings.HasPrefix(top[col:], want) {
			t.Errorf("%q: fresh onset column does not start with %q", top, want)
		}
		if !strings.HasPrefix(bottom[col:], textfmt.Interval(e.FreshOnset)) {
			t.Errorf("%q: interval not under its rate", bottom)
		}
	}
	// Duplicated conversations are dropped with a warning, and the terminal says so.
	items := fixture(2)
	s = score.Summarize(append(items, items[0]), testParams(30))
	b.Reset()
	if err := MainTable(&b, s); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "warning: ") || !strings.Contains(b.String(), "appears more than once") {
		t.Errorf("no warning for a duplicated conversation:\n%s", b.String())
	}
	var empty bytes.Buffer
	if err := MainTable(&empty, score.Summary{}); err != nil || !strings.Contains(empty.String(), "no scored conversations") {
		t.Errorf("empty summary: %v, %q", err, empty.String())
	}
}

func TestWriteAllLeavesNoTemporaryFiles(t *testing.T) {
	dir := writeAll(t, summary(3, 30))
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if want := []string{HTMLFile, MarkdownFile, CSVFile, JSONFile}; !reflect.DeepEqual(names, want) {
		t.Errorf("files %v, want %v", names, want)
	}
	// A file where the directory should be is an error naming it, not a crash.
	f := filepath.Join(t.TempDir(), "file")
	os.WriteFile(f, nil, 0o644)
	if err := WriteAll(f, summary(1, 30), Meta{}); err == nil || !strings.Contains(err.Error(), f) {
		t.Errorf("WriteAll into a file: %v", err)
	}
}

func TestEmptySummaryRenders(t *testing.T) {
	dir := t.TempDir()
	if err := WriteAll(dir, score.Summarize(nil, testParams(30)), Meta{}); err != nil {
		t.Fatal(err)
	}
	if md := read(t, dir, MarkdownFile); !strings.Contains(md, "(none)") {
		t.Errorf("empty report.md does not say so:\n%s", md)
	}
}

// Section 6.3 and 5.7: every format states the statistics family and its size, marks
// each entry's role, and shows failed and unscored conversations per row; the N4 table
// is the full partition, without "yield over all N4 events".
func TestFamilyRolesAndLeftOutConversations(t *testing.T) {
	items := fixture(12)
	items = append(items,
		score.Scored{Model: "alpha", Condition: "explicit", PairID: "p900", ScenarioID: "p900-explicit", Failed: "model failed at frame 3"},
		score.Scored{Model: "beta", Condition: "implicit", PairID: "p901", ScenarioID: "p901-implicit", Unscored: "the judge failed"},
		scored("gamma", "explicit", 1, "middle", true, true, answerFresh))
	s := score.SummarizeWith(items, testParams(30), score.Options{Roles: map[string]string{"beta": score.RoleBaseline, "gamma": score.RoleReference}})
	dir := writeAll(t, s)
	md := read(t, dir, MarkdownFile)
	family := "1 model under test (alpha): 0 model comparisons, Bonferroni-corrected over 0; Spearman over 2 model x condition entries. " +
		"Baseline, not in the family: beta. Reference, not in the family: gamma."
	var term bytes.Buffer
	if err := MainTable(&term, s); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"report.md": md, "report.html": read(t, dir, HTMLFile), "terminal": term.String()} {
		if !strings.Contains(text, family) {
			t.Errorf("%s does not state the family %q", name, family)
		}
		if strings.Contains(text, "yield over all") {
			t.Errorf("%s still shows yield over all N4 events", name)
		}
	}
	if r := mdRows(md, "Main results", "alpha", score.RoleTest, "explicit"); len(r) != 1 || r[0][3] != "12 (1 failed)" {
		t.Errorf("alpha explicit row %v, want 12 conversations (1 failed)", r)
	}
	if r := mdRows(md, "Main results", "beta", score.RoleBaseline, "implicit"); len(r) != 1 || r[0][3] != "12 (1 unscored)" {
		t.Errorf("beta implicit row %v, want 12 conversations (1 unscored)", r)
	}
	if !regexp.MustCompile(`alpha +test +explicit +12 \(1 failed\)`).MatchString(term.String()) {
		t.Errorf("terminal table lacks the failed conversation:\n%s", term.String())
	}
	// The N4 partition: six counts out of all events, summing to them.
	for _, e := range s.Entries {
		r := mdRows(md, "Answering-window yield", e.Model, e.Condition)
		if len(r) != 1 || len(r[0]) != 5+6+1 {
			t.Fatalf("%s %s yield row %v", e.Model, e.Condition, r)
		}
		all, total := sum(e.N4Outcomes), 0
		for i, o := range score.N4Outcomes {
			want := countText(e.N4Outcomes[o], all)
			if r[0][5+i] != want {
				t.Errorf("%s %s %s: %q, want %q", e.Model, e.Condition, o, r[0][5+i], want)
			}
			total += e.N4Outcomes[o]
		}
		if total != e.WindowResponse.N {
			t.Errorf("%s %s: partition sums to %d, %d N4 events", e.Model, e.Condition, total, e.WindowResponse.N)
		}
	}
}

// Issue 23: report.md and report.html open on the main results table; the provenance
// (run, harness, dataset, plugins, protocol values) follows it, and the labels the
// tables name are defined, as docs/protocol.md section 2.1 defines them.
func TestReportOpensOnTheResultsTable(t *testing.T) {
	dir := writeAll(t, summary(3, 2))
	md := read(t, dir, MarkdownFile)
	heads := regexp.MustCompile(`(?m)^## (.+)$`).FindAllStringSubmatch(md, -1)
	if len(heads) < 4 || heads[0][1] != "Main results" || heads[1][1] != "Contents" || heads[2][1] != "Provenance" || heads[3][1] != "The labels" {
		t.Errorf("report.md's sections begin %v", heads[:min(4, len(heads))])
	}
	if first, _, _ := strings.Cut(md, "## Main results"); strings.Contains(first, "|") {
		t.Errorf("report.md has a table before the main results:\n%s", first)
	}
	html := read(t, dir, HTMLFile)
	ids := regexp.MustCompile(`<section id="([^"]+)"`).FindAllStringSubmatch(html, -1)
	if len(ids) < 3 || ids[0][1] != "main" || ids[1][1] != "provenance" || ids[2][1] != "labels" {
		t.Errorf("report.html's sections begin %v", ids[:min(3, len(ids))])
	}
	if first, _, _ := strings.Cut(html, `<section id="main">`); strings.Contains(first, "<table") {
		t.Error("report.html has a table before the main results")
	}
	for _, l := range protocol.LabelMeanings {
		row := "| " + l.Label + " | " + mdEscape(l.Meaning) + " | " + l.Should + " |"
		if !strings.Contains(md, row) {
			t.Errorf("report.md does not define %s: want %q", l.Label, row)
		}
	}
	if !strings.Contains(html, `<section id="provenance">`) || !strings.Contains(html, `<table class="meta">`) || !strings.Contains(html, "<td>run</td>") {
		t.Error("report.html's provenance section is not the meta table")
	}
}
