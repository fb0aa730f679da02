#!/usr/bin/env bash
# One call on the GPU machine: build, run each given sweep config, then the GPU and CPU tests (a
# skipped GPU test fails). Result files go under $OUT/results/<experiment>/; every step's log
# is appended to $OUT/session.log as soon as the step ends (the device tool brings back at most
# 8 files, and a call that runs out of time loses only the step it was in). Prints a short
# summary last.
#
# Two steps, so that results on the GPU machine record their commit and an exact diff, and the
# build finds what that machine lacks:
#   1. here, before each device call:   scripts/gpu_session.sh --prepare
#      writes .kbench-git-commit (git rev-parse HEAD) and .kbench-git.bundle (git bundle create
#      of HEAD; with BUNDLE_BASE=<commit>, of the commits after it), and copies valijson's
#      headers (JSON Schema checks; the GPU machine has no package of it and no network) from
#      /usr/include/valijson to .deps/include/valijson, where cmake/Dependencies.cmake looks
#      after the system. All three are git-ignored: name them in the device call's carried
#      paths (.kbench-git-commit, .kbench-git.bundle, .deps).
#   2. there:   OUT=/tmp/out scripts/gpu_session.sh configs/foundation.json [more configs...]
#      The GPU machine gets a copy of the working tree whose .git is a stale snapshot from the
#      start of the session (or none), without the current commit's objects. When the bundle is
#      there, the run first fetches it into the tree's git (git init when there is no .git), so
#      that provenance (src/record/provenance.cpp) can compare the tree with the marker's commit
#      and record an exact diff of anything uncommitted; without it, results name the commit but
#      record compare_error and dirty: true.
#
# The sweeps come before the tests because they are what must come from one GPU and they check
# every variant against the oracle before timing it anyway; a session that ran out of time in
# its sweeps, after 3 minutes of tests, brought back neither.
# EXPERIMENTS runs probe, spec, the tolerance probe and grids (see below; GRID_CONFIG names
# another grid config than configs/grid.json). Extra kbench run
# flags go in KBENCH_RUN_FLAGS; NCU_CHECK=1 sets the cupti timer against Nsight Compute;
# MICROBENCH="mma_ceiling stream_mix dw_end cluster_residency pdl_split" builds and runs those probes of scripts/*.cu (mma.sync's
# own rate; the two-read, one-write stream's designs and cache policies; what rmsnorm_backward's
# dw end costs in wall time; how many clusters of each size are resident; where a split plan's
# overlapped second kernel starts, by trigger placement and timer; MMA_CEILING=1 is MICROBENCH=mma_ceiling); TORCH_DUMP="OP:DTYPE:SHAPE ..." prints the Triton code torch.compile
# generates for those cases (scripts/torch_kernel_dump.py); NCU_PROFILE profiles
# chosen variants with Nsight Compute (below);
# SASS=1 prints the SASS instruction mix of the gemm objects (HGMMA: wgmma on the fast path);
# STEP_TIMEOUT_S kills any step that runs longer (a hung kernel costs one step, not the call);
# AB_PATCH=<file> runs the sweeps again with that patch applied and compares (below);
# PACK=1 packs the result files into one archive; GPU_TEST_FILTER narrows the gtest run (a
# ctest -R regex; GPU_TEST_LABEL=gpu leaves the CPU tests out, CI runs them) and
# SKIP_TESTS=1 leaves it out (BUILD_TARGETS=kbench then builds the binary alone, for a short call); SANITIZE=1 adds scripts/sanitize.sh (compute-sanitizer) before
# them. TORCH_CONFIG=configs/side_by_side.json (or several configs, space-separated) also runs
# the PyTorch script on each after kbench and
# writes $OUT/results/SUMMARY.md over this session's files: one session may get a different
# H200 from the last, and kbench report refuses to mix devices, so both sides must come from
# one call.
set -uo pipefail
cd "$(dirname "$0")/.."
marker=.kbench-git-commit
bundle=.kbench-git.bundle

