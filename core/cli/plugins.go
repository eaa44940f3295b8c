package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/hcl/v2"
	"github.com/spf13/cobra"

	"github.com/duplexmpe/duplexmpe/core/config"
	"github.com/duplexmpe/duplexmpe/core/pluginhost"
	"github.com/duplexmpe/duplexmpe/sdk"
)

func init() { register(newPluginsCmd) }

func newPluginsCmd(st *State) *cobra.Command {
	var vars []string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "plugins FILE.hcl",
		Short: "Start every plugin of a run file, show what it describes, and check it",
		Long: "Start every plugin of a run file, one at a time, and print what it describes: name, " +
			"version, kinds, protocol version, config schema and identity. Check the version and " +
			"checksum pins, the lock file (" + config.LockFileName + " next to the run file) when there " +
			"is one, that the plugin serves the roles the run file gives it, and its config block " +
			"against its schema. Exit 1 when any plugin fails a check; the messages name it.",
		Args: exactArgs(1, "one run file"),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := loadRunFile(st, args[0], vars)
			if err != nil {
				return err
			}
			lock, diags := readLockFor(f)
			failed := diags.HasErrors()
			var reports []*pluginReport
			for _, p := range f.Plugins {
				r, pdiags := checkPlugin(st.Ctx, f, p, lock, pluginLogger(st))
				reports = append(reports, r)
				diags = append(diags, pdiags...)
				failed = failed || r.Failed
			}
			writeDiagnostics(st, f.Sources, diags, f.Path, args[0])
			if asJSON {
				enc := json.NewEncoder(st.Stdout)
				enc.SetIndent("", "  ")
				if err := enc.Encode(reports); err != nil {
					return err
				}
			} else {
				for _, r := range reports {
					r.writeText(st.Stdout)
				}
			}
			var bad []string
			for _, r := range reports {
				if r.Failed {
					bad = append(bad, r.Name)
				}
			}
			switch {
			case len(bad) > 0:
				fmt.Fprintf(st.Stderr, "%s failed: %s\n", plural(len(bad), "plugin"), strings.Join(bad, ", "))
				return ErrReported
			case failed:
				return ErrReported
			}
			if !asJSON {
				fmt.Fprintf(st.Stdout, "%s: all checks passed\n", plural(len(reports), "plugin"))
			}
			return nil
		},
	}
	addVarFlag(cmd, &vars)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the reports as JSON")
	return cmd
}

// pluginLogger passes plugins' warnings and errors on to stderr; their chatter stays out.
func pluginLogger(st *State) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{Name: "plugin", Level: hclog.Warn, Output: st.Stderr})
}

// pluginReport is what plugins prints for one plugin (and its --json form).
type pluginReport struct {
	Name    string         `json:"name"`
	Source  string         `json:"source,omitempty"`
	Command []string       `json:"command,omitempty"`
	Dir     string         `json:"dir,omitempty"`
	Hash    string         `json:"hash,omitempty"`
	Uses    []string       `json:"uses"`
	Info    *describedInfo `json:"describe,omitempty"`
	// Voices are the voice ids of a plugin used as TTS.
	Voices []string `json:"voices,omitempty"`
	// Config is the config block after checking, with defaults: what Configure gets.
	Config map[string]any `json:"config,omitempty"`
	Failed bool           `json:"failed"`
	// Problems repeats the error diagnostics about this plugin, one line each.
	Problems []string `json:"problems,omitempty"`
}

type describedInfo struct {
	Name            string            `json:"name"`
	Version         string            `json:"version"`
	Description     string            `json:"description,omitempty"`
	Kinds           []string          `json:"kinds"`
	ProtocolVersion int               `json:"protocol_version"`
	Capabilities    []string          `json:"capabilities,omitempty"`
	Config          []configField     `json:"config"`
	Identity        map[string]string `json:"identity,omitempty"`
}

type configField struct {
	Name        string   `json:"name"`
	Type        string   `json:"type"`
	Required    bool     `json:"required,omitempty"`
	Default     any      `json:"default,omitempty"`
	Description string   `json:"description,omitempty"`
	Allowed     []string `json:"allowed,omitempty"`
}

