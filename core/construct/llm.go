package construct

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/duplexmpe/duplexmpe/core/dataset"
	"github.com/duplexmpe/duplexmpe/core/protocol"
	"github.com/duplexmpe/duplexmpe/prompts"
	"github.com/duplexmpe/duplexmpe/sdk"
)

// LLMSpec configures the LLM generator.
type LLMSpec struct {
	Pairs            int
	Seed             int64
	FourSpeakerShare float64 // 0 means 0.25
	// Retries bounds the corrections per step (a reply that does not parse or breaks a
	// rule is sent back with the problems); 0 means 3.
	Retries    int
	PairPrefix string // default "llm"
	// Temperature for the requests; nil leaves the plugin's default.
	Temperature *float64
}

// Brief is what the scenario prompt asks for; the prompt carries it as JSON.
type Brief struct {
	Attributes     dataset.Attributes `json:"attributes"`
	Speakers       []string           `json:"speakers"`
	Turns          int                `json:"turns"`
	TIndex         int                `json:"t_index"`
	TPosition      string             `json:"t_position"`
	ResolveByAsker bool               `json:"n4_resolved_by_asker"`
}

// LLMError is a step that still failed after its retries.
type LLMError struct {
	PairID   string
	Step     string // "scenario" or "rewrite"
	Attempts int
	Problems []string
}

func (e *LLMError) Error() string {
	return fmt.Sprintf("llm generator: pair %s: the %s step failed %d times; last problems: %s (check the llm plugin's model, or raise retries)",
		e.PairID, e.Step, e.Attempts, strings.Join(e.Problems, "; "))
}

// GenerateLLM writes spec.Pairs pairs with an LLM: a brief per pair (attributes,
// speakers, length and T position drawn from the seed), the scenario prompt, strict
// parsing and validation of the reply with bounded corrective retries, then the paired
// rewrite as its own prompt, also validated. It returns the scenarios and the identity
// of the prompts (template hashes), for dataset.json.
func GenerateLLM(ctx context.Context, llm sdk.LLM, spec LLMSpec) ([]dataset.Scenario, map[string]string, error) {
	if spec.Pairs < 1 {
		return nil, nil, fmt.Errorf("llm generator: pairs = %d must be at least 1", spec.Pairs)
	}
	share := spec.FourSpeakerShare
	if share == 0 {
		share = 0.25
	}
	retries := spec.Retries
	if retries <= 0 {
		retries = 3
	}
	prefix := spec.PairPrefix
	if prefix == "" {
		prefix = "llm"
	}
	id := map[string]string{}
	for _, name := range []string{prompts.Scenario, prompts.Rewrite} {
		h, err := prompts.Hash(name)
		if err != nil {
			return nil, nil, err
		}
		id["prompt_"+strings.TrimSuffix(name, ".tmpl")] = h
	}
	var out []dataset.Scenario
	for i := 0; i < spec.Pairs; i++ {
		rng := rand.New(rand.NewPCG(uint64(spec.Seed), uint64(i)^0x6c6c6d))
		brief := drawBrief(rng, i, share)
		pairID := fmt.Sprintf("%s-%d-%05d", prefix, spec.Seed, i)
		seed := spec.Seed*1_000_003 + int64(i)
		e, err := writeScenario(ctx, llm, spec, brief, pairID, seed, retries)
		if err != nil {
			return nil, nil, err
		}
		im, err := rewriteImplicit(ctx, llm, spec, e, seed, retries)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, e, im)
	}
	return out, id, nil
}

