#!/usr/bin/env bash
# Sets up, builds with the CI preset (every CUDA file compiled for sm_90a, no GPU needed), and
# runs the tests: the cpu label everywhere, plus the gpu label when a GPU is visible
# (KBENCH_REQUIRE_GPU=1 turns a missing GPU into a failure), then `kbench verify` and the check
# that results/ holds no superseded run (scripts/archive_superseded.py --check), then the
# fuzz targets (scripts/fuzz.sh, KBENCH_FUZZ_SECONDS per target, default 60; 0 skips them).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh ci
export PATH="/usr/local/cuda/bin:$PATH"
labels=cpu
if nvidia-smi -L >/dev/null 2>&1 || [ "${KBENCH_REQUIRE_GPU:-0}" = 1 ]; then labels='cpu|gpu'; fi
ctest --preset ci -L "$labels"
./build-ci/kbench verify
python3 scripts/archive_superseded.py --check
fuzz_seconds=${KBENCH_FUZZ_SECONDS:-60}
if [ "$fuzz_seconds" != 0 ]; then scripts/fuzz.sh "$fuzz_seconds"; fi
