package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/duplexmpe/duplexmpe/core/atomicfile"
	"github.com/duplexmpe/duplexmpe/core/fault"
)

// MergeReport says what Merge did and whether the output now holds the whole run.
type MergeReport struct {
	Done   int // finished items in the output
	Failed int // failed items in the output (no directory finished them)
	// Overlaps counts items finished, identically, in more than one directory given
	// (shards that overlap, or one shard played twice); each is kept once.
	Overlaps int
	// Shards are the slices of the run the output's shard records cover, sorted.
	Shards []Shard
	// MissingShards are the slices no record covers: no directory given played them.
	MissingShards []Shard
	// Unfinished lists the recorded shards whose planned items are not all in the output
	// (the shard was stopped, or crashed, before it finished).
	Unfinished []ShardGap
	// Unrecorded are the directories given that have no shard record (written by a
	// duplexmpe before shard records existed): what they should hold is unknown.
	Unrecorded []string
}

// ShardGap is a recorded shard with planned items that no directory finished.
type ShardGap struct {
	Shard   Shard
	Planned int
	Missing []string // the ids, sorted
}

// Complete reports whether the output holds every planned item of every slice of the
// run, finished or failed: only then may it be scored, since scoring counts what is in
// the store and a missing conversation would silently leave the denominators.
func (r MergeReport) Complete() bool {
	return len(r.Shards) > 0 && len(r.MissingShards) == 0 && len(r.Unfinished) == 0 && len(r.Unrecorded) == 0
}

// Incomplete says in one sentence what the output lacks, and what to do; "" when the
// run is complete.
func (r MergeReport) Incomplete() string {
	var parts []string
	for _, g := range r.Unfinished {
		parts = append(parts, fmt.Sprintf("shard %s has %d of its %d planned items unfinished", g.Shard, len(g.Missing), g.Planned))
	}
	if len(r.MissingShards) > 0 {
		var s []string
		for _, sh := range r.MissingShards {
			s = append(s, sh.String())
		}
		parts = append(parts, fmt.Sprintf("no directory given played shard %s", strings.Join(s, ", ")))
	}
	for _, d := range r.Unrecorded {
		parts = append(parts, fmt.Sprintf("%s has no shard record, so what it should hold is unknown", d))
	}
	if len(parts) == 0 && len(r.Shards) == 0 {
		parts = append(parts, "no directory given has a shard record")
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, "; ") + ". Run those shards (again) with `duplexmpe run FILE.hcl --shard i/N` into their directories (finished conversations are reused) and merge again; do not score the output before, its tables would leave the missing conversations out"
}

// ConflictError is Merge's refusal when one item was finished differently in two
// places: the plays were not replays of one another (a model that is not deterministic,
// or a harness or dataset that changed in between), and merge does not pick one.
type ConflictError struct {
	Conflicts []Conflict
}

// Conflict is one item finished differently in two item directories.
type Conflict struct {
	ID   string
	A, B string // the item directories
	File string // the first file in which they differ
}

// Deterministic: merging the same directories again conflicts again (core/fault).
func (e *ConflictError) Deterministic() bool { return true }

func (e *ConflictError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "merge: %d items were finished differently in two directories, so nothing was merged:", len(e.Conflicts))
	for i, c := range e.Conflicts {
		if i == 5 {
			fmt.Fprintf(&b, "\n  ... and %d more", len(e.Conflicts)-5)
			break
		}
		fmt.Fprintf(&b, "\n  item %s: %s and %s differ in %s", c.ID, c.A, c.B, c.File)
	}
	b.WriteString("\nkeep one play of each: remove the other item directory (or leave that run directory out of the merge), then merge again")
	return b.String()
}

