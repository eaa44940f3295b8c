package dataset

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/fault"
)

// Issue 31: a clip linked to /dev/zero, or a 3 GB sparse file, pushed `dataset validate`
// past 2 GB; a FIFO clip blocked it forever (deaf to SIGTERM); a clip linked to
// /etc/shadow was opened and read. Each is now a clip-unreadable violation naming the
// scenario, the turn and the clip, found without reading the file; the clip's readers
// for a run (ReadClip) refuse it with a deterministic error (exit 3).
func TestHostileClipFiles(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(outside, []byte("root:$6$secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		make func(path string) error
		want string
	}{
		"link out of the dataset": {func(p string) error { return os.Symlink(outside, p) }, "leads out of the dataset folder"},
		"link to /dev/zero":       {func(p string) error { return os.Symlink("/dev/zero", p) }, "leads out of the dataset folder"},
		"fifo":                    {func(p string) error { return syscall.Mkfifo(p, 0o644) }, "not a regular file (a FIFO)"},
		"sparse 3 GB file": {func(p string) error {
			f, err := os.Create(p)
			if err != nil {
				return err
			}
			defer f.Close()
			return f.Truncate(3 << 30)
		}, "more than a clip can be (256 MiB)"},
	} {
		t.Run(name, func(t *testing.T) {
			d := builtDataset(t)
			clip := d.Scenarios[0].Turns[1].Clip
			path := d.ClipPath(clip)
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			if err := c.make(path); err != nil {
				t.Fatal(err)
			}
			_, vs, err := ValidatePath(d.Dir)
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, v := range vs {
				if v.Rule == RuleClipUnreadable && v.ScenarioID == d.Scenarios[0].ScenarioID && v.Turn == 1 &&
					strings.Contains(v.Message, clip) && strings.Contains(v.Message, c.want) {
					found = true
				}
			}
			if !found {
				t.Fatalf("violations %v; want clip-unreadable for %s saying %q", vs, clip, c.want)
			}
			_, err = d.ReadClip(clip)
			if err == nil || !fault.IsDeterministic(err) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("ReadClip: %v; want a deterministic error saying %q", err, c.want)
			}
		})
	}
}

// A link that stays inside the dataset folder is a clip like any other.
func TestClipLinkInsideTheDataset(t *testing.T) {
	d := builtDataset(t)
	b := d.Scenarios[0].Turns[2].Clip
	if err := os.Rename(d.ClipPath(b), d.ClipPath(b)+".real"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Base(d.ClipPath(b))+".real", d.ClipPath(b)); err != nil {
		t.Fatal(err)
	}
	if vs := Validate(d); len(vs) != 0 {
		t.Fatalf("violations %v", vs)
	}
	p, err := d.ReadClip(b)
	if err != nil || len(p.Samples) == 0 {
		t.Fatalf("ReadClip through an inside link: %v", err)
	}
}
