// Package pluginstart starts the plugins of a run file the checked way. Every command
// that starts a plugin (build, run, score, reference, plugins, lock, plugins test)
// goes through it, so every plugin process the harness runs has passed the same checks,
// in this order:
//
//  1. the pins (Pins): with a lock file next to the run file, the plugin must be in it
//     with the same source or command, and its files must hash to a pinned hash; a
//     plugin that fails is not started (it is unknown code);
//  2. the start itself (pluginhost.Start): the block's checksum pin, the handshake, the
//     protocol version, the block's version pin;
//  3. Describe, and the version the lock file pins;
//  4. the block's config against the schema the plugin described, defaults filled in;
//  5. Configure, then Describe again for the identity the plugin reports once
//     configured (model revision, weights digest, prompt hash). A value the plugin
//     rejects (InvalidArgument) is a DiagnosticsError at its config block.
//
// The result, a Plugin, carries what a record of the run needs (provenance.Plugin via
// Record). Its log goes to LogDir/<name>.log when a run directory is given.
//
// The same checks, reported one by one against the run file's lines instead of stopping
// at the first, are Check (the `plugins` command); LockFile pins every plugin of a run
// file (the `lock` command).
package pluginstart

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/hcl/v2"

	"github.com/duplexmpe/duplexmpe/core/config"
	"github.com/duplexmpe/duplexmpe/core/fault"
	"github.com/duplexmpe/duplexmpe/core/pluginhost"
	"github.com/duplexmpe/duplexmpe/core/provenance"
	"github.com/duplexmpe/duplexmpe/sdk"
)

// Pins is the pin policy of one run file: the version and checksum attributes of its
// plugin blocks (checked by pluginhost.Start) and its lock file (config.File.LockPath).
type Pins struct {
	lock    *pluginhost.Lock // nil: no lock file
	runFile string
	// Warning, when set, is to be shown before anything runs: the pins come from the old
	// per-directory lock file.
	Warning string
}

// LoadPins reads the lock file of f (none is fine). Without one, the old per-directory
// .duplexmpe.lock.hcl is read, with a Warning saying how to migrate. A lock file that
// cannot be read or parsed is an error naming it.
func LoadPins(f *config.File) (*Pins, error) {
	lock, legacy, err := readLock(f)
	if err != nil {
		return nil, fault.Deterministic(err)
	}
	if lock == nil {
		return &Pins{runFile: f.Path}, nil
	}
	p := &Pins{lock: lock, runFile: f.Path}
	if legacy {
		p.Warning = fmt.Sprintf("the pins of %s come from %s, the lock file that every run file in the directory shared before each had its own; "+
			"run `duplexmpe lock %s` to write %s (the old file then no longer counts for it; delete it once no run file in the directory needs it)",
			f.Path, lock.Path(), f.Path, f.LockPath())
	}
	return p, nil
}

// readLock reads f's lock file, else the legacy one (legacy true); nil when neither exists.
func readLock(f *config.File) (lock *pluginhost.Lock, legacy bool, err error) {
	lock, err = pluginhost.ReadLock(f.LockPath())
	if !errors.Is(err, fs.ErrNotExist) {
		return lock, false, err
	}
	lock, err = pluginhost.ReadLock(f.LegacyLockPath())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	return lock, err == nil, err
}

// Lock is the lock file's content; nil when there is none.
func (p *Pins) Lock() *pluginhost.Lock { return p.lock }

// Hash is the hash that pins a plugin (pluginhost.SpecHash): sha256 of a source
// executable, h1 of a command plugin's dir. It is empty for a reattached plugin, which
// the host does not start, and for a command plugin without dir, which cannot be pinned.
func Hash(spec pluginhost.Spec) (string, error) {
	if spec.Reattach != "" || (spec.Source == "" && spec.Dir == "") {
		return "", nil
	}
	return pluginhost.SpecHash(spec)
}