func drawBrief(rng *rand.Rand, i int, share float64) Brief {
	sc := &scenes[rng.IntN(len(scenes))]
	n := 3
	if rng.Float64() < share {
		n = 4
	}
	turns := 10 + rng.IntN(4)
	if n == 4 {
		turns += 2
	}
	bucket := protocol.TPositions[i%len(protocol.TPositions)]
	var slots []int
	for k := 3; k <= turns-2; k++ { // at least three turns of context before T
		if b, _ := dataset.TBucket(k, turns); b == bucket {
			slots = append(slots, k)
		}
	}
	if len(slots) == 0 {
		for k := 1; k <= turns-2; k++ {
			if b, _ := dataset.TBucket(k, turns); b == bucket {
				slots = append(slots, k)
			}
		}
	}
	speakers := make([]string, n)
	for k := range speakers {
		speakers[k] = string(rune('A' + k))
	}
	return Brief{
		Attributes: dataset.Attributes{
			Setting: pick(rng, sc.settings), Activity: sc.activity, Relationship: pick(rng, relationships),
			Devices: pick(rng, deviceSets).name, Register: pick(rng, registers).name,
		},
		Speakers: speakers, Turns: turns, TIndex: pick(rng, slots), TPosition: bucket,
		ResolveByAsker: rng.IntN(2) == 0,
	}
}

type scenarioReply struct {
	Turns      []dataset.Turn `json:"turns"`
	GoldAnswer string         `json:"gold_answer"`
}

type rewriteReply struct {
	TText        string  `json:"t_text"`
	PreviousText *string `json:"previous_text"`
}

// strictJSON decodes a reply that must be exactly one JSON object with known fields.
func strictJSON(content string, v any) error {
	s := strings.TrimSpace(content)
	if !strings.HasPrefix(s, "{") {
		return fmt.Errorf("the reply is not a JSON object (it starts with %q); reply with the JSON object only", abbreviate(s))
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("the reply is not valid JSON of the requested shape: %v", err)
	}
	if dec.More() {
		return errors.New("the reply has text after the JSON object; reply with the JSON object only")
	}
	return nil
}

// converse runs one step: send, parse, check; on a problem, send the problems back and
// try again, at most retries more times.
func converse(ctx context.Context, llm sdk.LLM, spec LLMSpec, p prompts.Prompt, seed int64, retries int, pairID, step string, check func(content string) []string) error {
	msgs := []sdk.ChatMessage{{Role: "system", Content: p.System}, {Role: "user", Content: p.User}}
	var problems []string
	for attempt := 0; attempt <= retries; attempt++ {
		s := seed + int64(attempt)
		c, err := llm.Complete(ctx, sdk.CompletionRequest{Messages: msgs, JSON: true, Seed: &s, Temperature: spec.Temperature, MaxTokens: 4096})
		if err != nil {
			return fmt.Errorf("llm generator: pair %s, %s step: %w", pairID, step, err)
		}
		problems = check(c.Content)
		if len(problems) == 0 {
			return nil
		}
		msgs = append(msgs,
			sdk.ChatMessage{Role: "assistant", Content: c.Content},
			sdk.ChatMessage{Role: "user", Content: "That reply has problems:\n- " + strings.Join(problems, "\n- ") + "\nReply again with the corrected JSON object only."})
	}
	return &LLMError{PairID: pairID, Step: step, Attempts: retries + 1, Problems: problems}
}

func writeScenario(ctx context.Context, llm sdk.LLM, spec LLMSpec, b Brief, pairID string, seed int64, retries int) (dataset.Scenario, error) {
	var bj bytes.Buffer
	enc := json.NewEncoder(&bj)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(b); err != nil {
		return dataset.Scenario{}, err
	}
	p, err := prompts.Render(prompts.Scenario, map[string]any{
		"Turns": b.Turns, "TIndex": b.TIndex, "TBefore": b.TIndex, "TAfter": b.Turns - 1 - b.TIndex,
		"SpeakerList": strings.Join(b.Speakers, ", "), "Devices": b.Attributes.Devices,
		"ResolveByAsker": b.ResolveByAsker, "BriefJSON": strings.TrimSpace(bj.String()),
	})
	if err != nil {
		return dataset.Scenario{}, err
	}
	var sc dataset.Scenario
	err = converse(ctx, llm, spec, p, seed, retries, pairID, "scenario", func(content string) []string {
		var r scenarioReply
		if err := strictJSON(content, &r); err != nil {
			return []string{err.Error()}
		}
		sc = dataset.Scenario{
			PairID: pairID, Condition: protocol.Explicit, ScenarioID: pairID + "-" + protocol.Explicit,
			Attributes: b.Attributes, Speakers: b.Speakers, Turns: r.Turns, GoldAnswer: strings.TrimSpace(r.GoldAnswer), TPosition: b.TPosition,
		}
		var problems []string
		for i := range sc.Turns {
			sc.Turns[i].Text = strings.TrimSpace(sc.Turns[i].Text)
			if sc.Turns[i].Clip != "" || sc.Turns[i].DurationS != 0 {
				problems = append(problems, fmt.Sprintf("turn %d: clip and duration_s are not yours to write", i))
			}
			if p := unspeakable(sc.Turns[i].Text); p != "" {
				problems = append(problems, fmt.Sprintf("turn %d: %s", i, p))
			}
		}
		if len(sc.Turns) != b.Turns {
			problems = append(problems, fmt.Sprintf("the scenario has %d turns; the brief asks for exactly %d", len(sc.Turns), b.Turns))
		}
		if ti := sc.TIndex(); ti >= 0 && ti != b.TIndex {
			problems = append(problems, fmt.Sprintf("T is turn %d; the brief puts it at turn %d", ti, b.TIndex))
		}
		for _, v := range dataset.ValidateScenario(&sc) {
			problems = append(problems, describeViolation(v))
		}
		return problems
	})
	return sc, err
}

