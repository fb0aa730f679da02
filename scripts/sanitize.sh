#!/usr/bin/env bash
# compute-sanitizer over the GPU tests that run every kernel against the oracle, on a machine
# with a GPU, after a build (scripts/gpu_session.sh runs it with SANITIZE=1):
#   memcheck   out-of-bounds and misaligned global accesses, in every variant and plan: a write
#              past a buffer the oracle check does not read would otherwise go unnoticed;
#   racecheck  shared-memory hazards in the block reductions (one test: it is the slow tool);
#   synccheck  barriers that not every thread of a block reaches.
# The tests that break a kernel on purpose are left out (one writes past the end by design).
#   scripts/sanitize.sh [build-dir]      exit status: 0 clean, 1 a tool found errors or failed
set -uo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build-gpu}/tests/kbench_gpu_tests
[ -x "$bin" ] || { echo "sanitize: no $bin (build first)" >&2; exit 2; }
command -v compute-sanitizer >/dev/null || { echo "sanitize: compute-sanitizer not found" >&2; exit 2; }

every_kernel='RowsGpu.*:*CopyAddCheck.EveryVariantMatchesTheOracle*:-RowsGpu.CheckerRejectsBrokenKernels'
one_of_each='RowsGpu.EveryVariantOnAwkwardShapes'
limit=${SANITIZE_TIMEOUT_S:-300}  # per tool; a run cut short counts as a failure
status=0
run() {
  local tool=$1 filter=$2 log
  log=$(mktemp)
  local t0=$SECONDS
  KBENCH_REQUIRE_GPU=1 timeout "$limit" compute-sanitizer --tool "$tool" --error-exitcode 3 \
    "$bin" --gtest_filter="$filter" >"$log" 2>&1
  local rc=$?
  echo "$tool: rc=$rc in $((SECONDS - t0)) s, $(grep -cE '^\[       OK \]' "$log") tests passed;" \
    "$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -1 | sed 's/=* *//')"
  if [ $rc -ne 0 ]; then
    status=1
    grep -E "=========|FAILED" "$log" | head -20
  fi
  rm -f "$log"
}
run memcheck "$every_kernel"
run racecheck "$one_of_each"
run synccheck "$one_of_each"
exit $status
