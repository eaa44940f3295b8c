// Package dataset is the on-disk form of a Duplex-MPE scenario set: a directory with
// dataset.json (identity, voices, preamble, counts, content hash) and scenarios.jsonl
// (one scenario version per line), plus clips/ once synthesised. It loads, saves,
// validates (protocol.md section 2 and the pair rules) and summarises such sets.
package dataset

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/duplexmpe/duplexmpe/core/atomicfile"
)

// File names inside a dataset directory.
const (
	ManifestFile  = "dataset.json"
	ScenariosFile = "scenarios.jsonl"
	ClipsDir      = "clips"
	// ClipSumsFile holds the SHA-256 of every clip as the build wrote it, in the format
	// of sha256sum (`sha256sum -c clips.sha256` in the dataset directory checks them).
	ClipSumsFile = "clips.sha256"
	// PartialScenariosFile holds the pairs a partial build made (`run --limit`), and
	// PartialManifestFile their manifest (voices, preamble, room), beside the whole set's
	// files, which it leaves alone.
	PartialScenariosFile = "scenarios.partial.jsonl"
	PartialManifestFile  = "dataset.partial.json"
)

// Bounds on a script: a turn is a sentence or a few, and synthesised it lasts seconds.
// A turn of 100 KB would make a clip of most of an hour.
const (
	MaxTurnText     = 1000 // characters in one turn's text (about a minute spoken)
	MaxPreambleText = 5000 // characters in the duty preamble
)

// FormatVersion is the version of this on-disk format, recorded in dataset.json.
const FormatVersion = "1"

// Attributes are the five axes a scenario is drawn from.
type Attributes struct {
	Setting      string `json:"setting"`
	Activity     string `json:"activity"`
	Relationship string `json:"relationship"`
	Devices      string `json:"devices"`
	Register     string `json:"register"`
}

// Turn is one human turn.
type Turn struct {
	Speaker string `json:"speaker"`
	Text    string `json:"text"`
	Label   string `json:"label"`
	// Addressee is "human" or "device" on N2 turns; empty (or "none") otherwise.
	Addressee string `json:"addressee,omitempty"`
	// Clip is the synthesised audio, relative to the dataset directory
	// (clips/<sha256>.wav); empty before synthesis.
	Clip      string  `json:"clip,omitempty"`
	DurationS float64 `json:"duration_s,omitempty"`
	// GapAfterS is the natural silence after this turn, drawn when the set was compiled
	// (docs/protocol.md section 3.3): played under the run's gap profile "natural" after
	// an ordinary turn; absent on T, N4_Q and the last turn, whose silences the protocol
	// fixes.
	GapAfterS float64 `json:"gap_after_s,omitempty"`

	// v2 fields (issue 28; optional, so open v1 validates unchanged): see v2.go.
	// Tags mark a hard negative (TurnTags): an N1 that addresses Aria and asks nothing,
	// an N2 to a device that mentions Aria, ...
	Tags []string `json:"tags,omitempty"`
}