func rewriteImplicit(ctx context.Context, llm sdk.LLM, spec LLMSpec, e dataset.Scenario, seed int64, retries int) (dataset.Scenario, error) {
	ti := e.TIndex()
	type shown struct {
		Turns      []dataset.Turn `json:"turns"`
		GoldAnswer string         `json:"gold_answer"`
	}
	var sj bytes.Buffer
	enc := json.NewEncoder(&sj)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(shown{Turns: e.Turns, GoldAnswer: e.GoldAnswer}); err != nil {
		return dataset.Scenario{}, err
	}
	p, err := prompts.Render(prompts.Rewrite, map[string]any{"TIndex": ti, "PrevIndex": ti - 1, "ScenarioJSON": strings.TrimSpace(sj.String())})
	if err != nil {
		return dataset.Scenario{}, err
	}
	var im dataset.Scenario
	err = converse(ctx, llm, spec, p, seed+500_000, retries, e.PairID, "rewrite", func(content string) []string {
		var r rewriteReply
		if err := strictJSON(content, &r); err != nil {
			return []string{err.Error()}
		}
		im = e
		im.Condition, im.ScenarioID = protocol.Implicit, e.PairID+"-"+protocol.Implicit
		im.Turns = append([]dataset.Turn(nil), e.Turns...)
		im.Turns[ti].Text = strings.TrimSpace(r.TText)
		if r.PreviousText != nil {
			im.Turns[ti-1].Text = strings.TrimSpace(*r.PreviousText)
		}
		var problems []string
		for _, i := range []int{ti - 1, ti} {
			if i < 0 {
				continue
			}
			if p := unspeakable(im.Turns[i].Text); p != "" {
				problems = append(problems, fmt.Sprintf("turn %d: %s", i, p))
			}
		}
		for _, v := range dataset.ValidateScenario(&im) {
			problems = append(problems, describeViolation(v))
		}
		for _, v := range dataset.ValidatePairs([]dataset.Scenario{e, im}) {
			problems = append(problems, describeViolation(v))
		}
		return problems
	})
	return im, err
}

func describeViolation(v dataset.Violation) string {
	s := v.Message
	if v.Turn >= 0 {
		s = fmt.Sprintf("turn %d: %s", v.Turn, s)
	}
	if v.Hint != "" {
		s += " (" + v.Hint + ")"
	}
	return s
}

// unspeakable says what in a turn's text a TTS would read out wrongly: stage
// directions, markup, or a speaker tag. It returns "" for plain speech.
func unspeakable(text string) string {
	switch {
	case strings.ContainsAny(text, "[]*<>{}_#|"):
		return "text holds stage directions or markup (brackets, asterisks, tags); write only the words spoken"
	case len(text) > 2 && text[1] == ':' && text[0] >= 'A' && text[0] <= 'D':
		return "text starts with a speaker tag; the speaker goes in \"speaker\", the text holds only the words"
	case len(text) > 600:
		return "text is too long for one spoken turn; keep turns to one or two sentences"
	}
	return ""
}
