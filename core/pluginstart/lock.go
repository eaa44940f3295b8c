package pluginstart

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/hashicorp/hcl/v2"

	"github.com/duplexmpe/duplexmpe/core/config"
	"github.com/duplexmpe/duplexmpe/core/pluginhost"
)

// Locked is what LockFile did with one plugin block.
type Locked struct {
	Name string
	// Reattached plugins are not started by the host, so they are not locked.
	Reattached bool
	// Entry is the plugin's lock entry; zero when it failed or was reattached.
	Entry pluginhost.LockedPlugin
	// Old is the entry the lock file held before; zero when the plugin was not pinned.
	Old pluginhost.LockedPlugin
	// Failed: its diagnostics say why.
	Failed bool
}

// Pinned says what happened to the pin: "pinned" (new), "unchanged" or "re-pinned".
func (l Locked) Pinned() string {
	switch {
	case l.Old.Name == "":
		return "pinned"
	case samePin(l.Old, l.Entry):
		return "unchanged"
	}
	return "re-pinned"
}

func samePin(a, b pluginhost.LockedPlugin) bool {
	return a.Name == b.Name && a.Version == b.Version && a.Source == b.Source &&
		slices.Equal(a.Command, b.Command) && slices.Equal(a.Hashes, b.Hashes)
}

// LockResult is what LockFile did.
type LockResult struct {
	Plugins []Locked
	// Removed are the pins of plugins the run file no longer declares, dropped.
	Removed []string
	// Path is the run file's lock file; Written says whether it was written.
	Path    string
	Written bool
	// Legacy is the old per-directory lock file the existing pins were read from, if any.
	Legacy string
}

// LockFile pins every plugin of f in f's own lock file (config.File.LockPath): it starts
// each one (which checks its version and checksum pins), asks its version, hashes it,
// and writes the lock file, but only when every plugin succeeded; otherwise the old lock
// file is left alone. Without upgrade, a pin already there that the plugin no longer
// matches (another hash, source, command or version) is a failure, and that plugin is
// not started: re-pinning is a deliberate act (`lock --upgrade`). The pins of other run
// files, in their own lock files, are never touched. Without a lock file of its own,
// f's pins are taken from the old per-directory one (Legacy).
func LockFile(ctx context.Context, f *config.File, opts Options, upgrade bool) (*LockResult, hcl.Diagnostics, error) {
	res := &LockResult{Path: f.LockPath()}
	old, legacy, err := readLock(f)
	if err != nil {
		return res, nil, err
	}
	if old == nil {
		old = &pluginhost.Lock{}
	} else if legacy {
		res.Legacy = old.Path()
	}
	var diags hcl.Diagnostics
	lock := &pluginhost.Lock{}
	failed := false
	for _, p := range f.Plugins {
		if p.Spec.Reattach != "" {
			res.Plugins = append(res.Plugins, Locked{Name: p.Name, Reattached: true})
			continue
		}
		prev, _ := old.Get(p.Name)
		entry, pdiags := lockPlugin(ctx, f, p, prev, old.Path(), upgrade, opts)
		diags = append(diags, pdiags...)
		if pdiags.HasErrors() {
			failed = true
			res.Plugins = append(res.Plugins, Locked{Name: p.Name, Old: prev, Failed: true})
			continue
		}
		lock.Set(entry)
		res.Plugins = append(res.Plugins, Locked{Name: p.Name, Entry: entry, Old: prev})
	}
	if !legacy {
		for _, e := range old.Plugins {
			if f.Plugin(e.Name) == nil {
				res.Removed = append(res.Removed, e.Name)
			}
		}
	}
	if failed {
		return res, diags, nil
	}
	if err := lock.Write(res.Path); err != nil {
		return res, diags, err
	}
	res.Written = true
	return res, diags, nil
}

// lockPlugin starts the plugin (Start checks its pins), asks its version and hashes it.
// prev is its pin so far (zero: none), read from the lock file from; without upgrade a
// different pin is refused.
func lockPlugin(ctx context.Context, f *config.File, p *config.PluginBlock, prev pluginhost.LockedPlugin, from string, upgrade bool, opts Options) (pluginhost.LockedPlugin, hcl.Diagnostics) {
	fail := func(summary string, err error) hcl.Diagnostics {
		rng := p.DeclRange
		var ce *pluginhost.ChecksumError
		if errors.As(err, &ce) {
			rng = attrRange(p, "checksum")
		}
		return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: summary, Detail: err.Error(), Subject: &rng}}
	}
	differs := func(pe *pluginhost.PinError) hcl.Diagnostics {
		return fail("Pin differs", fmt.Errorf("%v; `duplexmpe lock` never overwrites a pin: if the change is intended, re-pin it deliberately with `duplexmpe lock --upgrade %s`; otherwise restore the plugin",
			pe, f.Path))
	}
	spec := LockSpec(p)
	hash, err := pluginhost.SpecHash(HostSpec(p))
	if err != nil {
		return pluginhost.LockedPlugin{}, fail("Cannot hash plugin", err)
	}
	var files map[string]string // what a later refusal names the changes against
	if p.Spec.Source == "" {
		if _, files, err = pluginhost.HashDirFiles(p.Spec.Dir, p.Spec.HashSkip...); err != nil {
			return pluginhost.LockedPlugin{}, fail("Cannot hash plugin", err)
		}
	}
	keep := prev.Name != "" && !upgrade
	if keep {
		// Checked before the plugin runs: code the pin does not name is not started.
		pinned := &pluginhost.Lock{Plugins: []pluginhost.LockedPlugin{prev}}
		check := spec
		check.Version = ""
		var pe *pluginhost.PinError
		if err := pinned.Check(check, hash); errors.As(err, &pe) {
			pe.Lock = from
			if pe.What == pluginhost.PinHash {
				pe.Changed = prev.Changed(HostSpec(p))
			}
			return pluginhost.LockedPlugin{}, differs(pe)
		}
	}
	client, err := pluginhost.Start(ctx, HostSpec(p), opts.Logger)
	if err != nil {
		return pluginhost.LockedPlugin{}, fail("Plugin did not start", err)
	}
	defer client.Kill()
	info, err := client.Describe(ctx)
	if err != nil {
		return pluginhost.LockedPlugin{}, fail("Describe failed", err)
	}
	// Hash again after the plugin ran: a plugin that rewrites its own files while
	// starting (a cache in its dir) cannot be pinned.
	if again, err := pluginhost.SpecHash(HostSpec(p)); err != nil || again != hash {
		if err == nil {
			err = fmt.Errorf("plugin %q: its files changed while it ran (%s, then %s); move caches out of its dir", p.Name, hash, again)
		}
		return pluginhost.LockedPlugin{}, fail("Plugin changes its own files", err)
	}
	if keep && prev.Version != "" && prev.Version != info.Version {
		return pluginhost.LockedPlugin{}, differs(&pluginhost.PinError{Plugin: p.Name, Lock: from, What: pluginhost.PinVersion, Pinned: prev.Version, Got: info.Version})
	}
	if keep {
		prev.Version = info.Version
		if prev.Files == nil {
			prev.Files = files // a lock file written before files were kept learns them
		}
		return prev, nil // the same pin, every hash it lists kept
	}
	return pluginhost.LockedPlugin{Name: p.Name, Version: info.Version, Source: spec.Source, Command: spec.Command, Hashes: []string{hash}, Files: files}, nil
}