// Scenario is one version (explicit or implicit) of a scenario pair.
type Scenario struct {
	PairID     string     `json:"pair_id"`
	Condition  string     `json:"condition"`
	ScenarioID string     `json:"scenario_id"`
	Attributes Attributes `json:"attributes"`
	Speakers   []string   `json:"speakers"`
	Turns      []Turn     `json:"turns"`
	GoldAnswer string     `json:"gold_answer"`
	TPosition  string     `json:"t_position"`
	// GoldAccepted lists other ways of saying the gold answer that a judge accepts
	// ("quarter past seven" for "7:15").
	GoldAccepted []string `json:"gold_accepted,omitempty"`
	// Names are the speakers' first names as the turns use them (speaker -> name).
	Names map[string]string `json:"names,omitempty"`
	// Cue is the implicit version's addressing cue (protocol.md section 2.3): "role",
	// "capability", "setup" or "assistant-term"; empty on explicit versions.
	Cue string `json:"cue,omitempty"`
	// ContextTurns are the indices of earlier turns, by someone other than the asker,
	// whose facts the gold answer needs (non-addressed speech supplying context).
	ContextTurns []int `json:"context_turns,omitempty"`

	// AnswerType is the kind of answer the gold is (sdk.AnswerTypes: number, money,
	// duration, clock_time, date, name, yes_no, code, text), sent to the judge so it reads
	// the response by that meaning; optional (open v1 has none): a judge then infers it
	// from the gold (plugins/lexical-judge/README.md).
	AnswerType string `json:"answer_type,omitempty"`

	// v2 fields (issue 28; optional, so open v1 validates unchanged): see v2.go.
	// Task is the kind of request T makes (Tasks), the same in both versions.
	Task string `json:"task,omitempty"`
	// CueText is the words of the implicit version that carry its cue, as they stand in
	// one of its turns up to T; implicit versions only.
	CueText string `json:"cue_text,omitempty"`
	// Addressing is where and how the explicit T names Aria (Addressings); explicit
	// versions only.
	Addressing string `json:"addressing,omitempty"`
}

// TIndex is the index of the first T turn, or -1.
func (s *Scenario) TIndex() int {
	for i, t := range s.Turns {
		if t.Label == "T" {
			return i
		}
	}
	return -1
}

// Duration is the summed clip duration of the turns in seconds (0 before synthesis).
func (s *Scenario) Duration() float64 {
	var d float64
	for _, t := range s.Turns {
		d += t.DurationS
	}
	return d
}

// Generator says what produced the scripts.
type Generator struct {
	Kind     string            `json:"kind"` // "file", "procedural", "llm"
	Seed     *int64            `json:"seed,omitempty"`
	Source   string            `json:"source,omitempty"`   // the scenarios file, for kind "file"
	Identity map[string]string `json:"identity,omitempty"` // e.g. LLM model and prompt hashes
}

// TTSInfo identifies the speech synthesiser.
type TTSInfo struct {
	Plugin   string            `json:"plugin"`
	Name     string            `json:"name,omitempty"`
	Version  string            `json:"version,omitempty"`
	Identity map[string]string `json:"identity,omitempty"`
}

// Preamble is the spoken duty instruction played before every conversation.
type Preamble struct {
	Text      string  `json:"text"`
	Voice     string  `json:"voice,omitempty"`
	Clip      string  `json:"clip,omitempty"`
	DurationS float64 `json:"duration_s,omitempty"`
}

// VoicePool is a pool of voices the speakers are drawn from: each voice's median F0 in
// Hz (as make measure-tts measures it) and sex ("female" or "male": it speaks the
// speakers of that sex, SpeakerSex), the draw's seed, and the least distance in
// semitones between the F0 medians of two speakers of one scenario.
type VoicePool struct {
	F0           map[string]float64 `json:"f0_hz"`
	Sex          map[string]string  `json:"sex"`
	Seed         int64              `json:"seed"`
	MinSemitones float64            `json:"min_semitones"`
}

// SpeakerSex is each speaker letter's sex: the scripts' names and words fit it (A and C
// are women, B and D men; docs/datasheet.md), so a drawn voice must too.
var SpeakerSex = map[string]string{"A": "female", "B": "male", "C": "female", "D": "male"}

// Counts summarise the set.
type Counts struct {
	Scenarios int `json:"scenarios"`
	Pairs     int `json:"pairs"`
	Explicit  int `json:"explicit"`
	Implicit  int `json:"implicit"`
	Turns     int `json:"turns"`
	Clips     int `json:"clips"`
}

