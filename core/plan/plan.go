// Package plan estimates what a run will cost before it spends anything, like
// `terraform plan`: given the items a run expands to (one per model, conversation and
// repeat, each with its state in the run store and the length of its conversation) and each
// model's rates, it counts what is done and what is left, and estimates the audio
// hours, the disk of the run store, and the time to play and to score, per model and in
// total. Rates are measured on past run directories (Measure: the frames and the step
// latency in session.json, the size of every item's files) or configured; a figure
// whose rate is unknown is reported as unknown, never guessed silently.
//
// The package knows nothing of run files or plugins: core/app turns the run's plan
// (evaluate.Survey, the one `run` plays from) into the items (app.Plan,
// Planned.Estimate) and the CLI prints the estimate (`duplexmpe plan`, and `run` before
// the first conversation plays).
package plan

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"

	"github.com/duplexmpe/duplexmpe/core/audio"
	"github.com/duplexmpe/duplexmpe/core/store"
)

// Item is one (model, conversation) of the run.
type Item struct {
	Model    string
	Scenario string
	Status   store.ItemState
	// AudioS is the length of the conversation as played, in seconds: the preamble,
	// the turns, the protocol's gaps and waits.
	AudioS float64
}

// Rates are one model's costs. A zero rate is unknown.
type Rates struct {
	// RTF is the model's compute per second of conversation (the summed step latency
	// over the played length): play time is AudioS x RTF, plus PlayOverheadS per
	// conversation (the harness: VAD, scheduling, saving).
	RTF           float64 `json:"rtf,omitempty"`
	PlayOverheadS float64 `json:"play_overhead_s,omitempty"`
	// DiskPerAudioS and DiskPerItem make the bytes of one item: its audio grows with
	// its length, its JSON files per item.
	DiskPerAudioS float64 `json:"disk_per_audio_s,omitempty"`
	DiskPerItem   float64 `json:"disk_per_item,omitempty"`
	// ScorePerItemS is the time to score one conversation (VAD, ASR, judge).
	ScorePerItemS float64 `json:"score_per_item_s,omitempty"`
	// Frame is the model's input stream as its played items record it (zero: not
	// measured): conversation lengths are counted at its frames (ConversationSeconds).
	Frame Frame `json:"frame,omitempty"`
	// Source says where the rates come from, e.g. "measured: 48 items of runs/x".
	Source string `json:"source,omitempty"`
}

// merge fills the unknown rates of r from o.
func (r Rates) merge(o Rates) Rates {
	fill := func(a *float64, b float64) {
		if *a == 0 {
			*a = b
		}
	}
	fill(&r.RTF, o.RTF)
	fill(&r.PlayOverheadS, o.PlayOverheadS)
	fill(&r.DiskPerAudioS, o.DiskPerAudioS)
	fill(&r.DiskPerItem, o.DiskPerItem)
	fill(&r.ScorePerItemS, o.ScorePerItemS)
	if r.Frame == (Frame{}) {
		r.Frame = o.Frame
	}
	if r.Source == "" {
		r.Source = o.Source
	} else if o.Source != "" && o.Source != r.Source {
		r.Source += "; " + o.Source
	}
	return r
}

// What the report adds once the run is scored: a page per conversation, and the
// conversation viewer's recordings (viewer/<id>.wav, 16-bit stereo at 16 kHz:
// core/report) for every second of conversation until RecordingsBudget is spent
// (conversations with a failed decision first; the others' pages play the stored
// audible output instead). Without the budget the recordings of a paper-scale run would
// be ten times its run store (docs/scale.md).
const (
	ReportBytesPerAudioS = 16000 * 2 * 2
	ReportBytesPerItem   = 32e3
	// RecordingsBudget is the default byte budget of the viewer's recordings, the one
	// the report writes to and the plan counts (core/report.Meta.RecordingsBudget
	// changes it for one report).
	RecordingsBudget = 2 << 30
)

// Counts are items by status; Stale items are not among Items.
type Counts struct {
	Items   int `json:"items"`
	Done    int `json:"done"`
	Todo    int `json:"todo"`
	Failed  int `json:"failed"`
	Damaged int `json:"damaged"`
	Stale   int `json:"stale"`
}

// ToPlay is how many items a run plays: everything not done.
func (c Counts) ToPlay() int { return c.Items - c.Done }

func (c *Counts) add(s store.ItemState) {
	if s == store.StateStale {
		c.Stale++
		return
	}
	c.Items++
	switch s {
	case store.StateDone:
		c.Done++
	case store.StateFailed:
		c.Failed++
	case store.StateDamaged:
		c.Damaged++
	default:
		c.Todo++
	}
}

