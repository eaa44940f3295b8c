package config

import (
	"fmt"
	"reflect"
	"strconv"

	"github.com/hashicorp/hcl/v2"

	"github.com/duplexmpe/duplexmpe/core/protocol"
)

// The run-file language is described once, here. The same description builds the HCL
// schemas the parser checks blocks against (unknown and missing attributes), and the
// reference section of docs/run-files.md (see Markdown). The decoders in decode.go read
// what the schema let through and check values.

// Value types an attribute may have; the names are what the docs show.
const (
	TypeString       = "string"
	TypeNumber       = "number"
	TypeWhole        = "whole number"
	TypeBool         = "bool"
	TypeDuration     = "duration"
	TypePath         = "path"
	TypeStringList   = "list(string)"
	TypeStringMap    = "map(string)"
	TypeNumberMaps   = "map(map(number))"
	TypeAny          = "any"
	TypePluginRef    = "plugin.<name>"
	TypePluginRefs   = "[plugin.<name>, ...]"
	TypeDatasetRef   = "dataset.<name>"
	TypeReferenceRef = "reference.<name>"
	TypeCommandList  = "list(string), an argv"
)

// AttrSpec describes one attribute of a block.
type AttrSpec struct {
	Name     string
	Type     string
	Required bool
	Default  string // as the docs show it; empty when there is none
	Doc      string
}

// BlockSpec describes one block type.
type BlockSpec struct {
	Type   string
	Labels []string
	Doc    string
	// Free blocks take any attributes (locals, a plugin's config); Attrs is then empty.
	Free   bool
	Attrs  []AttrSpec
	Blocks []*BlockSpec
	// Many says the block may appear more than once in its parent.
	Many bool
}

// Schema is the HCL body schema of the block's contents.
func (b *BlockSpec) Schema() *hcl.BodySchema {
	s := &hcl.BodySchema{}
	for _, a := range b.Attrs {
		s.Attributes = append(s.Attributes, hcl.AttributeSchema{Name: a.Name, Required: a.Required})
	}
	for _, c := range b.Blocks {
		s.Blocks = append(s.Blocks, hcl.BlockHeaderSchema{Type: c.Type, LabelNames: c.Labels})
	}
	return s
}

// Block returns the nested block spec of the given type, or nil.
func (b *BlockSpec) Block(typ string) *BlockSpec {
	for _, c := range b.Blocks {
		if c.Type == typ {
			return c
		}
	}
	return nil
}

// Attr returns the attribute spec of the given name, or nil.
func (b *BlockSpec) Attr(name string) *AttrSpec {
	for i := range b.Attrs {
		if b.Attrs[i].Name == name {
			return &b.Attrs[i]
		}
	}
	return nil
}

