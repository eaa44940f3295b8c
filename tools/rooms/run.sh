#!/bin/sh
# Runs the room simulator (rir.py) with its own environment, .venv-rooms (make deps-rooms).
here="$(cd "$(dirname "$0")" && pwd)"
python="$here/../../.venv-rooms/bin/python"
if [ ! -x "$python" ]; then
  echo "rooms: $python is missing; run 'make deps-rooms' at the repository root" >&2
  exit 1
fi
exec "$python" "$here/rir.py" "$@"