# Step 1: the commit and its history, for a copy of this tree (written beside, then renamed).
if [ "${1:-}" = --prepare ]; then
  set -e
  trap 'rm -f "$marker.tmp" "$bundle.tmp"' EXIT
  git rev-parse --verify HEAD >"$marker.tmp"
  # BUNDLE_BASE=<commit>: only the history after it (the GPU machine's copy of .git, taken at
  # the start of the session, already has that commit), when the whole history would take the
  # working tree past what a device call may carry.
  git bundle create -q "$bundle.tmp" "${BUNDLE_BASE:+$BUNDLE_BASE..}HEAD"
  mv "$marker.tmp" "$marker"
  mv "$bundle.tmp" "$bundle"
  valijson=${VALIJSON_INCLUDE:-/usr/include}/valijson
  [ -f "$valijson/validator.hpp" ] ||
    { echo "prepare: no valijson headers at $valijson (apt-get install libvalijson-dev)" >&2; exit 1; }
  rm -rf .deps/include/valijson
  mkdir -p .deps/include
  cp -R "$valijson" .deps/include/valijson
  echo "prepared: $marker $(cut -c1-12 "$marker"), $bundle $(du -h "$bundle" | cut -f1)," \
    ".deps $(du -sh .deps | cut -f1); carry all three into the device call"
  exit 0
fi

OUT=${OUT:?set OUT to a folder for logs and results}
mkdir -p "$OUT/results"
SESSION_LOG="$OUT/session.log"
: >"$SESSION_LOG"
build=build-gpu
start=$(date +%s)

# Runs "$@" with its output in the session log under a header, line by line as it comes (a call
# cut at the device's limit mid-step still brings back what that step printed: session 27 lost a
# whole test step's log to a step that wrote it only at its end); returns its status.
step() {
  local name=$1
  shift
  local log
  log=$(mktemp)
  echo "=== $name (from $(( $(date +%s) - start )) s)" >>"$SESSION_LOG"
  if [ -n "${STEP_TIMEOUT_S:-}" ] && [ "$(type -t "$1")" = file ]; then  # timeout runs programs, not functions
    timeout --kill-after=10 "$STEP_TIMEOUT_S" "$@" 2>&1 | tee "$log" >>"$SESSION_LOG"
  else
    "$@" 2>&1 | tee "$log" >>"$SESSION_LOG"
  fi
  local rc=${PIPESTATUS[0]}
  [ $rc = 124 ] && echo "step $name: killed after STEP_TIMEOUT_S=$STEP_TIMEOUT_S s" | tee -a "$log" >>"$SESSION_LOG"
  echo "=== $name ended (rc=$rc, $(( $(date +%s) - start )) s)" >>"$SESSION_LOG"
  STEP_LOG=$log
  return $rc
}

# Step 2 begins: the marker's commit into this copy's git, kept under a ref of its own (no
# branch moves; gc and maintenance off, so that nothing is pruned or repacked mid-session).
bundle_state=absent
if [ -f "$bundle" ]; then
  { [ -e .git ] || git init -q; } &&
    git -c gc.auto=0 -c maintenance.auto=false fetch -q "$bundle" "+HEAD:refs/kbench/marker" &&
    bundle_state=fetched || bundle_state="fetch failed"
fi
# What the results will record as their commit (src/record/provenance.cpp).
echo "tree: git HEAD $(git rev-parse --short HEAD 2>/dev/null || echo none)," \
  "marker $(cut -c1-12 "$marker" 2>/dev/null || echo none), bundle $bundle_state," \
  "marker commit $(git cat-file -e "$(cat "$marker" 2>/dev/null)^{commit}" 2>/dev/null && echo present || echo missing)"