// Spec is the whole language: the top level of a run file.
var Spec = &BlockSpec{
	Type: "run file",
	Doc:  "A run file holds variable, locals, plugin, dataset, reference and evaluation blocks, in any order.",
	Blocks: []*BlockSpec{
		{
			Type: "variable", Labels: []string{"name"}, Many: true,
			Doc: "An input of the run file, read as `var.<name>`. Its value comes from, in order: `--var name=value` on the command line, the environment variable `DUPLEXMPE_VAR_<name>`, then `default`. A value from the command line or the environment is a string, converted to the type of the default (number or bool) when there is one.",
			Attrs: []AttrSpec{
				{Name: "default", Type: TypeAny, Doc: "The value when none is given; without it the variable must be set."},
				{Name: "description", Type: TypeString, Doc: "What the variable is for."},
			},
		},
		{
			Type: "locals", Free: true, Many: true,
			Doc: "Named values computed once, read as `local.<name>`. A local may use variables, functions and other locals (no cycles).",
		},
		{
			Type: "plugin", Labels: []string{"name"}, Many: true,
			Doc: "A plugin process: a model, TTS, ASR, judge or LLM. Other blocks refer to it as `plugin.<name>`. Exactly one of `source` and `command` is set; a plugin with a non-empty `reattach` may have neither.",
			Attrs: []AttrSpec{
				{Name: "source", Type: TypePath, Doc: "An executable plugin (a Go plugin binary, or any executable), relative to the run file's directory."},
				{Name: "command", Type: TypeCommandList, Doc: "An argv that starts the plugin, e.g. `[\"bash\", \"run.sh\"]` or `[\"python3\", \"-m\", \"my_plugin\"]`; run in `dir`."},
				{Name: "dir", Type: TypePath, Doc: "The working directory of the plugin; for a `command` plugin also the directory an `h1:` checksum covers."},
				{Name: "env", Type: TypeStringMap, Doc: "Extra environment variables for the plugin (it gets only a minimal environment otherwise)."},
				{Name: "version", Type: TypeString, Doc: "A version pin: the plugin must describe itself with exactly this version."},
				{Name: "checksum", Type: TypeString, Doc: "A checksum pin: `sha256:<hex>` of the `source` executable, or `h1:<base64>` of the files under `dir` of a `command` plugin. A plugin that does not match is refused before it starts."},
				{Name: "reattach", Type: TypeString, Doc: "Connect to an already running plugin (for example a model kept warm on a GPU) instead of starting one: the reattach JSON the plugin printed. Empty means start it."},
				{Name: "start_timeout", Type: TypeDuration, Default: `"5m"`, Doc: "How long the plugin process may take to start (until its handshake); models loading weights need minutes."},
				{Name: "conversation_start_timeout", Type: TypeDuration, Default: `"5m"`, Doc: "How long a model may take to start one conversation. A model that does not answer in time is taken as wedged: its process is killed, that conversation fails, and the plugin is restarted for the next one."},
				{Name: "frame_timeout", Type: TypeDuration, Default: `"2m"`, Doc: "How long a model may take to answer one frame (or to close a conversation); past it, as for `conversation_start_timeout`. `duplexmpe run --frame-deadline` sets it for every model that leaves it unset."},
				{Name: "conversation_timeout", Type: TypeDuration, Default: `"1h"`, Doc: "How long one whole conversation of a model may take, start to close (docs/protocol.md section 3.7). Past it the conversation fails, named, and the run goes on."},
				{Name: "call_timeout", Type: TypeDuration, Default: `"5m"`, Doc: "How long one call of a TTS, ASR, judge or LLM may take (a transcription, a verdict, a synthesis, a completion). A plugin that does not answer in time is taken as wedged: its process is killed and restarted, and the call fails; in scoring, its item is left unscored, named as the ASR's or the judge's failure (the next `score` retries it)."},
				{Name: "log_limit_mb", Type: TypeWhole, Default: "64", Doc: "The most MiB the plugin's log (`<run dir>/logs/<name>.log`) grows to; past it the log is rotated to `<name>.log.1` (the older part dropped, with a note of how much), so a plugin printing without end cannot fill the disk."},
				{Name: "role", Type: TypeString, Default: `"test"`, Doc: "For a model: `\"test\"` (under test), `\"baseline\"`, `\"reference\"` or `\"calibration\"` (told the answers, as the oracle is). Only models under test form the statistics family: model comparisons, the Bonferroni correction and Spearman run over them; baselines and references are reported beside them (docs/protocol.md section 6.3). An error on a plugin that is not used as a model."},
			},
			Blocks: []*BlockSpec{{
				Type: "config", Free: true,
				Doc: "The plugin's own settings. They are checked against the schema the plugin describes (`duplexmpe plugins FILE` shows it): unknown names, wrong types, missing required values and values outside the allowed set are errors; defaults are filled in. A field of type `path` is a file or directory: a relative value resolves against the run file's directory, like every other path here, and the plugin gets it absolute.",
			}},
		},
		{
			Type: "dataset", Labels: []string{"name"}, Many: true,
			Doc: "A set of conversations: scenarios (from files, or generated), synthesised to audio with a TTS plugin. Exactly one of `scenarios` and a `generate` block is set.",
			Attrs: []AttrSpec{
				{Name: "scenarios", Type: TypePath, Doc: "A directory of scenario files."},
				{Name: "tts", Type: TypePluginRef, Required: true, Doc: "The TTS plugin that speaks the turns and the preamble."},
				{Name: "voices", Type: TypeStringMap, Doc: "The voice of each speaker: keys `A`, `B`, `C` (required) and `D` (needed for four-speaker scenarios). Exactly one of `voices` and `voice_pool` is set."},
				{Name: "voice_pool", Type: TypeNumberMaps, Doc: "Voices drawn per scenario instead of fixed per speaker: `{ women = { voice = F0, ... }, men = { ... } }`, each voice with its median F0 in Hz (`make measure-tts` prints it; docs/datasheet.md). Each pair's speakers get voices drawn from the pool by `voice_seed` (A and C from the women, B and D from the men), the same in both versions of the pair, no voice twice in a scenario and no two closer than `voice_min_semitones`, balanced so every voice asks T, asks N4_Q and mentions Aria (N1) as often as its share of the turns says (docs/dataset.md). Needs `narrator`, a voice outside the pool. At least 2 voices in each group. The draw is written in `dataset.json` (`voice_pool`, `pair_voices`)."},
				{Name: "voice_seed", Type: TypeWhole, Default: "1", Doc: "The seed of the voice draw from `voice_pool`."},
				{Name: "voice_min_semitones", Type: TypeNumber, Default: "2", Doc: "The least distance, in semitones, between the F0 medians of two speakers of one scenario drawn from `voice_pool`; between 0 and 12."},
				{Name: "preamble", Type: TypeString, Default: `"default"`, Doc: "The duty preamble: `\"default\"` for the built-in text, or the path of a text file."},
				{Name: "narrator", Type: TypeString, Default: "speaker D's voice, else A's", Doc: "The voice that speaks the preamble; it must differ from every voice in `voices`, so the preamble is not heard as one of the people. Recorded in `dataset.json` as `preamble.voice`."},
				{Name: "loudness", Type: TypeNumber, Default: "-23", Doc: "The integrated loudness in LUFS (ITU-R BS.1770, EBU R128 gating) every clip is normalised to, the preamble included, so level tells no speaker apart; between -40 and -10. Recorded in `dataset.json` as `loudness_lufs`."},
				{Name: "out", Type: TypePath, Default: `"build/datasets/<name>"`, Doc: "Where the synthesised dataset is written."},
			},
			Blocks: []*BlockSpec{{
				Type: "room",
				Doc:  "The acoustic condition of the build (docs/dataset.md, \"Rooms\"): each speaker's clips pass through the simulated impulse response from the speaker's seat to the listening device (pyroomacoustics' image source method, tools/rooms), and a background loop plays under every conversation. Without the block the set is clean: dry clips, no background. A condition is its own built set: give it its own `out`.",
				Attrs: []AttrSpec{
					{Name: "preset", Type: TypeString, Required: true, Doc: "`\"clean\"`, `\"living-room\"`, `\"kitchen\"` or `\"car\"` (docs/dataset.md lists their rooms, seats and backgrounds). Recorded in `dataset.json` as `room`."},
					{Name: "seed", Type: TypeWhole, Default: "1", Doc: "The seed of the seats drawn for each pair's speakers and of the background's noise."},
					{Name: "reuse", Type: TypePath, Doc: "A built set whose clips the build links in instead of synthesising them again, each checked against that set's `clips.sha256`: the clean build of the same scenarios and voices, so a room costs its simulation and not a second synthesis."},
				},
			}, {
				Type: "generate",
				Doc:  "Generate scenarios instead of reading them.",
				Attrs: []AttrSpec{
					{Name: "generator", Type: TypeString, Required: true, Doc: "`\"procedural\"` (no plugin needed) or `\"llm\"` (needs `llm`)."},
					{Name: "llm", Type: TypePluginRef, Doc: "The LLM plugin that writes scenarios, for `generator = \"llm\"`."},
					{Name: "pairs", Type: TypeWhole, Required: true, Doc: "How many explicit/implicit pairs to generate (at least 1)."},
					{Name: "seed", Type: TypeWhole, Default: "1", Doc: "The generator's random seed."},
					{Name: "four_speaker_share", Type: TypeNumber, Default: "0.25", Doc: "The share of scenarios with four humans instead of three, between 0 and 1."},
				},
			}},
		},
		{
			Type: "reference", Labels: []string{"name"}, Many: true,
			Doc: "A text reference run (protocol section 7, docs/reference-track.md): an LLM reads the speaker-attributed transcript of every scenario turn by turn and decides RESPOND or SILENT; the judge grades its answers to T. `duplexmpe reference FILE.hcl` runs it; an evaluation's `reference` shows its tables beside the speech models in the report.",
			Attrs: []AttrSpec{
				{Name: "llm", Type: TypePluginRef, Required: true, Doc: "The LLM plugin that decides."},
				{Name: "judge", Type: TypePluginRef, Required: true, Doc: "The judge plugin that grades answers to T."},
				{Name: "dataset", Type: TypeDatasetRef, Required: true, Doc: "The dataset whose scenarios are decided: its built directory (`out`) when built, else its `scenarios`. No audio is used."},
				{Name: "runs", Type: TypeWhole, Default: "1", Doc: "How many times the dataset is decided (at least 1); with 2 or more the agreement of runs 1 and 2 is reported."},
				{Name: "retries", Type: TypeWhole, Default: "2", Doc: "How many more times a turn is asked when the reply does not parse (0 or more)."},
				{Name: "temperature", Type: TypeNumber, Doc: "Sampling temperature, 0 or more. Without it the plugin's default applies."},
				{Name: "seed", Type: TypeWhole, Doc: "Sampling seed passed to the LLM. Without it none is passed."},
				{Name: "max_tokens", Type: TypeWhole, Default: "0", Doc: "The most tokens per reply; 0 means the plugin's default."},
				{Name: "out", Type: TypePath, Default: `"runs/reference-<name>"`, Doc: "The directory for reference.json and reference.md."},
			},
		},
		{
			Type: "evaluation", Labels: []string{"name"}, Many: true,
			Doc: "Runs models on a dataset and scores them.",
			Attrs: []AttrSpec{
				{Name: "dataset", Type: TypeDatasetRef, Required: true, Doc: "The dataset to play."},
				{Name: "models", Type: TypePluginRefs, Required: true, Doc: "The model plugins to evaluate, at least one, each once."},
				{Name: "asr", Type: TypePluginRef, Required: true, Doc: "The ASR plugin that transcribes model responses."},
				{Name: "judge", Type: TypePluginRef, Required: true, Doc: "The judge plugin that scores answers."},
				{Name: "concurrency", Type: TypeWhole, Default: "0", Doc: "How many conversations run at once over all models; 0: one per CPU core. Each model also plays at most what its plugin declares (`model.concurrency=N`, 1 when it declares nothing). Transport only: it does not change results."},
				{Name: "seed", Type: TypeWhole, Default: "1", Doc: "The seed given to models and the bootstrap."},
				{Name: "repeats", Type: TypeWhole, Default: "1", Doc: "How many times every model plays every conversation, each repeat with its own seed (repeat 0 the `seed` itself, repeat r >= 1 one derived from it and r: docs/protocol.md section 6.5). The report then shows how often the repeats agree on each decision and the spread of each rate over repeats. Raising it on a finished run plays only the new repeats."},
				{Name: "out", Type: TypePath, Default: `"runs/<name>"`, Doc: "The run directory."},
				{Name: "reference", Type: TypeReferenceRef, Doc: "A reference block whose result (its `out`/reference.json) the report shows beside this evaluation's speech models. Run `duplexmpe reference FILE.hcl` before scoring."},
			},
			Blocks: []*BlockSpec{
				{Type: "protocol", Doc: "Overrides of the protocol constants (protocol section 8). Durations are strings such as `\"800ms\"` or `\"2s\"`, or numbers of seconds.", Attrs: protocolAttrs()},
				{Type: "vad", Doc: "Speech detection settings (protocol section 4). Durations as in `protocol`.", Attrs: vadAttrs()},
			},
		},
	},
}

