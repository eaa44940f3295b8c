package browsertest

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/duplexmpe/duplexmpe/core/cli"
	"github.com/duplexmpe/duplexmpe/core/report"
	"github.com/duplexmpe/duplexmpe/core/report/viewer"
	"github.com/duplexmpe/duplexmpe/sdk/plugintest"
	"github.com/duplexmpe/duplexmpe/tools/clitest"
	"github.com/duplexmpe/duplexmpe/tools/clitest/clirun"
)

func TestMain(m *testing.M) {
	code := m.Run()
	plugintest.RemoveBuilt()
	if fix.dir != "" {
		os.RemoveAll(fix.dir)
	}
	os.Exit(code)
}

// The run every test looks at: the first shipped scenario pair, spoken by flite, played
// to the silent baseline, random-talk and the Go example (which answers with speech),
// scored by pocketsphinx and the lexical judge, through the real CLI.
var fix struct {
	once   sync.Once
	dir    string // temporary; removed by TestMain
	runDir string
	err    error
	took   time.Duration
}

func runDir(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("runs real plugins end to end and a browser")
	}
	fix.once.Do(func() { fix.err = makeRun(t) })
	if fix.err != nil {
		t.Fatal(fix.err)
	}
	return fix.runDir
}

func makeRun(t *testing.T) error {
	if _, err := exec.LookPath("flite"); err != nil {
		return fmt.Errorf("flite is not installed (%v): run `make deps`", err)
	}
	bins := map[string]string{}
	for _, pkg := range []string{"plugins/flite", "plugins/silent", "plugins/random-talk", "examples/plugin-go", "plugins/pocketsphinx", "plugins/lexical-judge"} {
		bins[filepath.Base(pkg)] = plugintest.BuildGo(t, "../../../"+pkg)
	}
	dir, err := os.MkdirTemp("", "duplexmpe-browsertest-")
	if err != nil {
		return err
	}
	fix.dir = dir
	if err := clitest.WriteFirstPair(dir); err != nil {
		return err
	}
	runFile := filepath.Join(dir, "run.hcl")
	hcl := fmt.Sprintf(`
plugin "flite" { source = %q }
plugin "silent" { source = %q }
plugin "random_talk" { source = %q }
plugin "speaker" { source = %q }
plugin "pocketsphinx" { source = %q }
plugin "lexical" { source = %q }

dataset "one" {
  scenarios = "scenarios"
  tts       = plugin.flite
  voices    = { A = "kal16", B = "awb", C = "rms", D = "slt" }
  preamble  = "default"
  out       = "build/one"
}

evaluation "browser" {
  dataset = dataset.one
  models  = [plugin.silent, plugin.random_talk, plugin.speaker]
  asr     = plugin.pocketsphinx
  judge   = plugin.lexical
  out     = "runs/browser"
}
`, bins["flite"], bins["silent"], bins["random-talk"], bins["plugin-go"], bins["pocketsphinx"], bins["lexical-judge"])
	if err := os.WriteFile(runFile, []byte(hcl), 0o644); err != nil {
		return err
	}
	began := time.Now()
	code, out, errs := clirun.Run(t, dir, "run", runFile)
	if code != cli.ExitOK {
		return fmt.Errorf("duplexmpe run: exit %d\n%s\n%s", code, out, errs)
	}
	fix.took = time.Since(began)
	t.Logf("the run took %s:\n%s", fix.took.Round(time.Second), out)
	fix.runDir = filepath.Join(dir, "runs", "browser")
	return nil
}

// browser starts headless Chromium with the flags this machine needs: no sandbox (the
// tests may run as root), no GPU, and no background networking (the network is closed;
// Chromium's own update and sync calls would only fail). Console errors and uncaught
// exceptions of every page are collected.
type browser struct {
	ctx    context.Context
	mu     sync.Mutex
	errors []string
	marks  map[string]bool
	seen   *sync.Cond
}

