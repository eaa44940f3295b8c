package pluginstart

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/duplexmpe/duplexmpe/core/atomicfile"
	"github.com/duplexmpe/duplexmpe/core/config"
	"github.com/duplexmpe/duplexmpe/core/fault"
	"github.com/duplexmpe/duplexmpe/core/pluginhost"
	"github.com/duplexmpe/duplexmpe/core/provenance"
	"github.com/duplexmpe/duplexmpe/sdk"
)

// Known is a plugin block whose pins hold and whose identity is known, either because
// it was started (Plugin) or from the record of an earlier start (FromRecord), so that
// a run that has nothing for it to do never starts it: a real model is minutes of
// weight loading.
//
// The rule: what a plugin describes after Configure (its identity, version, schema and
// checked config) is recorded in the identity directory (Starter.WithIdentities; a run
// keeps it in RUN_DIR/plugins) under a key of everything that determines it: the
// plugin's hash (its binary, or its dir), how it is run (source, command, dir, env), the
// run file's directory (relative paths) and its config block as written. A plugin with
// such a record is not started until something needs it (Start); once started, its
// fresh answer replaces the record. A plugin that cannot be pinned (reattached, or a
// command without dir) has no hash, so it is always started.
//
// The limit: a plugin whose answer depends on something outside its files, its env and
// its config (weights fetched by a name that moves, "latest" on a model hub) is
// described as it was when last started, until it is started again: pin such inputs in
// the config (a revision), or set the run's fresh_identities option (EvaluateOptions).
type Known struct {
	Block *config.PluginBlock
	// Hash pins the plugin's code (Hash); empty when it cannot be pinned.
	Hash string
	// Info is the plugin's Describe answer after Configure; Config what Configure got.
	Info   sdk.Info
	Config map[string]any
	// Voices are the voices of a plugin used as TTS, when known.
	Voices []sdk.Voice
	// FromRecord: Info, Config and Voices come from the record of an earlier start.
	FromRecord bool
	// Plugin is the started plugin; nil until Start.
	Plugin *Plugin

	s   *Starter
	key string // the record's key; empty when the plugin cannot be recorded
}

// identityRecord is one file of the identity directory.
type identityRecord struct {
	Key    string         `json:"key"`
	Plugin string         `json:"plugin"` // the block's name, for people
	Hash   string         `json:"hash"`
	Info   sdk.Info       `json:"describe"`
	Config map[string]any `json:"config"`
	Voices []sdk.Voice    `json:"voices,omitempty"`
}

// WithIdentities is a Starter whose Know reads and writes identity records in dir.
func (s *Starter) WithIdentities(dir string) *Starter {
	c := *s
	c.Opts.IdentityDir = dir
	return &c
}

// Know checks b's pins and makes its identity known: from its identity record when it
// has one, else by starting it the checked way (Start). With a record, the pins that
// Start would check before running anything are checked here (the lock file, the
// checksum), and the version pins against the recorded version.
func (s *Starter) Know(ctx context.Context, b *config.PluginBlock) (*Known, error) {
	k, recorded, err := s.recall(b)
	if err != nil || recorded {
		return k, err
	}
	if _, err := k.Start(ctx); err != nil {
		return nil, err
	}
	return k, nil
}

// Recall is Know without starting anything: b's identity from its record, or nil when
// it has none (the plugin would have to start to say what it is). `plan` uses it.
func (s *Starter) Recall(b *config.PluginBlock) (*Known, error) {
	k, recorded, err := s.recall(b)
	if err != nil || !recorded {
		return nil, err
	}
	return k, nil
}

// recall checks b's pins and reads its identity record; recorded reports that there
// was one.
func (s *Starter) recall(b *config.PluginBlock) (k *Known, recorded bool, err error) {
	// Refusals are deterministic failures (core/fault), as in Start.
	hash, err := Hash(HostSpec(b))
	if err != nil {
		return nil, false, fault.Deterministic(err)
	}
	if err := s.Pins.CheckFiles(b, hash); err != nil {
		return nil, false, fault.Deterministic(err)
	}
	k = &Known{Block: b, Hash: hash, s: s}
	if hash != "" && s.Opts.IdentityDir != "" {
		if k.key, err = identityKey(s.File, b, hash); err != nil {
			k.key = "" // a config that cannot be keyed is not recorded
		}
	}
	rec, ok := k.readRecord()
	if !ok {
		return k, false, nil
	}
	if err := pluginhost.VerifyChecksum(HostSpec(b)); err != nil {
		return nil, false, fault.Deterministic(err)
	}
	if err := s.Pins.CheckVersion(b, rec.Info.Version); err != nil {
		return nil, false, fault.Deterministic(err)
	}
	if v := b.Spec.Version; v != "" && v != rec.Info.Version {
		return nil, false, fault.Deterministicf("plugin %q: version %q is pinned, but the plugin is version %q", b.Name, v, rec.Info.Version)
	}
	k.Info, k.Config, k.Voices, k.FromRecord = rec.Info, rec.Config, rec.Voices, true
	return k, true, nil
}