// protocolAttrs lists every protocol.Params field; its defaults come from protocol.Defaults.
func protocolAttrs() []AttrSpec {
	attrs := []AttrSpec{
		{Name: "preamble_gap", Type: TypeDuration, Doc: "Silence after the duty preamble."},
		{Name: "turn_gap", Type: TypeDuration, Doc: "Silence after each human turn."},
		{Name: "t_onset_window", Type: TypeDuration, Doc: "How long after T ends a response may start."},
		{Name: "t_end_silence", Type: TypeDuration, Doc: "Silence that ends the model's response to T."},
		{Name: "t_wait_cap", Type: TypeDuration, Doc: "The longest wait for a response to T to end; at least t_onset_window."},
		{Name: "n4_gap", Type: TypeDuration, Doc: "Silence between N4_Q and the human's resolution N4_R."},
		{Name: "yield_deadline", Type: TypeDuration, Doc: "How soon after N4_R starts the model must fall silent."},
		{Name: "yield_observe", Type: TypeDuration, Doc: "How long the model must stay silent to have yielded."},
		{Name: "min_eligible", Type: TypeWhole, Doc: "The fewest eligible items for a yield rate to be reported."},
		{Name: "tail", Type: TypeDuration, Doc: "Silence streamed after the last turn."},
		{Name: "bootstrap_resamples", Type: TypeWhole, Doc: "Bootstrap resamples for between-model differences."},
		{Name: "timing_control", Type: TypeBool, Doc: "The timing-cue control (docs/protocol.md section 3.6): pad every ordinary turn with the silence a request gets (t_onset_window or n4_gap, drawn per turn from the seed), so that a long pause no longer announces the request. Off (the paper's schedule) by default."},
		{Name: "gap_profile", Type: TypeString, Doc: "The silence after an ordinary turn (docs/protocol.md section 3.3): \"paper\" (the default, also \"\") is turn_gap after every one, as the paper; \"natural\" is each turn's own gap as the dataset records it (gap_after_s, a naturalistic distribution drawn when the set was compiled), so that pause length is not a cue."},
	}
	fillDefaults(attrs, protocol.Defaults())
	return attrs
}

