#!/usr/bin/env bash
cd "$(dirname "$0")/.."
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a >/dev/null && cmake --build build-gpu >/dev/null || { echo BUILD FAILED; exit 1; }
for n in ssplit all base; do echo "== $n"; ./build-gpu/kbench run --config tune/bisect/$n.json --no-roofline --out /tmp/p_$n 2>&1 | grep PROBE; done
