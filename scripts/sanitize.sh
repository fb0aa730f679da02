#!/usr/bin/env bash
# compute-sanitizer over the GPU tests that run every kernel against the oracle, on a machine
# with a GPU, after a build (scripts/gpu_session.sh runs it with SANITIZE=1):
#   memcheck   out-of-bounds and misaligned global accesses, in every variant and plan: a write
#              past a buffer the oracle check does not read would otherwise go unnoticed;
#   racecheck  shared-memory hazards in the block reductions (one test: it is the slow tool);
#   synccheck  barriers that not every thread of a block reaches.
# The tests that break a kernel on purpose are left out (one writes past the end by design), and
# so is the test that starts a second process of the test binary.
# Each test runs in its own sanitizer process with its own time limit, so a slow test is named
# as cut short instead of hiding the verdict on the others (memcheck on all eight tests in one
# process ran past 60 s on the H200 in its first session, having passed seven).
#   scripts/sanitize.sh [build-dir]      exit status: 0 clean, 1 a tool found errors or was cut
#   SANITIZE_TIMEOUT_S=120               the limit per test and tool (default 120 s)
#   SANITIZE_FILTER='RmsnormGpu.*'       memcheck only these tests (a gtest filter; default: every
#                                        test that checks kernels against the oracle)
set -uo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build-gpu}/tests/kbench_gpu_tests
[ -x "$bin" ] || { echo "sanitize: no $bin (build first)" >&2; exit 2; }
command -v compute-sanitizer >/dev/null || { echo "sanitize: compute-sanitizer not found" >&2; exit 2; }

every_kernel=${SANITIZE_FILTER:-'RowsGpu.*:RmsnormGpu.*:*CopyAddCheck.EveryVariantMatchesTheOracle*:GemmGpu.EveryVariantOnRaggedAndSquareShapes:GemmGpu.KZeroGivesZeros:-RowsGpu.CheckerRejects*:RmsnormGpu.WeightGradientBitsRepeatAcrossProcesses'}
one_of_each='RowsGpu.EveryVariantOnAwkwardShapes'
limit=${SANITIZE_TIMEOUT_S:-120}
status=0

# The full names of the tests a gtest filter selects.
tests_for() {
  "$bin" --gtest_list_tests --gtest_filter="$1" |
    awk '/^[^ ]/ {suite=$1} /^  / {print suite $1}' | grep -v DISABLED_  # helpers of other tests
}

run() {
  local tool=$1 test=$2 log rc t0=$SECONDS
  log=$(mktemp)
  KBENCH_REQUIRE_GPU=1 timeout "$limit" compute-sanitizer --tool "$tool" --error-exitcode 3 \
    "$bin" --gtest_filter="$test" >"$log" 2>&1
  rc=$?
  local verdict=clean
  case $rc in
    0) ;;
    124) verdict="cut at ${limit} s" ;;
    3) verdict="errors found" ;;
    *) verdict="failed (rc=$rc)" ;;
  esac
  echo "$tool $test: $verdict in $((SECONDS - t0)) s"
  if [ $rc -ne 0 ]; then
    status=1
    grep -E "^========= [A-Z]|FAILED|Failure" "$log" | head -20
  fi
  rm -f "$log"
}

for t in $(tests_for "$every_kernel"); do run memcheck "$t"; done
run racecheck "$one_of_each"
run synccheck "$one_of_each"
exit $status
