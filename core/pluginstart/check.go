package pluginstart

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/duplexmpe/duplexmpe/core/config"
	"github.com/duplexmpe/duplexmpe/core/dataset"
	"github.com/duplexmpe/duplexmpe/core/pluginhost"
	"github.com/duplexmpe/duplexmpe/sdk"
)

// Report is what Check found about one plugin (the `plugins` command prints it, and
// its --json form).
type Report struct {
	Name    string    `json:"name"`
	Source  string    `json:"source,omitempty"`
	Command []string  `json:"command,omitempty"`
	Dir     string    `json:"dir,omitempty"`
	Hash    string    `json:"hash,omitempty"`
	Uses    []string  `json:"uses"`
	Info    *sdk.Info `json:"describe,omitempty"`
	// Voices are the voice ids of a plugin used as TTS.
	Voices []string `json:"voices,omitempty"`
	// Config is the config block after checking, with defaults: what Configure gets.
	Config map[string]any `json:"config,omitempty"`
	// Configured says Configure accepted Config (only with CheckOptions.Configure);
	// Identity is what the plugin then describes itself as (model revision, weights
	// digest, prompt hash): what a run records.
	Configured bool              `json:"configured,omitempty"`
	Identity   map[string]string `json:"configured_identity,omitempty"`
	Failed     bool              `json:"failed"`
	// Transient says a failure may pass when checked again unchanged: the plugin did not
	// start or answer, or Configure failed for another reason than a value it rejects.
	// A failed report without it failed on the run file or the plugin's files alone.
	Transient bool `json:"transient,omitempty"`
	// Problems repeats the error diagnostics about this plugin, one line each.
	Problems []string `json:"problems,omitempty"`
}

// CheckOptions choose checks beyond the default ones of Check.
type CheckOptions struct {
	// Configure also configures each plugin whose config block fits its schema, as a run
	// does, and asks for the identity it then reports. A value the plugin rejects is a
	// problem at its config block, in the plugin's own words.
	Configure bool
	// SchemaOnly checks the config block against the schema and asks nothing else (a
	// TTS plugin's voices, which some plugins list only once configured): what
	// CheckConfigs needs before a run.
	SchemaOnly bool
}

// CheckAll checks every plugin of f, one at a time (see Check). A lock file that cannot
// be read is a diagnostic too; the plugins are then checked without it.
func CheckAll(ctx context.Context, f *config.File, opts Options, checks CheckOptions) ([]*Report, hcl.Diagnostics) {
	var diags hcl.Diagnostics
	pins, err := LoadPins(f)
	if err != nil {
		diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Bad lock file", Detail: err.Error()})
		pins = &Pins{}
	}
	if pins.Warning != "" {
		diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagWarning, Summary: "Old lock file", Detail: pins.Warning})
	}
	s := &Starter{File: f, Pins: pins, Opts: opts}
	var reports []*Report
	for _, p := range f.Plugins {
		r, pdiags := s.Check(ctx, p, checks)
		reports = append(reports, r)
		diags = append(diags, pdiags...)
	}
	return reports, diags
}