// Model is the estimate for one model (or, as Estimate.Total, for all). A figure is NaN
// when a rate it needs is unknown.
type Model struct {
	Model string `json:"model"`
	Counts
	AudioHours       float64 `json:"audio_hours"`         // every item
	AudioHoursToPlay float64 `json:"audio_hours_to_play"` // the items a run plays
	DiskBytes        float64 `json:"disk_bytes"`          // the run store when every item is done
	DiskBytesToPlay  float64 `json:"disk_bytes_to_play"`  // what playing the items left writes: run's disk check
	ReportBytes      float64 `json:"report_bytes"`        // the report's viewer/ when every item is scored
	PlaySeconds      float64 `json:"play_s"`              // to play what is left, one conversation at a time
	ScoreSeconds     float64 `json:"score_s"`             // to score every item from nothing
	Rates            Rates   `json:"rates"`
}

// Estimate is the plan's summary.
type Estimate struct {
	Models []Model `json:"models"` // in the order models first appear in the items
	Total  Model   `json:"total"`
}

// EstimateItems sums items per model with rates[model], whose unknown rates fall back to
// defaults.
func EstimateItems(items []Item, rates map[string]Rates, defaults Rates) Estimate {
	var est Estimate
	index := map[string]int{}
	var recordings []float64 // per model: the viewer's recordings without a budget
	for _, it := range items {
		i, ok := index[it.Model]
		if !ok {
			i = len(est.Models)
			index[it.Model] = i
			est.Models = append(est.Models, Model{Model: it.Model, Rates: rates[it.Model].merge(defaults)})
			recordings = append(recordings, 0)
		}
		m := &est.Models[i]
		m.add(it.Status)
		if it.Status == store.StateStale {
			continue
		}
		r := m.Rates
		m.AudioHours += it.AudioS / 3600
		m.DiskBytes += ItemBytes(r, it.AudioS)
		m.ScoreSeconds += known(r.ScorePerItemS) * r.ScorePerItemS
		m.ReportBytes += ReportBytesPerItem
		recordings[i] += it.AudioS * ReportBytesPerAudioS
		if it.Status != store.StateDone {
			m.AudioHoursToPlay += it.AudioS / 3600
			m.DiskBytesToPlay += ItemBytes(r, it.AudioS)
			m.PlaySeconds += known(r.RTF) * (it.AudioS*r.RTF + r.PlayOverheadS)
		}
	}
	capRecordings(&est, recordings)
	est.Total.Model = "total"
	for _, m := range est.Models {
		t := &est.Total
		t.Items += m.Items
		t.Done += m.Done
		t.Todo += m.Todo
		t.Failed += m.Failed
		t.Damaged += m.Damaged
		t.Stale += m.Stale
		t.AudioHours += m.AudioHours
		t.AudioHoursToPlay += m.AudioHoursToPlay
		t.DiskBytes += m.DiskBytes
		t.DiskBytesToPlay += m.DiskBytesToPlay
		t.ReportBytes += m.ReportBytes
		t.PlaySeconds += m.PlaySeconds
		t.ScoreSeconds += m.ScoreSeconds
	}
	return est
}

// ItemBytes is the one formula of what an item of audioS seconds takes in the run store
// at rates r (NaN when they are unknown): its audio, growing with its length, and its
// other files (records and verdicts).
func ItemBytes(r Rates, audioS float64) float64 {
	return known(r.DiskPerItem, r.DiskPerAudioS) * (r.DiskPerItem + audioS*r.DiskPerAudioS)
}

// ReportBytes is the one formula of what a report of items conversations lasting
// audioS seconds in all adds: a page per conversation and the viewer's recordings,
// within budget (RecordingsBudget when budget is 0).
func ReportBytes(items int, audioS float64, budget float64) float64 {
	if budget <= 0 {
		budget = RecordingsBudget
	}
	return float64(items)*ReportBytesPerItem + min(audioS*ReportBytesPerAudioS, budget)
}

// ScoreBytes is the one formula of what scoring todo conversations of a run of items
// conversations lasting audioS seconds in all writes: the verdicts of each conversation
// scored (the default rates' files per item, which include them) and the report
// written again for every item (ReportBytes, within budget; 0: RecordingsBudget).
func ScoreBytes(todo, items int, audioS, budget float64) float64 {
	return float64(todo)*Defaults.DiskPerItem + ReportBytes(items, audioS, budget)
}