// Manifest is dataset.json.
type Manifest struct {
	Name          string    `json:"name"`
	FormatVersion string    `json:"format_version"`
	Version       string    `json:"version,omitempty"`
	Generator     Generator `json:"generator"`
	TTS           *TTSInfo  `json:"tts,omitempty"`
	// Voices is the fixed speaker -> voice map of a build from one; a build from a voice
	// pool has VoicePool and PairVoices instead.
	Voices map[string]string `json:"voices,omitempty"`
	// VoicePool is the pool the speakers' voices were drawn from (construct.DrawVoices).
	VoicePool *VoicePool `json:"voice_pool,omitempty"`
	// PairVoices is each pair's speaker -> voice map, drawn from VoicePool: the same in
	// both versions of the pair.
	PairVoices map[string]map[string]string `json:"pair_voices,omitempty"`
	SampleRate int                          `json:"sample_rate,omitempty"`
	// Loudness is the integrated loudness (LUFS, BS.1770) every clip was normalised to;
	// 0 in sets built before clips were normalised.
	Loudness float64   `json:"loudness_lufs,omitempty"`
	Preamble *Preamble `json:"preamble,omitempty"`
	// Room is the acoustic condition the clips were made under; nil: clean (dry).
	Room   *Room  `json:"room,omitempty"`
	Counts Counts `json:"counts"`
	// ContentHash is "sha256:<hex>" of scenarios.jsonl as written.
	ContentHash string `json:"content_hash"`
}

// Dataset is a loaded scenario set.
type Dataset struct {
	// Dir is the dataset directory; clip paths resolve against it. For a bare
	// scenarios file it is the file's directory.
	Dir string
	// File is the scenarios file that was read.
	File string
	// Manifest is nil when the set is a bare scenarios file without dataset.json.
	Manifest  *Manifest
	Scenarios []Scenario
	// Lines[i] is the 1-based line of Scenarios[i] in File.
	Lines []int
	// ContentHash is ContentHash of File as Load read it; empty for a set not read
	// whole from one file.
	ContentHash string
}

// ClipPath resolves a clip path recorded in the dataset to a file path.
func (d *Dataset) ClipPath(clip string) string {
	if clip == "" || filepath.IsAbs(clip) {
		return clip
	}
	return filepath.Join(d.Dir, filepath.FromSlash(clip))
}

// PreamblePath is the preamble clip's file path, or "" when there is none.
func (d *Dataset) PreamblePath() string {
	if d.Manifest == nil || d.Manifest.Preamble == nil {
		return ""
	}
	return d.ClipPath(d.Manifest.Preamble.Clip)
}

// ParseError is a line of a scenarios file that could not be read.
type ParseError struct {
	File string
	Line int
	Err  error
	// Hint says what to do; empty means the default (one JSON object per line).
	Hint string
}

// DefaultParseHint is what a ParseError without a Hint advises.
const DefaultParseHint = "each line must be one JSON scenario object; see docs/dataset.md"

func (e *ParseError) Error() string {
	return fmt.Sprintf("%s:%d: %v (%s)", e.File, e.Line, e.Err, e.hint())
}

func (e *ParseError) hint() string {
	if e.Hint != "" {
		return e.Hint
	}
	return DefaultParseHint
}

func (e *ParseError) Unwrap() error { return e.Err }

// Deterministic: the file must change before it reads (core/fault).
func (e *ParseError) Deterministic() bool { return true }

// ParseErrors collects every unreadable line of a file.
type ParseErrors []*ParseError

func (es ParseErrors) Error() string {
	var b strings.Builder
	for i, e := range es {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(e.Error())
	}
	return b.String()
}

// Deterministic: the file must change before it reads (core/fault).
func (es ParseErrors) Deterministic() bool { return true }

// maxLine bounds one scenario line (a scenario is a few kilobytes).
const maxLine = 4 << 20

