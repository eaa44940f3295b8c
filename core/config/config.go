// Package config reads HCL run files: it parses them, evaluates variables, locals and
// functions, resolves references between blocks, and checks every value, reporting
// problems as hcl.Diagnostics that point at the file and line. The language is described
// once in Spec; docs/run-files.md is generated from it.
package config

import (
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/duplexmpe/duplexmpe/core/protocol"
	"github.com/duplexmpe/duplexmpe/core/room"
)

// VarEnvPrefix prefixes environment variables that set run-file variables:
// DUPLEXMPE_VAR_seed=2 sets var.seed.
const VarEnvPrefix = "DUPLEXMPE_VAR_"

// Options are the outside inputs of a run file.
type Options struct {
	// Vars are --var name=value settings; they win over the environment and defaults.
	Vars map[string]string
	// Env is the process environment, for env() and DUPLEXMPE_VAR_*. The real
	// environment is never read.
	Env map[string]string
	// Cwd is path.cwd; when empty it is the run file's directory.
	Cwd string
	// PluginsMustExist makes a plugin executable (source) or directory (dir) that does
	// not exist an error instead of a warning: for the commands that are about to start
	// the plugins (validate, run), where it would otherwise fail later, after the plan,
	// without the plugin's name or the run file's line.
	PluginsMustExist bool
	// CommandLineUses names plugin blocks the command line itself uses (`score --judge
	// NAME`): no "Unused plugin" warning for them, whether or not a block refers to them.
	CommandLineUses []string
}

// File is a checked run file. Blocks keep the order of the file.
type File struct {
	Path string // as given to Load
	Dir  string // the absolute directory relative paths resolve against (path.root)

	Variables   []*Variable
	Locals      map[string]cty.Value
	Plugins     []*PluginBlock
	Datasets    []*Dataset
	References  []*Reference
	Evaluations []*Evaluation

	// Sources are the parsed files, for printing diagnostics with snippets.
	Sources map[string]*hcl.File
}

// Variable is a variable block and the value it took.
type Variable struct {
	Name        string
	Description string
	Default     cty.Value // cty.NilVal when there is none
	Value       cty.Value
	// Source says where Value came from: "default", "--var" or the environment variable.
	Source    string
	DeclRange hcl.Range
}

// PluginBlock is a plugin block: how to run the plugin, and its raw config block, which
// can only be checked once the plugin has described its schema (CheckPluginConfig).
type PluginBlock struct {
	Name string
	// Spec is how to run the plugin, as plain fields; core/pluginstart makes the
	// host's spec of it (pluginstart.HostSpec), so that the run-file parser links no
	// plugin host (gRPC, go-plugin).
	Spec PluginSpec
	// Config is the body of the config block; an empty body when there is none.
	Config hcl.Body
	// ConfigRange is the config block's header, or the plugin block's when there is none.
	ConfigRange hcl.Range
	DeclRange   hcl.Range
	// WrittenSource and WrittenDir are source and dir as the run file wrote them (Spec
	// holds them resolved): the lock file records these, so that it holds on any
	// checkout when they are relative.
	WrittenSource, WrittenDir string
	// AttrRanges holds the range of each attribute the block sets, by name, so that later
	// checks (pins, lock file) can point at it.
	AttrRanges map[string]hcl.Range
	// Role is what a model plugin is in the statistics (protocol.RoleTest,
	// RoleBaseline, RoleReference); empty when the block does not say, which means test.
	Role string
	// Uses lists the roles the run file gives the plugin ("tts", "asr", "judge",
	// "model", "llm"), in order of first use, without repeats; UseRanges holds the
	// reference of each role's first use.
	Uses      []string
	UseRanges map[string]hcl.Range

	ctx *hcl.EvalContext
}

