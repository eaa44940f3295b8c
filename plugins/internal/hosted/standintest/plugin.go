package standintest

import (
	"context"
	"testing"
	"time"

	"github.com/duplexmpe/duplexmpe/core/pluginhost"
	"github.com/duplexmpe/duplexmpe/sdk"
)

// Plugin is a hosted-API plugin binary as its tests run it against a stand-in: a real
// process over real gRPC, with the API key in its environment.
type Plugin struct {
	Name   string            // the plugin's name, e.g. "openai"
	Binary string            // the built plugin, e.g. from plugintest.BuildGo
	Env    map[string]string // the API key variable, e.g. {"OPENAI_API_KEY": key}
	Fields []sdk.ConfigField // the plugin's config fields, whose defaults Config starts from
}

// Spec runs the plugin, writing its log to logFile ("" for none).
func (p Plugin) Spec(logFile string) pluginhost.Spec {
	return pluginhost.Spec{Name: p.Name, Source: p.Binary, Env: p.Env, LogFile: logFile}
}

// Config is every field's default, pointed at the stand-in at baseURL, with a private
// cache and quick retries, then extra on top.
func (p Plugin) Config(t testing.TB, baseURL string, extra map[string]any) map[string]any {
	cfg := map[string]any{}
	for _, f := range p.Fields {
		cfg[f.Name] = f.Default
	}
	cfg["base_url"] = baseURL
	cfg["cache_dir"] = t.TempDir()
	cfg["retry_backoff"] = 0.01
	for k, v := range extra {
		cfg[k] = v
	}
	return cfg
}

// Start starts the plugin, configured with Config, and kills it when the test ends.
func (p Plugin) Start(t testing.TB, baseURL, logFile string, extra map[string]any) *pluginhost.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := pluginhost.Start(ctx, p.Spec(logFile), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Kill)
	if err := c.Configure(ctx, p.Config(t, baseURL, extra)); err != nil {
		t.Fatal(err)
	}
	return c
}
