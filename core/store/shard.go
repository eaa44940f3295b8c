package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// ShardRecord is RUN_DIR/shards/<i>-of-<N>.json: which slice of the run a directory was
// asked to play, and the ids of the items that slice planned. `run` writes it before it
// plays anything, so even a shard killed at its first conversation says what it owes;
// merge uses the records to tell which shards and items are missing. A directory run
// unsharded records 0/1. One directory may hold several records (shards played into it
// one after another); each is its own file, so shards writing into one shared directory
// at once never overwrite one another's record.
type ShardRecord struct {
	Index int      `json:"index"`
	Count int      `json:"count"`
	Items []string `json:"items"` // the planned item ids, sorted
}

// Shard is the slice the record is of.
func (r ShardRecord) Shard() Shard { return Shard{Index: r.Index, Count: r.Count} }

const shardsDir = "shards"

var shardFile = regexp.MustCompile(`^([0-9]+)-of-([0-9]+)\.json$`)

func shardFileName(sh Shard) string { return fmt.Sprintf("%d-of-%d.json", sh.Index, sh.Count) }

// RecordShard writes the record of shard sh with its planned items ids, replacing an
// older record of the same shard.
func (s *Store) RecordShard(sh Shard, ids []string) error {
	if sh.Count == 0 {
		sh = All
	}
	if sh.Count < 1 || sh.Index < 0 || sh.Index >= sh.Count {
		return fmt.Errorf("store: shard %s is not a slice of a run", sh)
	}
	rec := ShardRecord{Index: sh.Index, Count: sh.Count, Items: slices.Sorted(slices.Values(ids))}
	if rec.Items == nil {
		rec.Items = []string{}
	}
	for _, id := range rec.Items {
		if !sh.Contains(id) {
			return fmt.Errorf("store: item %s does not belong to shard %s", id, sh)
		}
	}
	dir := filepath.Join(s.dir, shardsDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	return writeJSON(filepath.Join(dir, shardFileName(sh)), rec)
}

// Shards reads the shard records of the directory, ordered by count, then index; none
// when it has none (a directory written before records existed, or not by `run`).
func (s *Store) Shards() ([]ShardRecord, error) {
	dir := filepath.Join(s.dir, shardsDir)
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	var recs []ShardRecord
	for _, e := range ents {
		m := shardFile.FindStringSubmatch(e.Name())
		if m == nil || !e.Type().IsRegular() {
			continue
		}
		path := filepath.Join(dir, e.Name())
		var r ShardRecord
		if err := readJSON(path, &r); err != nil {
			return nil, err
		}
		i, _ := strconv.Atoi(m[1])
		n, _ := strconv.Atoi(m[2])
		if r.Index != i || r.Count != n || n < 1 || i >= n {
			return nil, fmt.Errorf("store: %s records shard %d/%d; its name says %s/%s: the file is damaged, run the shard again to rewrite it", path, r.Index, r.Count, m[1], m[2])
		}
		recs = append(recs, r)
	}
	slices.SortFunc(recs, func(a, b ShardRecord) int {
		if a.Count != b.Count {
			return a.Count - b.Count
		}
		return a.Index - b.Index
	})
	return recs, nil
}

// maxShardGrid bounds the least common multiple of the shard counts that coverage works
// over; past it (counts such as 997 and 991 mixed) merge cannot tell what is missing.
const maxShardGrid = 1 << 20

// missingShards lists the slices of the run that no record covers. Records of different
// counts combine (0/1 covers everything; 0/4 and 2/4 together cover 0/2): coverage is
// worked out on the grid of the counts' least common multiple L, and a gap is named as
// i/L. With one count N, that is simply the shards i/N that have no record.
func missingShards(recs []ShardRecord) ([]Shard, error) {
	if len(recs) == 0 {
		return nil, nil
	}
	l := 1
	for _, r := range recs {
		l = lcm(l, r.Count)
		if l > maxShardGrid {
			return nil, fmt.Errorf("shard counts %s cannot be checked against one another; merge shards of one count", countsOf(recs))
		}
	}
	covered := make([]bool, l)
	for _, r := range recs {
		for i := r.Index; i < l; i += r.Count {
			covered[i] = true
		}
	}
	var missing []Shard
	for i, c := range covered {
		if !c {
			missing = append(missing, Shard{Index: i, Count: l})
		}
	}
	return missing, nil
}

func countsOf(recs []ShardRecord) string {
	var ns []string
	for _, r := range recs {
		n := strconv.Itoa(r.Count)
		if !slices.Contains(ns, n) {
			ns = append(ns, n)
		}
	}
	return strings.Join(ns, ", ")
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

func lcm(a, b int) int { return a / gcd(a, b) * b }