func toDescribed(info sdk.Info) *describedInfo {
	d := &describedInfo{Name: info.Name, Version: info.Version, Description: info.Description,
		Kinds: info.Kinds, ProtocolVersion: info.ProtocolVersion, Capabilities: info.Capabilities,
		Identity: info.Identity, Config: []configField{}}
	for _, f := range info.Config {
		d.Config = append(d.Config, configField(f))
	}
	return d
}

// checkPlugin starts one plugin, describes it and runs every check on it. Problems come
// back as diagnostics pointing into the run file.
func checkPlugin(ctx context.Context, f *config.File, p *config.PluginBlock, lock *pluginhost.Lock, logger hclog.Logger) (*pluginReport, hcl.Diagnostics) {
	r := &pluginReport{Name: p.Name, Source: p.Spec.Source, Command: p.Spec.Command, Dir: p.Spec.Dir, Uses: p.Uses}
	if r.Uses == nil {
		r.Uses = []string{}
	}
	var diags hcl.Diagnostics
	fail := func(attr, summary, format string, args ...any) {
		rng, ok := p.AttrRanges[attr]
		if !ok {
			rng = p.DeclRange
		}
		detail := fmt.Sprintf(format, args...)
		diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary, Detail: detail, Subject: &rng})
		r.Failed = true
		r.Problems = append(r.Problems, summary+": "+detail)
	}

	hash, err := pluginHash(p.Spec)
	if err != nil {
		fail("source", "Cannot hash plugin", "%v", err)
	}
	r.Hash = hash
	// Like a pinned checksum, the lock file keeps unknown code from running: a plugin
	// that does not match it is not started.
	if lock != nil && p.Spec.Reattach == "" {
		if err := checkLock(lock, p, r.Hash); err != nil {
			fail("", "Plugin does not match the lock file", "%v; not started", err)
			return r, diags
		}
	}

	// The version pin is checked here rather than by Start, so that the error can point
	// at the version attribute.
	spec := p.Spec
	spec.Version = ""
	client, err := pluginhost.Start(ctx, spec, logger)
	if err != nil {
		var ce *pluginhost.ChecksumError
		if errors.As(err, &ce) {
			fail("checksum", "Checksum mismatch", "%v", err)
		} else {
			fail("", "Plugin did not start", "%v", err)
		}
		return r, diags
	}
	defer client.Kill()
	info, err := client.Describe(ctx)
	if err != nil {
		fail("", "Describe failed", "%v", err)
		return r, diags
	}
	r.Info = toDescribed(info)
	if err := checkLockedVersion(lock, p, info.Version); err != nil {
		fail("", "Plugin does not match the lock file", "%v", err)
	}
	if p.Spec.Version != "" && info.Version != p.Spec.Version {
		fail("version", "Version mismatch",
			"Plugin %q describes itself as version %q, but the run file pins version %q. Use the pinned plugin, or change the pin.",
			p.Name, info.Version, p.Spec.Version)
	}
	for _, role := range p.Uses {
		if !containsString(info.Kinds, role) {
			rng := p.UseRanges[role]
			detail := fmt.Sprintf("Plugin %q is used here as %s, but it serves only: %s. Use %s plugin here.",
				p.Name, articled(role), orNone(info.Kinds), articled(role))
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Plugin cannot play its role", Detail: detail, Subject: &rng})
			r.Failed = true
			r.Problems = append(r.Problems, "Plugin cannot play its role: "+detail)
		}
	}
	if containsString(p.Uses, sdk.KindTTS) && containsString(info.Kinds, sdk.KindTTS) {
		diags = append(diags, checkVoices(ctx, f, p, client, r)...)
	}
	cfg, cdiags := config.CheckPluginConfig(p, info.Config)
	diags = append(diags, cdiags...)
	if cdiags.HasErrors() {
		r.Failed = true
		for _, d := range cdiags.Errs() {
			r.Problems = append(r.Problems, d.Error())
		}
	} else {
		r.Config = cfg
	}
	return r, diags
}

