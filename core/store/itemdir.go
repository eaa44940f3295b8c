package store

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/duplexmpe/duplexmpe/core/record"
	"github.com/duplexmpe/duplexmpe/core/timeline"
)

// ItemContents is what an item directory holds, read as it is: a file that is absent
// is left empty; one that is present but does not read back is named in Problems, and
// the rest is still read. Nothing is verified (Check does that): the report shows a
// damaged item for what it is, the plan measures what it can, and the review samples
// what is there. Load is the strict reader, for scoring.
type ItemContents struct {
	// ID is the item's id (its folder's name); Dir the folder.
	ID, Dir string
	// Marker is what the markers say: Done, Failed, or Missing (none).
	Marker Status
	// Files are the item files present, in ItemFiles order.
	Files []string
	// Meta is item.json; nil when it does not read back, and then nothing else is read
	// (an item that does not say what it is means nothing).
	Meta     *Meta
	Timeline *timeline.Timeline
	Episodes []timeline.Episode
	Session  *SessionInfo
	Text     []record.TextPiece
	Failure  string
	// Verdicts is verdicts.json as scoring wrote it (core/score's shape, which the store
	// does not know); nil when not scored.
	Verdicts json.RawMessage
	// Problems are the files present that do not read back, in the order read.
	Problems []FileProblem
}

// FileProblem is a file of an item that does not read back.
type FileProblem struct {
	Name string
	Err  error
}

func (p FileProblem) String() string { return p.Name + ": " + p.Err.Error() }

// Problem is the problem of the file name, nil when it read back or is absent.
func (c *ItemContents) Problem(name string) error {
	for _, p := range c.Problems {
		if p.Name == name {
			return p.Err
		}
	}
	return nil
}

// Has reports whether the item file name is present.
func (c *ItemContents) Has(name string) bool {
	for _, f := range c.Files {
		if f == name {
			return true
		}
	}
	return false
}

// maxItemJSON bounds what ReadItemDir reads of one JSON file: items are small, so a
// huge one is damage.
const maxItemJSON = 64 << 20

// ReadItemDir reads the item directory dir tolerantly (ItemContents).
func ReadItemDir(dir string) *ItemContents {
	c := &ItemContents{ID: filepath.Base(dir), Dir: dir, Marker: statusOf(dir)}
	for _, f := range ItemFiles {
		if exists(filepath.Join(dir, f)) {
			c.Files = append(c.Files, f)
		}
	}
	read := func(name string, v any, required bool) bool {
		if !required && !c.Has(name) {
			return false
		}
		if err := readSmallJSON(filepath.Join(dir, name), v); err != nil {
			c.Problems = append(c.Problems, FileProblem{name, err})
			return false
		}
		return true
	}
	var m Meta
	if !read(ItemFile, &m, true) {
		return c
	}
	c.Meta = &m
	var tl timeline.Timeline
	if read(TimelineFile, &tl, false) {
		c.Timeline = &tl
	}
	read(EpisodesFile, &c.Episodes, false)
	var ses SessionInfo
	if read(SessionFile, &ses, false) {
		c.Session = &ses
	}
	read(TextFile, &c.Text, false)
	var fail failureInfo
	if read(FailureFile, &fail, false) {
		c.Failure = fail.Failure
	}
	var v json.RawMessage
	if read(VerdictsFile, &v, false) {
		c.Verdicts = v
	}
	return c
}

// ReadItems reads every item directory of the run directory runDir tolerantly, in id
// order, whether or not runDir has a manifest; none when it has no items folder.
func ReadItems(runDir string) []*ItemContents {
	ents, err := os.ReadDir(filepath.Join(runDir, ItemsDir))
	if err != nil {
		return nil
	}
	var out []*ItemContents
	for _, e := range ents {
		if e.IsDir() && idPattern.MatchString(e.Name()) {
			out = append(out, ReadItemDir(filepath.Join(runDir, ItemsDir, e.Name())))
		}
	}
	return out
}

func readSmallJSON(path string, v any) error {
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	if info.Size() > maxItemJSON {
		return fmt.Errorf("%d bytes, too large", info.Size())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}
