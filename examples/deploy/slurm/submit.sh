#!/usr/bin/env bash
# Submits a duplexmpe run to Slurm as three jobs: the datasets are built once, a job
# array plays the N shards (at most K at once) into RUN_ROOT/shard-i-of-N, and a merge
# job, once every shard has ended whatever its outcome, merges them into RUN_ROOT/merged,
# scores that and writes the report there (see merge.sbatch for a partial failure).
#
#   submit.sh [--shards N] [--parallel K] [--only i,j,...] [--no-build]
#             [--var NAME=VALUE]... [--run-flag FLAG]... RUN_FILE RUN_ROOT
#
#   --shards N      slices of the run (default 4); keep N when resubmitting
#   --parallel K    at most K shards running at once (default: all)
#   --only LIST     submit only these shards (e.g. 1,3: those a merge named), no build
#   --no-build      the datasets are built already
#   --var N=V       a run-file variable, for every duplexmpe command (repeatable)
#   --run-flag F    one more argument for `duplexmpe run` only, e.g. --run-flag
#                   --frame-deadline=5m (repeatable)
#
# RUN_ROOT must be on storage every node sees. DUPLEXMPE names the binary (default:
# duplexmpe on PATH); DMPE_SHARD_SBATCH, DMPE_BUILD_SBATCH and DMPE_MERGE_SBATCH add sbatch
# options to those jobs (e.g. DMPE_SHARD_SBATCH="--partition=gpu --gres=gpu:1"); see
# shard.sbatch for a model server started inside each shard's allocation. The job ids
# are printed one a line: "build job ID", "shards job ID", "merge job ID".
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
shards=4 parallel="" only="" build=1
vars=() run_flags=()
die() { echo "submit.sh: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
	case $1 in
	--shards) shards=${2:?}; shift 2 ;;
	--parallel) parallel=${2:?}; shift 2 ;;
	--only) only=${2:?}; build=0; shift 2 ;;
	--no-build) build=0; shift ;;
	--var) vars+=(--var "${2:?}"); shift 2 ;;
	--run-flag) run_flags+=("${2:?}"); shift 2 ;;
	-*) die "unknown option $1 (see the top of $0)" ;;
	*) break ;;
	esac
done
[ $# -eq 2 ] || die "usage: submit.sh [options] RUN_FILE RUN_ROOT (see the top of $0)"
[[ $shards =~ ^[1-9][0-9]*$ ]] || die "--shards $shards: want a whole number of at least 1"
[ -f "$1" ] || die "$1: no such run file"
run_file=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
mkdir -p "$2/slurm"
run_root=$(cd "$2" && pwd)

duplexmpe=${DUPLEXMPE:-duplexmpe}
if [[ $duplexmpe == */* ]]; then
	duplexmpe=$(cd "$(dirname "$duplexmpe")" && pwd)/$(basename "$duplexmpe")
else
	duplexmpe=$(command -v "$duplexmpe") || die "duplexmpe is not on PATH; set DUPLEXMPE to the binary"
fi
export DUPLEXMPE=$duplexmpe
# Fail here, not on a node an hour later: the file must parse and declare "out".
"$duplexmpe" validate "$run_file" "${vars[@]}" >/dev/null
grep -Eq '^[[:space:]]*variable[[:space:]]+"out"' "$run_file" ||
	die "$run_file declares no variable \"out\": each shard needs its own run directory (out = var.out in the evaluation block; see docs/scale.md)"

if [ -n "$only" ]; then
	[[ $only =~ ^[0-9]+(,[0-9]+)*$ ]] || die "--only $only: want shard indices like 1,3"
	for i in ${only//,/ }; do ((i < shards)) || die "--only: shard $i is not one of 0..$((shards - 1))"; done
	array=$only
else
	array="0-$((shards - 1))"
fi
[ -n "$parallel" ] && array="$array%$parallel"

after=()
if [ "$build" = 1 ]; then
	# shellcheck disable=SC2086
	id=$(sbatch --parsable ${DMPE_BUILD_SBATCH:-} --output="$run_root/slurm/%x-%j.out" \
		"$here/build.sbatch" "$run_file" "${vars[@]}")
	echo "build job ${id%%;*}"
	after=(--dependency="afterok:${id%%;*}" --kill-on-invalid-dep=yes)
fi
# shellcheck disable=SC2086
id=$(sbatch --parsable ${DMPE_SHARD_SBATCH:-} "${after[@]}" --array="$array" \
	--output="$run_root/slurm/%x-%A_%a.out" \
	"$here/shard.sbatch" "$run_file" "$run_root" "$shards" "${vars[@]}" "${run_flags[@]}")
shards_job=${id%%;*}
echo "shards job $shards_job"
# afterany: the merge runs when every shard has ended, also when some failed or were
# cancelled, so that what finished is merged and the missing shards are named.
# shellcheck disable=SC2086
id=$(sbatch --parsable ${DMPE_MERGE_SBATCH:-} --dependency="afterany:$shards_job" \
	--output="$run_root/slurm/%x-%j.out" \
	"$here/merge.sbatch" "$run_file" "$run_root" "$shards" "${vars[@]}")
echo "merge job ${id%%;*}"