// Merge combines the run directories dirs (the shards of one run) into out, created
// when missing. Every manifest must equal the first one, and so must out's when it
// already exists; otherwise nothing is written. A finished item wins over a failed one;
// items without a marker (interrupted) are skipped. An item finished in two places must
// be the same record in both (wall-clock latency and verdicts aside), or nothing is
// written (ConflictError). Merge never changes the directories it reads: items are hard
// linked into out where the filesystem allows (the store never rewrites a file in place)
// and copied otherwise, each into a temporary directory renamed into place, so an
// interrupted merge can simply be run again. The shard records are merged too, and the
// report says which shards and items out still lacks.
func Merge(out string, dirs []string) (MergeReport, error) {
	var rep MergeReport
	if len(dirs) == 0 {
		return rep, errors.New("merge: no run directories given")
	}
	var srcs []*Store
	for _, d := range dirs {
		s, err := Open(d)
		if err != nil {
			return rep, fmt.Errorf("merge: %w", err)
		}
		if len(srcs) > 0 {
			if diff := Diff(srcs[0].manifest, s.manifest); len(diff) > 0 {
				return rep, fault.Deterministicf("merge: %s and %s are not shards of one run: their manifests differ in %s; merge only directories written by the same run file and the same harness build",
					srcs[0].dir, d, strings.Join(diff, ", "))
			}
		}
		srcs = append(srcs, s)
	}
	m := srcs[0].manifest
	var dst *Store // out as it is, when it already exists
	if old, err := readManifest(out); err == nil {
		if diff := Diff(old, m); len(diff) > 0 {
			return rep, fault.Deterministicf("merge: %s already holds a different run (manifests differ in %s); choose another output directory", out, strings.Join(diff, ", "))
		}
		dst = &Store{dir: out, manifest: old}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return rep, fmt.Errorf("merge: %w", err)
	}

	picks, overlaps, err := pickItems(srcs, dst)
	if err != nil {
		return rep, err
	}
	rep.Overlaps = overlaps
	var recs []ShardRecord
	for _, s := range srcs {
		r, err := s.Shards()
		if err != nil {
			return rep, fmt.Errorf("merge: %w", err)
		}
		if len(r) == 0 {
			rep.Unrecorded = append(rep.Unrecorded, s.dir)
		}
		recs = append(recs, r...)
	}

	if dst == nil {
		if dst, err = Create(out, m); err != nil {
			return rep, fmt.Errorf("merge: %w", err)
		}
	}
	for _, id := range sortedKeys(picks) {
		s := picks[id]
		if sameDir(s.ItemDir(id), dst.ItemDir(id)) {
			continue
		}
		if err := copyItem(s.ItemDir(id), dst.ItemDir(id)); err != nil {
			return rep, fmt.Errorf("merge: item %s from %s: %w", id, s.dir, err)
		}
	}
	// The records go in after the items they list, so a merge stopped half way never
	// leaves a record whose items are missing from out without saying so at the next merge.
	for _, r := range recs {
		if err := dst.RecordShard(r.Shard(), r.Items); err != nil {
			return rep, fmt.Errorf("merge: %w", err)
		}
	}

	ids, err := dst.IDs()
	if err != nil {
		return rep, fmt.Errorf("merge: %w", err)
	}
	for _, id := range ids {
		switch dst.Status(id) {
		case Done:
			rep.Done++
		case Failed:
			rep.Failed++
		}
	}
	all, err := dst.Shards()
	if err != nil {
		return rep, fmt.Errorf("merge: %w", err)
	}
	for _, r := range all {
		rep.Shards = append(rep.Shards, r.Shard())
		g := ShardGap{Shard: r.Shard(), Planned: len(r.Items)}
		for _, id := range r.Items {
			if dst.Status(id) <= Damaged {
				g.Missing = append(g.Missing, id)
			}
		}
		if len(g.Missing) > 0 {
			rep.Unfinished = append(rep.Unfinished, g)
		}
	}
	if rep.MissingShards, err = missingShards(all); err != nil {
		return rep, fmt.Errorf("merge: %w", err)
	}
	return rep, nil
}

// pickItems chooses, for every item with a marker in one of srcs, the directory whose
// version goes to out: the first that finished it, else the first that failed it; none
// when out already holds it at least as finished. It compares every item finished in
// more than one place (out included) and returns a ConflictError when two differ.
func pickItems(srcs []*Store, dst *Store) (map[string]*Store, int, error) {
	picks := map[string]*Store{}
	var (
		overlaps  int
		conflicts []Conflict
	)
	done := map[string]*Store{} // the first finished version seen of each item
	for _, s := range srcs {
		ids, err := s.IDs()
		if err != nil {
			return nil, 0, fmt.Errorf("merge: %w", err)
		}
		for _, id := range ids {
			st := s.Status(id)
			if st <= Damaged {
				continue // nothing usable here (Check says why for a damaged one)
			}
			if st == Done {
				if first, ok := done[id]; ok {
					overlaps++
					if c, err := compareItems(id, first, s); err != nil {
						return nil, 0, err
					} else if c != nil {
						conflicts = append(conflicts, *c)
					}
					continue
				}
				done[id] = s
				if dst != nil && dst.Status(id) == Done {
					if c, err := compareItems(id, dst, s); err != nil {
						return nil, 0, err
					} else if c != nil {
						conflicts = append(conflicts, *c)
					}
				}
			}
			have := Missing
			if dst != nil {
				have = dst.Status(id)
			}
			if prev, ok := picks[id]; ok {
				have = max(have, prev.Status(id))
			}
			if st > have {
				picks[id] = s
			}
		}
	}
	if len(conflicts) > 0 {
		return nil, 0, &ConflictError{Conflicts: conflicts}
	}
	return picks, overlaps, nil
}

