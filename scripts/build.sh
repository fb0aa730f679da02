#!/usr/bin/env bash
# Sets up (scripts/setup.sh) and builds kbench with a CMake preset: `gpu` (build-gpu/, for
# running) or `ci` (build-ci/, every CUDA file compiled on a machine without a GPU). The steps
# quick.sh and test.sh share.
#   scripts/build.sh gpu|ci
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${1:?usage: scripts/build.sh gpu|ci}
scripts/setup.sh
export PATH="/usr/local/cuda/bin:$PATH"
cmake --preset "$preset"
cmake --build --preset "$preset"
