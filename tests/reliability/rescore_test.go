package reliability

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRescoreFromAudio scores a run, deletes every
// item's verdicts and the transcript and judgement caches, scores again with a decoder
// pool of another size (so the clips reach other decoders, in another order), and expects
// every verdict file (transcripts included) and the summary byte for byte as before: a
// transcript is a function of the audio alone (issue 16).
func TestRescoreFromAudio(t *testing.T) {
	dir := t.TempDir()
	scen := scenarios(t, dir, 2)
	runFile := killRunFile(t, dir, scen, filepath.Join(dir, "dataset"))
	if code, out, _, _ := duplexmpe(t, dir, "build", runFile); code != 0 {
		t.Fatalf("building the dataset: exit %d\n%s", code, out)
	}
	if code, out, _, _ := duplexmpe(t, dir, "run", runFile); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	runDir := filepath.Join(dir, "runs", "e")
	before := verdictFiles(t, runDir)
	if len(before) == 0 {
		t.Fatal("the run stored no verdicts")
	}
	heard := 0
	for _, v := range before {
		if bytes.Contains(v, []byte(`"transcript"`)) {
			heard++
		}
	}
	if heard == 0 {
		t.Fatal("no verdict holds a transcript: the test would not see a change in one")
	}
	summary, err := os.ReadFile(filepath.Join(runDir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}

	for id := range before {
		if err := os.Remove(filepath.Join(runDir, "items", id, "verdicts.json")); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.RemoveAll(filepath.Join(runDir, "cache")); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(runFile)
	if err != nil {
		t.Fatal(err)
	}
	other := strings.Replace(string(src), "decoders = 1", "decoders = 3", 1)
	if other == string(src) {
		t.Fatal("the run file has no decoders setting to change")
	}
	if err := os.WriteFile(runFile, []byte(other), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _, _ := duplexmpe(t, dir, "score", runDir)
	if code != 0 {
		t.Fatalf("score after deleting the verdicts: exit %d\n%s", code, out)
	}
	if !strings.Contains(out, "transcri") {
		t.Logf("score output:\n%s", out)
	}
	after := verdictFiles(t, runDir)
	differ := 0
	for id, v := range before {
		if !bytes.Equal(v, after[id]) {
			differ++
			t.Errorf("item %s: verdicts differ after re-scoring from the audio", id)
		}
	}
	if got, _ := os.ReadFile(filepath.Join(runDir, "summary.json")); !bytes.Equal(got, summary) {
		differ++
		t.Error("summary.json differs after re-scoring from the audio")
	}
	report(t, map[string]any{"rescored_items": len(before), "with_transcripts": heard, "differ": differ})
}

// verdictFiles reads every item's verdicts.json, by item id.
func verdictFiles(t *testing.T, runDir string) map[string][]byte {
	t.Helper()
	ids, err := os.ReadDir(filepath.Join(runDir, "items"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, e := range ids {
		b, err := os.ReadFile(filepath.Join(runDir, "items", e.Name(), "verdicts.json"))
		if err == nil {
			out[e.Name()] = b
		}
	}
	return out
}