func newBrowser(t *testing.T, width, height int64) *browser {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatalf("chromium is not installed (%v): `make deps` installs Debian's chromium for these tests", err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("autoplay-policy", "no-user-gesture-required"),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(int(width), int(height)),
	)
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	// A generous bound: nothing here is timed, it only keeps a wedged browser from
	// hanging the test binary.
	tctx, cancelT := context.WithTimeout(actx, 4*time.Minute)
	ctx, cancelB := chromedp.NewContext(tctx)
	t.Cleanup(func() { cancelB(); cancelT(); cancelA() })
	b := &browser{ctx: ctx, marks: map[string]bool{}}
	b.seen = sync.NewCond(&b.mu)
	messages := chromedp.Console(ctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			b.mu.Lock()
			switch {
			case m.Type == chromedp.ConsoleLog && strings.HasPrefix(m.Text, "browsertest-mark-"):
				b.marks[m.Text] = true
				b.seen.Broadcast()
			case m.Type == chromedp.ConsoleError || m.IsException():
				b.errors = append(b.errors, m.String()+" ("+m.URL+")")
			}
			b.mu.Unlock()
		}
	}()
	vp := chromedp.EmulateViewport(width, height)
	if width < 600 {
		vp = chromedp.EmulateViewport(width, height, chromedp.EmulateMobile)
	}
	b.do(t, vp)
	return b
}

func (b *browser) do(t *testing.T, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(b.ctx, actions...); err != nil {
		t.Fatal(err)
	}
}

// eval runs a script (awaiting the promise it may return) and decodes its value.
func eval[T any](t *testing.T, b *browser, js string) T {
	t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[T](js, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("%v\nin script: %.300s", err, js)
	}
	return v
}

var markN int

// noErrors reports the console errors of the page so far. It first logs a marker and
// waits for it, so that every message the page wrote before is in.
func (b *browser) noErrors(t *testing.T, page string) {
	t.Helper()
	markN++
	mark := fmt.Sprintf("browsertest-mark-%d", markN)
	b.do(t, chromedp.Evaluate[chromedp.Void](`console.log("`+mark+`")`))
	b.mu.Lock()
	defer b.mu.Unlock()
	for !b.marks[mark] {
		b.seen.Wait()
	}
	for _, e := range b.errors {
		t.Errorf("%s: %s", page, e)
	}
	b.errors = nil
}

func fileURL(path string) string { return "file://" + filepath.ToSlash(path) }

// screenshotDir is where the screenshots are kept: build/screenshots at the repository
// root, ignored by git, or DUPLEXMPE_SCREENSHOTS.
func screenshotDir(t *testing.T) string {
	t.Helper()
	if d := os.Getenv("DUPLEXMPE_SCREENSHOTS"); d != "" {
		return d
	}
	wd, _ := os.Getwd()
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return filepath.Join(d, "build", "screenshots")
		}
		if filepath.Dir(d) == d {
			return filepath.Join(wd, "screenshots")
		}
	}
}

// screenshot keeps the whole page, or with viewport only what the window shows.
func (b *browser) screenshot(t *testing.T, name string, viewport ...bool) {
	t.Helper()
	shot := chromedp.FullScreenshot(100)
	if len(viewport) > 0 && viewport[0] {
		shot = chromedp.CaptureScreenshot()
	}
	png, err := chromedp.Run(b.ctx, shot)
	if err != nil {
		t.Fatal(err)
	}
	dir := screenshotDir(t)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot %s (%d kB)", path, len(png)/1024)
}

