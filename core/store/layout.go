package store

// The layout of a run directory, declared here once: every package that reads or
// writes a file of a run directory names it by these constants (a test walks core/ and
// fails on a literal file name outside this package). The idea is restic's: its
// backend layout names every file of a repository from one place, by file type.
//
//	RUN_DIR/manifest.json              ManifestFile: what the run is (Manifest)
//	        run.json                   RunInfoFile: the run file that made it (core/app)
//	        .duplexmpe-run.lock        LockFile: one writer at a time (core/rundir)
//	        items/<id>/                ItemsDir: one folder per (model, conversation): ItemFiles
//	        plugins/                   PluginsDir: what the plugins described (core/pluginstart)
//	        logs/                      LogsDir: every plugin's log
//	        cache/transcripts.jsonl    CacheDir, TranscriptsCache: scorer calls kept across scorings
//	        cache/judgements.jsonl     JudgementsCache
//	        summary.json               SummaryFile: the scoring's summary (core/report reads it)
//	        report-meta.json           ReportMetaFile: what the report is of
//	        scored.jsonl               ScoredFile: every scored item's verdicts (compare reads it)
//	        view.json                  ViewFile: the run a view directory scores (score --out)
//	        verdicts/<id>.json         VerdictsDir: a view directory's verdicts (View)
//	        report.md, report.html,    the report (core/report)
//	        results.json, results.csv
//	        viewer/                    ViewerDir: the report's conversation viewer
//	compare.md, compare.html           `report --compare`'s page, in its --out folder
const (
	ManifestFile       = "manifest.json"
	RunInfoFile        = "run.json"
	LockFile           = ".duplexmpe-run.lock"
	ItemsDir           = "items"
	PluginsDir         = "plugins"
	LogsDir            = "logs"
	CacheDir           = "cache"
	TranscriptsCache   = "transcripts.jsonl"
	JudgementsCache    = "judgements.jsonl"
	SummaryFile        = "summary.json"
	ReportMetaFile     = "report-meta.json"
	ScoredFile         = "scored.jsonl"
	ViewFile           = "view.json"
	VerdictsDir        = "verdicts"
	ReportMarkdownFile = "report.md"
	ReportHTMLFile     = "report.html"
	ResultsJSONFile    = "results.json"
	ResultsCSVFile     = "results.csv"
	ViewerDir          = "viewer"
	// CompareMarkdownFile and CompareHTMLFile are the page `report --compare` writes
	// into its --out folder: several runs' tables side by side.
	CompareMarkdownFile = "compare.md"
	CompareHTMLFile     = "compare.html"
)

// RunDirs are the folders of a run directory, the run directory itself first; writers
// leave temporary files in each (and in every item's folder), which core/rundir sweeps.
var RunDirs = []string{".", ItemsDir, ViewerDir, CacheDir, LogsDir, PluginsDir, VerdictsDir}

// The files of an item directory (items/<id>/).
const (
	ItemFile     = "item.json"     // which (model, conversation) it is, and its key (Meta)
	TimelineFile = "timeline.json" // the actual preamble and turn spans (record.Record.Timeline)
	EpisodesFile = "episodes.json" // the model's speech episodes (protocol section 4)
	TextFile     = "text.json"     // the model's text channel
	SessionFile  = "session.json"  // format, frames, step latency, the wait after T (SessionInfo)
	FailureFile  = "failure.json"  // why it failed (failed items only)
	VerdictsFile = "verdicts.json" // written later, by scoring
	DoneMarker   = "done"          // the markers, one of them written last
	FailedMarker = "failed"
	AudibleFLAC  = "audible.flac" // the audible output, 16-bit FLAC (audible.go)
	AudibleWAV   = "audible.wav"  // the audible output of runs written before: 32-bit float, read only
)

// FileKind says who writes a file of an item directory.
type FileKind int

const (
	// RecordKind is what the session produced, written by Save; two plays of one item
	// are the same when their record files are (SameRecord).
	RecordKind FileKind = iota
	// VerdictsKind is written later, by scoring, and replaced by every scoring.
	VerdictsKind
	// MarkerKind is the done or failed marker, written last.
	MarkerKind
)

// ItemFiles are the files an item directory can hold, in the order people are shown
// them.
var ItemFiles = []string{ItemFile, TimelineFile, EpisodesFile, VerdictsFile, TextFile, SessionFile, FailureFile, AudibleFLAC, AudibleWAV}

// KindOf is the kind of the item file name; ok is false for a name that is no item
// file.
func KindOf(name string) (kind FileKind, ok bool) {
	switch name {
	case DoneMarker, FailedMarker:
		return MarkerKind, true
	case VerdictsFile:
		return VerdictsKind, true
	}
	for _, f := range ItemFiles {
		if f == name {
			return RecordKind, true
		}
	}
	return 0, false
}
