#!/usr/bin/env bash
# Installs what kbench needs to build on Debian or Ubuntu: the libraries from the
# distribution's packages, and a CMake new enough to compile CUDA as C++20 (Debian 12's 3.25
# is not) from PyPI when the system one is too old. The CUDA Toolkit (nvcc) must already be
# installed; without a GPU, kbench still builds and its cpu tests run.
set -euo pipefail

need_apt=()
for pkg in libcli11-dev nlohmann-json3-dev libspdlog-dev libeigen3-dev libgtest-dev libssl-dev ninja-build python3; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need_apt+=("$pkg")
done
if ((${#need_apt[@]})); then
  echo "setup: installing ${need_apt[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

# valijson (JSON Schema checks, header-only) is looked for as a header, not as a package: where no
# package can be installed (the GPU machine), .deps/include holds a copy that
# `scripts/gpu_session.sh --prepare` made from this machine's (cmake/Dependencies.cmake).
root=$(cd "$(dirname "$0")/.." && pwd)
if [ ! -f /usr/include/valijson/validator.hpp ] && [ ! -f "$root/.deps/include/valijson/validator.hpp" ]; then
  echo "setup: installing libvalijson-dev"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq libvalijson-dev >/dev/null
fi

# Python's headers and pybind11, for the Python module (src/python/kbench_python.cmake) and its
# CPU test: looked for as headers, for the python3 on PATH (the one CMake finds), and installed from
# the distribution's packages only when missing. Without them kbench builds, less the module.
python_headers_ok() {
  python3 -c 'import os, sys, sysconfig; sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))'
}
pybind11_ok() { [ -f /usr/include/pybind11/pybind11.h ] || python3 -m pybind11 --includes >/dev/null 2>&1; }
need_python=()
python_headers_ok || need_python+=(python3-dev)
pybind11_ok || need_python+=(python3-pybind11)
if ((${#need_python[@]})); then
  echo "setup: installing ${need_python[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_python[@]}" >/dev/null
fi

cmake_ok() {
  command -v cmake >/dev/null && python3 - "$(cmake --version | head -1 | awk '{print $3}')" <<'PY'
import sys
major, minor = (int(x) for x in sys.argv[1].split(".")[:2])
sys.exit(0 if (major, minor) >= (3, 28) else 1)
PY
}
if ! cmake_ok; then
  echo "setup: installing CMake >= 3.28 from PyPI"
  python3 -m pip install -q --upgrade "cmake>=3.28" 2>&1 | grep -v "Running pip as the 'root' user" || true
  # pip's console scripts may land outside PATH (pyenv needs a rehash), so link the binaries
  # into a folder that is on it, ahead of the system's.
  bin_dir=$(python3 -c 'import cmake; print(cmake.CMAKE_BIN_DIR)')
  link_dir=/usr/local/bin
  [ -w "$link_dir" ] || { link_dir="$HOME/.local/bin"; mkdir -p "$link_dir"; }
  for tool in cmake ctest cpack; do ln -sf "$bin_dir/$tool" "$link_dir/$tool"; done
  hash -r
fi
cmake_ok || { echo "setup: CMake >= 3.28 is still not first on PATH (see $HOME/.local/bin)" >&2; exit 1; }

# clang with libFuzzer for scripts/fuzz.sh (the fuzzer runtime is a separate package).
fuzzer_ok() {
  command -v clang++ >/dev/null &&
    echo 'extern "C" int LLVMFuzzerTestOneInput(const char*, unsigned long) { return 0; }' |
      clang++ -x c++ -fsanitize=fuzzer - -o /tmp/kbench_fuzzer_probe 2>/dev/null
}
if ! fuzzer_ok; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq clang >/dev/null
  major=$(clang++ --version | sed -n 's/.*clang version \([0-9]*\).*/\1/p' | head -1)
  fuzzer_ok || DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "libclang-rt-$major-dev" >/dev/null
  fuzzer_ok || { echo "setup: clang++ -fsanitize=fuzzer does not link (scripts/fuzz.sh needs it)" >&2; exit 1; }
fi

command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ] ||
  { echo "setup: nvcc not found: install the CUDA Toolkit first" >&2; exit 1; }
echo "setup: ok ($(cmake --version | head -1))"
