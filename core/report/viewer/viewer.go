package viewer

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/duplexmpe/duplexmpe/core/atomicfile"
	"github.com/duplexmpe/duplexmpe/core/audio"
	"github.com/duplexmpe/duplexmpe/core/dataset"
	"github.com/duplexmpe/duplexmpe/core/protocol"
	"github.com/duplexmpe/duplexmpe/core/store"
)

// The viewer is a directory next to report.html: one page per conversation
// (viewer/<id>.html) and its stereo recording (viewer/<id>.wav: the room on the left,
// the model on the right). It opens from disk (file://) with no server and no network.
// Audio does not go into the HTML: at 16 kHz, 16 bits, two channels, a 75 s conversation
// is 4.8 MB, so the 96 conversations of bench.hcl would make a 460 MB page (more in
// base64); as files, the browser loads only the one being played. At paper scale the
// recordings of every conversation would be ten times the run store, so they are written
// within a budget (Options.RecordingsBudget), conversations with a failed decision first; a
// page without one plays the model's stored audible output.
const (
	ViewerDir = store.ViewerDir
	// viewerRate is the rate of the viewer's recordings: enough for speech, a third of
	// the size of the model's own 24 kHz float audio.
	viewerRate = 16000
	// viewerAudioVersion changes when the recordings are made differently, so that
	// recordings cached from an older harness are made again.
	viewerAudioVersion = "3"
)

// audioInfo is what the viewer knows of a conversation's sound, stored beside its
// recording (viewer/<id>.audio.json) so that re-rendering does not redo the audio.
type AudioInfo struct {
	Key string `json:"key"`
	// Audible: the item has its audible output (File: audible.flac, or audible.wav in
	// runs written before the FLAC store). PeakDBFS and Seconds describe it.
	Audible  bool    `json:"audible"`
	File     string  `json:"file,omitempty"`
	PeakDBFS float64 `json:"peak_dbfs"`
	Seconds  float64 `json:"seconds"`
	// Bytes is the size of the recording (viewer/<id>.wav), written or not; 0 when
	// there is neither the model's audio nor the room to make one of.
	Bytes int64 `json:"bytes,omitempty"`
	// Recording is set when viewer/<id>.wav was written; LeftOut when it could have been
	// but the recordings budget (Budget bytes) was spent before its turn.
	Recording bool  `json:"recording"`
	LeftOut   bool  `json:"left_out,omitempty"`
	Budget    int64 `json:"budget,omitempty"`
	// Room is empty when the left channel is the rebuilt room, else why it is silent.
	Room string `json:"room,omitempty"`
	// Problem says why there is no recording at all.
	Problem string `json:"problem,omitempty"`
}

// audioFloorDBFS: a model whose audible output peaks above this emitted sound (a
// silent model writes exact zeros; dither and noise floors sit far below it).
const audioFloorDBFS = -40.0

// emitted reports whether the model made any sound worth calling audio.
func (a AudioInfo) Emitted() bool { return a.Audible && a.PeakDBFS > audioFloorDBFS }

func wavName(id string) string  { return id + ".wav" }
func pageName(id string) string { return id + ".html" }
func infoName(id string) string { return id + ".audio.json" }

// writeRecordings makes (or reuses) the stereo recordings of the conversations, in
// parallel, within budget bytes (0: none), and returns what it knows of
// each one's audio, by item id. The budget goes in a fixed order, so the same run gets
// the same recordings: first the conversations with a failed decision (recordingOrder),
// then the rest, each in item order, until one does not fit; the pages of the others play
// the model's stored audible output. A recording left out is deleted.
func writeRecordings(outDir string, convs []*Conv, room *roomSource, budget int64) (map[string]AudioInfo, error) {
	vdir := filepath.Join(outDir, ViewerDir)
	if err := os.MkdirAll(vdir, 0o755); err != nil {
		return nil, fmt.Errorf("viewer: %w", err)
	}
	order := recordingOrder(convs)
	spend := &budgetTurns{budget: budget}
	spend.cond = sync.NewCond(&spend.mu)
	out := make(map[string]AudioInfo, len(convs))
	var mu sync.Mutex
	var firstErr error
	type job struct {
		turn int
		c    *Conv
	}
	next := make(chan job)
	var wg sync.WaitGroup
	for range max(1, min(runtime.GOMAXPROCS(0), len(convs))) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range next {
				s := prepareSound(vdir, j.c, room)
				info, err := s.finish(vdir, j.c, room, spend.admit(j.turn, s.info.Bytes), budget)
				mu.Lock()
				out[j.c.Row.ID] = info
				if err != nil && firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
			}
		}()
	}
	for turn, i := range order {
		next <- job{turn, convs[i]}
	}
	close(next)
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	return out, removeStale(vdir, convs)
}

