#!/usr/bin/env bash
cd "$(dirname "$0")/.."
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a >/dev/null && cmake --build build-gpu >/dev/null || { echo BUILD FAILED; exit 1; }
show() { awk '/^GF/{c=($2>0.6)?"H":"L"; if (c!=last) print prev "\n" $0; last=c; prev=$0} /PROBE/{print} END{print prev}' $1 | grep -v '^$' | head -20; }
echo "== few idle 20"; KB_IDLE_S=20 ./build-gpu/kbench run --config tune/few.json --no-roofline --out /tmp/r1 2>&1 | grep -E "^GF|PROBE" > /tmp/r1.txt; show /tmp/r1.txt
echo "== ssplit"; ./build-gpu/kbench run --config tune/bisect/ssplit.json --no-roofline --out /tmp/r2 2>&1 | grep -E "^GF|PROBE" > /tmp/r2.txt; show /tmp/r2.txt
