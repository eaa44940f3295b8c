// Package timeline holds what one evaluated conversation looks like on its own clock:
// where each human turn actually played, and where the model's audible output has speech.
// The scheduler writes it, scoring reads it, explain builds it by hand.
package timeline

// Episode is a span of model speech [Start, End) in seconds on the conversation timeline.
type Episode struct {
	Start float64 `json:"start"`
	End   float64 `json:"end"`
}

// Duration of the episode in seconds.
func (e Episode) Duration() float64 { return e.End - e.Start }

// Turn is one human turn as it was actually played.
type Turn struct {
	Index     int     `json:"index"`
	Label     string  `json:"label"`
	Speaker   string  `json:"speaker,omitempty"`
	Text      string  `json:"text,omitempty"`
	Addressee string  `json:"addressee,omitempty"`
	Start     float64 `json:"start"`
	End       float64 `json:"end"`
}

// Timeline is one conversation's recorded schedule.
type Timeline struct {
	PreambleStart float64 `json:"preamble_start"`
	PreambleEnd   float64 `json:"preamble_end"`
	Turns         []Turn  `json:"turns"`
	// Duration is the length of the whole session (input and audible output) in seconds.
	Duration float64 `json:"duration"`
}

// Active reports whether some episode has s <= t < e (protocol section 4).
func Active(eps []Episode, t float64) bool {
	for _, e := range eps {
		if e.Start <= t && t < e.End {
			return true
		}
	}
	return false
}
