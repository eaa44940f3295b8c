// Package whisper holds the Go tests that run the whisper ASR plugin (plugin.py, through
// run.sh, in .venv-whisper) under the real duplexmpe plugin host. The plugin itself is
// Python; see README.md.
package whisper
