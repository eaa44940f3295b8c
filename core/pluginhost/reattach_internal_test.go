package pluginhost

import (
	"strings"
	"testing"
)

func FuzzParseReattach(f *testing.F) {
	f.Add(`{"Protocol":"grpc","ProtocolVersion":1,"Pid":42,"Test":true,"Addr":{"Network":"unix","String":"/tmp/plugin1"}}`)
	f.Add(`DUPLEXMPE_REATTACH={"Protocol":"grpc","ProtocolVersion":1,"Pid":7,"Test":true,"Addr":{"Network":"tcp","String":"127.0.0.1:1234"}}`)
	f.Add(`{"Protocol":"netrpc"}`)
	f.Add(`'{"Pid":-1}'`)
	f.Fuzz(func(t *testing.T, s string) {
		rc, err := parseReattach(s)
		if err != nil {
			if !strings.Contains(err.Error(), " ") {
				t.Fatalf("unhelpful error %q", err)
			}
			return
		}
		if rc.Pid <= 0 || rc.Addr == nil || !rc.Test || rc.Protocol != "grpc" {
			t.Fatalf("accepted %q as %+v", s, rc)
		}
	})
}
