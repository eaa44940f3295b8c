package viewer

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strings"
	"sync"

	"github.com/duplexmpe/duplexmpe/core/audio"
	"github.com/duplexmpe/duplexmpe/core/dataset"
	"github.com/duplexmpe/duplexmpe/core/store"
)

// roomSource rebuilds what the model heard (the room: preamble and human turns) from the
// dataset's clips and a conversation's recorded timeline. The scheduler lays every clip
// out sample-exactly at the model's input rate, at sample round(start * rate), after
// resampling it with core/audio's resampler; so does this, which gives back the input
// stream exactly (TestRoomIsWhatTheModelHeard). Clips are checked against the hashes the
// item key recorded, so a rebuilt or edited dataset is never passed off as what played.
type roomSource struct {
	ds   *dataset.Dataset
	err  error // why there is no dataset
	byID map[string]*dataset.Scenario

	mu    sync.Mutex
	clips map[clipKey][]float32 // clip path and rate -> samples at that rate
	hash  map[string]string     // clip path -> "sha256:<hex>" of the file
}

type clipKey struct {
	path string
	rate int
}

// maxCachedClips bounds the clip cache: the scenarios of one dataset are played by
// every model, so a clip is reused, but a paper-scale dataset does not fit in memory.
const maxCachedClips = 512

// LoadDataset reads the dataset a run played (report.Meta.DatasetDir) for the room
// channel and the gold answers; dir "" is an error saying how to record it.
func LoadDataset(dir string) (*dataset.Dataset, error) {
	if dir == "" {
		return nil, fmt.Errorf("the report does not know the dataset directory (report-meta.json has no dataset_dir; score the run again to record it)")
	}
	return dataset.Load(dir)
}

// newRoom is the room of the dataset ds, read once by the caller (LoadDataset); err is
// why it could not be read, which every page that needs it then says.
func newRoom(ds *dataset.Dataset, err error) *roomSource {
	r := &roomSource{clips: map[clipKey][]float32{}, hash: map[string]string{}}
	if err == nil && ds == nil {
		_, err = LoadDataset("")
	}
	if err != nil {
		r.err = err
		return r
	}
	r.ds = ds
	r.byID = map[string]*dataset.Scenario{}
	for i := range ds.Scenarios {
		r.byID[ds.Scenarios[i].ScenarioID] = &ds.Scenarios[i]
	}
	return r
}

// scenario is the dataset's scenario of c when it is the one that was played (its
// content hash matches the item key's), or why not.
func (r *roomSource) scenario(c *Conv) (*dataset.Scenario, error) {
	if r.err != nil {
		return nil, r.err
	}
	sc := r.byID[c.Meta.ScenarioID]
	if sc == nil {
		return nil, fmt.Errorf("scenario %s is not in the dataset %s any more", c.Meta.ScenarioID, r.ds.Dir)
	}
	if want := c.Meta.Key.Scenario.Content; want != "" {
		b, err := json.Marshal(sc)
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256(b)
		if got := "sha256:" + hex.EncodeToString(sum[:]); got != want {
			return nil, fmt.Errorf("scenario %s in %s differs from the one played (content %s, played %s): the dataset was changed after the run", c.Meta.ScenarioID, r.ds.File, got, want)
		}
	}
	return sc, nil
}

// rebuild lays the preamble and every played turn out at the model's input rate, as
// long as the session's input: frames * frame size samples.
func (r *roomSource) rebuild(c *Conv) (audio.PCM, error) {
	sc, err := r.scenario(c)
	if err != nil {
		return audio.PCM{}, err
	}
	if c.Session == nil || c.Timeline == nil {
		return audio.PCM{}, fmt.Errorf("the item has no session.json or timeline.json")
	}
	f := c.Session.Format
	if f.InputRate <= 0 || f.FrameSize <= 0 {
		return audio.PCM{}, fmt.Errorf("session.json has no input format")
	}
	n := c.Session.Frames * f.FrameSize
	room := make([]float32, n)
	want := c.Meta.Key.Scenario.Audio
	place := func(path, played string, start float64, what string) error {
		x, err := r.clip(path, f.InputRate, played)
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		at := int(math.Round(start * float64(f.InputRate)))
		if at < n && at >= 0 {
			copy(room[at:], x)
		}
		return nil
	}
	tl := c.Timeline
	if p := r.ds.PreamblePath(); p != "" {
		if err := place(p, at(want, 0), tl.PreambleStart, "the preamble"); err != nil {
			return audio.PCM{}, err
		}
	}
	for _, t := range tl.Turns {
		if t.Index < 0 || t.Index >= len(sc.Turns) {
			return audio.PCM{}, fmt.Errorf("turn %d is not in scenario %s", t.Index, sc.ScenarioID)
		}
		if err := place(r.ds.ClipPath(sc.Turns[t.Index].Clip), at(want, 1+t.Index), t.Start, fmt.Sprintf("turn %d", t.Index)); err != nil {
			return audio.PCM{}, err
		}
	}
	// A room's background loop under everything, from the pair's offset, as the
	// scheduler adds it (core/session).
	if p := r.ds.BackgroundPath(); p != "" {
		played := ""
		if len(want) > 0 && strings.HasPrefix(want[len(want)-1], store.BackgroundKeyPrefix) {
			played = strings.TrimPrefix(want[len(want)-1], store.BackgroundKeyPrefix)
		}
		native, err := audio.StatWAV(p)
		if err != nil {
			return audio.PCM{}, fmt.Errorf("the background: %w", err)
		}
		bed, err := r.clip(p, f.InputRate, played)
		if err != nil {
			return audio.PCM{}, fmt.Errorf("the background: %w", err)
		}
		if m := len(bed); m > 0 {
			j := int(audio.AtRate(int64(dataset.BedOffset(c.Meta.PairID, int(native.Frames))), native.Rate, f.InputRate))
			for i := range room {
				room[i] += bed[(j+i)%m]
			}
		}
	}
	return audio.PCM{Samples: room, Rate: f.InputRate}, nil
}

func at(s []string, i int) string {
	if i < len(s) {
		return s[i]
	}
	return ""
}

// clip reads a clip, checks it against the hash of the clip that was played (when the
// key has one), and resamples it to rate the way the scheduler does.
func (r *roomSource) clip(path string, rate int, played string) ([]float32, error) {
	r.mu.Lock()
	x, ok := r.clips[clipKey{path, rate}]
	h := r.hash[path]
	r.mu.Unlock()
	if played == "none" {
		return nil, fmt.Errorf("%s is in the dataset, but the run played no such clip: the dataset was rebuilt", path)
	}
	if ok {
		if played != "" && h != played {
			return nil, fmt.Errorf("%s differs from the clip played (%s, played %s): the dataset was rebuilt", path, h, played)
		}
		return x, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(b)
	h = "sha256:" + hex.EncodeToString(sum[:])
	if played != "" && h != played {
		return nil, fmt.Errorf("%s differs from the clip played (%s, played %s): the dataset was rebuilt", path, h, played)
	}
	pcm, err := audio.DecodeWAV(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	x = pcm.Samples
	if pcm.Rate != rate {
		rs := audio.NewResampler(pcm.Rate, rate)
		x = append(rs.Process(pcm.Samples), rs.Flush()...)
	}
	r.mu.Lock()
	if len(r.clips) >= maxCachedClips {
		clear(r.clips)
	}
	r.clips[clipKey{path, rate}] = x
	r.hash[path] = h
	r.mu.Unlock()
	return x, nil
}
