// Package provenance holds the records that say what produced a result: which harness
// build (Harness), which plugin, in which role, described as what, pinned by which hash
// and configured how (Plugin), and which dataset (Dataset). The run manifest
// (core/store), the report's metadata (core/report), the text reference's result
// (core/reference) and the scoring key all use these same types; it is the lowest
// package in the data flow that needs them, so every stage can import it.
//
// The JSON field names are those the run directories have always used. One shape did
// change: a run manifest used to keep a plugin's whole Describe answer under
// "describe"; it now keeps the flat record (plugin, version, identity). Plugin's
// UnmarshalJSON reads both, so run directories written before load, compare equal to a
// new manifest of the same run, and resume.
package provenance

import (
	"encoding/json"

	"github.com/duplexmpe/duplexmpe/sdk"
)

// Harness identifies the duplexmpe build.
type Harness struct {
	Version         string `json:"version"`
	Commit          string `json:"commit,omitempty"`
	Modified        bool   `json:"modified,omitempty"`
	GoVersion       string `json:"go_version,omitempty"`
	ProtocolVersion int    `json:"protocol_version"`
}

// Dataset identifies a dataset: its name and version as its manifest gives them, the
// content hash of its scenarios file, and how many scenarios it has.
type Dataset struct {
	Name      string `json:"name"`
	Version   string `json:"version,omitempty"`
	Hash      string `json:"hash"`
	Scenarios int    `json:"scenarios"`
	// Acoustics is the room the set was built in (dataset.Room's preset); empty for a
	// clean set.
	Acoustics string `json:"acoustics,omitempty"`
}

// Plugin is one plugin as something used it. The order of the fields is part of the
// scoring key (core/evaluate ScoringKey): keep it.
type Plugin struct {
	// Name is the run file's plugin block label.
	Name string `json:"name"`
	// Role is what it was used as: model, tts, asr, judge or llm (sdk.Kind*).
	Role string `json:"role,omitempty"`
	// Plugin and Version are the name and version it describes itself with.
	Plugin  string `json:"plugin,omitempty"`
	Version string `json:"version,omitempty"`
	// Hash pins its code: sha256:... of a binary, h1:... of a command plugin's dir;
	// empty when it cannot be pinned (reattached, or a command without dir).
	Hash string `json:"hash,omitempty"`
	// Identity is what it wraps (model id, revision, weights digest, prompt hash), as it
	// reports it after Configure.
	Identity map[string]string `json:"identity,omitempty"`
	// Config is the config block Configure got, defaults filled in, less the fields the
	// plugin marks as transport (sdk.ConfigField.Transport): what the configuration means
	// for results, equal on every shard of a run wherever its servers listen.
	Config map[string]any `json:"config,omitempty"`
}

// Described is the record of a plugin from its Describe answer (taken after Configure,
// so that Identity is set) and the config Configure got; transport fields are left out.
func Described(name, role string, info sdk.Info, hash string, config map[string]any) Plugin {
	return Plugin{Name: name, Role: role, Plugin: info.Name, Version: info.Version, Identity: info.Identity, Hash: hash,
		Config: sdk.WithoutTransport(info.Config, config)}
}

// UnmarshalJSON reads the record, and also the manifest shape written before the
// records were one type: {"name", "role", "describe": {Describe answer}, "hash", "config"}.
func (p *Plugin) UnmarshalJSON(b []byte) error {
	type plain Plugin
	var v struct {
		plain
		Describe *struct {
			Name     string
			Version  string
			Identity map[string]string
		} `json:"describe"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*p = Plugin(v.plain)
	if d := v.Describe; d != nil {
		if p.Plugin == "" {
			p.Plugin = d.Name
		}
		if p.Version == "" {
			p.Version = d.Version
		}
		if p.Identity == nil {
			p.Identity = d.Identity
		}
	}
	return nil
}
