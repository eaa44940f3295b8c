#!/usr/bin/env bash
# Fetches what the in-process Silero VAD needs into .cache/vad/ (ignored by git):
#   libonnxruntime.so.1   from npm onnxruntime-node@1.30.0 (bin/napi-v6/linux/<arch>/)
#   silero_vad_v5.onnx    from npm @ricky0123/vad-web@0.0.31 (dist/)
#   silero_vad_v6.onnx    from the same package
# Uses `npm pack`, never `npm install`: onnxruntime-node's install script downloads CUDA
# files and fails offline. Every tarball and every extracted file is checked against the
# sha256 pinned below; a mismatch stops with a message. When the files are already there
# with the right hashes, it only re-hashes them and exits.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
dest="${DUPLEXMPE_VAD_CACHE:-$root/.cache/vad}"

ORT_PKG="onnxruntime-node@1.30.0"
ORT_TGZ_SHA="6e3390d6b783e7be946fad629292799da28d0b42f84856e50d2c1b0383291e75"
ORT_LIB_SHA_X64="ffb75a925ba05e47b235bb66e3e3911714a80b328a9c9425539feb204aa32a23"
VAD_PKG="@ricky0123/vad-web@0.0.31"
VAD_TGZ_SHA="d1a211cf1a2ed26297da52cc08de79e75d79838a274bfc6de546feb1f828c940"
V5_SHA="2623a2953f6ff3d2c1e61740c6cdb7168133479b267dfef114a4a3cc5bdd788f"
V6_SHA="1a153a22f4509e292a94e67d6f9b85e8deb25b4988682b7e174c65279d8788e3"

case "$(uname -s)/$(uname -m)" in
  Linux/x86_64) ort_arch=x64 ;;
  *)
    echo "fetch-vad: no pinned ONNX Runtime for $(uname -s)/$(uname -m); install ONNX Runtime >= 1.24" >&2
    echo "  yourself and set DUPLEXMPE_ORT_LIB to its shared library (the models are still fetched)." >&2
    ort_arch="" ;;
esac

sha() { sha256sum "$1" | cut -d' ' -f1; }

# ok FILE SHA: the file exists and has the pinned hash.
ok() { [ -f "$1" ] && [ "$(sha "$1")" = "$2" ]; }

# check FILE SHA WHAT: stop unless the file has the pinned hash.
check() {
  local got
  got="$(sha "$1")"
  if [ "$got" != "$2" ]; then
    echo "fetch-vad: sha256 mismatch for $3" >&2
    echo "  file:     $1" >&2
    echo "  expected: $2" >&2
    echo "  got:      $got" >&2
    echo "  The registry served different bytes than the ones pinned in scripts/fetch-vad.sh." >&2
    echo "  It was not installed. Check the package version, or point DUPLEXMPE_ORT_LIB /" >&2
    echo "  DUPLEXMPE_VAD_MODEL at files you trust." >&2
    exit 1
  fi
}

need_ort=0
[ -n "$ort_arch" ] && ! ok "$dest/libonnxruntime.so.1" "$ORT_LIB_SHA_X64" && need_ort=1
need_vad=0
{ ok "$dest/silero_vad_v5.onnx" "$V5_SHA" && ok "$dest/silero_vad_v6.onnx" "$V6_SHA"; } || need_vad=1
[ $need_ort -eq 0 ] && [ $need_vad -eq 0 ] && exit 0

command -v npm >/dev/null || { echo "fetch-vad: npm is needed to fetch the VAD files (Debian: apt-get install npm)" >&2; exit 1; }
mkdir -p "$dest"
work="$(mktemp -d "$dest/.fetch.XXXXXX")"
trap 'rm -rf "$work"' EXIT

# fetch PKG SHA: npm pack PKG into $work, check the tarball, print its path.
fetch() {
  local name
  name="$(cd "$work" && npm pack --silent "$1" 2>"$work/npm.err" | tail -n1)" || {
    echo "fetch-vad: npm pack $1 failed:" >&2; cat "$work/npm.err" >&2; exit 1; }
  check "$work/$name" "$2" "the npm tarball of $1" >&2
  echo "$work/$name"
}

# install TGZ MEMBER SHA NAME: extract one member, check it, move it into place atomically.
install_member() {
  tar -xzf "$1" -C "$work" "$2"
  check "$work/$2" "$3" "$2 in $(basename "$1")"
  chmod 0644 "$work/$2"
  mv -f "$work/$2" "$dest/$4"
}

if [ $need_ort -eq 1 ]; then
  echo "fetch-vad: npm pack $ORT_PKG (about 60 MB)"
  tgz="$(fetch "$ORT_PKG" "$ORT_TGZ_SHA")"
  install_member "$tgz" "package/bin/napi-v6/linux/$ort_arch/libonnxruntime.so.1" "$ORT_LIB_SHA_X64" libonnxruntime.so.1
fi
if [ $need_vad -eq 1 ]; then
  echo "fetch-vad: npm pack $VAD_PKG"
  tgz="$(fetch "$VAD_PKG" "$VAD_TGZ_SHA")"
  install_member "$tgz" package/dist/silero_vad_v5.onnx "$V5_SHA" silero_vad_v5.onnx
  install_member "$tgz" package/dist/silero_vad_v6.onnx "$V6_SHA" silero_vad_v6.onnx
fi
echo "fetch-vad: ready in $dest"