// layout checks that nothing makes the page itself scroll sideways (wide tables and the
// timeline scroll inside their own boxes) and that no two charts overlap.
func (b *browser) layout(t *testing.T, page string) {
	t.Helper()
	got := eval[struct {
		ScrollWidth, InnerWidth float64
		Overlaps                []string
		Wider                   []string
	}](t, b, `(() => {
		const figs = [...document.querySelectorAll('figure, svg.timeline')].map(f => [f, f.getBoundingClientRect()]);
		const overlaps = [];
		for (let i = 0; i < figs.length; i++) for (let j = i + 1; j < figs.length; j++) {
			const a = figs[i][1], b = figs[j][1];
			if (a.width && b.width && a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1)
				overlaps.push((figs[i][0].getAttribute('aria-label') || figs[i][0].textContent.slice(0, 40)) + ' / ' + (figs[j][0].getAttribute('aria-label') || figs[j][0].textContent.slice(0, 40)));
		}
		// Boxes that scroll inside themselves may hold wider content; nothing else may be wider.
		const wider = [...document.querySelectorAll('.scroll, #tl-box, figure, p, h1, h2, nav, form, audio, table')]
			.filter(e => !e.parentElement.closest('.scroll, #tl-box'))
			.filter(e => e.getBoundingClientRect().right > innerWidth + 1).map(e => e.className || e.tagName);
		return {ScrollWidth: document.documentElement.scrollWidth, InnerWidth: innerWidth, Overlaps: overlaps, Wider: wider};
	})()`)
	if got.ScrollWidth > got.InnerWidth+1 {
		t.Errorf("%s: the page is %.0f px wide in a %.0f px window (it scrolls sideways)", page, got.ScrollWidth, got.InnerWidth)
	}
	for _, o := range got.Overlaps {
		t.Errorf("%s: charts overlap: %s", page, o)
	}
	for _, w := range got.Wider {
		t.Errorf("%s: a %s box runs past the window's right edge", page, w)
	}
}

// The report and a conversation page load with no console error, fit the window at
// 1280 and 390 px, and are kept as screenshots.
func TestPagesLoadAndFitAtTwoWidths(t *testing.T) {
	dir := runDir(t)
	page := firstPage(t, dir, "speaker")
	for _, w := range []struct {
		name          string
		width, height int64
	}{{"1280", 1280, 900}, {"390", 390, 844}} {
		t.Run(w.name, func(t *testing.T) {
			b := newBrowser(t, w.width, w.height)
			b.do(t, chromedp.Navigate(fileURL(filepath.Join(dir, report.HTMLFile))), chromedp.WaitReady(chromedp.CSS("#explore-count")))
			b.noErrors(t, "report.html")
			b.layout(t, "report.html")
			b.screenshot(t, "report-"+w.name)
			b.do(t, chromedp.Navigate(fileURL(filepath.Join(dir, page))), chromedp.WaitReady(chromedp.CSS("#timeline")))
			ok := eval[bool](t, b, `new Promise(r => { const a = document.getElementById('player');
				if (a.readyState >= 1) r(true); a.addEventListener('loadedmetadata', () => r(true)); a.addEventListener('error', () => r(false)); })`)
			if !ok {
				t.Errorf("%s: the recording did not load", page)
			}
			b.noErrors(t, page)
			b.layout(t, page)
			b.screenshot(t, "conversation-"+w.name)
		})
	}
}

// firstPage is the viewer page of the first conversation of model.
func firstPage(t *testing.T, dir, model string) string {
	t.Helper()
	html, err := os.ReadFile(filepath.Join(dir, report.HTMLFile))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`<tr id="item-[0-9a-f]+" data-model="` + model + `"[^>]*>.*?<a class="conv" href="([^"]+)"`).FindSubmatch(html)
	if m == nil {
		t.Fatalf("report.html lists no conversation page of %s", model)
	}
	return string(m[1])
}

var kOfN = regexp.MustCompile(`(\d+)/(\d+)\)`)

