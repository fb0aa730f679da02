#!/usr/bin/env bash
# scratch: build, GPU suite, then the graph floor per config (before the visits)
cd "$(dirname "$0")/.."
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a >/dev/null && cmake --build build-gpu >/dev/null || { echo BUILD FAILED; exit 1; }
KBENCH_REQUIRE_GPU=1 ctest --test-dir build-gpu -L 'gpu|cpu' -j1 > $OUT/tests.log 2>&1; echo "tests rc=$?"; grep -E "tests passed|tests failed|Failed " $OUT/tests.log | head
floor() {
  local n=$1 cfg=$2 t0=$(date +%s.%N)
  ./build-gpu/kbench run --config $cfg --out /tmp/fl_$n >/tmp/fl_$n.log 2>&1 || { echo "$n FAILED"; tail -3 /tmp/fl_$n.log; return; }
  python3 -c "
import json,glob; d=json.load(open(sorted(glob.glob('/tmp/fl_$n/**/*.json',recursive=True))[-1])); e=d['extra']
f=lambda L:[t['timer']+' '+str(round(t['median_us'],3)) for t in L]
print('$n', f(e['timer_floor_before']), f(e['timer_floor']), len(d['records']),'recs', round($(date +%s.%N)-$t0,1),'s')"
}
floor rows_few configs/rows_few.json
floor few tune/few.json
for n in all rs sm bw base looped split resident; do floor $n tune/bisect/$n.json; done
floor rows_few2 configs/rows_few.json
