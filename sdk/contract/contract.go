// Package contract holds the plain values of the plugin contract: what a plugin
// describes (Info, ConfigField), what a model takes and gives (ConversationStart, Format,
// Output), audio, voices, judge queries and verdicts, and LLM requests and replies. It is
// the leaf below package sdk, which names each of them (sdk.Info is contract.Info) and
// holds the interfaces a plugin implements, and below internal/protoconv, the one
// conversion between these values and the protocol's messages that the plugin side
// (sdk.Serve) and the host side (core/pluginhost) share. Plugin authors use the sdk names.
package contract

// Info is what a plugin says about itself (the Describe call). The JSON form is what
// `duplexmpe plugins --json` prints.
type Info struct {
	Name        string `json:"name"`
	Version     string `json:"version"`
	Description string `json:"description,omitempty"`
	// Kinds is filled in by Serve from the interfaces the plugin implements; the host
	// sees what the plugin actually serves.
	Kinds           []string      `json:"kinds"`
	ProtocolVersion int           `json:"protocol_version"`
	Capabilities    []string      `json:"capabilities,omitempty"`
	Config          []ConfigField `json:"config"`
	// Identity of what the plugin wraps: model id, revision, weights digest, library
	// versions, prompt hash. Reported after Configure.
	Identity map[string]string `json:"identity,omitempty"`
}

// Config field types (ConfigField.Type).
const (
	TypeString     = "string"
	TypeNumber     = "number"
	TypeBool       = "bool"
	TypeListString = "list(string)"
	TypeListNumber = "list(number)"
	TypeMapString  = "map(string)"
	// TypePath is a string naming a file or directory. The host resolves a relative
	// value against the run file's directory before Configure, so the plugin always
	// gets a path that works from its own working directory.
	TypePath = "path"
)

// ConfigField describes one attribute of the plugin's config block.
type ConfigField struct {
	Name        string   `json:"name"`
	Type        string   `json:"type"`
	Required    bool     `json:"required,omitempty"`
	Default     any      `json:"default,omitempty"` // a JSON-compatible value, or nil
	Description string   `json:"description,omitempty"`
	Allowed     []string `json:"allowed,omitempty"` // for TypeString: the accepted values, when non-empty
	// Transport marks a setting of how to reach or pace a service (a server URL or port,
	// retries, timeouts, concurrency) rather than of what it computes. The host leaves
	// transport fields out of every item key, scoring key and run manifest, so the
	// shards of one run may set them per node and a run resumes after they change.
	// Mark nothing that can change a result.
	Transport bool `json:"transport,omitempty"`
}

// Audio is a mono clip of float32 samples in [-1, 1].
type Audio struct {
	Samples []float32
	Rate    int
}

// ConversationStart opens a conversation.
type ConversationStart struct {
	ID          string
	Seed        int64
	Instruction string // optional text instruction; empty unless configured
}

// Format is what a model declares for a conversation.
type Format struct {
	InputRate  int
	OutputRate int
	FrameSize  int // input samples per frame
}

// Output is a model's reply to one input frame.
type Output struct {
	Samples []float32 // at Format().OutputRate; may be empty
	Text    string
	Flush   bool // discard queued, unplayed audio before appending Samples
}

// Voice is a TTS voice.
type Voice struct {
	ID          string
	Description string
	Rate        int
}

// DialogueTurn is one attributed line of a conversation, given to judges as context.
type DialogueTurn struct {
	Speaker string
	Text    string
}

// AnswerQuery asks whether a response answers a request.
type AnswerQuery struct {
	Context    []DialogueTurn
	Request    string
	GoldAnswer string
	Response   string
	// GoldAccepted are other ways of saying the gold answer that count as correct (the
	// scenario's gold_accepted, "quarter past seven" for "7:15"); usually empty. Left out
	// of the JSON when empty, so the judge call cache keys of queries without variants
	// stay what they were.
	GoldAccepted []string `json:",omitempty"`
	// AnswerType is what kind of answer the gold is (AnswerTypes: "number", "money",
	// "duration", ...): the scenario's answer_type, empty when the scenario does not state
	// one (the judge then infers it from the gold). Left out of the JSON when empty, so the
	// judge call cache keys of queries without a type stay what they were.
	AnswerType string `json:",omitempty"`
}

// Answer types: what kind of thing a gold answer is, so a judge can read a response by
// its meaning (a duration of 13 min 40 s is not the time of day 13:40).
const (
	AnswerNumber   = "number"     // a count or quantity: "14", "120 km"
	AnswerMoney    = "money"      // a sum in a currency: "$0.40", "£1.70"
	AnswerDuration = "duration"   // a length of time: "1 hour 35 minutes", "13:40" (m:ss)
	AnswerClock    = "clock_time" // a time of day: "1:00 am", "7:15"
	AnswerDate     = "date"       // a day: "the 21st", "March 3rd"
	AnswerName     = "name"       // a person, place or thing named: "Omar", "the blue folder"
	AnswerYesNo    = "yes_no"     // "yes" or "no", with or without a reason
	AnswerCode     = "code"       // a code, number plate or spelling read out as written
	AnswerText     = "text"       // anything else: read by its content words
)

// AnswerTypes lists every answer type, in the order of the constants above.
var AnswerTypes = []string{AnswerNumber, AnswerMoney, AnswerDuration, AnswerClock, AnswerDate, AnswerName, AnswerYesNo, AnswerCode, AnswerText}

// SpeechQuery asks whether speech in a silence window is an acknowledgement.
type SpeechQuery struct {
	Context    []DialogueTurn
	Transcript string
}

// Verdict is a judge's structured answer.
type Verdict struct {
	Label     string
	Parsed    bool // false: the judge's output could not be parsed; counts as a failure
	Raw       string
	Rationale string
}

// ChatMessage is one message of a chat completion request.
type ChatMessage struct {
	Role    string // "system", "user", "assistant"
	Content string
}

// CompletionRequest asks an LLM for one reply.
type CompletionRequest struct {
	Messages    []ChatMessage
	Temperature *float64 // nil: the plugin's default
	MaxTokens   int
	JSON        bool // ask for a JSON object as the whole reply
	Seed        *int64
}

// Completion is an LLM reply.
type Completion struct {
	Content          string
	Model            string
	PromptTokens     int
	CompletionTokens int
	FinishReason     string
}
