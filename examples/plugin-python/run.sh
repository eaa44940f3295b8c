#!/bin/sh
# Starts the example plugin with the repository's virtual environment (make deps-py).
# exec: the host's Kill and signals reach Python itself, not a shell left in between.
here="$(cd "$(dirname "$0")" && pwd)"
python="$here/../../.venv/bin/python"
if [ ! -x "$python" ]; then
  echo "plugin-python: $python is missing; run 'make deps-py' at the repository root" >&2
  exit 1
fi
exec "$python" "$here/plugin.py" "$@"