func vadAttrs() []AttrSpec {
	attrs := []AttrSpec{
		{Name: "model", Type: TypeString, Doc: fmt.Sprintf("The Silero model: %q or %q.", protocol.SileroV5, protocol.SileroV6)},
		{Name: "threshold", Type: TypeNumber, Doc: "Speech probability that starts an episode, between 0 and 1."},
		{Name: "neg_threshold", Type: TypeNumber, Doc: "Probability below which a running episode may end; 0 means max(threshold - 0.15, 0.01), as Silero."},
		{Name: "min_speech", Type: TypeDuration, Doc: "Episodes shorter than this are dropped."},
		{Name: "merge_pause", Type: TypeDuration, Doc: "Episodes separated by less than this are merged."},
		{Name: "speech_pad", Type: TypeDuration, Doc: "Padding added to each side of an episode. Above 0 it makes the VAD non-causal: the scheduler's decisions can then differ from the scored episodes (a warning says so)."},
	}
	fillDefaults(attrs, protocol.DefaultVAD())
	return attrs
}

// fillDefaults writes each attribute's default, as the docs show it, from the field of
// defaults whose json tag is the attribute's name.
func fillDefaults(attrs []AttrSpec, defaults any) {
	for i := range attrs {
		f, ok := fieldByJSON(reflect.ValueOf(defaults), attrs[i].Name)
		if !ok {
			panic("config: no field for attribute " + attrs[i].Name) // caught by tests
		}
		switch attrs[i].Type {
		case TypeDuration:
			attrs[i].Default = strconv.Quote(formatSeconds(f.Float()))
		case TypeString:
			attrs[i].Default = strconv.Quote(f.String())
		case TypeWhole:
			attrs[i].Default = strconv.FormatInt(f.Int(), 10)
		case TypeBool:
			attrs[i].Default = strconv.FormatBool(f.Bool())
		default:
			attrs[i].Default = strconv.FormatFloat(f.Float(), 'g', -1, 64)
		}
	}
}

// fieldByJSON finds the struct field (of a struct or a pointer to one) with the given
// json tag name.
func fieldByJSON(v reflect.Value, name string) (reflect.Value, bool) {
	if v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		tag := t.Field(i).Tag.Get("json")
		for j := 0; j < len(tag); j++ {
			if tag[j] == ',' {
				tag = tag[:j]
				break
			}
		}
		if tag == name {
			return v.Field(i), true
		}
	}
	return reflect.Value{}, false
}

// formatSeconds writes seconds the way a run file would: "500ms", "2s", "1m0s".
func formatSeconds(s float64) string {
	return secondsToDuration(s).String()
}
