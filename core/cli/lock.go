package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/hcl/v2"
	"github.com/spf13/cobra"

	"github.com/duplexmpe/duplexmpe/core/config"
	"github.com/duplexmpe/duplexmpe/core/pluginhost"
)

func init() { register(newLockCmd) }

func newLockCmd(st *State) *cobra.Command {
	var vars []string
	cmd := &cobra.Command{
		Use:   "lock FILE.hcl",
		Short: "Start every plugin of a run file, hash it, and write " + config.LockFileName + " next to the run file",
		Long: "Start every plugin of a run file (which checks its version and checksum pins), ask its " +
			"version, hash it (sha256 of a source executable, h1 of a command plugin's dir) and write " +
			"the lock file " + config.LockFileName + " next to the run file. Runs and " +
			"'duplexmpe plugins' then refuse a plugin that no longer matches it. The lock file is " +
			"written only when every plugin succeeded. Reattached plugins are not started by the " +
			"host and are not locked.",
		Args: exactArgs(1, "one run file"),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := loadRunFile(st, args[0], vars)
			if err != nil {
				return err
			}
			lock := &pluginhost.Lock{}
			var diags hcl.Diagnostics
			var failed []string
			logger := pluginLogger(st)
			for _, p := range f.Plugins {
				if p.Spec.Reattach != "" {
					fmt.Fprintf(st.Stdout, "plugin %q: reattached, not locked\n", p.Name)
					continue
				}
				locked, pdiags := lockPlugin(st, p, logger)
				diags = append(diags, pdiags...)
				if pdiags.HasErrors() {
					failed = append(failed, p.Name)
					continue
				}
				lock.Set(locked)
				fmt.Fprintf(st.Stdout, "plugin %q: %s %s\n", p.Name, orDash(locked.Version), locked.Hashes[0])
			}
			writeDiagnostics(st, f.Sources, diags, f.Path, args[0])
			if len(failed) > 0 {
				fmt.Fprintf(st.Stderr, "%s failed: %s; %s not written\n", plural(len(failed), "plugin"), strings.Join(failed, ", "), config.LockFileName)
				return ErrReported
			}
			if err := lock.Write(f.LockPath()); err != nil {
				return err
			}
			fmt.Fprintf(st.Stdout, "wrote %s (%s)\n", displayPath(args[0], f.LockPath()), plural(len(lock.Plugins), "plugin"))
			return nil
		},
	}
	addVarFlag(cmd, &vars)
	return cmd
}

// lockPlugin starts the plugin (Start checks its pins), asks its version and hashes it.
func lockPlugin(st *State, p *config.PluginBlock, logger hclog.Logger) (pluginhost.LockedPlugin, hcl.Diagnostics) {
	fail := func(summary string, err error) hcl.Diagnostics {
		rng := p.DeclRange
		var ce *pluginhost.ChecksumError
		if errors.As(err, &ce) {
			if r, ok := p.AttrRanges["checksum"]; ok {
				rng = r
			}
		}
		return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: summary, Detail: err.Error(), Subject: &rng}}
	}
	hash, err := pluginhost.SpecHash(p.Spec)
	if err != nil {
		return pluginhost.LockedPlugin{}, fail("Cannot hash plugin", err)
	}
	client, err := pluginhost.Start(st.Ctx, p.Spec, logger)
	if err != nil {
		return pluginhost.LockedPlugin{}, fail("Plugin did not start", err)
	}
	defer client.Kill()
	info, err := client.Describe(st.Ctx)
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
	spec := lockSpec(p)
	return pluginhost.LockedPlugin{Name: p.Name, Version: info.Version, Source: spec.Source, Command: spec.Command, Hashes: []string{hash}}, nil
}

// lockSpec is the spec as the lock file records it: source and dir as the run file
// wrote them, so that a committed lock file with relative paths holds on any checkout.
func lockSpec(p *config.PluginBlock) pluginhost.Spec {
	spec := p.Spec
	spec.Source, spec.Dir = filepath.ToSlash(p.WrittenSource), filepath.ToSlash(p.WrittenDir)
	return spec
}

// readLockFor reads the lock file next to the run file; nil when there is none.
func readLockFor(f *config.File) (*pluginhost.Lock, hcl.Diagnostics) {
	lock, err := pluginhost.ReadLock(f.LockPath())
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Bad lock file", Detail: err.Error()}}
	}
	return lock, nil
}

// checkLock checks a plugin's source or command and hash against the lock file, when
// there is one. Reattached plugins are not locked.
func checkLock(lock *pluginhost.Lock, p *config.PluginBlock, hash string) error {
	if lock == nil || p.Spec.Reattach != "" {
		return nil
	}
	return lock.Check(lockSpec(p), hash)
}

// checkLockedVersion checks the version a plugin described against the lock file.
func checkLockedVersion(lock *pluginhost.Lock, p *config.PluginBlock, version string) error {
	if lock == nil || p.Spec.Reattach != "" {
		return nil
	}
	if locked, ok := lock.Get(p.Name); ok && locked.Version != "" && locked.Version != version {
		return fmt.Errorf("plugin %q describes itself as version %q, but %s pins version %q; run `duplexmpe lock` to re-pin",
			p.Name, version, config.LockFileName, locked.Version)
	}
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// displayPath shows the lock file next to the run file as the user named it.
func displayPath(runFileArg, lockPath string) string {
	return filepath.Join(filepath.Dir(runFileArg), filepath.Base(lockPath))
}

// checkAgainstLock is the lock-file check for commands that run plugins (build, run,
// score): call it before starting a plugin. With no lock file next to the run file it
// passes; otherwise the plugin must be locked with the same source or command and hash.
func checkAgainstLock(f *config.File, p *config.PluginBlock) error {
	lock, diags := readLockFor(f)
	if diags.HasErrors() {
		return errors.New(diags[0].Detail)
	}
	if lock == nil || p.Spec.Reattach != "" {
		return nil
	}
	hash, err := pluginHash(p.Spec)
	if err != nil {
		return err
	}
	return checkLock(lock, p, hash)
}
