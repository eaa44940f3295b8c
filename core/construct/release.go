package construct

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/duplexmpe/duplexmpe/core/atomicfile"
	"github.com/duplexmpe/duplexmpe/core/dataset"
)

// ReleaseSpec is how a release is compiled from its authoring files (the file
// datasets/open-v1/authoring/release.json): every path in it is relative to that file.
type ReleaseSpec struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Licence string `json:"licence"`
	GapSeed int64  `json:"gap_seed"`
	// LapseShare is the share of ordinary turns followed by a lapse (CompileSpec); 0,
	// absent in open v1, draws none.
	LapseShare float64  `json:"lapse_share,omitempty"`
	Sources    []string `json:"sources"`
	// Dev is a file of pair ids, one a line, that make the dev split; every other pair
	// is in test.
	Dev string `json:"dev"`
	// Out is the release directory: it receives MANIFEST.json, dev/ and test/.
	Out string `json:"out"`
}

// Split names of a release.
const (
	SplitDev  = "dev"
	SplitTest = "test"
)

// ReadReleaseSpec reads a release spec and makes its paths absolute.
func ReadReleaseSpec(path string) (*ReleaseSpec, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var s ReleaseSpec
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if s.Name == "" || s.Version == "" || s.Licence == "" || len(s.Sources) == 0 || s.Dev == "" || s.Out == "" {
		return nil, fmt.Errorf("%s: name, version, licence, sources, dev and out are required", path)
	}
	if !(s.LapseShare >= 0 && s.LapseShare < 1) {
		return nil, fmt.Errorf("%s: lapse_share %g is a share of turns: at least 0, below 1", path, s.LapseShare)
	}
	dir := filepath.Dir(path)
	for i := range s.Sources {
		s.Sources[i] = filepath.Join(dir, s.Sources[i])
	}
	s.Dev, s.Out = filepath.Join(dir, s.Dev), filepath.Join(dir, s.Out)
	return &s, nil
}

// ReleaseFiles are the files a compiled release consists of, in memory.
type ReleaseFiles struct {
	Release *dataset.Release
	// Files maps a path relative to the release directory to its bytes.
	Files map[string][]byte
}

// CompileRelease compiles every source, checks every scenario and pair rule over the
// whole set, splits it into dev and test, and describes it in a release manifest. It
// writes nothing (WriteRelease does); errors name the file and line.
func CompileRelease(spec *ReleaseSpec) (*ReleaseFiles, error) {
	var (
		srcs  []PairSource
		files []string
		lines []int
		errs  SourceErrors
	)
	rel := &dataset.Release{Name: spec.Name, Version: spec.Version, Licence: spec.Licence, GapSeed: spec.GapSeed, LapseShare: spec.LapseShare}
	for _, f := range spec.Sources {
		raw, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		ps, ls, err := ReadPairSources(bytes.NewReader(raw), f)
		if se, ok := err.(SourceErrors); ok {
			errs = append(errs, se...)
		} else if err != nil {
			return nil, err
		}
		for range ps {
			files = append(files, f)
		}
		srcs, lines = append(srcs, ps...), append(lines, ls...)
		rel.Sources = append(rel.Sources, dataset.FileHash{File: relPath(spec.Out, f), SHA256: dataset.ContentHash(raw)})
	}
	scs, err := Compile(srcs, files, lines, CompileSpec{GapSeed: spec.GapSeed, LapseShare: spec.LapseShare})
	if se, ok := err.(SourceErrors); ok {
		errs = append(errs, se...)
	} else if err != nil {
		return nil, err
	}
	if len(errs) > 0 {
		return nil, errs
	}
	dev, err := readIDs(spec.Dev)
	if err != nil {
		return nil, err
	}
	known := map[string]bool{}
	for _, s := range scs {
		known[s.PairID] = true
	}
	for id := range dev {
		if !known[id] {
			return nil, fmt.Errorf("%s: pair %s is not in the sources", spec.Dev, id)
		}
	}
	var parts [2][]dataset.Scenario
	for _, s := range scs {
		if dev[s.PairID] {
			parts[0] = append(parts[0], s)
		} else {
			parts[1] = append(parts[1], s)
		}
	}
	out := &ReleaseFiles{Release: rel, Files: map[string][]byte{}}
	for i, name := range []string{SplitDev, SplitTest} {
		raw, err := dataset.MarshalScenarios(parts[i])
		if err != nil {
			return nil, err
		}
		file := name + "/" + dataset.ScenariosFile
		d, err := dataset.LoadScenariosBytes(raw, filepath.Join(spec.Out, file))
		if err != nil {
			return nil, err
		}
		if vs := dataset.Validate(d); len(vs) > 0 {
			return nil, violationsError(vs)
		}
		out.Files[file] = raw
		rel.Splits = append(rel.Splits, dataset.NewSplitRelease(name, file, raw, parts[i]))
	}
	rel.Seal()
	m, err := json.MarshalIndent(rel, "", "  ")
	if err != nil {
		return nil, err
	}
	out.Files[dataset.ReleaseFile] = append(m, '\n')
	return out, nil
}

// WriteRelease writes a compiled release into dir, each file atomically.
func WriteRelease(dir string, rf *ReleaseFiles) error {
	for name, raw := range rf.Files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := atomicfile.WriteFile(p, raw); err != nil {
			return err
		}
	}
	return nil
}

func readIDs(path string) (map[string]bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ids := map[string]bool{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		id := strings.TrimSpace(sc.Text())
		if id == "" || strings.HasPrefix(id, "#") {
			continue
		}
		if ids[id] {
			return nil, fmt.Errorf("%s:%d: pair %s listed twice", path, n, id)
		}
		ids[id] = true
	}
	return ids, sc.Err()
}

func relPath(base, p string) string {
	if r, err := filepath.Rel(base, p); err == nil {
		return filepath.ToSlash(r)
	}
	return p
}

// StaleReleaseFiles lists the files of a compiled release that differ on disk in dir
// (or are missing there), in name order.
func StaleReleaseFiles(dir string, rf *ReleaseFiles) []string {
	var stale []string
	for name, raw := range rf.Files {
		got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil || !bytes.Equal(got, raw) {
			stale = append(stale, name)
		}
	}
	sort.Strings(stale)
	return stale
}
