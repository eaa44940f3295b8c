#!/bin/sh
# Starts the plugin with the repository's virtual environment (make deps-py); exec, so
# the host's signals reach Python itself.
here="$(cd "$(dirname "$0")" && pwd)"
python="$here/../../../.venv/bin/python"
if [ ! -x "$python" ]; then
  echo "pinned-plugin: $python is missing; run 'make deps-py' at the repository root" >&2
  exit 1
fi
exec "$python" "$here/plugin.py" "$@"
