package hosted

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
)

// A reply with usage, as the services send it; Parse reads the usage.
func parseUsage(body []byte) (Usage, error) {
	var r struct {
		Usage *struct {
			In  int `json:"in"`
			Out int `json:"out"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return Usage{}, err
	}
	if r.Usage == nil {
		return Usage{}, errors.New("no usage")
	}
	return Usage{PromptTokens: r.Usage.In, CompletionTokens: r.Usage.Out}, nil
}

// script serves the replies in order, then the last one forever, counting calls.
type script struct {
	mu      sync.Mutex
	replies []func(w http.ResponseWriter)
	calls   int
}

func (s *script) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	i := min(s.calls, len(s.replies)-1)
	s.calls++
	s.mu.Unlock()
	s.replies[i](w)
}

func (s *script) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

func status(code int, body string, header ...string) func(http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		w.WriteHeader(code)
		w.Write([]byte(body))
	}
}

const okBody = `{"usage":{"in":1000,"out":500}}`

func newTestClient(t *testing.T, h http.Handler, opts Options) (*Client, *httptest.Server) {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	opts.BaseURL = srv.URL
	if opts.Backoff == 0 {
		opts.Backoff = time.Millisecond
	}
	return NewClient(opts), srv
}

func req(body string) Request {
	return Request{Kind: "chat", Path: "/x", Model: "m", Body: []byte(body), Cacheable: true, Parse: parseUsage, Estimate: Usage{PromptTokens: 100, CompletionTokens: 100}}
}

func TestRetries(t *testing.T) {
	cases := []struct {
		name    string
		replies []func(http.ResponseWriter)
		retries int
		calls   int
		errHas  string
	}{
		{"429 then ok", []func(http.ResponseWriter){status(429, `{"error":{"message":"slow down"}}`, "Retry-After", "0.01"), status(200, okBody)}, 3, 2, ""},
		{"5xx then ok", []func(http.ResponseWriter){status(503, "busy"), status(529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`), status(200, okBody)}, 3, 3, ""},
		{"5xx exhausted", []func(http.ResponseWriter){status(500, `{"error":{"message":"boom","type":"server_error"}}`)}, 2, 3, "HTTP 500 Internal Server Error after 3 attempt(s): server_error: boom"},
		{"400 not retried", []func(http.ResponseWriter){status(400, `{"error":{"message":"bad model"}}`)}, 3, 1, "HTTP 400 Bad Request after 1 attempt(s): bad model"},
		{"malformed not retried", []func(http.ResponseWriter){status(200, `{"choices":`)}, 3, 1, "malformed reply"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := &script{replies: c.replies}
			cl, _ := newTestClient(t, s, Options{MaxRetries: c.retries})
			body, err := cl.Do(context.Background(), req(c.name))
			if c.errHas == "" {
				if err != nil || string(body) != okBody {
					t.Fatalf("Do = %q, %v", body, err)
				}
			} else if err == nil || !strings.Contains(err.Error(), c.errHas) {
				t.Fatalf("Do error %v; want it to contain %q", err, c.errHas)
			}
			if s.count() != c.calls {
				t.Fatalf("%d calls; want %d", s.count(), c.calls)
			}
		})
	}
}

func TestTimeoutIsRetried(t *testing.T) {
	var n atomic.Int32
	release := make(chan struct{})
	defer close(release) // before the server closes
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			select { // hangs until the client gives up, or the test ends
			case <-r.Context().Done():
			case <-release:
			}
			return
		}
		w.Write([]byte(okBody))
	})
	// The timeout must also let the retry through on a loaded machine: 2 s.
	cl, _ := newTestClient(t, h, Options{MaxRetries: 1, Timeout: 2 * time.Second})
	if _, err := cl.Do(context.Background(), req("t")); err != nil || n.Load() != 2 {
		t.Fatalf("err %v after %d calls", err, n.Load())
	}
}

