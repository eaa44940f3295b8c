package hosted

import "encoding/json"

// Usage is the tokens one call spent, as the service reports them.
type Usage struct {
	PromptTokens     int
	CompletionTokens int
}

// Prices are USD per million tokens.
type Prices struct {
	InputPerMTok  float64
	OutputPerMTok float64
}

// Cost is what u costs at p.
func (p Prices) Cost(u Usage) float64 {
	return (float64(u.PromptTokens)*p.InputPerMTok + float64(u.CompletionTokens)*p.OutputPerMTok) / 1e6
}

// Meter is the running total of a client.
type Meter struct {
	Calls            int // sent and answered
	CachedCalls      int // answered from the cache, free
	PromptTokens     int
	CompletionTokens int
	CostUSD          float64
}

// EstimateTokens is a cautious token count for text sent to a model: one token per
// three bytes (real tokenizers average about four characters per token in English).
func EstimateTokens(text string) int { return len(text)/3 + 1 }

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
