package store

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/duplexmpe/duplexmpe/core/audio"
	"github.com/duplexmpe/duplexmpe/core/protocol"
)

// ItemKey is everything that changes the outcome of one (model, conversation) session;
// the item id is its hash. Transport settings (concurrency, endpoints, retries, deadlines)
// are deliberately absent, and so are the scoring-only protocol values (yield_deadline,
// yield_observe, min_eligible, bootstrap): re-scoring never re-runs a session.
type ItemKey struct {
	Model       ModelKey     `json:"model"`
	Scenario    ScenarioKey  `json:"scenario"`
	Schedule    Schedule     `json:"schedule"`
	VAD         protocol.VAD `json:"vad"`
	Seed        int64        `json:"seed"`
	Instruction string       `json:"instruction,omitempty"`
	// Repeat is the repeat this play is (evaluation repeats; Seed is its seed). Repeat 0
	// is left out of the key, so the first repeat keeps the item id it had before runs
	// could repeat.
	Repeat int `json:"repeat,omitempty"`
}

// ModelKey identifies a model plugin and its configuration.
type ModelKey struct {
	Name     string            `json:"name"` // the run file's block label
	Plugin   string            `json:"plugin"`
	Version  string            `json:"version"`
	Hash     string            `json:"hash,omitempty"`
	Identity map[string]string `json:"identity,omitempty"`
	Config   map[string]any    `json:"config,omitempty"`
}

// ScenarioKey identifies one scenario version and the exact audio played.
type ScenarioKey struct {
	ID        string `json:"id"`
	Condition string `json:"condition,omitempty"`
	// Content is a hash of the scenario as the dataset stores it (text, labels, speakers).
	Content string `json:"content"`
	// Audio holds HashPCM of the preamble, then of every turn clip in order, then, for a
	// set built in a room, BackgroundKeyPrefix and the hash of its background loop.
	Audio []string `json:"audio"`
}

// BackgroundKeyPrefix marks a room's background loop in ScenarioKey.Audio.
const BackgroundKeyPrefix = "background:"

// Schedule holds the protocol values the scheduler uses (docs/protocol.md sections 3 and
// 8) and the revision of its rules.
type Schedule struct {
	PreambleGap  float64 `json:"preamble_gap"`
	TurnGap      float64 `json:"turn_gap"`
	TOnsetWindow float64 `json:"t_onset_window"`
	TEndSilence  float64 `json:"t_end_silence"`
	TWaitCap     float64 `json:"t_wait_cap"`
	N4Gap        float64 `json:"n4_gap"`
	Tail         float64 `json:"tail"`
	// TimingControl pads ordinary turns (section 3.6); left out of the key when off.
	TimingControl bool `json:"timing_control,omitempty"`
	// GapProfile is "natural" when the dataset's own gaps are played (section 3.3); left
	// out of the key for the paper's turn_gap.
	GapProfile string `json:"gap_profile,omitempty"`
	// Rules is protocol.SchedulerRevision: the same inputs played under other rules are
	// other items.
	Rules int `json:"rules"`
}

// ScheduleOf takes the scheduling values out of p.
func ScheduleOf(p protocol.Params) Schedule {
	return Schedule{
		PreambleGap: p.PreambleGap, TurnGap: p.TurnGap, TOnsetWindow: p.TOnsetWindow,
		TEndSilence: p.TEndSilence, TWaitCap: p.TWaitCap, N4Gap: p.N4Gap, Tail: p.Tail,
		TimingControl: p.TimingControl, GapProfile: p.Canonical().GapProfile, Rules: protocol.SchedulerRevision,
	}
}

