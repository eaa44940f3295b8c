package hosted

import (
	"fmt"
	"math"
	"os"
	"regexp"
	"strconv"
	"time"

	"github.com/hashicorp/go-hclog"

	judgeprompt "github.com/duplexmpe/duplexmpe/prompts/judge"
	"github.com/duplexmpe/duplexmpe/sdk"
)

// Settings are the config fields both hosted plugins take (CommonFields).
type Settings struct {
	BaseURL     string
	Model       string
	APIKeyEnv   string
	Temperature float64
	MaxTokens   int
	Timeout     time.Duration
	MaxRetries  int
	Backoff     time.Duration
	Concurrency int
	Cache       bool
	CacheDir    string
	Prices      Prices
	CostLimit   float64
	Replicate   string
	UsageLog    string
}

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// CommonFields is the config schema both hosted plugins share, with their own defaults
// for the service address, the model and the key's variable.
func CommonFields(baseURL, model, keyEnv string) []sdk.ConfigField {
	return []sdk.ConfigField{
		{Name: "base_url", Type: sdk.TypeString, Default: baseURL, Description: "The service's API root; any compatible server (vLLM, llama.cpp server, a proxy) works.", Transport: true},
		{Name: "model", Type: sdk.TypeString, Default: model, Description: "Model id for chat completions and the judge."},
		{Name: "api_key_env", Type: sdk.TypeString, Default: keyEnv, Description: "NAME of the environment variable holding the API key (never the key itself). The host passes plugins only a minimal environment: give it in the plugin block, env = { " + keyEnv + " = env(\"" + keyEnv + "\") }. Unset or empty: no key is sent (local servers).", Transport: true},
		{Name: "temperature", Type: sdk.TypeNumber, Default: 0.0, Description: "Sampling temperature when a request does not set one (judge calls always use this)."},
		{Name: "max_tokens", Type: sdk.TypeNumber, Default: 256.0, Description: "Reply token limit when a request does not set one (judge calls always use this)."},
		{Name: "timeout", Type: sdk.TypeNumber, Default: 60.0, Description: "Seconds one HTTP attempt may take; a timeout is retried.", Transport: true},
		{Name: "max_retries", Type: sdk.TypeNumber, Default: 4.0, Description: "Retries after the first attempt, on HTTP 429, 5xx, timeouts and connection errors.", Transport: true},
		{Name: "retry_backoff", Type: sdk.TypeNumber, Default: 1.0, Description: "Seconds before the first retry, doubled each retry (plus jitter); a Retry-After header wins.", Transport: true},
		{Name: "concurrency", Type: sdk.TypeNumber, Default: 4.0, Description: "HTTP calls this plugin has in flight at once.", Transport: true},
		{Name: "cache", Type: sdk.TypeBool, Default: true, Description: "Keep replies on disk and answer repeated requests from there. Sampled calls (temperature > 0) are cached only with a replicate index."},
		{Name: "cache_dir", Type: sdk.TypePath, Default: "", Description: "Response cache directory, relative to the run file's directory; empty: <user cache dir>/duplexmpe/hosted.", Transport: true},
		{Name: "replicate", Type: sdk.TypeString, Default: "", Description: "Replicate index, part of the cache key; with it, sampled calls are cached too (one cached answer per replicate)."},
		{Name: "input_price_per_mtok", Type: sdk.TypeNumber, Default: 0.0, Description: "USD per million prompt tokens of the model, for the cost count and cost_limit.", Transport: true},
		{Name: "output_price_per_mtok", Type: sdk.TypeNumber, Default: 0.0, Description: "USD per million completion tokens of the model.", Transport: true},
		{Name: "usage_log", Type: sdk.TypePath, Default: "", Description: "A file (relative to the run file's directory) that gets one JSON line per call sent: its tokens and the running totals of calls, tokens and cost (e.g. \"${local.out}/judge-usage.jsonl\"). Empty: usage goes to the plugin's log only.", Transport: true},
		{Name: "cost_limit", Type: sdk.TypeNumber, Default: 0.0, Description: "USD this plugin process may spend; a call that could go past it (its prompt and max tokens at the prices) is refused. 0: no limit.", Transport: true},
	}
}

// ReadSettings reads the common fields of a config (defaults already filled in by the
// host; missing fields take CommonFields' defaults too, for direct callers).
func ReadSettings(cfg map[string]any, fields []sdk.ConfigField) (Settings, error) {
	r := reader{cfg: cfg, fields: fields}
	s := Settings{
		BaseURL:     r.str("base_url"),
		Model:       r.str("model"),
		APIKeyEnv:   r.str("api_key_env"),
		Temperature: r.num("temperature", 0, 2),
		MaxTokens:   int(r.num("max_tokens", 1, 1e7)),
		Timeout:     time.Duration(r.num("timeout", 0.001, 86400) * float64(time.Second)),
		MaxRetries:  int(r.num("max_retries", 0, 100)),
		Backoff:     time.Duration(r.num("retry_backoff", 0.001, 3600) * float64(time.Second)),
		Concurrency: int(r.num("concurrency", 1, 1024)),
		Cache:       r.boolean("cache"),
		CacheDir:    r.str("cache_dir"),
		Replicate:   r.str("replicate"),
		UsageLog:    r.str("usage_log"),
		Prices:      Prices{InputPerMTok: r.num("input_price_per_mtok", 0, 1e6), OutputPerMTok: r.num("output_price_per_mtok", 0, 1e6)},
		CostLimit:   r.num("cost_limit", 0, 1e9),
	}
	if r.err == nil && s.APIKeyEnv != "" && !envName.MatchString(s.APIKeyEnv) {
		// Never echo the value: it may be the key itself, given by mistake.
		r.err = fmt.Errorf("api_key_env is not an environment variable name (letters, digits, _); it must NAME the variable holding the key (e.g. \"OPENAI_API_KEY\"), never hold the key; pass the key itself with the plugin block's env = { NAME = env(\"NAME\") }")
	}
	if r.err == nil && s.BaseURL == "" {
		r.err = fmt.Errorf("base_url is empty; give the service's API root, e.g. http://127.0.0.1:8000/v1")
	}
	if r.err == nil && s.Model == "" {
		r.err = fmt.Errorf("model is empty; give the model id")
	}
	return s, r.err
}

