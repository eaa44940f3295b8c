#!/usr/bin/env bash
# Creates .venv-rooms at the repository root for the room simulator (tools/rooms: the
# image source method of pyroomacoustics, MIT) from PyPI wheels, every version pinned in
# tools/rooms/requirements.txt. Idempotent: a stamp records the hash of what was
# installed, so a second run with nothing changed returns at once.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
python="${PYTHON:-python3}"
venv=.venv-rooms
stamp="$venv/.duplexmpe-rooms.stamp"

want="$(cat tools/rooms/requirements.txt scripts/setup-rooms.sh | sha256sum | cut -d' ' -f1)"
if [ -x "$venv/bin/python" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi
rm -f "$stamp"
if [ ! -x "$venv/bin/python" ]; then
  if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 10))' 2>/dev/null; then
    echo "setup-rooms: $python is missing or older than 3.10; set PYTHON=/path/to/python3.10+" >&2
    exit 1
  fi
  echo "setup-rooms: creating $venv with $("$python" --version 2>&1)"
  if ! "$python" -m venv "$venv"; then
    rm -rf "$venv"
    echo "setup-rooms: '$python -m venv' failed; on Debian install python3-venv, or set PYTHON to another python3.10+" >&2
    exit 1
  fi
fi
echo "setup-rooms: installing tools/rooms/requirements.txt into $venv"
"$venv/bin/python" -m pip install -q --disable-pip-version-check --only-binary=:all: -r tools/rooms/requirements.txt
"$venv/bin/python" -c 'import pyroomacoustics' || { echo "setup-rooms: pyroomacoustics does not import" >&2; exit 1; }
echo "$want" > "$stamp"