# A warm machine keeps $build, but each call copies the tree anew, and a copied file keeps its
# mtime here: a file put back to an older version can be older than the objects built from the
# newer one, and ninja, which compares times, does not rebuild them (session 33: a call after
# one that had patched rmsnorm.cu ran the patched binary as main's; kbench run warned that the
# tree differed from its manifest and verify refused the result). So every source whose content
# differs from what the last build here saw is touched first.
source_hashes() {
  git ls-files -z -co --exclude-standard -- src kernels experiments cmake tests scripts \
    CMakeLists.txt CMakePresets.json | xargs -0 sha256sum 2>/dev/null || true  # a file listed and gone: left out
}
touch_changed_sources() {
  local seen=$build/.source-sha256
  source_hashes >"$seen.now" || return 1
  if [ -f "$seen" ]; then
    # Lines in the new list and not in the old: changed or new files; their paths start at 67.
    grep -vxFf "$seen" "$seen.now" | cut -c67- | while IFS= read -r f; do touch -- "$f"; done
    echo "sources changed since this machine's last build: $(grep -cvxFf "$seen" "$seen.now")"
  fi
}
configure_and_build() {
  mkdir -p $build && touch_changed_sources &&
    cmake -S . -B $build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a &&
    cmake --build $build ${BUILD_TARGETS:+--target $BUILD_TARGETS} &&
    mv "$build/.source-sha256.now" "$build/.source-sha256"
}
step build configure_and_build || { tail -40 "$STEP_LOG"; echo "BUILD FAILED"; exit 1; }
echo "build: $(( $(date +%s) - start )) s"

tables=()
written=()  # each sweep's result file, "" where the run wrote none
run_sweep() {  # run_sweep CONFIG LABEL
  # -v: a line as each case is prepared and each variant checked, so that a step killed at
  # STEP_TIMEOUT_S says where it was (session 34's sweep hung in its checks and said nothing).
  step "run $1$2" ./$build/kbench -v run --config "$1" --out "$OUT/results" ${KBENCH_RUN_FLAGS:-}
  echo "run $1$2: rc=$? after $(( $(date +%s) - start )) s"
  grep -E "warn|error" "$STEP_LOG" | head -10
  tables+=("$STEP_LOG")
  written+=("$(grep -o 'wrote [^ ]*\.json' "$STEP_LOG" | tail -1 | cut -d' ' -f2)")
}
for cfg in "$@"; do run_sweep "$cfg" ""; done

# AB_PATCH=<file>: a change judged against main in one call, on one GPU (comparisons that must
# hold at the 1% level come from one call; sessions 33 and 36 did this by hand). After the
# sweeps above, the patch is applied (git apply) and built, the same sweeps run again (each
# result records the patch as its diff, beside main's under $OUT/results/<experiment>/), and
# `kbench compare` main -> patched is printed for each. Everything after (PyTorch, experiments,
# tests) runs on the patched tree.
if [ -n "${AB_PATCH:-}" ]; then
  main_results=("${written[@]}")
  written=()
  patch_and_build() { git apply "$AB_PATCH" && configure_and_build; }
  if step "apply $AB_PATCH" patch_and_build; then
    echo "apply $AB_PATCH: built after $(( $(date +%s) - start )) s"
    for cfg in "$@"; do run_sweep "$cfg" " (patched)"; done
    for i in "${!main_results[@]}"; do
      a=${main_results[$i]} b=${written[$i]:-}
      if [ -z "$a" ] || [ -z "$b" ]; then echo "compare ${*:i+1:1}: a side wrote no result"; continue; fi
      step "compare ${*:i+1:1}" ./$build/kbench compare "$a" "$b"
      # Printed last with the sweeps' tables: the verdicts that moved, then the counts.
      ab_table=$(mktemp)
      { echo "### main -> $AB_PATCH: ${*:i+1:1}"; grep -E "\| (faster|slower) \|$" "$STEP_LOG"
        grep -E "^[0-9]+ faster, " "$STEP_LOG"; } >"$ab_table"
      tables+=("$ab_table")
    done
  else
    tail -20 "$STEP_LOG"
    echo "AB_PATCH: $AB_PATCH did not apply or build; nothing after this is the patch's measurement"
  fi