// Every rate cell of every table opens the explorer on exactly the events it counts: as
// many events as its denominator, as many marked pass as its numerator.
func TestEveryRateCellOpensItsEvents(t *testing.T) {
	dir := runDir(t)
	b := newBrowser(t, 1280, 900)
	b.do(t, chromedp.Navigate(fileURL(filepath.Join(dir, report.HTMLFile))), chromedp.WaitReady(chromedp.CSS("#explore-count")))
	cells := eval[[]struct {
		Section, Text, Href string
		N, K, Shown         int
	}](t, b, `(async () => {
		const out = [];
		for (const a of document.querySelectorAll('section:not(#explore) td a.c')) {
			const href = a.getAttribute('href');
			if (location.hash !== href) {
				const changed = new Promise(r => addEventListener('hashchange', r, {once: true}));
				a.click();
				await changed;
			}
			const c = document.getElementById('explore-count');
			out.push({Section: a.closest('section').id, Text: a.textContent, Href: href, N: +c.dataset.n, K: +c.dataset.k,
				Shown: [...document.querySelectorAll('#events-table tbody tr')].filter(r => !r.hidden).length});
		}
		return out;
	})()`)
	rates := 0
	for _, c := range cells {
		if c.Shown != c.N {
			t.Errorf("%s cell %q (%s): %d rows shown, the count says %d", c.Section, c.Text, c.Href, c.Shown, c.N)
		}
		if !strings.Contains(c.Href, "measure=") {
			continue
		}
		m := kOfN.FindStringSubmatch(c.Text)
		if m == nil || !regexp.MustCompile(`^\s*-?\d\.\d{3}\s*\(`).MatchString(c.Text) {
			continue // a count, a p value, a difference
		}
		rates++
		if strconv.Itoa(c.K) != m[1] || strconv.Itoa(c.N) != m[2] {
			t.Errorf("%s cell %q (%s) opens %d events with %d passing", c.Section, c.Text, c.Href, c.N, c.K)
		}
	}
	if len(cells) < 100 || rates < 40 {
		t.Errorf("%d linked cells, %d rate cells checked: too few for this run", len(cells), rates)
	}
	t.Logf("%d linked cells clicked, %d rate cells checked against their k/n", len(cells), rates)
	b.noErrors(t, "report.html")
}

// The filters change what is shown, and the fragment records them.
func TestFiltersChangeWhatIsShown(t *testing.T) {
	dir := runDir(t)
	b := newBrowser(t, 1280, 900)
	b.do(t, chromedp.Navigate(fileURL(filepath.Join(dir, report.HTMLFile))+"#explore"), chromedp.WaitReady(chromedp.CSS("#explore-count")))
	type view struct {
		Hash         string
		Shown, Convs int
		Models       []string
		Labels       []string
	}
	state := func(js string) view {
		return eval[view](t, b, `(async () => {
			`+js+`
			await new Promise(r => setTimeout(r, 0));
			const rows = [...document.querySelectorAll('#events-table tbody tr')].filter(r => !r.hidden);
			return {Hash: decodeURIComponent(location.hash), Shown: rows.length,
				Convs: [...document.querySelectorAll('#convs-table tbody tr')].filter(r => !r.hidden).length,
				Models: [...new Set(rows.map(r => r.dataset.model))], Labels: [...new Set(rows.map(r => r.dataset.label))]};
		})()`)
	}
	choose := func(name, value string) string {
		return `{ const s = document.querySelector('#filters select[name=` + name + `]'); s.value = '` + value + `';
			const changed = new Promise(r => addEventListener('hashchange', r, {once: true}));
			s.dispatchEvent(new Event('change')); await changed; }`
	}
	all := state("")
	model := state(choose("model", "speaker"))
	label := state(choose("label", "N2"))
	if all.Shown == 0 || len(all.Models) != 3 {
		t.Fatalf("unfiltered: %+v", all)
	}
	if model.Shown >= all.Shown || len(model.Models) != 1 || model.Models[0] != "speaker" || model.Hash != "#explore?model=speaker" || model.Convs != 2 {
		t.Errorf("model speaker: %+v (all: %d events)", model, all.Shown)
	}
	if label.Shown >= model.Shown || label.Shown == 0 || len(label.Labels) != 1 || label.Labels[0] != "N2" || !strings.Contains(label.Hash, "label=N2") {
		t.Errorf("model speaker, label N2: %+v", label)
	}
	back := state(`{ const changed = new Promise(r => addEventListener('hashchange', r, {once: true})); history.back(); await changed; }`)
	if back.Shown != model.Shown || back.Hash != model.Hash {
		t.Errorf("after going back: %+v, want the model filter again (%d events)", back, model.Shown)
	}
	b.noErrors(t, "report.html")
}