// capRecordings adds the viewer's recordings to each model's report bytes, within
// RecordingsBudget for the whole report: over it, each model gets its share of the
// budget (which model's recordings are left out depends on the verdicts, unknown here).
func capRecordings(est *Estimate, recordings []float64) {
	var all float64
	for _, r := range recordings {
		all += r
	}
	share := 1.0
	if all > RecordingsBudget {
		share = RecordingsBudget / all
	}
	for i, r := range recordings {
		est.Models[i].ReportBytes += r * share
	}
}

// known is 1 when every rate is known, NaN otherwise, so that a sum over an unknown
// rate stays unknown.
func known(rates ...float64) float64 {
	for _, r := range rates {
		if r == 0 {
			return math.NaN()
		}
	}
	return 1
}

// Measure reads the finished items of run directories and returns each model's
// measured rates: its RTF (the summed step latency over the conversation played), the
// bytes of its audio per second played, and the bytes of its other files per item.
// The audio of a run written before the FLAC store (audible.wav, float32) is encoded to
// measure it, on up to wavSample items per model. Directories that do not exist are
// skipped.
func Measure(dirs ...string) (map[string]Rates, error) {
	type acc struct {
		items                     int
		audioS, computeS, other   float64
		audioSampledS, audioBytes float64
		wavSampled                int
		dirs                      []string
		frame                     Frame
	}
	accs := map[string]*acc{}
	for _, dir := range dirs {
		if _, err := os.Stat(filepath.Join(dir, store.ItemsDir)); errors.Is(err, fs.ErrNotExist) {
			continue
		} else if err != nil {
			return nil, fmt.Errorf("plan: %w", err)
		}
		for _, ic := range store.ReadItems(dir) {
			item := ic.Dir
			if ic.Marker != store.Done || ic.Meta == nil || ic.Session == nil || ic.Session.Format.InputRate <= 0 {
				continue // unfinished or damaged: not a measurement
			}
			meta, s := ic.Meta, ic.Session
			a := accs[meta.Model]
			if a == nil {
				a = &acc{}
				accs[meta.Model] = a
			}
			if len(a.dirs) == 0 || a.dirs[len(a.dirs)-1] != dir {
				a.dirs = append(a.dirs, dir)
			}
			audioS := float64(s.Frames*s.Format.FrameSize) / float64(s.Format.InputRate)
			a.frame = Frame{InputRate: s.Format.InputRate, Size: s.Format.FrameSize}
			a.items++
			a.audioS += audioS
			a.computeS += s.Latency.Mean * float64(s.Latency.Frames)
			var other, audioBytes float64
			haveAudio := false
			files, _ := os.ReadDir(item)
			for _, f := range files {
				fi, err := f.Info()
				if err != nil || !fi.Mode().IsRegular() {
					continue
				}
				switch f.Name() {
				case store.AudibleFLAC:
					audioBytes, haveAudio = float64(fi.Size()), true
				case store.AudibleWAV:
					// A run written before the FLAC store: what its audio takes as FLAC
					// now, measured on a sample of its items.
					if a.wavSampled < wavSample {
						if n, err := flacSize(filepath.Join(item, f.Name())); err == nil {
							audioBytes, haveAudio = float64(n), true
							a.wavSampled++
						}
					}
				default:
					other += float64(fi.Size())
				}
			}
			a.other += other
			if haveAudio {
				a.audioSampledS += audioS
				a.audioBytes += audioBytes
			}
		}
	}
	out := map[string]Rates{}
	for model, a := range accs {
		r := Rates{Source: fmt.Sprintf("measured on %d items of %v", a.items, a.dirs), Frame: a.frame}
		if a.audioS > 0 {
			r.RTF = a.computeS / a.audioS
		}
		if a.audioSampledS > 0 {
			r.DiskPerAudioS = max(a.audioBytes/a.audioSampledS, math.SmallestNonzeroFloat64)
		}
		r.DiskPerItem = a.other / float64(a.items)
		out[model] = r
	}
	return out, nil
}

const wavSample = 16

// flacSize is the size the run store gives the audio of a WAV file now.
func flacSize(path string) (int, error) {
	p, err := audio.ReadWAV(path)
	if err != nil {
		return 0, err
	}
	var n countWriter
	err = audio.EncodeFLAC(&n, p)
	return int(n), err
}

type countWriter int

func (c *countWriter) Write(b []byte) (int, error) {
	*c += countWriter(len(b))
	return len(b), nil
}
