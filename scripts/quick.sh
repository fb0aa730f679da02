#!/usr/bin/env bash
# Sets up, builds for the GPU and runs the quick default sweep (configs/quick.json). Without a
# CUDA device kbench stops with one line saying so (exit 2).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh gpu
./build-gpu/kbench run --config configs/quick.json "$@"
