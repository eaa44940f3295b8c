#!/bin/sh
# Compile one open v2 batch alone with the product (`duplexmpe dataset compile`, then
# `dataset validate` on what it wrote): the checks of the format and of every label rule the
# code knows. Usage: validate.sh BATCH.jsonl  (run from anywhere; needs bin/duplexmpe)
set -e
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
batch=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp "$batch" "$tmp/b.jsonl"
python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["pair_id"])' "$batch" > "$tmp/dev.txt"
printf '{"name":"open-v2-batch","version":"0.0.0","licence":"CC-BY-4.0","gap_seed":2,"lapse_share":0.2,"sources":["b.jsonl"],"dev":"dev.txt","out":"out"}\n' > "$tmp/release.json"
"$root/bin/duplexmpe" dataset compile "$tmp/release.json"
"$root/bin/duplexmpe" dataset validate "$tmp/out/dev"
[ -s "$tmp/out/test/scenarios.jsonl" ] && "$root/bin/duplexmpe" dataset validate "$tmp/out/test"
exit 0
