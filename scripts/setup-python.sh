#!/usr/bin/env bash
# Creates .venv at the repository root and installs the Python plugin SDK (sdk/python,
# editable, with its test extra) from PyPI. Idempotent: a stamp file records the hash of
# what was installed, so a second run with nothing changed returns at once.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
python="${PYTHON:-python3}"
venv=.venv
stamp="$venv/.duplexmpe-sdk.stamp"

# What the install depends on: the SDK's metadata and this script.
want="$(cat sdk/python/pyproject.toml scripts/setup-python.sh | sha256sum | cut -d' ' -f1)"
if [ -x "$venv/bin/python" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi

if [ ! -x "$venv/bin/python" ]; then
  if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 10))' 2>/dev/null; then
    echo "setup-python: $python is missing or older than 3.10; set PYTHON=/path/to/python3.10+" >&2
    exit 1
  fi
  echo "setup-python: creating $venv with $("$python" --version 2>&1)"
  if ! "$python" -m venv "$venv"; then
    rm -rf "$venv"
    echo "setup-python: '$python -m venv' failed; on Debian install python3-venv, or set PYTHON to another python3.10+" >&2
    exit 1
  fi
fi
echo "setup-python: installing sdk/python[test] into $venv"
if ! "$venv/bin/python" -m pip install -q --disable-pip-version-check -e "sdk/python[test]"; then
  echo "setup-python: installing sdk/python[test] from PyPI failed (see above); fix it and run 'make deps-py' again" >&2
  exit 1
fi
echo "$want" > "$stamp"