// From a failing cell of the main table to the conversation: the cell opens its events,
// a failing event's link opens the right conversation at that event, which shows the
// timeline, the rule, and a stereo recording whose cursor follows the playback.
func TestFailingCellOpensTheConversation(t *testing.T) {
	dir := runDir(t)
	for _, w := range []struct {
		name          string
		width, height int64
	}{{"1280", 1280, 900}, {"390", 390, 844}} {
		t.Run(w.name, func(t *testing.T) {
			b := newBrowser(t, w.width, w.height)
			b.do(t, chromedp.Navigate(fileURL(filepath.Join(dir, report.HTMLFile))), chromedp.WaitReady(chromedp.CSS("#explore-count")))
			// The speaker's explicit accuracy cell: it answers every request with the same
			// sentence, which the judge finds wrong.
			cell := eval[struct{ Text, Href string }](t, b, `(() => { const a = [...document.querySelectorAll('#main td a.c')].find(a =>
				a.getAttribute('href').includes('model=speaker') && a.getAttribute('href').includes('condition=explicit') && a.getAttribute('href').includes('measure=accuracy'));
				return a ? {Text: a.textContent, Href: a.getAttribute('href')} : {}; })()`)
			if cell.Href == "" {
				t.Fatal("no accuracy cell for speaker explicit in the main table")
			}
			b.do(t, chromedp.Click(chromedp.CSS(`#main td a.c[href="`+cell.Href+`"]`)), chromedp.WaitVisible(chromedp.CSS("#explore-count")))
			b.screenshot(t, "failing-cell-"+w.name, true)
			row := eval[struct{ Href, Scenario, Verdict, Model string }](t, b, `(() => { const r = [...document.querySelectorAll('#events-table tbody tr')].find(r => !r.hidden && r.dataset.r === 'fail');
				return r ? {Href: r.querySelector('a').getAttribute('href'), Scenario: r.querySelector('a').textContent, Verdict: r.querySelector('td.verdict').textContent, Model: r.dataset.model} : {}; })()`)
			if row.Href == "" {
				t.Fatalf("the cell %q opens no failing event", cell.Text)
			}
			// #timeline is parsed before the event rows: wait for the targeted row too, or a
			// loaded machine reads the page half parsed.
			b.do(t, chromedp.Click(chromedp.CSS(`#events-table a[href="`+row.Href+`"]`)), chromedp.WaitReady(chromedp.CSS("#timeline")),
				chromedp.WaitReady(chromedp.CSS("tr:target")))
			pg := eval[struct {
				URL, Title, Target, Rule, Verdict string
				Turns, Episodes, WordBoxes        int
				Words, Heard, Labels, Legend      []string
				Duration, Left, PPS               float64
			}](t, b, `(() => { const s = document.getElementById('timeline'), tr = document.querySelector('tr:target');
				const texts = q => [...document.querySelectorAll(q)].map(e => e.textContent);
				return {URL: location.href, Title: document.querySelector('h1').textContent, Target: tr ? tr.id : '',
					Rule: tr ? tr.querySelector('.rule').textContent : '', Verdict: tr ? tr.querySelector('td:nth-child(3)').textContent : '',
					Turns: s.querySelectorAll('rect.turn').length, Episodes: s.querySelectorAll('rect.episode').length,
					WordBoxes: s.querySelectorAll('rect.words-box').length, Words: [...document.querySelectorAll('svg.timeline text.words')].map(e => e.dataset.i + '\t' + e.textContent),
					Heard: texts('table.words td.said'), Labels: texts('dl.labels dt'), Legend: [...document.querySelectorAll('#legend span')].map(e => e.dataset.key),
					Duration: +s.dataset.duration, Left: +s.dataset.left, PPS: +s.dataset.pps}; })()`)
			_, frag, _ := strings.Cut(row.Href, "#")
			if !strings.HasSuffix(pg.URL, row.Href[strings.LastIndex(row.Href, "/")+1:]) || pg.Target != frag {
				t.Errorf("opened %s (target %q), want %s", pg.URL, pg.Target, row.Href)
			}
			if !strings.Contains(pg.Title, row.Model) || !strings.Contains(pg.Title, row.Scenario) {
				t.Errorf("page title %q is not %s on %s", pg.Title, row.Model, row.Scenario)
			}
			if pg.Verdict != row.Verdict || !strings.Contains(pg.Rule, "T ended") {
				t.Errorf("the event reads %q with rule %q; the explorer said %q", pg.Verdict, pg.Rule, row.Verdict)
			}
			if pg.Turns < 8 || pg.Episodes == 0 {
				t.Errorf("the timeline draws %d turns and %d speech episodes", pg.Turns, pg.Episodes)
			}
			// Issue 23: the model's words are on the timeline, one box per speech episode,
			// each written as the ASR heard it (cut to fit the lane), and listed in full
			// below; the labels are defined and in the legend.
			if pg.WordBoxes != pg.Episodes || len(pg.Heard) != pg.Episodes || len(pg.Words) == 0 {
				t.Errorf("%d speech episodes, %d words boxes on the timeline, %d words written there, %d in the list", pg.Episodes, pg.WordBoxes, len(pg.Words), len(pg.Heard))
			}
			heardAny := false
			for _, iw := range pg.Words {
				is, w, _ := strings.Cut(iw, "\t")
				i, err := strconv.Atoi(is)
				if err != nil || i >= len(pg.Heard) {
					t.Errorf("the timeline's words %q name no episode of the list", iw)
					continue
				}
				heardAny = heardAny || (w != "(no words heard)" && w != "")
				if !strings.HasPrefix(pg.Heard[i], strings.TrimSuffix(w, "…")) {
					t.Errorf("the timeline writes %q for episode %d; the list says %q", w, i, pg.Heard[i])
				}
			}
			if !heardAny {
				t.Errorf("no words heard in any of the model's %d episodes: %q", pg.Episodes, pg.Words)
			}
			if strings.Join(pg.Labels, " ") != "T N1 N2 N3 N4_Q N4_R" || !slices.Contains(pg.Legend, "label-N4_R") || !slices.Contains(pg.Legend, "excluded") || !slices.Contains(pg.Legend, "words") {
				t.Errorf("the page defines the labels %q; its legend: %q", pg.Labels, pg.Legend)
			}
			// The recording is as long as the conversation, and the cursor follows it: seek,
			// then play from there.
			audio := eval[struct {
				Duration, Cursor, Played float64
				Paused                   bool
			}](t, b, `(async () => { const a = document.getElementById('player'), c = document.getElementById('cursor');
				if (a.readyState < 1) await new Promise(r => a.addEventListener('loadedmetadata', r, {once: true}));
				const seeked = new Promise(r => a.addEventListener('seeked', r, {once: true}));
				a.currentTime = 12; await seeked; await new Promise(r => setTimeout(r, 0));
				const cursor = +c.getAttribute('x1');
				await a.play();
				while (a.currentTime < 12.3) await new Promise(r => setTimeout(r, 50));
				a.pause();
				return {Duration: a.duration, Cursor: cursor, Played: +c.getAttribute('x1'), Paused: a.paused}; })()`)
			if math.Abs(audio.Duration-pg.Duration) > 0.1 {
				t.Errorf("the recording lasts %.3f s, the timeline %.3f s", audio.Duration, pg.Duration)
			}
			if want := pg.Left + 12*pg.PPS; math.Abs(audio.Cursor-want) > 0.5 {
				t.Errorf("after seeking to 12 s the cursor is at x = %.1f, want %.1f", audio.Cursor, want)
			}
			if audio.Played <= audio.Cursor {
				t.Errorf("the cursor did not move while playing: %.1f then %.1f", audio.Cursor, audio.Played)
			}
			b.screenshot(t, "failing-conversation-"+w.name)
			b.noErrors(t, "the conversation page")
		})
	}
}