// ID is the item id: the first 32 hex digits of the SHA-256 of the key's JSON (encoding/json
// sorts map keys, so equal keys give equal ids).
func (k ItemKey) ID() string {
	b, err := json.Marshal(k)
	if err != nil {
		// Config values come from decoded JSON or HCL; anything else is a programming error.
		panic(fmt.Sprintf("store: item key does not encode: %v", err))
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}

// HashPCM is "sha256:<hex>" of a clip's rate and samples (float32 little-endian bits).
func HashPCM(p audio.PCM) string {
	h := sha256.New()
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], uint32(p.Rate))
	h.Write(b[:])
	buf := make([]byte, 0, 4096)
	for _, v := range p.Samples {
		buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
		if len(buf) == cap(buf) {
			h.Write(buf)
			buf = buf[:0]
		}
	}
	h.Write(buf)
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// Shard is a deterministic slice of the item ids: item id belongs to shard Index of Count
// when the first 16 hex digits of the id, as a number, modulo Count equal Index. Index
// counts from 0, like a Kubernetes Indexed Job's JOB_COMPLETION_INDEX.
type Shard struct {
	Index, Count int
}

// All is the whole run, unsharded.
var All = Shard{Index: 0, Count: 1}

// ParseShard reads "i/N" with 0 <= i < N.
func ParseShard(s string) (Shard, error) {
	is, ns, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(strings.TrimSpace(is))
	n, err2 := strconv.Atoi(strings.TrimSpace(ns))
	if !ok || err1 != nil || err2 != nil {
		return Shard{}, fmt.Errorf("shard %q: want i/N, e.g. 0/4 for the first of four shards", s)
	}
	if n < 1 || i < 0 || i >= n {
		return Shard{}, fmt.Errorf("shard %q: want 0 <= i < N (shards count from 0)", s)
	}
	return Shard{Index: i, Count: n}, nil
}

func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// Contains reports whether item id falls in the shard.
func (s Shard) Contains(id string) bool {
	if s.Count <= 1 {
		return true
	}
	if len(id) > 16 {
		id = id[:16]
	}
	v, err := strconv.ParseUint(id, 16, 64)
	if err != nil {
		return false
	}
	return v%uint64(s.Count) == uint64(s.Index)
}

// Changes names what differs from old to k, one entry per changed leaf of the key's
// JSON, as "path: old -> new" ("model.config.temperature: 0.7 -> 0.8",
// "scenario.audio[3]: sha256:... -> sha256:..."; "(none)" for a value one side lacks).
// It says why an item of an earlier plan does not count for the current one.
func (k ItemKey) Changes(old ItemKey) []string {
	var out []string
	diffJSON("", toTree(old), toTree(k), &out)
	sort.Strings(out)
	return out
}

func toTree(k ItemKey) any {
	b, _ := json.Marshal(k)
	var v any
	_ = json.Unmarshal(b, &v)
	return v
}

// maxListChanges is how many changed entries of a list Changes names one by one.
const maxListChanges = 3

func diffJSON(path string, a, b any, out *[]string) {
	ma, aMap := a.(map[string]any)
	mb, bMap := b.(map[string]any)
	if aMap && bMap {
		keys := map[string]bool{}
		for k := range ma {
			keys[k] = true
		}
		for k := range mb {
			keys[k] = true
		}
		for k := range keys {
			p := k
			if path != "" {
				p = path + "." + k
			}
			diffJSON(p, ma[k], mb[k], out)
		}
		return
	}
	la, aList := a.([]any)
	lb, bList := b.([]any)
	if aList && bList && len(la) != len(lb) {
		*out = append(*out, fmt.Sprintf("%s: %d -> %d entries", path, len(la), len(lb)))
		return
	}
	if aList && bList {
		var moved []string
		for i := range la {
			diffJSON(fmt.Sprintf("%s[%d]", path, i), la[i], lb[i], &moved)
		}
		// A few entries moved: each; many (a rebuilt set's clips): how many.
		if len(moved) > maxListChanges {
			moved = []string{fmt.Sprintf("%s: %d of %d entries changed", path, len(moved), len(la))}
		}
		*out = append(*out, moved...)
		return
	}
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if string(ja) != string(jb) {
		*out = append(*out, fmt.Sprintf("%s: %s -> %s", path, leafText(a), leafText(b)))
	}
}

func leafText(v any) string {
	if v == nil {
		return "(none)"
	}
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}
