#!/bin/sh
# Starts the whisper ASR plugin with its own environment, .venv-whisper (make deps-whisper).
# exec: the host's Kill and signals reach Python itself, not a shell left in between.
here="$(cd "$(dirname "$0")" && pwd)"
python="$here/../../.venv-whisper/bin/python"
if [ ! -x "$python" ]; then
  echo "whisper: $python is missing; run 'make deps-whisper' at the repository root" >&2
  exit 1
fi
exec "$python" "$here/plugin.py" "$@"
