#!/usr/bin/env bash
# One call on the GPU machine: build, run each given sweep config, then the GPU and CPU tests (a
# skipped GPU test fails). Result files go under $OUT/results/<experiment>/; every step's log
# is appended to $OUT/session.log as soon as the step ends (the device tool brings back at most
# 8 files, and a call that runs out of time loses only the step it was in). Prints a short
# summary last.
#   OUT=/tmp/out scripts/gpu_session.sh configs/foundation.json [more configs...]
# The sweeps come before the tests because they are what must come from one GPU and they check
# every variant against the oracle before timing it anyway; a session that ran out of time in
# its sweeps, after 3 minutes of tests, brought back neither.
# Extra kbench run flags go in KBENCH_RUN_FLAGS; GPU_TEST_FILTER narrows the gtest run and
# SKIP_TESTS=1 leaves it out; SANITIZE=1 adds scripts/sanitize.sh (compute-sanitizer) before
# them. TORCH_CONFIG=configs/side_by_side.json also runs the PyTorch script after kbench and
# writes $OUT/results/SUMMARY.md over this session's files: one session may get a different
# H200 from the last, and kbench report refuses to mix devices, so both sides must come from
# one call.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:?set OUT to a folder for logs and results}
mkdir -p "$OUT/results"
SESSION_LOG="$OUT/session.log"
: >"$SESSION_LOG"
build=build-gpu
start=$(date +%s)

# Runs "$@" with its output in the session log under a header; returns its status.
step() {
  local name=$1
  shift
  local log
  log=$(mktemp)
  "$@" >"$log" 2>&1
  local rc=$?
  { echo "=== $name (rc=$rc, $(( $(date +%s) - start )) s)"; tail -c 4000000 "$log"; } >>"$SESSION_LOG"
  STEP_LOG=$log
  return $rc
}

# What the results will record as their commit (src/record/provenance.cpp).
echo "tree: $(git rev-parse --short HEAD 2>/dev/null), marker $(cat .kbench-git-commit 2>/dev/null | cut -c1-12)," \
  "$(git status --porcelain -- . ':(exclude)results' ':(exclude)archive' 2>/dev/null | wc -l) changed paths"

configure_and_build() {
  cmake -S . -B $build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a &&
    cmake --build $build
}
step build configure_and_build || { tail -40 "$STEP_LOG"; echo "BUILD FAILED"; exit 1; }
echo "build: $(( $(date +%s) - start )) s"

tables=()
for cfg in "$@"; do
  step "run $cfg" ./$build/kbench run --config "$cfg" --out "$OUT/results" ${KBENCH_RUN_FLAGS:-}
  echo "run $cfg: rc=$? after $(( $(date +%s) - start )) s"
  grep -E "warn|error" "$STEP_LOG" | head -10
  tables+=("$STEP_LOG")
done
if [ -n "${TORCH_CONFIG:-}" ]; then
  PYTHONUNBUFFERED=1 step torch python3 scripts/torch_baseline.py --config "$TORCH_CONFIG" \
    --out "$OUT/results/sweep"
  echo "torch $TORCH_CONFIG: rc=$? after $(( $(date +%s) - start )) s"
  ./$build/kbench report "$OUT"/results/sweep/*.json --out "$OUT/results/SUMMARY.md" ||
    echo "report failed"
fi

if [ -n "${SANITIZE:-}" ]; then
  step sanitize scripts/sanitize.sh $build
  echo "sanitize: rc=$? after $(( $(date +%s) - start )) s"
  cat "$STEP_LOG"
fi
if [ -z "${SKIP_TESTS:-}" ]; then
  KBENCH_REQUIRE_GPU=1 step tests ctest --test-dir $build -L 'gpu|cpu' --output-on-failure -j1 \
    ${GPU_TEST_FILTER:+-R "$GPU_TEST_FILTER"}
  tests_rc=$?
  grep -E "tests passed|tests failed|\*\*\*Failed|Failed  |Exception" "$STEP_LOG" | head -30
  echo "tests: rc=$tests_rc after $(( $(date +%s) - start )) s"
fi
for t in "${tables[@]}"; do grep -vE "^\[" "$t" | head -80; done