// PluginSpec is how a plugin block says to run its plugin. Paths are resolved against
// the run file's directory. The fields mean what pluginhost.Spec's of the same names do.
type PluginSpec struct {
	// Source is an executable path; Command an argv. Exactly one is set, unless
	// Reattach is.
	Source  string
	Command []string
	// Dir is the working directory, and for a command plugin the directory whose hash
	// pins it; HashSkip the paths under it (relative, "/" separators) left out of that
	// hash: run files and lock files kept there, the run's output folders.
	Dir      string
	HashSkip []string
	Env      map[string]string
	// Version, when set, must equal the version the plugin describes; Checksum pins
	// its files ("sha256:<hex>" or "h1:<base64>").
	Version  string
	Checksum string
	// Reattach is the JSON of an already running plugin to connect to.
	Reattach string
	// StartTimeout bounds the handshake, ConversationStartTimeout one conversation's
	// start and FrameTimeout one step; zero means the host's defaults.
	StartTimeout             time.Duration
	ConversationStartTimeout time.Duration
	FrameTimeout             time.Duration
	// CallTimeout bounds every other call of a service the plugin serves (ASR, judge,
	// TTS, LLM; pluginhost.Spec.CallTimeout); ConversationTimeout one model conversation's
	// wall time. Zero means the host's defaults.
	CallTimeout         time.Duration
	ConversationTimeout time.Duration
	// ConfigDir is where relative path-typed config values resolve: the run file's
	// directory.
	ConfigDir string
	// LogLimit bounds the plugin's log file in bytes; zero means the host's default.
	LogLimit int64
}

// Dataset is a dataset block.
type Dataset struct {
	Name      string
	Scenarios string    // an absolute directory, or empty when Generate is set
	Generate  *Generate // nil when Scenarios is set
	TTS       string    // plugin name
	Voices    map[string]string
	// VoicePool, when set instead of Voices, is the voices drawn per pair, each with its
	// median F0 in Hz, and VoiceSex each one's sex ("female", "male"); VoiceSeed seeds
	// the draw, VoiceMinSemitones keeps two speakers of a scenario apart.
	VoicePool         map[string]float64
	VoiceSex          map[string]string
	VoiceSeed         int64
	VoiceMinSemitones float64
	Preamble          string // "default" or an absolute file path
	// Narrator is the preamble's voice; empty means speaker D's, else A's.
	Narrator string
	// Loudness is the clips' integrated loudness in LUFS; 0 means the build's default.
	Loudness float64
	// Room is the acoustic condition of the build; nil means clean.
	Room      *Room
	Out       string // absolute
	DeclRange hcl.Range
	// AttrRanges holds the range of each attribute the block sets, by name.
	AttrRanges map[string]hcl.Range
}

// Room is a dataset's room block: the acoustic condition it is built under
// (room.Presets; "clean" is the dry set).
type Room struct {
	Preset string
	Seed   int64
	// Reuse is a built set (absolute) whose clips the build may link in; empty: none.
	Reuse     string
	DeclRange hcl.Range
}

// Acoustics is the room the dataset is built in, ok false for a clean build (no room
// block, or preset "clean"). A preset no room is called (the loader refuses one; a
// block made in code may hold one) is an error.
func (d *Dataset) Acoustics() (p room.Preset, ok bool, err error) {
	if d.Room == nil || d.Room.Preset == room.Clean {
		return room.Preset{}, false, nil
	}
	if p, ok = room.ByName(d.Room.Preset); !ok {
		return p, false, fmt.Errorf("dataset %q: no room preset %q", d.Name, d.Room.Preset)
	}
	return p, true, nil
}

// Generate is a dataset's generate block.
type Generate struct {
	Generator        string // "procedural" or "llm"
	LLM              string // plugin name, for "llm"
	Pairs            int
	Seed             int64
	FourSpeakerShare float64
	DeclRange        hcl.Range
}

// Generators are the accepted values of generate.generator.
var Generators = []string{"procedural", "llm"}

// Evaluation is an evaluation block, with the protocol and VAD settings filled in from
// defaults and overrides and validated.
type Evaluation struct {
	Name        string
	Dataset     string   // dataset name
	Models      []string // plugin names
	ASR         string   // plugin name
	Judge       string   // plugin name
	Concurrency int      // conversations at once over all models; 0: one per CPU core (PlayConcurrency)
	Seed        int64
	// Repeats is how many times every (model, conversation) is played, at least 1;
	// repeat r plays with evaluate.RepeatSeed(Seed, r).
	Repeats int
	Out     string // absolute
	// Reference names the reference block whose result the report shows beside the
	// speech models; empty when there is none.
	Reference string
	Protocol  protocol.Params
	VAD       protocol.VAD
	DeclRange hcl.Range
}

// PlayConcurrency is how many conversations the evaluation plays at once: Concurrency,
// or one per CPU core when it is 0. It is transport: no result depends on it.
func (e *Evaluation) PlayConcurrency() int {
	if e.Concurrency > 0 {
		return e.Concurrency
	}
	return runtime.NumCPU()
}