func compareItems(id string, a, b *Store) (*Conflict, error) {
	file, err := SameRecord(a.ItemDir(id), b.ItemDir(id))
	if err != nil {
		return nil, fmt.Errorf("merge: item %s: %w", id, err)
	}
	if file == "" {
		return nil, nil
	}
	return &Conflict{ID: id, A: a.ItemDir(id), B: b.ItemDir(id), File: file}, nil
}

// isRecord reports whether an item's file is what its session produced: not a marker
// (compared through the status), not the verdicts (written later by scoring). A file
// the layout does not name is compared too.
func isRecord(name string) bool {
	kind, ok := KindOf(name)
	return !ok || kind == RecordKind
}

// SameRecord compares two item directories as records: the same files with the same
// bytes, except that session.json's wall-clock latency may differ. It returns the name
// of the first file that differs, "" when the records are the same.
func SameRecord(a, b string) (string, error) {
	fa, err := recordFiles(a)
	if err != nil {
		return "", err
	}
	fb, err := recordFiles(b)
	if err != nil {
		return "", err
	}
	for _, name := range fa {
		if !slices.Contains(fb, name) {
			return name, nil
		}
	}
	for _, name := range fb {
		if !slices.Contains(fa, name) {
			return name, nil
		}
	}
	for _, name := range fa {
		pa, pb := filepath.Join(a, name), filepath.Join(b, name)
		if ia, err := os.Stat(pa); err == nil {
			if ib, err := os.Stat(pb); err == nil && os.SameFile(ia, ib) {
				continue // hard linked by an earlier merge
			}
		}
		ba, err := os.ReadFile(pa)
		if err != nil {
			return "", err
		}
		bb, err := os.ReadFile(pb)
		if err != nil {
			return "", err
		}
		if name == SessionFile {
			ba, bb = withoutLatency(ba), withoutLatency(bb)
		}
		if !bytes.Equal(ba, bb) {
			return name, nil
		}
	}
	return "", nil
}

func recordFiles(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range ents {
		if e.Type().IsRegular() && !strings.HasPrefix(e.Name(), ".") && isRecord(e.Name()) {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

// withoutLatency is session.json without its "latency" field (the wall time of Step,
// which differs between two plays of one conversation even when they are identical).
func withoutLatency(b []byte) []byte {
	var v map[string]json.RawMessage
	if json.Unmarshal(b, &v) != nil {
		return b
	}
	delete(v, "latency")
	out, err := json.Marshal(v)
	if err != nil {
		return b
	}
	return out
}

func sortedKeys(m map[string]*Store) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func sameDir(a, b string) bool {
	ia, err1 := os.Stat(a)
	ib, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(ia, ib)
}

// copyItem puts the item directory src over dst: its files are linked (or copied
// durably) into a temporary sibling, markers last, then the old dst is removed, the new
// one renamed into place and the items directory synced.
func copyItem(src, dst string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dst), atomicfile.TempPattern(filepath.Base(dst)))
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := os.Chmod(tmp, 0o755); err != nil { // MkdirTemp makes it 0700
		return err
	}
	ents, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	var markers []string
	for _, e := range ents {
		name := e.Name()
		if !e.Type().IsRegular() || strings.HasPrefix(name, ".") {
			continue
		}
		if name == DoneMarker || name == FailedMarker {
			markers = append(markers, name)
			continue
		}
		if err := linkOrCopy(filepath.Join(src, name), filepath.Join(tmp, name)); err != nil {
			return err
		}
	}
	for _, name := range markers {
		if err := linkOrCopy(filepath.Join(src, name), filepath.Join(tmp, name)); err != nil {
			return err
		}
	}
	if err := os.RemoveAll(dst); err != nil {
		return err
	}
	if err := os.Rename(tmp, dst); err != nil {
		return err
	}
	return atomicfile.SyncDir(filepath.Dir(dst))
}

// linkOrCopy hard links src to dst, or copies it where links are not possible (another
// filesystem, or one without them).
func linkOrCopy(src, dst string) error {
	if os.Link(src, dst) == nil {
		return nil
	}
	return copyFile(src, dst)
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	return atomicfile.Write(dst, func(w io.Writer) error {
		_, err := io.Copy(w, in)
		return err
	})
}
