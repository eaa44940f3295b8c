#!/usr/bin/env bash
# Installs the Debian packages the harness uses, only those that are missing (espeak-ng
# gives plugins/onnx-tts its phonemes). Needs root (or sudo) the first time; later runs
# do nothing. With arguments, installs those packages instead (mk/viewer.mk: chromium,
# for the browser tests only).
set -euo pipefail
pkgs=(flite espeak-ng pocketsphinx pocketsphinx-en-us libpocketsphinx-dev libsphinxbase-dev sox protobuf-compiler libopus-dev libopusfile-dev pkg-config flac)
if [ $# -gt 0 ]; then
  pkgs=("$@")
fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "installing Debian packages: ${missing[*]}"
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