fi
if [ -n "${TORCH_CONFIG:-}" ]; then
  for tc in $TORCH_CONFIG; do
    PYTHONUNBUFFERED=1 step "torch $tc" python3 scripts/torch_baseline.py --config "$tc" \
      --out "$OUT/results/sweep"
    echo "torch $tc: rc=$? after $(( $(date +%s) - start )) s"
  done
  ./$build/kbench report "$OUT"/results/sweep/*.json --out "$OUT/results/SUMMARY.md" ||
    echo "report failed"
fi

# The other experiments, after the sweeps and PyTorch: EXPERIMENTS="probe spec tolerance
# grid:softmax grid:rmsnorm ..." (each result under $OUT/results/<experiment>/; tolerance
# also prints its table into the log).
STEP_LOG=${STEP_LOG:-/dev/null}
for e in ${EXPERIMENTS:-}; do
  case $e in
    probe | spec) step "$e" ./$build/kbench "$e" --out "$OUT/results" ;;
    tolerance) step "$e" ./$build/kbench check --tolerance-probe "${TOLERANCE_SEEDS:-100}" --out "$OUT/results" ;;
    grid:*) step "$e" ./$build/kbench grid --op "${e#grid:}" ${GRID_CONFIG:+--config "$GRID_CONFIG"} --out "$OUT/results" ;;
    *) echo "unknown experiment '$e' in EXPERIMENTS" >&2; false ;;
  esac
  echo "$e: rc=$? after $(( $(date +%s) - start )) s"
  tail -15 "$STEP_LOG"
done

# SCALE_OUT=1 (or a config path): issue 21 end to end on this GPU: the config (default
# configs/quick.json) unsharded, through one --devices worker, and as two shards merged; each
# of the last two compared with the first (--fail-above 5). Results under $OUT/scale-<how>/
# (two folders down, so that the device tool brings them back).
if [ -n "${SCALE_OUT:-}" ]; then
  scale_cfg=configs/quick.json
  [ "$SCALE_OUT" != 1 ] && scale_cfg=$SCALE_OUT
  scale_out() {
    local k=./$build/kbench o=$OUT/scale
    $k run --config "$scale_cfg" --out "$o-whole" &&
      $k run --config "$scale_cfg" --devices 0 --out "$o-devices" &&
      $k run --config "$scale_cfg" --shard 0/2 --out "$o-shards" &&
      $k run --config "$scale_cfg" --shard 1/2 --out "$o-shards" &&
      $k merge "$o"-shards/sweep/*.json --out "$o-merged" &&
      $k compare "$o"-whole/sweep/*.json "$o"-merged/sweep/*.json --fail-above 5 &&
      $k compare "$o"-whole/sweep/*.json "$o"-devices/sweep/*.json --fail-above 5
  }
  step "scale out $scale_cfg" scale_out
  echo "scale out: rc=$? after $(( $(date +%s) - start )) s"
  grep -E "^merged|same;|within 1%|^- (events|graph|cupti)|error" "$STEP_LOG" | head -30
fi

# NCU_CHECK=1: the cupti timer against Nsight Compute (configs/timer_check.json, all three
# timers, then ncu over kbench check of the same config; scripts/ncu_crosscheck.py pairs them).
if [ -n "${NCU_CHECK:-}" ]; then
  step "timer check" ./$build/kbench run --config configs/timer_check.json --out "$OUT/results"
  echo "timer check: rc=$? after $(( $(date +%s) - start )) s"
  timer_result=$(grep -o 'wrote [^ ]*\.json' "$STEP_LOG" | tail -1 | cut -d' ' -f2)
  ncu_check() {
    ncu --clock-control none --metrics gpu__time_duration.sum --csv --log-file "$OUT/ncu.csv" \
      ./$build/kbench check --config configs/timer_check.json >"$OUT/ncu_check.log" 2>&1 &&
      python3 scripts/ncu_crosscheck.py --ncu "$OUT/ncu.csv" --check "$OUT/ncu_check.log" --result "$timer_result"
  }
  step "ncu cross-check" ncu_check
  echo "ncu cross-check: rc=$? after $(( $(date +%s) - start )) s"
  cat "$STEP_LOG"
fi

# MICROBENCH: each probe's table goes into the log (MMA_CEILING=1: mma.sync's issue rate with no
# memory traffic, the compute roofline of GEMM I's kernels).
for probe in ${MICROBENCH:-} ${MMA_CEILING:+mma_ceiling}; do
  microbench() {
    nvcc -O3 -gencode=arch=compute_90a,code=sm_90a "scripts/$1.cu" -o "$build/$1" && "./$build/$1"
  }
  step "microbench $probe" microbench "$probe"
  echo "microbench $probe: rc=$? after $(( $(date +%s) - start )) s"
  cat "$STEP_LOG"
done
if [ -n "${TORCH_DUMP:-}" ]; then
  # Only the kernels and their launch heuristics, into the log (the whole module is long).
  step "torch dump" python3 scripts/torch_kernel_dump.py $TORCH_DUMP
  echo "torch dump: rc=$? after $(( $(date +%s) - start )) s"
  grep -E "^=====|@triton|def triton|tl\.load|tl\.store|tl\.sum|for r|XBLOCK|RBLOCK|R0_BLOCK|num_warps|evict|triton_heuristics|reduction_hint" "$STEP_LOG" | head -150
fi

# NCU_PROFILE="OP:DTYPE:SHAPE:VARIANT ...": Nsight Compute's throughput, memory, warp-state and
# occupancy sections of each variant's first two launches under kbench check, into the log
# (what bounds a kernel: the leads for the next change), and the SASS instruction mix of the
# gemm objects.
for spec in ${NCU_PROFILE:-}; do
  IFS=: read -r p_op p_dtype p_shape p_variant <<<"$spec"
  step "ncu $spec" ncu --clock-control none -c 2 --section SpeedOfLight --section MemoryWorkloadAnalysis \
    --section ComputeWorkloadAnalysis --section WarpStateStats --section Occupancy --section LaunchStats \
    ./$build/kbench check --op "$p_op" --dtype "$p_dtype" --shape "$p_shape" --variant "$p_variant"
  echo "ncu $spec: rc=$? after $(( $(date +%s) - start )) s"
  grep -vE "^==PROF==|^\[" "$STEP_LOG" | grep -E "Throughput|Duration|Busy|Issue|Stall|Warp Cycles|Registers|Occupancy|Bank|Hit Rate|Elapsed|Eligible|Active Warps|Shared Memory" | head -60
done
if [ -n "${NCU_PROFILE:-}${SASS:-}" ]; then
  for o in $(find $build -name 'gemm_mma.cu.o' -o -name 'gemm_tf32.cu.o' -o -name 'gemm_wgmma.cu.o'); do
    echo "SASS mix of $o: $(cuobjdump -sass "$o" | grep -c HGMMA) HGMMA, $(cuobjdump -sass "$o" | grep -cE 'LDL|STL') LDL/STL"
    cuobjdump -sass "$o" | grep -oE '^ +/\*[0-9a-f]+\*/ +[A-Z][A-Z0-9_]*' | awk '{print $2}' | sort | uniq -c |
      sort -rn | head -15
  done