// ReadScenarios parses JSON lines. Blank lines are skipped. Unknown fields are errors,
// so a misspelt key does not silently drop data. It returns every scenario it could
// read with its line number, and ParseErrors for the lines it could not.
func ReadScenarios(r io.Reader, name string) ([]Scenario, []int, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	var (
		out   []Scenario
		lines []int
		errs  ParseErrors
		n     int
	)
	for sc.Scan() {
		n++
		line := sc.Bytes()
		if n == 1 {
			line = bytes.TrimPrefix(line, utf8BOM) // some editors start a UTF-8 file with one
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		if err := checkUTF8(line); err != nil {
			errs = append(errs, &ParseError{File: name, Line: n, Err: err, Hint: "save the file as UTF-8"})
			continue
		}
		s, err := parseScenario(line)
		if err != nil {
			errs = append(errs, &ParseError{File: name, Line: n, Err: err})
			continue
		}
		if err := checkClipPaths(&s); err != nil {
			errs = append(errs, &ParseError{File: name, Line: n, Err: err,
				Hint: "a clip is a path inside the dataset directory (clips/<key>.wav); rebuild the dataset with 'duplexmpe build'"})
			continue
		}
		out = append(out, s)
		lines = append(lines, n)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			err = fmt.Errorf("line longer than %d bytes", maxLine)
		}
		errs = append(errs, &ParseError{File: name, Line: n + 1, Err: err})
	}
	if len(errs) > 0 {
		return out, lines, errs
	}
	return out, lines, nil
}

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// checkUTF8 refuses text that is not UTF-8, which encoding/json would otherwise turn
// into U+FFFD replacement characters without a word; a byte-order mark inside a file
// (two files pasted together) is refused too.
func checkUTF8(b []byte) error {
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size <= 1 {
			return fmt.Errorf("byte %d (0x%02x) is not valid UTF-8", i+1, b[i])
		}
		if r == '\uFEFF' {
			return fmt.Errorf("byte %d starts a byte-order mark (U+FEFF) inside the text", i+1)
		}
		i += size
	}
	return nil
}

// CheckClipPath refuses a clip path that does not stay inside the dataset directory:
// an absolute path or one climbing out with "..". Such a path would make the harness
// play (and hash) a file the dataset does not hold.
func CheckClipPath(clip string) error {
	if clip == "" || filepath.IsLocal(filepath.FromSlash(clip)) {
		return nil
	}
	return fmt.Errorf("clip %q is outside the dataset directory", clip)
}

func checkClipPaths(s *Scenario) error {
	for i, t := range s.Turns {
		if err := CheckClipPath(t.Clip); err != nil {
			return fmt.Errorf("scenario %s turn %d: %w", s.ScenarioID, i, err)
		}
	}
	return nil
}

func parseScenario(line []byte) (Scenario, error) {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	var s Scenario
	if err := dec.Decode(&s); err != nil {
		return Scenario{}, err
	}
	if dec.More() {
		return Scenario{}, errors.New("more than one JSON value on the line")
	}
	normalizeIDs(&s)
	return s, nil
}

// normalizeIDs writes the ids and labels of s in Unicode normal form C: "café" typed
// as e + a combining accent and as é is one id, as it prints.
func normalizeIDs(s *Scenario) {
	for _, p := range []*string{&s.ScenarioID, &s.PairID, &s.Condition, &s.TPosition} {
		*p = norm.NFC.String(*p)
	}
	for i := range s.Speakers {
		s.Speakers[i] = norm.NFC.String(s.Speakers[i])
	}
	if len(s.Names) > 0 {
		names := make(map[string]string, len(s.Names))
		for k, v := range s.Names {
			names[norm.NFC.String(k)] = norm.NFC.String(v)
		}
		s.Names = names
	}
	for i := range s.Turns {
		t := &s.Turns[i]
		t.Speaker, t.Label, t.Addressee = norm.NFC.String(t.Speaker), norm.NFC.String(t.Label), norm.NFC.String(t.Addressee)
	}
}