// CheckFiles checks a plugin's source or command and hash against the lock file: it
// passes without a lock file and for a reattached plugin. hash is Hash(HostSpec(b)). A
// mismatch names the run file and the line of the plugin block, what the lock pins and
// what the plugin is now, and the command that fixes it.
func (p *Pins) CheckFiles(b *config.PluginBlock, hash string) error {
	if p.lock == nil || b.Spec.Reattach != "" {
		return nil
	}
	err := p.lock.Check(LockSpec(b), hash)
	var pe *pluginhost.PinError
	if errors.As(err, &pe) && pe.What == pluginhost.PinHash {
		locked, _ := p.lock.Get(b.Name)
		pe.Changed = locked.Changed(HostSpec(b))
	}
	return p.explain(b, err)
}

// CheckVersion checks the version a plugin described against the lock file.
func (p *Pins) CheckVersion(b *config.PluginBlock, version string) error {
	if p.lock == nil || b.Spec.Reattach != "" {
		return nil
	}
	if locked, ok := p.lock.Get(b.Name); ok && locked.Version != "" && locked.Version != version {
		return p.explain(b, &pluginhost.PinError{Plugin: b.Name, Lock: p.lock.Path(), What: pluginhost.PinVersion, Pinned: locked.Version, Got: version})
	}
	return nil
}

// explain turns a *pluginhost.PinError into the message a user acts on.
func (p *Pins) explain(b *config.PluginBlock, err error) error {
	var pe *pluginhost.PinError
	if !errors.As(err, &pe) {
		return err
	}
	return fmt.Errorf("%s:%d: %v; %s", p.runFile, b.DeclRange.Start.Line, pe, PinFix(pe, p.runFile))
}

// PinFix is the exact fix of a pin mismatch of a plugin of runFile.
func PinFix(pe *pluginhost.PinError, runFile string) string {
	switch pe.What {
	case pluginhost.PinMissing:
		return fmt.Sprintf("pin it with `duplexmpe lock %s`", runFile)
	case pluginhost.PinSpec:
		return fmt.Sprintf("if the change of the plugin block is intended, re-pin it with `duplexmpe lock --upgrade %s`; otherwise restore the block", runFile)
	default:
		return fmt.Sprintf("if the change of the plugin is intended, re-pin it with `duplexmpe lock --upgrade %s`; otherwise restore the pinned plugin (rebuild it from the pinned source)", runFile)
	}
}

// LockSpec is the spec as the lock file records it: source and dir as the run file
// wrote them, so that a committed lock file with relative paths holds on any checkout.
func LockSpec(b *config.PluginBlock) pluginhost.Spec {
	spec := HostSpec(b)
	spec.Source, spec.Dir = filepath.ToSlash(b.WrittenSource), filepath.ToSlash(b.WrittenDir)
	return spec
}

// Options are how plugins are started.
type Options struct {
	// Logger receives every plugin's log lines (the CLI passes warnings and errors on
	// to the terminal). Nil: dropped.
	Logger hclog.Logger
	// LogDir, when set, receives each plugin's whole log (every level, its stdout and
	// stderr) as LogDir/<plugin>.log: a run's RUN_DIR/logs.
	LogDir string
	// IdentityDir, when set, keeps what each plugin described after Configure (Known),
	// so that Know need not start it again: a run's RUN_DIR/plugins.
	IdentityDir string
}

// Starter starts plugins of one run file.
type Starter struct {
	File *config.File
	Pins *Pins
	Opts Options
}

// NewStarter reads the run file's pins.
func NewStarter(f *config.File, opts Options) (*Starter, error) {
	pins, err := LoadPins(f)
	if err != nil {
		return nil, err
	}
	return &Starter{File: f, Pins: pins, Opts: opts}, nil
}

// WithLogDir is a Starter that logs into dir (see Options.LogDir).
func (s *Starter) WithLogDir(dir string) *Starter {
	c := *s
	c.Opts.LogDir = dir
	return &c
}

// Plugin is a started, checked and configured plugin. Kill it (Client.Kill) when done.
type Plugin struct {
	*pluginhost.Client
	Block *config.PluginBlock
	// Info is the plugin's Describe answer after Configure, identity included.
	Info sdk.Info
	// Config is what Configure got: the block's config, checked, defaults filled in.
	Config map[string]any
	// Hash pins the plugin's code (Hash); empty when it cannot be pinned.
	Hash string
}

