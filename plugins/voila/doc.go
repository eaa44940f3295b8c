// Package voila holds the Go test that runs the voila adapter (plugin.py, Python) under the
// real duplexmpe plugin host, with its model library replaced by a stand-in. The plugin
// itself is Python; see README.md.
package voila
