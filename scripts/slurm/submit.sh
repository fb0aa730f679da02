#!/usr/bin/env bash
# Submits a kbench plan as a Slurm job array of N shards and the merge that joins them:
#   scripts/slurm/submit.sh N <kbench command and options>
#   scripts/slurm/submit.sh 8 run --config configs/foundation.json
# Run it from the kbench checkout. KBENCH_SBATCH_ARGS adds options to both sbatch calls
# (--partition, --account, --time); SBATCH names the sbatch program (tests use a fake).
set -euo pipefail
here=$(dirname "$0")
sbatch=${SBATCH:-sbatch}
n=${1:-}
[[ "$n" =~ ^[0-9]+$ ]] && [ "$n" -ge 1 ] || { echo "usage: $0 N <kbench command and options>" >&2; exit 2; }
shift
[ $# -gt 0 ] || { echo "usage: $0 N <kbench command and options>" >&2; exit 2; }
read -r -a extra <<<"${KBENCH_SBATCH_ARGS:-}"

# --parsable prints "<job id>" or "<job id>;<cluster>".
array=$("$sbatch" --parsable "${extra[@]}" --array="0-$((n - 1))" "$here/kbench-array.sbatch" "$@")
array=${array%%;*}
dir=${KBENCH_SHARD_DIR:-shards/$array}
merge=$("$sbatch" --parsable "${extra[@]}" --dependency="afterany:$array" "$here/kbench-merge.sbatch" "$dir")
merge=${merge%%;*}
echo "array job $array ($n shards under $dir), merge job $merge (log kbench-merge-$merge.log)"