// Record is the provenance record of p used as role.
func (p *Plugin) Record(role string) provenance.Plugin {
	return provenance.Described(p.Block.Name, role, p.Info, p.Hash, p.Config)
}

// DiagnosticsError is a failure the run file's lines explain (a config block that does
// not fit the plugin's schema): print Diags with the file's sources.
type DiagnosticsError struct {
	Diags hcl.Diagnostics
}

func (e *DiagnosticsError) Error() string { return e.Diags.Error() }

// Deterministic: the run file must change (core/fault).
func (e *DiagnosticsError) Deterministic() bool { return true }

// Start starts the plugin block b the checked way (see the package comment). On error
// nothing is left running. A plugin refused by its pin (checksum or lock file) or by its
// config schema is a deterministic failure (core/fault); one that cannot start or
// answer is not.
func (s *Starter) Start(ctx context.Context, b *config.PluginBlock) (*Plugin, error) {
	hash, err := Hash(HostSpec(b))
	if err != nil {
		return nil, fault.Deterministic(err)
	}
	// Like a pinned checksum, the lock file keeps unknown code from running: a plugin
	// that does not match it is not started.
	if err := s.Pins.CheckFiles(b, hash); err != nil {
		return nil, fault.Deterministic(err)
	}
	spec := HostSpec(b)
	if s.Opts.LogDir != "" {
		spec.LogFile = filepath.Join(s.Opts.LogDir, b.Name+".log")
	}
	c, err := pluginhost.Start(ctx, spec, s.Opts.Logger)
	if err != nil {
		if ce := (*pluginhost.ChecksumError)(nil); errors.As(err, &ce) {
			return nil, fault.Deterministic(err)
		}
		return nil, err // pluginhost names the plugin and says what to do
	}
	p, err := configure(ctx, c, b, s.Pins, hash)
	if err != nil {
		c.Kill()
		return nil, err
	}
	return p, nil
}

func configure(ctx context.Context, c *pluginhost.Client, b *config.PluginBlock, pins *Pins, hash string) (*Plugin, error) {
	info, err := c.Describe(ctx)
	if err != nil {
		return nil, err
	}
	if err := pins.CheckVersion(b, info.Version); err != nil {
		return nil, fault.Deterministic(err)
	}
	cfg, diags := config.CheckPluginConfig(b, info.Config)
	if diags.HasErrors() {
		return nil, &DiagnosticsError{Diags: diags}
	}
	if err := c.Configure(ctx, cfg); err != nil {
		if d := rejectedConfig(b, err); d != nil {
			return nil, &DiagnosticsError{Diags: hcl.Diagnostics{d}}
		}
		return nil, fmt.Errorf("plugin %q: configure: %w", b.Name, err)
	}
	if info, err = c.Describe(ctx); err != nil {
		return nil, err
	}
	return &Plugin{Client: c, Block: b, Info: info, Config: cfg, Hash: hash}, nil
}

// HostSpec is the host's spec of plugin block b: the run file's plain fields
// (config.PluginSpec), named by the block's label. The one conversion from the run
// file's description of a plugin to how pluginhost starts it.
func HostSpec(b *config.PluginBlock) pluginhost.Spec {
	s := b.Spec
	return pluginhost.Spec{
		Name:                     b.Name,
		Source:                   s.Source,
		Command:                  s.Command,
		Dir:                      s.Dir,
		HashSkip:                 s.HashSkip,
		Env:                      s.Env,
		Version:                  s.Version,
		Checksum:                 s.Checksum,
		Reattach:                 s.Reattach,
		StartTimeout:             s.StartTimeout,
		ConversationStartTimeout: s.ConversationStartTimeout,
		FrameTimeout:             s.FrameTimeout,
		CallTimeout:              s.CallTimeout,
		ConversationTimeout:      s.ConversationTimeout,
		ConfigDir:                s.ConfigDir,
		LogLimit:                 s.LogLimit,
	}
}
