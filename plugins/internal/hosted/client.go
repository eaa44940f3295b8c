// Package hosted is what the hosted-service plugins (plugins/openai, plugins/anthropic)
// share: an HTTP client with a concurrency limit, retries with backoff on 429, 5xx and
// timeouts, a response cache on disk, token and cost accounting with a cost limit; the
// config fields common to both; and a judge built on any chat completion function.
//
// API keys: the client is given the key's value only to put it in a header and to
// redact it from every error and log line; it never reaches the cache key, the cache
// files, or the plugin's identity.
package hosted

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/duplexmpe/duplexmpe/sdk"
)

// Options configure a Client.
type Options struct {
	BaseURL     string        // e.g. "https://api.openai.com/v1"; Request.Path is appended
	Timeout     time.Duration // per attempt
	MaxRetries  int           // attempts after the first, on 429, 5xx, timeouts, connection errors
	Backoff     time.Duration // first wait; doubled each retry, with jitter; Retry-After wins
	Concurrency int           // calls in flight at once (at least 1)
	Cache       *Cache        // nil: no cache
	Prices      Prices
	CostLimit   float64 // USD; 0: no limit
	Secrets     []string
	Logger      hclog.Logger
	// UsageLog, when set, gets one JSON line per call sent (not per cache hit): the
	// call's tokens and the running totals, so a run's spending can be kept with it.
	UsageLog string
}

// Request is one call to the service.
type Request struct {
	Kind        string // what is called ("chat", "transcription", ...): part of the cache key
	Path        string // appended to the base URL
	Model       string
	Header      http.Header // e.g. the key's header; never cached, logged or hashed
	ContentType string
	Body        []byte
	// Cacheable: the same request gives the same answer (greedy decoding, or a replicate
	// index in Replicate).
	Cacheable bool
	Replicate string
	// Estimate is the most this call may cost in tokens (prompt estimate, max tokens):
	// a call that could take the spending past the cost limit is refused before it is sent.
	Estimate Usage
	// Parse checks a 2xx reply and reads its token usage. A reply it refuses is an error
	// (a malformed reply is not retried, and never cached).
	Parse func(body []byte) (Usage, error)
}

// ErrCostLimit is returned, wrapped, for a call refused by the cost limit.
var ErrCostLimit = errors.New("cost limit reached")

// StatusError is a non-2xx reply that was not (or no longer) retried.
type StatusError struct {
	Code     int
	Message  string
	Attempts int
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("HTTP %d %s after %d attempt(s): %s", e.Code, http.StatusText(e.Code), e.Attempts, e.Message)
}

// Client calls one service.
type Client struct {
	opts  Options
	http  *http.Client
	slots chan struct{}
	mu    sync.Mutex
	meter Meter
	// reserved is the estimated cost of the calls in flight.
	reserved float64
}

// NewClient makes a client; zero options take safe defaults (60 s, 4 retries, 1 s, 4 calls).
func NewClient(opts Options) *Client {
	if opts.Timeout <= 0 {
		opts.Timeout = 60 * time.Second
	}
	if opts.MaxRetries < 0 {
		opts.MaxRetries = 0
	}
	if opts.Backoff <= 0 {
		opts.Backoff = time.Second
	}
	if opts.Concurrency < 1 {
		opts.Concurrency = 1
	}
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	opts.BaseURL = strings.TrimRight(opts.BaseURL, "/")
	// A secret in base_url (user:password@, ?key=...) is redacted like the API key from
	// every message and log line (issue 31).
	opts.Secrets = append(append([]string{}, opts.Secrets...), sdk.URLSecrets(opts.BaseURL)...)
	return &Client{opts: opts, http: &http.Client{}, slots: make(chan struct{}, opts.Concurrency)}
}

// Usage is what the service reports it spent on calls so far, and what that cost.
func (c *Client) Usage() Meter {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.meter
}