// recordingOrder is the order in which the conversations get their recordings: those
// with a failed decision (hasFailure) first, then the rest, each in item order. It
// returns indices into convs.
func recordingOrder(convs []*Conv) []int {
	var first, rest []int
	for i, c := range convs {
		if hasFailure(c) {
			first = append(first, i)
		} else {
			rest = append(rest, i)
		}
	}
	return append(first, rest...)
}

// hasFailure reports whether a reader of the main table would come to the conversation
// from a failure: it failed to run, or one of its decisions failed (a T turn without a
// fresh onset or a correct answer, a silence window not kept, an eligible N4 event the
// model did not yield). An ineligible N4 event is no decision.
func hasFailure(c *Conv) bool {
	if c.Failure != "" || (c.Scored != nil && c.Scored.Failed != "") {
		return true
	}
	for _, v := range EventsOf(c.Scored) {
		if !v.Pass && !v.Excluded {
			return true
		}
	}
	return false
}

// budgetTurns hands out the recordings budget one conversation at a time, in
// recordingOrder, whichever worker finishes preparing first: what gets a recording
// never depends on scheduling.
type budgetTurns struct {
	mu     sync.Mutex
	cond   *sync.Cond
	next   int // the turn being decided
	used   int64
	budget int64
	spent  bool // a recording did not fit: no later one gets in
}

// admit waits for turn and reports whether a recording of size bytes (0: none can be
// made) is within the budget.
func (b *budgetTurns) admit(turn int, size int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	for b.next != turn {
		b.cond.Wait()
	}
	b.next++
	b.cond.Broadcast()
	if size <= 0 {
		return false
	}
	if b.spent || b.used+size > b.budget {
		b.spent = true
		return false
	}
	b.used += size
	return true
}

// removeStale deletes viewer files of items no longer in the run directory.
func removeStale(vdir string, convs []*Conv) error {
	keep := map[string]bool{}
	for _, c := range convs {
		keep[wavName(c.Row.ID)], keep[pageName(c.Row.ID)], keep[infoName(c.Row.ID)] = true, true, true
	}
	ents, err := os.ReadDir(vdir)
	if err != nil {
		return fmt.Errorf("viewer: %w", err)
	}
	for _, e := range ents {
		name := e.Name()
		id, _, _ := strings.Cut(name, ".")
		if keep[name] || e.IsDir() || !itemID.MatchString(id) {
			continue
		}
		if err := os.Remove(filepath.Join(vdir, name)); err != nil {
			return fmt.Errorf("viewer: removing a stale viewer file: %w", err)
		}
	}
	return nil
}

// sound is a conversation's audio facts and, when they were computed rather than read
// from viewer/<id>.audio.json, its two channels at the viewer's rate.
type sound struct {
	info        AudioInfo
	left, right []float32
	cached      bool
}

// prepareSound reads the facts stored beside the recording when they were made from the
// same inputs, else reads the model's audio and rebuilds the room. A conversation whose
// audio cannot be made gets facts saying why, never an error.
func prepareSound(vdir string, c *Conv, room *roomSource) sound {
	key := recordingKey(c, room)
	var old AudioInfo
	if readSmallJSON(filepath.Join(vdir, infoName(c.Row.ID)), &old) == nil && old.Key == key {
		return sound{info: old, cached: true}
	}
	return makeSound(c, room, key)
}

func makeSound(c *Conv, room *roomSource, key string) sound {
	s := sound{info: AudioInfo{Key: key}}
	info := &s.info
	var model audio.PCM
	if path := store.AudibleFile(c.Dir); path != "" {
		info.File = filepath.Base(path)
		pcm, err := audio.ReadFile(path)
		if err != nil {
			info.Problem = info.File + ": " + err.Error()
		} else {
			model = pcm
			info.Audible, info.PeakDBFS, info.Seconds = true, pcm.PeakdBFS(), pcm.Duration()
			if math.IsInf(info.PeakDBFS, -1) {
				info.PeakDBFS = -200 // JSON has no infinity; far below any floor
			}
		}
	} else {
		info.Problem = "the item has no " + store.AudibleFLAC
	}
	left, err := room.rebuild(c)
	if err != nil {
		info.Room = err.Error()
	}
	if info.Audible || err == nil {
		s.left, s.right = toViewerRate(left), toViewerRate(model)
		info.Bytes = stereoBytes(max(len(s.left), len(s.right)))
	}
	return s
}

