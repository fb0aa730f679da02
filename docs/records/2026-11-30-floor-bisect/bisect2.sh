#!/usr/bin/env bash
# scratch: the graph floor per config, second round (softmax split)
cd "$(dirname "$0")/.."
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a >/dev/null && cmake --build build-gpu >/dev/null || { echo BUILD FAILED; exit 1; }
floor() {
  local n=$1 cfg=$2 t0=$(date +%s.%N)
  ./build-gpu/kbench run --config $cfg --out /tmp/fl_$n >/tmp/fl_$n.log 2>&1 || { echo "$n FAILED"; tail -3 /tmp/fl_$n.log; return; }
  python3 -c "
import json,glob; d=json.load(open(sorted(glob.glob('/tmp/fl_$n/**/*.json',recursive=True))[-1])); e=d['extra']
f=lambda L:[t['timer']+' '+str(round(t['median_us'],3)) for t in L]
g=[(r['dtype'][:2],r['shape'][0],r['variant'],r['launches_per_sample'],round(r['median_us'],2)) for r in d['records'] if r['timer']=='graph']
print('$n', f(e['timer_floor_before']), f(e['timer_floor']), len(d['records']),'recs', round($(date +%s.%N)-$t0,1),'s', g[:4])"
}
floor sm tune/bisect/sm.json
for n in s128f32 s128f32_ev s128f32_gr s128all ssplit snosplit s4 s64; do floor $n tune/bisect/$n.json; done
CUDA_MODULE_LOADING=EAGER floor sm_eager tune/bisect/sm.json
CUDA_MODULE_LOADING=EAGER floor few_eager tune/few.json