// MarshalScenarios writes one compact JSON line per scenario, in order. The output is
// a pure function of the scenarios (byte-identical for equal input).
func MarshalScenarios(scs []Scenario) ([]byte, error) {
	var b bytes.Buffer
	for i := range scs {
		line, err := json.Marshal(&scs[i])
		if err != nil {
			return nil, fmt.Errorf("scenario %q: %w", scs[i].ScenarioID, err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.Bytes(), nil
}

// ContentHash is the hash recorded in dataset.json for scenarios.jsonl bytes.
func ContentHash(jsonl []byte) string {
	h := sha256.Sum256(jsonl)
	return "sha256:" + hex.EncodeToString(h[:])
}

// Load reads a dataset directory (dataset.json is optional, scenarios.jsonl required)
// or a bare scenarios .jsonl file. Parse errors name the file and line; the scenarios
// that could be read are returned alongside them.
func Load(path string) (*Dataset, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("dataset %s: %w (give a dataset directory or a scenarios .jsonl file)", path, err)
	}
	d := &Dataset{}
	if fi.IsDir() {
		d.Dir = path
		d.File = filepath.Join(path, ScenariosFile)
		if d.Manifest, err = readManifest(filepath.Join(path, ManifestFile)); err != nil {
			return nil, err
		}
	} else {
		d.Dir = filepath.Dir(path)
		d.File = path
	}
	return d, d.readScenarios(path, ScenariosFile)
}

// LoadPartial loads what a partial build (`run --limit`) wrote in dir: its scenarios
// and its manifest (PartialScenariosFile, PartialManifestFile).
func LoadPartial(dir string) (*Dataset, error) {
	d := &Dataset{Dir: dir, File: filepath.Join(dir, PartialScenariosFile)}
	var err error
	if d.Manifest, err = readManifest(filepath.Join(dir, PartialManifestFile)); err != nil {
		return nil, err
	}
	return d, d.readScenarios(dir, PartialScenariosFile)
}

// readManifest reads a manifest file; nil when there is none.
func readManifest(mpath string) (*Manifest, error) {
	raw, err := os.ReadFile(mpath)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("%s: %w", mpath, err)
	}
	raw = bytes.TrimPrefix(raw, utf8BOM)
	if err := checkUTF8(raw); err != nil {
		return nil, fmt.Errorf("%s: %w (save it as UTF-8, or rebuild the dataset with 'duplexmpe build')", mpath, err)
	}
	var m Manifest
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("%s: %w (rebuild the dataset with 'duplexmpe build', or fix the file)", mpath, jsonErrLine(raw, err))
	}
	if m.Preamble != nil {
		if err := CheckClipPath(m.Preamble.Clip); err != nil {
			return nil, fmt.Errorf("%s: the preamble's %w; rebuild the dataset with 'duplexmpe build'", mpath, err)
		}
	}
	return &m, nil
}

// readScenarios reads d.File (path is what the caller named and file what a dataset
// directory holds, for the message).
func (d *Dataset) readScenarios(path, file string) error {
	f, err := os.Open(d.File)
	if err != nil {
		return fmt.Errorf("dataset %s: %w (a dataset directory holds %s)", path, err, file)
	}
	defer f.Close()
	h := sha256.New()
	d.Scenarios, d.Lines, err = ReadScenarios(io.TeeReader(f, h), d.File)
	if err == nil {
		d.ContentHash = "sha256:" + hex.EncodeToString(h.Sum(nil))
	}
	return err
}

// jsonErrLine adds a line number to a JSON syntax error.
func jsonErrLine(raw []byte, err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	off := int64(-1)
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	}
	if off < 0 {
		return err
	}
	if off > int64(len(raw)) {
		off = int64(len(raw))
	}
	return fmt.Errorf("line %d: %w", bytes.Count(raw[:off], []byte("\n"))+1, err)
}