// finish writes viewer/<id>.wav when admitted (unless the one there was made from the
// same inputs) or deletes it when not, and stores the facts beside it. Only a file that
// cannot be written is an error.
func (s sound) finish(vdir string, c *Conv, room *roomSource, admitted bool, budget int64) (AudioInfo, error) {
	id := c.Row.ID
	wav := filepath.Join(vdir, wavName(id))
	info := s.info
	info.Recording, info.LeftOut, info.Budget = false, false, 0
	switch {
	case admitted:
		if fi, err := os.Stat(wav); !s.cached || err != nil || fi.Size() != info.Bytes {
			if s.cached {
				s = makeSound(c, room, info.Key)
			}
			if err := writeStereo(wav, s.left, s.right); err != nil {
				return info, fmt.Errorf("viewer: %w", err)
			}
		}
		info.Recording = true
	case info.Bytes > 0:
		info.LeftOut, info.Budget = true, budget
		fallthrough
	default:
		if err := os.Remove(wav); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return info, fmt.Errorf("viewer: removing a recording: %w", err)
		}
	}
	b, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return info, fmt.Errorf("viewer: %w", err)
	}
	return info, writeDerived(filepath.Join(vdir, infoName(id)), append(b, '\n'))
}

// stereoBytes is the size of a 16-bit stereo WAV file of n samples a channel.
func stereoBytes(n int) int64 { return 44 + 4*int64(n) }