// The recording is stereo: the room on the left (the preamble and the turns, rebuilt
// from the dataset), the model on the right, silent when the model was silent.
func TestRecordingIsRoomLeftModelRight(t *testing.T) {
	dir := runDir(t)
	for _, model := range []string{"silent", "speaker"} {
		page := firstPage(t, dir, model)
		wav := strings.TrimSuffix(filepath.Join(dir, page), ".html") + ".wav"
		b, err := os.ReadFile(wav)
		if err != nil {
			t.Fatal(err)
		}
		le := binary.LittleEndian
		if string(b[:4]) != "RIFF" || le.Uint16(b[22:]) != 2 || le.Uint32(b[24:]) != 16000 || le.Uint16(b[34:]) != 16 {
			t.Fatalf("%s: not 16-bit stereo at 16 kHz: channels %d, rate %d, bits %d", wav, le.Uint16(b[22:]), le.Uint32(b[24:]), le.Uint16(b[34:]))
		}
		var left, right float64
		data := b[44:]
		for i := 0; i+4 <= len(data); i += 4 {
			l, r := float64(int16(le.Uint16(data[i:]))), float64(int16(le.Uint16(data[i+2:])))
			left += l * l
			right += r * r
		}
		n := float64(len(data) / 4)
		left, right = math.Sqrt(left/n)/32768, math.Sqrt(right/n)/32768
		if left < 0.01 {
			t.Errorf("%s: the room channel is silent (RMS %.4f)", model, left)
		}
		if model == "silent" && right != 0 || model == "speaker" && right < 0.005 {
			t.Errorf("%s: the model channel has RMS %.4f", model, right)
		}
		var info struct {
			Room string `json:"room"`
		}
		if raw, err := os.ReadFile(strings.TrimSuffix(wav, ".wav") + ".audio.json"); err != nil || json.Unmarshal(raw, &info) != nil || info.Room != "" {
			t.Errorf("%s: the room channel was not rebuilt: %q (%v)", model, info.Room, err)
		}
	}
}

