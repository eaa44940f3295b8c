package app

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/duplexmpe/duplexmpe/core/fault"
	"github.com/duplexmpe/duplexmpe/core/report"
	"github.com/duplexmpe/duplexmpe/core/rundir"
	"github.com/duplexmpe/duplexmpe/core/score"
	"github.com/duplexmpe/duplexmpe/core/store"
)

// Side is one scored directory of a comparison: a run directory, or a view written by
// `score --out`.
type Side struct {
	Dir  string
	Meta report.Meta
	// Items are its scored items by model, scenario and repeat.
	Items map[SideKey]score.Scored
}

// Label names the side for people: its directory and its judge.
func (s *Side) Label() string {
	if s.Meta.Judge != nil {
		return fmt.Sprintf("%s (judge %s)", s.Dir, s.Meta.Judge.Name)
	}
	return s.Dir
}

// SideKey names one scored item of a side: which model played which scenario, in which
// repeat (section 6.5); the same key on two sides is the same play, scored twice.
type SideKey struct {
	Model, ScenarioID string
	Repeat            int
}

// Comparison is `duplexmpe compare`: every side against the first, per model, condition
// and scored measure, on the items both sides scored.
type Comparison struct {
	Sides []*Side
	Rows  []CompareRow
}

// CompareRow is the first side against side B (an index of Sides) for one model and
// condition: the items only one of them scored, and one paired test per measure.
type CompareRow struct {
	B                int
	Model, Condition string
	// Shared counts the items both sides scored; OnlyA those only the first side scored
	// (side B lacks them), OnlyB those only side B scored.
	Shared, OnlyA, OnlyB int
	Measures             []score.Comparison
}

// Compare reads the scored items (ScoredFile) of each directory and sets every side
// beside the first: per model x condition x scored measure, exact McNemar on the items
// both sides scored (paired by model, scenario and turn), with the rates over those
// items and how many items each side lacks. The protocol values (min_eligible, the
// bootstrap) are the first side's.
func Compare(dirs []string) (*Comparison, error) {
	if len(dirs) < 2 {
		return nil, usageErrorf("compare needs at least two scored directories (got %d)", len(dirs))
	}
	c := &Comparison{}
	for _, d := range dirs {
		side, err := readSide(d)
		if err != nil {
			return nil, err
		}
		c.Sides = append(c.Sides, side)
	}
	a := c.Sides[0]
	p := a.Meta.Protocol
	for bi := 1; bi < len(c.Sides); bi++ {
		b := c.Sides[bi]
		groups := map[[2]string]*compareGroup{} // (model, condition)
		add := func(k SideKey, s score.Scored) *compareGroup {
			g := groups[[2]string{k.Model, s.Condition}]
			if g == nil {
				g = &compareGroup{}
				groups[[2]string{k.Model, s.Condition}] = g
			}
			return g
		}
		for k, sa := range a.Items {
			g := add(k, sa)
			if sb, ok := b.Items[k]; ok {
				g.a, g.b = append(g.a, sa), append(g.b, sb)
			} else {
				g.onlyA++
			}
		}
		for k, sb := range b.Items {
			if _, ok := a.Items[k]; !ok {
				add(k, sb).onlyB++
			}
		}
		keys := make([][2]string, 0, len(groups))
		for k := range groups {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool {
			if keys[i][0] != keys[j][0] {
				return keys[i][0] < keys[j][0]
			}
			return keys[i][1] < keys[j][1]
		})
		scored := score.MeasureKeys(true)
		for _, k := range keys {
			g := groups[k]
			row := CompareRow{B: bi, Model: k[0], Condition: k[1], Shared: len(g.a), OnlyA: g.onlyA, OnlyB: g.onlyB}
			for mi, m := range scored {
				cmp := score.CompareItems(k[1], m, a.Dir, b.Dir, g.a, g.b, p, score.DefaultSeed+uint64(len(c.Rows)*len(scored)+mi))
				row.Measures = append(row.Measures, cmp)
			}
			c.Rows = append(c.Rows, row)
		}
	}
	return c, nil
}

type compareGroup struct {
	a, b         []score.Scored
	onlyA, onlyB int
}

// readSide reads one directory's scored items and report metadata.
func readSide(dir string) (*Side, error) {
	side := &Side{Dir: dir, Items: map[SideKey]score.Scored{}}
	path := filepath.Join(dir, ScoredFile)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s holds no scored items (%s): score it first with `duplexmpe score`", dir, ScoredFile)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for n := 1; sc.Scan(); n++ {
		var line scoredLine
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			return nil, fmt.Errorf("%s:%d: %v; score the directory again to rewrite it", path, n, err)
		}
		side.Items[SideKey{line.Scored.Model, line.Scored.ScenarioID, line.Scored.Repeat}] = line.Scored
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if _, side.Meta, err = report.Load(dir); err != nil {
		return nil, err
	}
	return side, nil
}

// PruneResult is what Prune did.
type PruneResult struct {
	Removed int
	Kept    int // the items of the current plan on disk
	// Rerendered: the run directory had a report, written again without the removed items.
	Rerendered bool
}

// Prune removes the items of earlier plans from a run directory: those its manifest's
// plan does not hold (stale; never counted). The current plan's items stay. Do not
// prune a directory that a shard is playing into.
func Prune(dir string) (*PruneResult, error) {
	st, err := store.Open(dir)
	if err != nil {
		err = fmt.Errorf("%s is not a run directory (%w)", dir, err)
		if errors.Is(err, fs.ErrNotExist) {
			err = fault.Deterministic(err)
		}
		return nil, err
	}
	lock, err := rundir.Acquire(dir, rundir.Options{})
	if err != nil {
		return nil, err
	}
	defer lock.Release()
	if len(st.Manifest().Plan) == 0 {
		return nil, fmt.Errorf("%s records no plan (it was written by an older duplexmpe): run its run file once, then prune", dir)
	}
	stale, err := st.Stale()
	if err != nil {
		return nil, err
	}
	if err := st.RemoveItems(stale); err != nil {
		return nil, err
	}
	ids, err := st.IDs()
	if err != nil {
		return nil, err
	}
	res := &PruneResult{Removed: len(stale), Kept: len(ids)}
	// The report showed the run as it stands already, but its viewer pages of the
	// removed items would stay: render it again so that nothing links to them.
	if res.Rerendered, err = report.Rerender(dir); err != nil {
		return res, err
	}
	return res, nil
}