fi

if [ -n "${SANITIZE:-}" ]; then
  step sanitize scripts/sanitize.sh $build
  echo "sanitize: rc=$? after $(( $(date +%s) - start )) s"
  cat "$STEP_LOG"
fi
if [ -z "${SKIP_TESTS:-}" ]; then
  KBENCH_REQUIRE_GPU=1 step tests ctest --test-dir $build -L "${GPU_TEST_LABEL:-gpu|cpu}" --output-on-failure -j1 \
    ${GPU_TEST_FILTER:+-R "$GPU_TEST_FILTER"}
  tests_rc=$?
  grep -E "tests passed|tests failed|\*\*\*Failed|Failed  |Exception" "$STEP_LOG" | head -30
  # What passing tests print (ctest keeps it only in its own log): the clusters resident at once.
  # (Session 24's grep of $build/Testing found none: search wherever ctest put its log.)
  find . -path ./.git -prune -o -name 'LastTest*.log' -print0 2>/dev/null |
    xargs -0 -r grep -hE "clusters of [0-9]+ resident" | sort -u
  echo "tests: rc=$tests_rc after $(( $(date +%s) - start )) s"
fi
for t in "${tables[@]}"; do grep -vE "^\[" "$t" | head -80; done
# PACK=1: the result files as one results.tar.gz (the device tool brings back at most 8 files;
# a session of several grids writes more).
if [ -n "${PACK:-}" ]; then
  tar czf "$OUT/results.tar.gz" -C "$OUT" results && rm -rf "$OUT/results" &&
    echo "packed: results.tar.gz $(du -h "$OUT/results.tar.gz" | cut -f1)"
fi