// Start starts the plugin the checked way when it is not running yet, and records what
// it describes. changed reports that it describes itself otherwise than its record said
// (another identity, version, schema or checked config): whatever was keyed by the
// record is then out of date.
func (k *Known) Start(ctx context.Context) (changed bool, err error) {
	if k.Plugin != nil {
		return false, nil
	}
	p, err := k.s.Start(ctx, k.Block)
	if err != nil {
		return false, err
	}
	if k.FromRecord {
		// The record holds the config redacted (sdk.RedactConfig): compare it so.
		changed = !sameJSON(k.Info, p.Info) || !sameJSON(sdk.RedactConfig(k.Config), sdk.RedactConfig(p.Config))
	}
	k.Plugin, k.Info, k.Config, k.FromRecord = p, p.Info, p.Config, false
	if changed {
		k.Voices = nil
	}
	return changed, k.writeRecord()
}

// Started reports whether the plugin runs.
func (k *Known) Started() bool { return k.Plugin != nil }

// SetVoices records the voices of a plugin used as TTS.
func (k *Known) SetVoices(v []sdk.Voice) error {
	k.Voices = v
	return k.writeRecord()
}

// Record is the provenance record of the plugin used as role.
func (k *Known) Record(role string) provenance.Plugin {
	return provenance.Described(k.Block.Name, role, k.Info, k.Hash, k.Config)
}

// Kill stops the plugin when it was started; it may be started again.
func (k *Known) Kill() {
	if k.Plugin != nil {
		k.Plugin.Kill()
		k.Plugin = nil
	}
}

func (k *Known) recordPath() string {
	return filepath.Join(k.s.Opts.IdentityDir, k.key[:32]+".json")
}

func (k *Known) readRecord() (identityRecord, bool) {
	var rec identityRecord
	if k.key == "" {
		return rec, false
	}
	raw, err := os.ReadFile(k.recordPath())
	if err != nil || json.Unmarshal(raw, &rec) != nil || rec.Key != k.key {
		return rec, false // none, or damaged: the plugin is started and the record rewritten
	}
	return rec, true
}

func (k *Known) writeRecord() error {
	if k.key == "" {
		return nil
	}
	raw, err := json.MarshalIndent(identityRecord{Key: k.key, Plugin: k.Block.Name, Hash: k.Hash, Info: k.Info, Config: sdk.RedactConfig(k.Config), Voices: k.Voices}, "", "  ")
	if err != nil {
		return fmt.Errorf("plugin %q: identity record: %w", k.Block.Name, err)
	}
	if err := os.MkdirAll(k.s.Opts.IdentityDir, 0o755); err != nil {
		return err
	}
	if err := atomicfile.WriteFile(k.recordPath(), append(raw, '\n')); err != nil {
		return fmt.Errorf("plugin %q: identity record: %w", k.Block.Name, err)
	}
	return nil
}

// identityKey hashes everything that determines what b describes after Configure.
func identityKey(f *config.File, b *config.PluginBlock, hash string) (string, error) {
	raw, err := config.RawPluginConfig(b)
	if err != nil {
		return "", err
	}
	spec := HostSpec(b)
	keyed := struct {
		Hash    string
		Source  string
		Command []string
		Dir     string
		Env     map[string]string
		RunDir  string
		Config  map[string]json.RawMessage
	}{hash, spec.Source, spec.Command, spec.Dir, spec.Env, f.Dir, raw}
	b2, err := json.Marshal(keyed)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b2)
	return hex.EncodeToString(sum[:]), nil
}

func sameJSON(a, b any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(ja) == string(jb)
}

// ForgetIdentities removes every identity record in dir, so that the next run starts
// each plugin once and records it afresh.
func ForgetIdentities(dir string) error {
	if err := os.RemoveAll(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
