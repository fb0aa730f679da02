#!/usr/bin/env bash
# One call on the GPU machine: build, run the GPU and CPU tests (a skipped GPU test fails), run
# each given sweep config, and leave the result files under $OUT/results/<experiment>/ and the
# logs in one file, $OUT/session.log (the device tool brings back at most 8 files: a torch
# result was once lost to separate log files). Prints a short summary last.
#   OUT=/tmp/out scripts/gpu_session.sh configs/foundation.json [more configs...]
# Extra kbench run flags go in KBENCH_RUN_FLAGS; GPU_TEST_FILTER narrows the gtest run.
# TORCH_CONFIG=configs/side_by_side.json also runs the PyTorch script after kbench and writes
# $OUT/results/SUMMARY.md over this session's files: one session may get a different H200 from
# the last, and kbench report refuses to mix devices, so both sides must come from one call.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:?set OUT to a folder for logs and results}
mkdir -p "$OUT/results"
LOGS=$(mktemp -d)
# Every log, build first, in one file under $OUT whatever happens below.
trap 'for f in "$LOGS"/*.log; do echo "=== $(basename "$f")"; tail -c 4000000 "$f"; done >"$OUT/session.log"' EXIT
build=build-gpu
start=$(date +%s)
# What the results will record as their commit (carry .git so that the copy's git is current).
echo "tree: $(git rev-parse --short HEAD 2>/dev/null || cat .kbench-git-commit 2>/dev/null)," \
  "$(git status --porcelain -- . ':(exclude)results' ':(exclude)archive' 2>/dev/null | wc -l) changed paths"


{ cmake -S . -B $build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a &&
  cmake --build $build; } >"$LOGS/build.log" 2>&1 || { tail -40 "$LOGS/build.log"; echo "BUILD FAILED"; exit 1; }
echo "build: $(( $(date +%s) - start )) s"

export KBENCH_REQUIRE_GPU=1
ctest --test-dir $build -L 'gpu|cpu' --output-on-failure -j1 \
  ${GPU_TEST_FILTER:+-R "$GPU_TEST_FILTER"} >"$LOGS/tests.log" 2>&1
tests_rc=$?
grep -E "tests passed|tests failed|\*\*\*Failed|Failed  |Exception" "$LOGS/tests.log" | head -30
echo "tests: rc=$tests_rc after $(( $(date +%s) - start )) s"

for cfg in "$@"; do
  ./$build/kbench run --config "$cfg" --out "$OUT/results" ${KBENCH_RUN_FLAGS:-} \
    >"$LOGS/run-$(basename "$cfg" .json).log" 2>&1
  echo "run $cfg: rc=$? after $(( $(date +%s) - start )) s"
  grep -E "warn|error" "$LOGS/run-$(basename "$cfg" .json).log" | head -10
done
if [ -n "${TORCH_CONFIG:-}" ]; then
  PYTHONUNBUFFERED=1 python3 scripts/torch_baseline.py --config "$TORCH_CONFIG" \
    --out "$OUT/results/sweep" >"$LOGS/torch.log" 2>&1
  echo "torch $TORCH_CONFIG: rc=$? after $(( $(date +%s) - start )) s"
  ./$build/kbench report "$OUT"/results/sweep/*.json --out "$OUT/results/SUMMARY.md" ||
    echo "report failed"
fi
for cfg in "$@"; do tail -n +1 "$LOGS/run-$(basename "$cfg" .json).log" | grep -vE "^\[" | head -80; done