// recordingKey names every input of a recording: the model's audio (by size and
// modification time: it is only ever replaced whole), the record files, the scenario as
// the dataset holds it now and the dataset's preamble (clips are content-addressed, so
// their names stand for their content; rebuild checks their hashes when it reads them).
func recordingKey(c *Conv, room *roomSource) string {
	h := sha256.New()
	fmt.Fprintf(h, "viewer audio %s\n", viewerAudioVersion)
	if path := store.AudibleFile(c.Dir); path != "" {
		if fi, err := os.Stat(path); err == nil {
			fmt.Fprintf(h, "audible %s %d %d\n", filepath.Base(path), fi.Size(), fi.ModTime().UnixNano())
		}
	}
	for _, f := range []string{store.ItemFile, store.TimelineFile, store.SessionFile} {
		b, _ := os.ReadFile(filepath.Join(c.Dir, f))
		fmt.Fprintf(h, "%s %d\n", f, len(b))
		h.Write(b)
	}
	if room.err != nil {
		fmt.Fprintf(h, "no dataset: %v\n", room.err)
	} else {
		fmt.Fprintf(h, "dataset %s preamble %s\n", room.ds.Dir, room.ds.PreamblePath())
		if sc := room.byID[c.Meta.ScenarioID]; sc != nil {
			b, _ := json.Marshal(sc)
			h.Write(b)
		}
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// toViewerRate resamples p to the viewer's rate; no audio gives no samples.
func toViewerRate(p audio.PCM) []float32 {
	if p.Rate <= 0 {
		return nil
	}
	return audio.Resample(p, viewerRate).Samples
}

// writeStereo writes a 16-bit PCM stereo WAV, atomically (a derived file: not synced,
// see writeDerived): left and right are at the same rate; the shorter is padded with
// silence.
func writeStereo(path string, left, right []float32) error {
	return atomicfile.Replace(path, func(w io.Writer) error {
		return encodeStereo(w, viewerRate, max(len(left), len(right)), left, right)
	})
}

func encodeStereo(w io.Writer, rate, n int, left, right []float32) error {
	data := uint64(n) * 4
	if data > math.MaxUint32-44 {
		return fmt.Errorf("%d samples do not fit in a WAV file", n)
	}
	le := binary.LittleEndian
	hdr := make([]byte, 44)
	copy(hdr[0:], "RIFF")
	le.PutUint32(hdr[4:], uint32(36+data))
	copy(hdr[8:], "WAVEfmt ")
	le.PutUint32(hdr[16:], 16)
	le.PutUint16(hdr[20:], 1) // integer PCM
	le.PutUint16(hdr[22:], 2) // channels
	le.PutUint32(hdr[24:], uint32(rate))
	le.PutUint32(hdr[28:], uint32(rate*4))
	le.PutUint16(hdr[32:], 4)
	le.PutUint16(hdr[34:], 16)
	copy(hdr[36:], "data")
	le.PutUint32(hdr[40:], uint32(data))
	if _, err := w.Write(hdr); err != nil {
		return err
	}
	sample := func(x []float32, i int) uint16 {
		if i >= len(x) {
			return 0
		}
		s := math.Round(float64(x[i]) * (1 << 15))
		return uint16(int16(max(-32768, min(32767, s))))
	}
	var b [4]byte
	for i := range n {
		le.PutUint16(b[0:], sample(left, i))
		le.PutUint16(b[2:], sample(right, i))
		if _, err := w.Write(b[:]); err != nil {
			return err
		}
	}
	return nil
}

// datasetScenario is the gold answer and request text source of the page, when the
// dataset holds the scenario that was played.
func datasetScenario(room *roomSource, c *Conv) *dataset.Scenario {
	sc, err := room.scenario(c)
	if err != nil {
		return nil
	}
	return sc
}

// Options say how to write the viewer.
type Options struct {
	// Protocol is the run's protocol constants, for the rules the pages quote.
	Protocol protocol.Params
	// Dataset is the dataset the run played, read once by the caller (report.Run,
	// LoadDataset): the room channel is rebuilt from its clips and the gold answers shown;
	// nil, neither, and DatasetErr (or the lack of a dataset_dir) says why.
	Dataset    *dataset.Dataset
	DatasetErr error
	// RecordingsBudget bounds the bytes of the stereo recordings; the caller gives it
	// (the report: its Meta's, or the plan's default). 0 means no recordings: every
	// page plays the item's stored audible output.
	RecordingsBudget int64
	// Report is the report page beside the viewer directory (report.html), which the
	// pages link back to.
	Report string
}

// Write writes the viewer directory of the run directory runDir: every conversation's
// recording and page. It returns the audio facts by item id and each page's path
// relative to runDir.
func Write(runDir string, convs []*Conv, o Options) (map[string]AudioInfo, map[string]string, error) {
	room := newRoom(o.Dataset, o.DatasetErr)
	audio, err := writeRecordings(runDir, convs, room, o.RecordingsBudget)
	if err != nil {
		return nil, nil, err
	}
	pages := map[string]string{}
	for i, c := range convs {
		if c.Row.Model == "" {
			continue // item.json unreadable: the report lists it with its problem
		}
		page, err := conversationPage(c, audio[c.Row.ID], room, o, navLinks(convs, i))
		if err != nil {
			return nil, nil, fmt.Errorf("viewer: page of item %s: %w", c.Row.ID, err)
		}
		if err := writeDerived(filepath.Join(runDir, ViewerDir, pageName(c.Row.ID)), page); err != nil {
			return nil, nil, err
		}
		pages[c.Row.ID] = ViewerDir + "/" + pageName(c.Row.ID)
	}
	return audio, pages, nil
}

// writeDerived writes a viewer file that the next rendering can make again: a file with
// the same content is left alone, and a changed one is replaced atomically but not
// synced (atomicfile.Replace), since a run has thousands of them and a file lost in a
// crash is only made again.
func writeDerived(path string, data []byte) error {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
		return nil
	}
	if err := atomicfile.Replace(path, func(w io.Writer) error { _, err := w.Write(data); return err }); err != nil {
		return fmt.Errorf("viewer: %w", err)
	}
	return nil
}

// navLinks are a page's links to its neighbours: the previous and next conversation of
// the same model and condition, the other version of its pair, and the same scenario
// played by the other models.
func navLinks(convs []*Conv, i int) []pageLink {
	c := convs[i].Row
	var out []pageLink
	same := func(j int) bool {
		o := convs[j].Row
		return o.Model == c.Model && o.Condition == c.Condition
	}
	if i > 0 && same(i-1) {
		out = append(out, pageLink{"previous: " + convs[i-1].Row.Scenario, pageName(convs[i-1].Row.ID)})
	}
	if i+1 < len(convs) && same(i+1) {
		out = append(out, pageLink{"next: " + convs[i+1].Row.Scenario, pageName(convs[i+1].Row.ID)})
	}
	for _, o := range convs {
		r := o.Row
		switch {
		case r.ID == c.ID || r.Model == "":
		case r.Model == c.Model && c.Pair != "" && r.Pair == c.Pair && r.Condition != c.Condition:
			out = append(out, pageLink{"the " + r.Condition + " version", pageName(r.ID)})
		case r.Model != c.Model && r.Scenario == c.Scenario:
			out = append(out, pageLink{r.Model + " on this scenario", pageName(r.ID)})
		}
	}
	return out
}
