package score

// Failure reasons of a judged span (section 5.3, 5.4: an unparseable verdict counts as
// wrong; in a silence window an empty transcript or an unparseable classification is a
// failure). transcription-failed and judge-failed record a failed call to the service:
// Judge leaves such an item unscored (section 5.7) rather than counting them.
const (
	FailIncorrect           = "incorrect"
	FailIntrusion           = "intrusion"
	FailEmptyTranscript     = "empty-transcript"
	FailTranscriptionFailed = "transcription-failed"
	FailUnparseable         = "unparseable"
	FailJudgeFailed         = "judge-failed"
	FailNoAudio             = "no-audio"
	FailNotJudged           = "not-judged"
)

// Judgement is the evidence for one judged span of model audio: what was cut out, what
// the ASR heard, what the judge answered, and the resulting pass or failure.
type Judgement struct {
	// Spans of audible output that were cut out and joined (in order) for the ASR.
	Spans      []Span  `json:"spans"`
	AudioS     float64 `json:"audio_s"`
	Transcript string  `json:"transcript"`
	// TranscriptionError is the ASR's error, when transcription failed.
	TranscriptionError string `json:"transcription_error,omitempty"`
	// Label, Parsed, Raw and Rationale are the judge's verdict as returned.
	Label      string `json:"label,omitempty"`
	Parsed     bool   `json:"parsed"`
	Raw        string `json:"raw,omitempty"`
	Rationale  string `json:"rationale,omitempty"`
	JudgeError string `json:"judge_error,omitempty"`
	// OK: the answer is correct (T) or the speech is an acknowledgement (silence window).
	OK bool `json:"ok"`
	// Failure says why OK is false; empty when OK.
	Failure string `json:"failure,omitempty"`
}

// Words is what the ASR heard in one stretch of the model's speech (empty when it heard
// nothing): a clip a verdict transcribed (T's answer, a silence window's speech; Span is
// from its first part's start to its last part's end), or the part of an episode no such
// clip covered.
type Words struct {
	Span       Span   `json:"span"`
	Transcript string `json:"transcript"`
}