// Do sends req (or answers it from the cache) and returns the reply body of a 2xx answer.
func (c *Client) Do(ctx context.Context, req Request) ([]byte, error) {
	url := c.opts.BaseURL + req.Path
	var key string
	if req.Cacheable && c.opts.Cache != nil {
		key = CacheKey(req.Kind, c.opts.BaseURL, req.Model, req.Replicate, req.Body)
		if body, ok := c.opts.Cache.Get(key); ok {
			if _, err := req.Parse(body); err == nil {
				c.mu.Lock()
				c.meter.CachedCalls++
				c.mu.Unlock()
				return body, nil
			}
		}
	}
	estimate := c.opts.Prices.Cost(req.Estimate)
	if err := c.reserve(estimate); err != nil {
		return nil, err
	}
	body, err := c.send(ctx, url, req)
	var usage Usage
	if err == nil {
		usage, err = req.Parse(body)
		if err != nil {
			err = fmt.Errorf("POST %s: malformed reply: %v (reply starts %q)", url, err, head(body))
		}
	}
	c.settle(estimate, usage, err == nil)
	if err != nil {
		return nil, c.redact(err)
	}
	if key != "" {
		if err := c.opts.Cache.Put(key, body); err != nil {
			c.opts.Logger.Warn("response cache: not written", "error", err)
		}
	}
	c.logUsage(req, usage)
	return body, nil
}

// logUsage reports one sent call and the totals, to the log and the usage log.
func (c *Client) logUsage(req Request, u Usage) {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.meter
	c.opts.Logger.Info("usage", "kind", req.Kind, "model", req.Model,
		"prompt_tokens", u.PromptTokens, "completion_tokens", u.CompletionTokens,
		"total_calls", m.Calls, "total_prompt_tokens", m.PromptTokens, "total_completion_tokens", m.CompletionTokens,
		"total_cost_usd", m.CostUSD, "cached_calls", m.CachedCalls)
	if c.opts.UsageLog == "" {
		return
	}
	line, _ := json.Marshal(map[string]any{
		"time": time.Now().UTC().Format(time.RFC3339Nano), "kind": req.Kind, "model": req.Model,
		"prompt_tokens": u.PromptTokens, "completion_tokens": u.CompletionTokens,
		"total_calls": m.Calls, "cached_calls": m.CachedCalls, "total_prompt_tokens": m.PromptTokens,
		"total_completion_tokens": m.CompletionTokens, "total_cost_usd": m.CostUSD,
	})
	err := os.MkdirAll(filepath.Dir(c.opts.UsageLog), 0o755)
	if err == nil {
		var f *os.File
		if f, err = os.OpenFile(c.opts.UsageLog, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
			_, err = f.Write(append(line, '\n'))
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
	}
	if err != nil {
		c.opts.Logger.Warn("usage log: not written", "path", c.opts.UsageLog, "error", err)
	}
}

func (c *Client) reserve(estimate float64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if limit := c.opts.CostLimit; limit > 0 && c.meter.CostUSD+c.reserved+estimate > limit {
		return fmt.Errorf("%w: spent $%.6f (plus $%.6f in flight); the next call may cost up to $%.6f, over cost_limit $%.6f. Raise cost_limit in the plugin's config block, or lower max_tokens",
			ErrCostLimit, c.meter.CostUSD, c.reserved, estimate, limit)
	}
	c.reserved += estimate
	return nil
}

// settle releases a reservation and books what a sent call spent. A reply without
// usage figures is booked at its estimate, so the limit still holds.
func (c *Client) settle(estimate float64, u Usage, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reserved -= estimate
	if !ok {
		return
	}
	c.meter.Calls++
	c.meter.PromptTokens += u.PromptTokens
	c.meter.CompletionTokens += u.CompletionTokens
	if u == (Usage{}) {
		c.meter.CostUSD += estimate
	} else {
		c.meter.CostUSD += c.opts.Prices.Cost(u)
	}
}

// send posts with retries. It holds one concurrency slot per attempt, not while waiting.
func (c *Client) send(ctx context.Context, url string, req Request) ([]byte, error) {
	for attempt := 0; ; attempt++ {
		body, wait, err := c.attempt(ctx, url, req)
		if err == nil {
			return body, nil
		}
		if wait < 0 || attempt >= c.opts.MaxRetries || ctx.Err() != nil {
			var se *StatusError
			if errors.As(err, &se) {
				se.Attempts = attempt + 1
				return nil, fmt.Errorf("POST %s: %w", url, se)
			}
			return nil, fmt.Errorf("POST %s: %w (after %d attempt(s))", url, err, attempt+1)
		}
		if wait == 0 {
			wait = c.backoff(attempt)
		}
		c.opts.Logger.Warn("retrying", "url", Redact(sdk.RedactURL(url), c.opts.Secrets...), "attempt", attempt+1, "wait", wait.String(), "error", c.redact(err).Error())
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("POST %s: %w (while waiting to retry after: %v)", url, ctx.Err(), c.redact(err))
		case <-t.C:
		}
	}
}