// APIKey is the key from the environment variable APIKeyEnv names ("" when unset).
func (s Settings) APIKey() string {
	if s.APIKeyEnv == "" {
		return ""
	}
	return os.Getenv(s.APIKeyEnv)
}

// NewClient makes the client these settings describe; key is redacted from its errors.
func (s Settings) NewClient(logger hclog.Logger, key string) (*Client, error) {
	opts := Options{
		BaseURL: s.BaseURL, Timeout: s.Timeout, MaxRetries: s.MaxRetries, Backoff: s.Backoff,
		Concurrency: s.Concurrency, Prices: s.Prices, CostLimit: s.CostLimit,
		Secrets: []string{key}, Logger: logger, UsageLog: s.UsageLog,
	}
	if s.Cache {
		dir := s.CacheDir
		if dir == "" {
			d, err := DefaultCacheDir()
			if err != nil {
				return nil, err
			}
			dir = d
		}
		c, err := OpenCache(dir)
		if err != nil {
			return nil, err
		}
		opts.Cache = c
	}
	return NewClient(opts), nil
}

// Sampled says whether a call at this temperature may answer differently each time, so
// that it is cached only with a replicate index.
func Sampled(temperature float64) bool { return temperature > 0 }

// Identity is what changes the plugin's answers: recorded by the host in the manifest
// and shown in the report. The service's address, the key's variable and the prices are
// transport (they change where and at what cost a call goes, not its answer), so shards
// may reach the service through per-node addresses. It never holds the key.
func (s Settings) Identity(api string) map[string]string {
	f := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	return map[string]string{
		"api":                  api,
		"model":                s.Model,
		"temperature":          f(s.Temperature),
		"max_tokens":           strconv.Itoa(s.MaxTokens),
		"replicate":            s.Replicate,
		"judge_prompt_version": judgeprompt.Version,
		"judge_prompt_sha256":  judgeprompt.Hash(),
	}
}

// reader reads typed config values, remembering the first error.
type reader struct {
	cfg    map[string]any
	fields []sdk.ConfigField
	err    error
}

func (r *reader) get(name string) any {
	if v, ok := r.cfg[name]; ok && v != nil {
		return v
	}
	for _, f := range r.fields {
		if f.Name == name {
			return f.Default
		}
	}
	return nil
}

func (r *reader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf(format, args...)
	}
}

func (r *reader) str(name string) string {
	switch v := r.get(name).(type) {
	case string:
		return v
	case nil:
		return ""
	default:
		r.fail("%s: want a string, got %v", name, v)
		return ""
	}
}

func (r *reader) num(name string, lo, hi float64) float64 {
	v, ok := r.get(name).(float64)
	if !ok {
		r.fail("%s: want a number, got %v", name, r.get(name))
		return lo
	}
	if math.IsNaN(v) || v < lo || v > hi {
		r.fail("%s = %v: want a number from %v to %v", name, v, lo, hi)
		return lo
	}
	return v
}

func (r *reader) boolean(name string) bool {
	v, ok := r.get(name).(bool)
	if !ok {
		r.fail("%s: want true or false, got %v", name, r.get(name))
	}
	return v
}

// Str, Num and Bool read a plugin's own extra fields the same way.
func Str(cfg map[string]any, fields []sdk.ConfigField, name string) (string, error) {
	r := reader{cfg: cfg, fields: fields}
	return r.str(name), r.err
}

// Num reads a number field within [lo, hi].
func Num(cfg map[string]any, fields []sdk.ConfigField, name string, lo, hi float64) (float64, error) {
	r := reader{cfg: cfg, fields: fields}
	return r.num(name, lo, hi), r.err
}

// Bool reads a bool field.
func Bool(cfg map[string]any, fields []sdk.ConfigField, name string) (bool, error) {
	r := reader{cfg: cfg, fields: fields}
	return r.boolean(name), r.err
}

// Strings reads a list(string) field.
func Strings(cfg map[string]any, fields []sdk.ConfigField, name string) ([]string, error) {
	r := reader{cfg: cfg, fields: fields}
	var out []string
	switch v := r.get(name).(type) {
	case []any:
		for i, e := range v {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("%s[%d]: want a string, got %v", name, i, e)
			}
			out = append(out, s)
		}
	case []string:
		out = v
	default:
		return nil, fmt.Errorf("%s: want a list of strings, got %v", name, v)
	}
	return out, nil
}
