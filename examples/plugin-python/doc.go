// Package pluginpython holds the Go tests that run the Python example plugin
// (plugin.py, through run.sh) under the real duplexmpe plugin host. The plugin itself is
// Python; see README.md.
package pluginpython