// attempt makes one call. wait < 0: do not retry; 0: retry after the backoff; > 0: after wait.
func (c *Client) attempt(ctx context.Context, url string, req Request) ([]byte, time.Duration, error) {
	select {
	case c.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, -1, ctx.Err()
	}
	defer func() { <-c.slots }()
	actx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	hreq, err := http.NewRequestWithContext(actx, http.MethodPost, url, bytes.NewReader(req.Body))
	if err != nil {
		return nil, -1, err
	}
	for k, v := range req.Header {
		hreq.Header[k] = v
	}
	if req.ContentType != "" {
		hreq.Header.Set("Content-Type", req.ContentType)
	}
	resp, err := c.http.Do(hreq)
	if err != nil {
		if ctx.Err() != nil {
			return nil, -1, ctx.Err()
		}
		if actx.Err() != nil {
			return nil, 0, fmt.Errorf("no reply within timeout %s", c.opts.Timeout)
		}
		return nil, 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		if ctx.Err() != nil {
			return nil, -1, ctx.Err()
		}
		return nil, 0, fmt.Errorf("reading the reply: %v", err)
	}
	if resp.StatusCode/100 == 2 {
		return body, 0, nil
	}
	se := &StatusError{Code: resp.StatusCode, Message: errorMessage(body)}
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500 {
		return nil, retryAfter(resp.Header.Get("Retry-After")), se
	}
	return nil, -1, se
}

func (c *Client) backoff(attempt int) time.Duration {
	d := c.opts.Backoff << min(attempt, 16)
	if n, err := rand.Int(rand.Reader, big.NewInt(int64(d)/2+1)); err == nil {
		d += time.Duration(n.Int64()) // up to +50% jitter, so parallel callers spread out
	}
	return min(d, 2*time.Minute)
}

// retryAfter reads a Retry-After header in seconds (0: none or unreadable; at most 2 min).
func retryAfter(v string) time.Duration {
	s, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || s <= 0 {
		return 0
	}
	return min(time.Duration(s*float64(time.Second)), 2*time.Minute)
}

// redact removes every secret from an error's text.
func (c *Client) redact(err error) error {
	msg := err.Error()
	clean := Redact(sdk.RedactURLs(msg), c.opts.Secrets...)
	if clean == msg {
		return err
	}
	return &redactedError{msg: clean, err: err}
}

// Redact replaces each non-empty secret in s with "[REDACTED]".
func Redact(s string, secrets ...string) string {
	for _, k := range secrets {
		if k != "" {
			s = strings.ReplaceAll(s, k, "[REDACTED]")
		}
	}
	return s
}

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// errorMessage is the readable part of an error reply: the OpenAI and Anthropic
// {"error": {"message": ...}} shape, else the start of the body.
func errorMessage(body []byte) string {
	var e struct {
		Error struct {
			Message string `json:"message"`
			Type    string `json:"type"`
		} `json:"error"`
	}
	if jsonUnmarshal(body, &e) == nil && e.Error.Message != "" {
		if e.Error.Type != "" {
			return e.Error.Type + ": " + e.Error.Message
		}
		return e.Error.Message
	}
	return fmt.Sprintf("%q", head(body))
}

func head(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "..."
	}
	return string(b)
}
