package pluginstart

import (
	"context"
	"errors"
	"fmt"

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
	// Failed: its diagnostics say why.
	Failed bool
}

// LockFile pins every plugin of f: it starts each one (which checks its version and
// checksum pins), asks its version, hashes it, and writes the lock file next to f, but
// only when every plugin succeeded; otherwise the old lock file is left alone. written
// reports whether it wrote.
func LockFile(ctx context.Context, f *config.File, opts Options) (locked []Locked, diags hcl.Diagnostics, written bool, err error) {
	lock := &pluginhost.Lock{}
	failed := false
	for _, p := range f.Plugins {
		if p.Spec.Reattach != "" {
			locked = append(locked, Locked{Name: p.Name, Reattached: true})
			continue
		}
		entry, pdiags := lockPlugin(ctx, p, opts)
		diags = append(diags, pdiags...)
		if pdiags.HasErrors() {
			failed = true
			locked = append(locked, Locked{Name: p.Name, Failed: true})
			continue
		}
		lock.Set(entry)
		locked = append(locked, Locked{Name: p.Name, Entry: entry})
	}
	if failed {
		return locked, diags, false, nil
	}
	if err := lock.Write(f.LockPath()); err != nil {
		return locked, diags, false, err
	}
	return locked, diags, true, nil
}

// lockPlugin starts the plugin (Start checks its pins), asks its version and hashes it.
func lockPlugin(ctx context.Context, p *config.PluginBlock, opts Options) (pluginhost.LockedPlugin, hcl.Diagnostics) {
	fail := func(summary string, err error) hcl.Diagnostics {
		rng := p.DeclRange
		var ce *pluginhost.ChecksumError
		if errors.As(err, &ce) {
			rng = attrRange(p, "checksum")
		}
		return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: summary, Detail: err.Error(), Subject: &rng}}
	}
	hash, err := pluginhost.SpecHash(p.Spec)
	if err != nil {
		return pluginhost.LockedPlugin{}, fail("Cannot hash plugin", err)
	}
	client, err := pluginhost.Start(ctx, p.Spec, opts.Logger)
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
	if again, err := pluginhost.SpecHash(p.Spec); err != nil || again != hash {
		if err == nil {
			err = fmt.Errorf("plugin %q: its files changed while it ran (%s, then %s); move caches out of its dir", p.Name, hash, again)
		}
		return pluginhost.LockedPlugin{}, fail("Plugin changes its own files", err)
	}
	spec := LockSpec(p)
	return pluginhost.LockedPlugin{Name: p.Name, Version: info.Version, Source: spec.Source, Command: spec.Command, Hashes: []string{hash}}, nil
}