// checkVoices asks a TTS plugin for its voices and checks that every dataset using it
// names voices it offers. The voices go into the report.
func checkVoices(ctx context.Context, f *config.File, p *config.PluginBlock, client *pluginhost.Client, r *pluginReport) hcl.Diagnostics {
	var diags hcl.Diagnostics
	add := func(rng hcl.Range, summary, detail string) {
		diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary, Detail: detail, Subject: &rng})
		r.Failed = true
		r.Problems = append(r.Problems, summary+": "+detail)
	}
	tts, err := client.TTS()
	var voices []sdk.Voice
	if err == nil {
		voices, err = tts.Voices(ctx)
	}
	if err != nil {
		add(p.DeclRange, "Voices failed", err.Error())
		return diags
	}
	r.Voices = []string{}
	for _, v := range voices {
		r.Voices = append(r.Voices, v.ID)
	}
	for _, ds := range f.Datasets {
		if ds.TTS != p.Name {
			continue
		}
		speakers := make([]string, 0, len(ds.Voices))
		for s := range ds.Voices {
			speakers = append(speakers, s)
		}
		sort.Strings(speakers)
		for _, s := range speakers {
			voice := ds.Voices[s]
			if containsString(r.Voices, voice) {
				continue
			}
			detail := fmt.Sprintf("Dataset %q gives speaker %s the voice %q, which plugin %q does not offer; it offers: %s.",
				ds.Name, s, voice, p.Name, orNone(r.Voices))
			if sug := config.Suggest(voice, r.Voices); sug != "" {
				detail += fmt.Sprintf(" Did you mean %q?", sug)
			}
			rng, ok := ds.AttrRanges["voices"]
			if !ok {
				rng = ds.DeclRange
			}
			add(rng, "Unknown voice", detail)
		}
	}
	return diags
}

// pluginHash is the hash that pins a plugin (pluginhost.SpecHash): sha256 of a source
// executable, h1 of a command plugin's dir. It is empty for a reattached plugin, which
// the host does not start, and for a command plugin without dir, which cannot be pinned.
func pluginHash(spec pluginhost.Spec) (string, error) {
	if spec.Reattach != "" || (spec.Source == "" && spec.Dir == "") {
		return "", nil
	}
	return pluginhost.SpecHash(spec)
}

func (r *pluginReport) writeText(w io.Writer) {
	status := "ok"
	if r.Failed {
		status = "FAILED"
	}
	what := r.Source
	if what == "" {
		what = strings.Join(r.Command, " ")
		if r.Dir != "" {
			what += " (in " + r.Dir + ")"
		}
	}
	fmt.Fprintf(w, "plugin %q: %s\n  runs: %s\n", r.Name, status, what)
	if r.Hash != "" {
		fmt.Fprintf(w, "  hash: %s\n", r.Hash)
	}
	if r.Info != nil {
		i := r.Info
		fmt.Fprintf(w, "  describes: %s %s, protocol %d, kinds %s\n", i.Name, i.Version, i.ProtocolVersion, orNone(i.Kinds))
		if i.Description != "" {
			fmt.Fprintf(w, "  %s\n", i.Description)
		}
		if len(i.Capabilities) > 0 {
			fmt.Fprintf(w, "  capabilities: %s\n", strings.Join(i.Capabilities, ", "))
		}
		if len(i.Identity) > 0 {
			keys := make([]string, 0, len(i.Identity))
			for k := range i.Identity {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			fmt.Fprintf(w, "  identity:\n")
			for _, k := range keys {
				fmt.Fprintf(w, "    %s = %s\n", k, i.Identity[k])
			}
		}
		if len(i.Config) == 0 {
			fmt.Fprintf(w, "  config schema: none\n")
		} else {
			fmt.Fprintf(w, "  config schema:\n")
			for _, f := range i.Config {
				line := fmt.Sprintf("    %s (%s", f.Name, f.Type)
				if f.Required {
					line += ", required"
				}
				if f.Default != nil {
					b, _ := json.Marshal(f.Default)
					line += ", default " + string(b)
				}
				if len(f.Allowed) > 0 {
					line += ", one of " + strings.Join(f.Allowed, " | ")
				}
				line += ")"
				if f.Description != "" {
					line += ": " + f.Description
				}
				fmt.Fprintln(w, line)
			}
		}
	}
	fmt.Fprintf(w, "  used as: %s\n", orNone(r.Uses))
	if r.Voices != nil {
		fmt.Fprintf(w, "  voices: %s\n", orNone(r.Voices))
	}
	if r.Config != nil {
		b, _ := json.Marshal(r.Config)
		fmt.Fprintf(w, "  config: %s\n", b)
	}
	if len(r.Problems) > 0 {
		fmt.Fprintf(w, "  problems: %d (see the errors)\n", len(r.Problems))
	}
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
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