// Check starts one plugin, describes it and runs every check of Start on it (Configure
// only with checks.Configure), plus two that need the whole run file: the plugin serves
// every role the run file gives it, and a TTS offers the voices its datasets name.
// Problems come back as diagnostics pointing into the run file (the version pin at its
// version attribute, a rejected value at its config block, and so on), and in the
// report; the plugin is killed before it returns.
func (s *Starter) Check(ctx context.Context, p *config.PluginBlock, checks CheckOptions) (*Report, hcl.Diagnostics) {
	r := &Report{Name: p.Name, Source: p.Spec.Source, Command: p.Spec.Command, Dir: p.Spec.Dir, Uses: p.Uses}
	if r.Uses == nil {
		r.Uses = []string{}
	}
	var diags hcl.Diagnostics
	add := func(rng hcl.Range, summary, detail string) {
		diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary, Detail: detail, Subject: &rng})
		r.Failed = true
		r.Problems = append(r.Problems, summary+": "+detail)
	}
	fail := func(attr, summary, format string, args ...any) {
		add(attrRange(p, attr), summary, fmt.Sprintf(format, args...))
	}
	transient := func(summary, format string, args ...any) {
		fail("", summary, format, args...)
		r.Transient = true
	}

	hash, err := Hash(HostSpec(p))
	if err != nil {
		fail("source", "Cannot hash plugin", "%v", err)
	}
	r.Hash = hash
	if err := s.Pins.CheckFiles(p, r.Hash); err != nil {
		fail("", "Plugin does not match the lock file", "%v; not started", err)
		return r, diags
	}

	// The version pin is checked here rather than by Start, so that the error can point
	// at the version attribute.
	spec := HostSpec(p)
	spec.Version = ""
	client, err := pluginhost.Start(ctx, spec, s.Opts.Logger)
	if err != nil {
		var ce *pluginhost.ChecksumError
		var se *pluginhost.StartError
		if errors.As(err, &ce) {
			fail("checksum", "Checksum mismatch", "%v", err)
		} else if errors.As(err, &se) && se.Deterministic() {
			fail("", "Plugin did not start", "%v", err) // its own files: deterministic
		} else {
			transient("Plugin did not start", "%v", err)
		}
		return r, diags
	}
	defer client.Kill()
	info, err := client.Describe(ctx)
	if err != nil {
		transient("Describe failed", "%v", err)
		return r, diags
	}
	if info.Config == nil {
		info.Config = []sdk.ConfigField{}
	}
	r.Info = &info
	if err := s.Pins.CheckVersion(p, info.Version); err != nil {
		fail("", "Plugin does not match the lock file", "%v", err)
	}
	if p.Spec.Version != "" && info.Version != p.Spec.Version {
		fail("version", "Version mismatch",
			"Plugin %q describes itself as version %q, but the run file pins version %q. Use the pinned plugin, or change the pin.",
			p.Name, info.Version, p.Spec.Version)
	}
	for _, role := range p.Uses {
		if !slices.Contains(info.Kinds, role) {
			add(p.UseRanges[role], "Plugin cannot play its role", fmt.Sprintf("Plugin %q is used here as %s, but it serves only: %s. Use %s plugin here.",
				p.Name, articled(role), orNone(info.Kinds), articled(role)))
		}
	}
	if !checks.SchemaOnly && slices.Contains(p.Uses, sdk.KindTTS) && slices.Contains(info.Kinds, sdk.KindTTS) {
		s.checkVoices(ctx, p, client, r, add)
	}
	cfg, cdiags := config.CheckPluginConfig(p, info.Config)
	diags = append(diags, cdiags...)
	if cdiags.HasErrors() {
		r.Failed = true
		for _, d := range cdiags.Errs() {
			r.Problems = append(r.Problems, d.Error())
		}
		return r, diags
	}
	r.Config = cfg
	if !checks.Configure {
		return r, diags
	}
	if err := client.Configure(ctx, cfg); err != nil {
		if d := rejectedConfig(p, err); d != nil {
			add(*d.Subject, d.Summary, d.Detail)
		} else {
			transient("Configure failed", "%v", err)
		}
		return r, diags
	}
	configured, err := client.Describe(ctx)
	if err != nil {
		transient("Describe failed", "after Configure: %v", err)
		return r, diags
	}
	r.Configured, r.Identity = true, configured.Identity
	if r.Identity == nil {
		r.Identity = map[string]string{}
	}
	return r, diags
}

// checkVoices asks a TTS plugin for its voices and checks that every dataset using it
// names voices it offers. The voices go into the report.
func (s *Starter) checkVoices(ctx context.Context, p *config.PluginBlock, client *pluginhost.Client, r *Report, add func(hcl.Range, string, string)) {
	tts, err := client.TTS()
	var voices []sdk.Voice
	if err == nil {
		voices, err = tts.Voices(ctx)
	}
	if err != nil {
		add(p.DeclRange, "Voices failed", err.Error())
		r.Transient = true
		return
	}
	r.Voices = []string{}
	for _, v := range voices {
		r.Voices = append(r.Voices, v.ID)
	}
	for _, ds := range s.File.Datasets {
		if ds.TTS != p.Name {
			continue
		}
		speakers := make([]string, 0, len(ds.Voices))
		for sp := range ds.Voices {
			speakers = append(speakers, sp)
		}
		sort.Strings(speakers)
		for _, sp := range speakers {
			voice := ds.Voices[sp]
			if slices.Contains(r.Voices, voice) {
				continue
			}
			detail := fmt.Sprintf("Dataset %q gives speaker %s the voice %q, which plugin %q does not offer; it offers: %s.",
				ds.Name, sp, voice, p.Name, orNone(r.Voices))
			if sug := config.Suggest(voice, r.Voices); sug != "" {
				detail += fmt.Sprintf(" Did you mean %q?", sug)
			}
			rng, ok := ds.AttrRanges["voices"]
			if !ok {
				rng = ds.DeclRange
			}
			add(rng, "Unknown voice", detail)
		}
		for _, voice := range dataset.SortedKeys(ds.VoicePool) {
			if slices.Contains(r.Voices, voice) {
				continue
			}
			detail := fmt.Sprintf("Dataset %q has the voice %q in voice_pool, which plugin %q does not offer; it offers: %s.", ds.Name, voice, p.Name, orNone(r.Voices))
			if sug := config.Suggest(voice, r.Voices); sug != "" {
				detail += fmt.Sprintf(" Did you mean %q?", sug)
			}
			add(ds.AttrRanges["voice_pool"], "Unknown voice", detail)
		}
	}
}

// attrRange is the range of one attribute of a plugin block, or of the block when the
// attribute is not set (or attr is "").
func attrRange(p *config.PluginBlock, attr string) hcl.Range {
	if rng, ok := p.AttrRanges[attr]; ok {
		return rng
	}
	return p.DeclRange
}

func orNone(list []string) string {
	if len(list) == 0 {
		return "none"
	}
	return strings.Join(list, ", ")
}

func articled(role string) string {
	switch role {
	case "asr", "llm":
		return "an " + strings.ToUpper(role)
	case "tts":
		return "a TTS"
	}
	return "a " + role
}