// Save writes scenarios.jsonl and dataset.json into dir atomically (each file is
// written to a temporary name and renamed). It fills in the manifest's format
// version, counts and content hash.
func Save(dir string, m Manifest, scs []Scenario) (*Dataset, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	jsonl, err := MarshalScenarios(scs)
	if err != nil {
		return nil, err
	}
	m.FormatVersion = FormatVersion
	m.ContentHash = ContentHash(jsonl)
	m.Counts = CountOf(scs)
	if m.Preamble != nil && m.Preamble.Clip != "" {
		m.Counts.Clips++
		if containsClip(scs, m.Preamble.Clip) {
			m.Counts.Clips--
		}
	}
	mraw, err := json.MarshalIndent(&m, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, ScenariosFile), jsonl); err != nil {
		return nil, err
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, ManifestFile), append(mraw, '\n')); err != nil {
		return nil, err
	}
	lines := make([]int, len(scs))
	for i := range lines {
		lines[i] = i + 1
	}
	return &Dataset{Dir: dir, File: filepath.Join(dir, ScenariosFile), Manifest: &m, Scenarios: scs, Lines: lines}, nil
}

// SavePartial writes the scenarios of a partial build to dir/PartialScenariosFile and
// their manifest (m with their hash and counts) to dir/PartialManifestFile, and returns
// them as a set; dataset.json and scenarios.jsonl, the whole set's, are left as they are.
func SavePartial(dir string, m Manifest, scs []Scenario) (*Dataset, error) {
	jsonl, err := MarshalScenarios(scs)
	if err != nil {
		return nil, err
	}
	m.FormatVersion = FormatVersion
	m.ContentHash = ContentHash(jsonl)
	m.Counts = CountOf(scs)
	mraw, err := json.MarshalIndent(&m, "", "  ")
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, PartialScenariosFile)
	if err := atomicfile.WriteFile(path, jsonl); err != nil {
		return nil, err
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, PartialManifestFile), append(mraw, '\n')); err != nil {
		return nil, err
	}
	lines := make([]int, len(scs))
	for i := range lines {
		lines[i] = i + 1
	}
	return &Dataset{Dir: dir, File: path, Manifest: &m, Scenarios: scs, Lines: lines, ContentHash: m.ContentHash}, nil
}

func containsClip(scs []Scenario, clip string) bool {
	for _, s := range scs {
		for _, t := range s.Turns {
			if t.Clip == clip {
				return true
			}
		}
	}
	return false
}

// CountOf counts scenarios, pairs, conditions, turns and distinct turn clips.
func CountOf(scs []Scenario) Counts {
	var c Counts
	pairs := map[string]bool{}
	clips := map[string]bool{}
	for _, s := range scs {
		c.Scenarios++
		pairs[s.PairID] = true
		switch s.Condition {
		case "explicit":
			c.Explicit++
		case "implicit":
			c.Implicit++
		}
		c.Turns += len(s.Turns)
		for _, t := range s.Turns {
			if t.Clip != "" {
				clips[t.Clip] = true
			}
		}
	}
	c.Pairs = len(pairs)
	c.Clips = len(clips)
	return c
}

// SortedKeys returns a map's keys in order (for stable output).
func SortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// LoadScenariosBytes reads a scripts-only set from memory, as if it were the file name
// (for checking a set before it is written).
func LoadScenariosBytes(raw []byte, name string) (*Dataset, error) {
	scs, lines, err := ReadScenarios(bytes.NewReader(raw), name)
	if err != nil {
		return nil, err
	}
	return &Dataset{Dir: filepath.Dir(name), File: name, Scenarios: scs, Lines: lines}, nil
}

// LoadAny loads a set (a dataset directory or a scenarios file) or, for a release
// directory (one holding ReleaseFile), every split of the release as one set.
func LoadAny(path string) (*Dataset, error) {
	r, err := LoadRelease(filepath.Join(path, ReleaseFile))
	if err != nil {
		return Load(path)
	}
	all := &Dataset{Dir: path, File: filepath.Join(path, ReleaseFile)}
	for _, sp := range r.Splits {
		d, err := Load(filepath.Join(path, filepath.FromSlash(sp.File)))
		if err != nil {
			return nil, err
		}
		all.Scenarios = append(all.Scenarios, d.Scenarios...)
		all.Lines = append(all.Lines, d.Lines...)
	}
	return all, nil
}