func TestCache(t *testing.T) {
	s := &script{replies: []func(http.ResponseWriter){status(200, `{"bad":`), status(200, okBody)}}
	cache, err := OpenCache(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cl, srv := newTestClient(t, s, Options{Cache: cache})
	// A malformed reply is never cached: the second call goes out again.
	if _, err := cl.Do(context.Background(), req("a")); err == nil {
		t.Fatal("malformed reply accepted")
	}
	for range 3 {
		if b, err := cl.Do(context.Background(), req("a")); err != nil || string(b) != okBody {
			t.Fatal(b, err)
		}
	}
	if s.count() != 2 {
		t.Fatalf("%d calls; want 2 (one malformed, one answer then cached)", s.count())
	}
	// A different body, model, replicate or base URL is a different entry.
	other := req("a")
	other.Replicate = "1"
	cl.Do(context.Background(), other)
	notCached := req("a")
	notCached.Cacheable = false
	cl.Do(context.Background(), notCached)
	if s.count() != 4 {
		t.Fatalf("%d calls; want 4", s.count())
	}
	m := cl.Usage()
	if m.Calls != 3 || m.CachedCalls != 2 || m.PromptTokens != 3000 {
		t.Fatalf("meter %+v", m)
	}
	if CacheKey("chat", srv.URL, "m", "", []byte("a")) == CacheKey("chat", srv.URL, "m2", "", []byte("a")) ||
		CacheKey("chat", "u", "m", "", []byte("a")) == CacheKey("chat", "u", "", "m", []byte("a")) {
		t.Fatal("keys collide")
	}
	// No temporary files are left.
	var files []string
	filepath.Walk(cache.dir, func(p string, info os.FileInfo, err error) error {
		if info != nil && !info.IsDir() {
			files = append(files, filepath.Base(p))
		}
		return nil
	})
	if len(files) != 2 || strings.Contains(strings.Join(files, ","), "tmp") {
		t.Fatalf("cache files %v", files)
	}
}

func TestCostLimit(t *testing.T) {
	s := &script{replies: []func(http.ResponseWriter){status(200, okBody)}}
	// 1000 in at $1/M + 500 out at $2/M = $0.002 a call; estimate 100+100 tokens = $0.0003.
	usageLog := filepath.Join(t.TempDir(), "sub", "usage.jsonl")
	cl, _ := newTestClient(t, s, Options{Prices: Prices{InputPerMTok: 1, OutputPerMTok: 2}, CostLimit: 0.0042, UsageLog: usageLog})
	for i := range 2 {
		if _, err := cl.Do(context.Background(), req(string(rune('a'+i)))); err != nil {
			t.Fatal(err)
		}
	}
	_, err := cl.Do(context.Background(), req("c"))
	if !errors.Is(err, ErrCostLimit) || !strings.Contains(err.Error(), "cost_limit") {
		t.Fatalf("third call: %v; want the cost limit", err)
	}
	if m := cl.Usage(); s.count() != 2 || m.CostUSD < 0.003999 || m.CostUSD > 0.004001 {
		t.Fatalf("%d calls, meter %+v", s.count(), m)
	}
	// One line per call sent, with running totals.
	raw, err := os.ReadFile(usageLog)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	var last struct {
		Calls int     `json:"total_calls"`
		Cost  float64 `json:"total_cost_usd"`
		In    int     `json:"prompt_tokens"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil || len(lines) != 2 || last.Calls != 2 || last.In != 1000 || last.Cost < 0.003999 || last.Cost > 0.004001 {
		t.Fatalf("usage log %q: %+v, %v", raw, last, err)
	}
}

func TestConcurrencyLimit(t *testing.T) {
	var inFlight, peak atomic.Int32
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := inFlight.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		// Hold the call until a second one is in flight (bounded, for a limiter that
		// wrongly allows only one), so the peak does not depend on scheduling; then a
		// little longer, so that a third call would be seen if it were let through.
		for deadline := time.Now().Add(30 * time.Second); peak.Load() < 2 && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
		time.Sleep(20 * time.Millisecond)
		inFlight.Add(-1)
		w.Write([]byte(okBody))
	})
	cl, _ := newTestClient(t, h, Options{Concurrency: 2})
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			r := req(string(rune('a' + i)))
			r.Cacheable = false
			if _, err := cl.Do(context.Background(), r); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if peak.Load() != 2 {
		t.Fatalf("peak %d calls in flight; want 2", peak.Load())
	}
}

func TestSecretsRedacted(t *testing.T) {
	const key = "sk-test-SECRET-123"
	s := &script{replies: []func(http.ResponseWriter){status(401, `{"error":{"message":"Incorrect API key provided: `+key+`"}}`)}}
	cl, _ := newTestClient(t, s, Options{Secrets: []string{key}})
	_, err := cl.Do(context.Background(), req("a"))
	if err == nil || strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), "[REDACTED]") {
		t.Fatalf("error %v", err)
	}
}

func TestReadSettings(t *testing.T) {
	fields := CommonFields("http://x/v1", "m", "K")
	s, err := ReadSettings(map[string]any{"temperature": 0.5, "cost_limit": 2.0}, fields)
	if err != nil || s.BaseURL != "http://x/v1" || s.Temperature != 0.5 || s.CostLimit != 2 || s.MaxTokens != 256 || !s.Cache || s.Timeout != time.Minute {
		t.Fatalf("%+v %v", s, err)
	}
	for cfg, want := range map[string]map[string]any{
		"temperature":  {"temperature": 3.0},
		"concurrency":  {"concurrency": 0.0},
		"base_url":     {"base_url": ""},
		"max_tokens":   {"max_tokens": "many"},
		"cache: want ": {"cache": "yes"},
	} {
		if _, err := ReadSettings(want, fields); err == nil || !strings.Contains(err.Error(), cfg) {
			t.Errorf("%v: error %v; want one naming %s", want, err, cfg)
		}
	}
	_, err = ReadSettings(map[string]any{"api_key_env": "sk-proj-abc123"}, fields)
	if err == nil || strings.Contains(err.Error(), "sk-proj-abc123") || !strings.Contains(err.Error(), "api_key_env") {
		t.Errorf("a key given as api_key_env: error %v; want one naming the field, not the value", err)
	}
	id := s.Identity("test")
	if id["judge_prompt_version"] == "" || !strings.HasPrefix(id["judge_prompt_sha256"], "sha256:") || id["model"] != "m" {
		t.Fatalf("identity %v", id)
	}
}

// Issue 31: a secret inside base_url (user:password@, ?key=) was printed in errors and
// written to the run's files through them. The client redacts it from every error and
// log line, the URL's own form and the bare value alike.
func TestBaseURLSecretsRedacted(t *testing.T) {
	const pass, key = "hunter2pass", "AIzaSyA-0123456789abcdefGHIJ"
	s := &script{replies: []func(http.ResponseWriter){status(500, `{"error":{"message":"upstream saw key `+key+`"}}`)}}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	var logs strings.Builder
	base := strings.Replace(srv.URL, "http://", "http://alice:"+pass+"@", 1) + "/v1?key=" + key + "&lang=en"
	cl := NewClient(Options{BaseURL: base, MaxRetries: 1, Backoff: time.Millisecond,
		Logger: hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Warn})})
	_, err := cl.Do(context.Background(), req("a"))
	if err == nil {
		t.Fatal("no error")
	}
	for what, text := range map[string]string{"error": err.Error(), "log": logs.String()} {
		if strings.Contains(text, pass) || strings.Contains(text, key) || strings.Contains(text, "alice") {
			t.Errorf("%s holds a secret of base_url: %s", what, text)
		}
		if !strings.Contains(text, "REDACTED") {
			t.Errorf("%s does not say what it redacted: %s", what, text)
		}
	}
}
