#!/usr/bin/env bash
# libFuzzer over the readers of untrusted input, with AddressSanitizer and UBSan: the shape
# parser, the sweep config reader and the result reader (tests/fuzz/fuzz_*.cpp), each run for
# a bounded time from its committed seed corpus (tests/fuzz/corpus/<target>/). Any crash,
# leak, uncaught exception or undefined behaviour fails the run; the input that caused it is
# left in build-fuzz/<target>/ (crash-*, leak-*) to be added to the corpus once fixed.
#   scripts/fuzz.sh [seconds per target, default 60]
# FUZZ_SEED (default 1) and FUZZ_RUNS (default 400000 inputs, the time bound cuts it short on
# a slow machine) fix libFuzzer's sequence of inputs, so that a CI run repeats the last one, or
# a prefix of it, rather than failing on a new random find. Another seed explores further.
# Needs clang++ with libFuzzer (Debian: clang and libclang-rt-N-dev; scripts/setup.sh).
# The targets are built here from the few host sources they need, not through CMake: they
# must be compiled by clang with -fsanitize=fuzzer, which the CUDA build does not use. The
# readers check their input against the JSON Schemas compiled in, written here by the build's
# own rule (cmake/Schemas.cmake), and valijson comes from /usr/include or .deps/include.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
cxx=${FUZZ_CXX:-clang++}
out=build-fuzz
mkdir -p "$out"
cuda=${CUDA_HOME:-/usr/local/cuda}
# core/errors.cpp names CUDA's error strings: the CUDA runtime is linked, never called.
flags=(-std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -Isrc -I.
       -I"$cuda/include" -isystem .deps/include)
libs=(-lcrypto -L"$cuda/lib64" -lcudart -Wl,-rpath,"$cuda/lib64")
core=(src/core/errors.cpp src/core/shape.cpp)
cmake -DSOURCE_DIR="$PWD" -DOUT="$out/schemas.cpp" -P cmake/Schemas.cmake
schema=(src/core/json_schema.cpp src/core/text.cpp "$out/schemas.cpp")

declare -A sources=(
  [shape]="${core[*]}"
  [sweep_config]="${core[*]} ${schema[*]} src/core/dtype.cpp experiments/sweep_config.cpp"
  [result]="${core[*]} ${schema[*]} src/core/atomic_file.cpp src/core/subprocess.cpp src/record/sha256.cpp src/record/result.cpp"
)
status=0
for target in shape sweep_config result; do
  # shellcheck disable=SC2086  # the source lists are space-separated on purpose
  "$cxx" "${flags[@]}" tests/fuzz/fuzz_$target.cpp ${sources[$target]} "${libs[@]}" -o "$out/fuzz_$target"
  mkdir -p "$out/$target/corpus"
  cp -n tests/fuzz/corpus/$target/* "$out/$target/corpus/"
  echo "fuzz $target: ${seconds}s"
  if ! (cd "$out/$target" && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
        "../fuzz_$target" -runs="${FUZZ_RUNS:-400000}" -max_total_time="$seconds" -seed="${FUZZ_SEED:-1}" \
        -max_len=65536 -print_final_stats=1 corpus \
        >log 2>&1); then
    echo "fuzz $target: FAILED (build-fuzz/$target/log)"; tail -30 "$out/$target/log"; status=1
  else
    grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$out/$target/log" | tr '\n' ' '; echo
  fi
done
exit $status