// MaxRepeats bounds an evaluation's repeats: a typo such as 100 instead of 10 would
// otherwise plan a hundred plays of every conversation.
const MaxRepeats = 50

// Reference is a reference block: a text reference run (protocol section 7).
type Reference struct {
	Name    string
	LLM     string // plugin name
	Judge   string // plugin name
	Dataset string // dataset name
	Runs    int
	Retries int
	// Temperature and Seed are nil when the block leaves them to the plugin.
	Temperature *float64
	Seed        *int64
	MaxTokens   int    // 0: the plugin's default
	Out         string // absolute
	DeclRange   hcl.Range
	// AttrRanges holds the range of each attribute the block sets, by name.
	AttrRanges map[string]hcl.Range
}

// Reference returns the reference block of the given name, or nil.
func (f *File) Reference(name string) *Reference {
	for _, r := range f.References {
		if r.Name == name {
			return r
		}
	}
	return nil
}

// ModelRoles gives the role of every model of the evaluation (docs/protocol.md section
// 6.3): the plugin block's role, protocol.RoleTest when it sets none.
func (f *File) ModelRoles(ev *Evaluation) map[string]string {
	out := map[string]string{}
	for _, m := range ev.Models {
		out[m] = protocol.RoleTest
		if p := f.Plugin(m); p != nil && p.Role != "" {
			out[m] = p.Role
		}
	}
	return out
}

// Plugin returns the plugin block of the given name, or nil.
func (f *File) Plugin(name string) *PluginBlock {
	for _, p := range f.Plugins {
		if p.Name == name {
			return p
		}
	}
	return nil
}

// Dataset returns the dataset block of the given name, or nil.
func (f *File) Dataset(name string) *Dataset {
	for _, d := range f.Datasets {
		if d.Name == name {
			return d
		}
	}
	return nil
}

// Evaluation returns the evaluation block of the given name, or nil.
func (f *File) Evaluation(name string) *Evaluation {
	for _, e := range f.Evaluations {
		if e.Name == name {
			return e
		}
	}
	return nil
}

// LockPath is the lock file of this run file: next to it and named after it
// (bench.hcl: bench.lock.hcl), so that each run file in a directory keeps its own pins.
func (f *File) LockPath() string { return LockPathFor(f.Path) }

// LockPathFor is the lock file of the run file at path: its name less ".hcl", plus
// LockSuffix, in the same directory.
func LockPathFor(path string) string {
	return filepath.Join(filepath.Dir(path), strings.TrimSuffix(filepath.Base(path), ".hcl")+LockSuffix)
}

// LockSuffix ends every lock file's name. Run files are found by other globs than
// "*.lock.hcl" (IsLockFile).
const LockSuffix = ".lock.hcl"

// IsLockFile reports whether path names a lock file rather than a run file.
func IsLockFile(path string) bool {
	return strings.HasSuffix(path, LockSuffix) || filepath.Base(path) == LegacyLockFileName
}

// LegacyLockPath is the one lock file per directory written before run files had their
// own (.duplexmpe.lock.hcl): read, with a warning, when LockPath does not exist.
func (f *File) LegacyLockPath() string { return filepath.Join(f.Dir, LegacyLockFileName) }

// LegacyLockFileName is the one lock file per directory that `duplexmpe lock` wrote
// before every run file had its own (LockPath names those). It is still read, with a
// warning, until the run file is locked again.
const LegacyLockFileName = ".duplexmpe.lock.hcl"

// WriteDiagnostics prints diagnostics with the file name, line and a snippet of the
// source. Colour is for terminals only; width 0 means no wrapping.
func WriteDiagnostics(w io.Writer, sources map[string]*hcl.File, diags hcl.Diagnostics, width uint, color bool) error {
	if len(diags) == 0 {
		return nil
	}
	dw := &diagWriter{w: w, files: sources, width: width, color: color, starts: map[string][]int{}}
	for _, d := range diags {
		if err := dw.write(d); err != nil {
			return err
		}
	}
	return nil
}

func secondsToDuration(s float64) time.Duration {
	return time.Duration(s * float64(time.Second))
}

// errorf builds one error diagnostic.
func errorf(rng hcl.Range, summary, format string, args ...any) *hcl.Diagnostic {
	r := rng
	return &hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary, Detail: fmt.Sprintf(format, args...), Subject: &r}
}
