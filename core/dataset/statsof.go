package dataset

import "path/filepath"

// StatsOf loads the set at path (LoadAny: a dataset directory, a scenarios file or a
// release directory) and counts it (ComputeStats), naming the release it is or belongs
// to: the release's manifest (MANIFEST.json) in path, the release of a split file whose
// content hash the manifest lists, or the release a built dataset records in
// dataset.json.
func StatsOf(path string) (Stats, error) {
	d, err := LoadAny(path)
	if err != nil {
		return Stats{}, err
	}
	s := ComputeStats(d)
	if r, err := LoadRelease(filepath.Join(path, ReleaseFile)); err == nil {
		s.Release, s.ReleaseSHA256 = r.Name+" "+r.Version, r.SHA256
	} else if r, sp := ReleaseOf(d.File, d.ContentHash); r != nil {
		s.Release, s.ReleaseSHA256 = ReleaseLabelOf(ReleaseIdentity(r, sp)), r.SHA256
	} else if d.Manifest != nil && ReleaseLabelOf(d.Manifest.Generator.Identity) != "" {
		id := d.Manifest.Generator.Identity
		s.Release, s.ReleaseSHA256 = ReleaseLabelOf(id), id["release_sha256"]
	}
	return s, nil
}