// Rendered again with no room for any recording (a copy of the run, which the other tests
// share), a conversation page plays the model's stored audible.flac in the browser, with
// the timeline cursor following it, and says the recording was left out.
func TestPageWithoutItsRecordingPlaysTheAudibleFLAC(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	if out, err := exec.Command("cp", "-r", runDir(t), dir).CombinedOutput(); err != nil {
		t.Fatalf("copying the run: %v\n%s", err, out)
	}
	s, meta, err := report.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	meta.RecordingsBudget = 1
	if err := report.WriteAll(dir, s, meta); err != nil {
		t.Fatal(err)
	}
	page := firstPage(t, dir, "speaker")
	if wavs, _ := filepath.Glob(filepath.Join(dir, viewer.ViewerDir, "*.wav")); len(wavs) != 0 {
		t.Errorf("a budget of one byte left %d recordings", len(wavs))
	}
	b := newBrowser(t, 1280, 900)
	b.do(t, chromedp.Navigate(fileURL(filepath.Join(dir, page))), chromedp.WaitReady(chromedp.CSS("#timeline")))
	got := eval[struct {
		Src, Note               string
		Duration, Start, Cursor float64
	}](t, b, `(async () => { const a = document.getElementById('player'), c = document.getElementById('cursor');
		const ok = a.readyState >= 1 || await new Promise(r => { a.addEventListener('loadedmetadata', () => r(true)); a.addEventListener('error', () => r(false)); });
		if (!ok) return {Src: a.currentSrc, Note: 'did not load', Duration: 0, Start: 0, Cursor: 0};
		const start = +c.getAttribute('x1'), seeked = new Promise(r => a.addEventListener('seeked', r, {once: true}));
		a.currentTime = 5; await seeked; await new Promise(r => setTimeout(r, 0));
		return {Src: a.currentSrc, Note: document.getElementById('left-out').textContent, Duration: a.duration, Start: start, Cursor: +c.getAttribute('x1')}; })()`)
	if !strings.HasSuffix(got.Src, "/audible.flac") || got.Duration < 10 {
		t.Errorf("%s plays %q for %.1f s (%s); want the item's audible.flac", page, got.Src, got.Duration, got.Note)
	}
	if !strings.Contains(got.Note, "left out to stay within") || !strings.Contains(got.Note, "--recordings-budget") {
		t.Errorf("%s says %q", page, got.Note)
	}
	if got.Cursor <= got.Start {
		t.Errorf("after seeking to 5 s the cursor is at x = %.1f, from %.1f", got.Cursor, got.Start)
	}
	b.screenshot(t, "conversation-without-recording")
	b.noErrors(t, page)
}
