#!/usr/bin/env bash
# Makes sure kbench can be built here: checks for the tools and headers it needs (not for package
# names: a ninja from pip, a CMake from PyPI or headers under /usr/local count as present) and
# installs only what is missing, from the distribution's packages (Debian or Ubuntu) and CMake
# >= 3.28 from PyPI. With everything present it touches nothing and needs no network. The CUDA
# Toolkit (nvcc) must already be installed; without a GPU, kbench still builds and its cpu
# tests run.
#   scripts/setup.sh           check, install what is missing, check again
#   scripts/setup.sh --check   only check: one line per need, present or missing; exit 1 if any
#                              is missing; installs nothing
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
check_only=0
case "${1:-}" in
  --check) check_only=1 ;;
  "") ;;
  *) echo "setup: unknown argument '$1' (use --check or nothing)" >&2; exit 2 ;;
esac
export PATH="$PATH:/usr/local/cuda/bin"

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
  command -v cmake >/dev/null || return 1
  local v
  v=$(cmake --version 2>/dev/null | head -1 | awk '{print $3}')
  [ -n "$v" ] && [ "$(printf '%s\n3.28\n' "$v" | sort -V | head -1)" = 3.28 ]
}
# A header as the compiler finds it (its own search path, CPATH, and .deps/include, where
# `scripts/gpu_session.sh --prepare` copies valijson for a machine without its package);
# without a compiler, the usual folders.
header_ok() {
  if command -v g++ >/dev/null; then
    echo "#include <$1>" | g++ -x c++ -std=c++20 -E -I "$root/.deps/include" -I /usr/include/eigen3 - -o /dev/null 2>/dev/null
  else
    local d
    for d in /usr/include /usr/local/include /usr/include/eigen3 "$root/.deps/include"; do [ -f "$d/$1" ] && return 0; done
    return 1
  fi
}
# clang with libFuzzer, for scripts/fuzz.sh (the fuzzer runtime is a separate package).
fuzzer_ok() {
  command -v clang++ >/dev/null &&
    echo 'extern "C" int LLVMFuzzerTestOneInput(const char*, unsigned long) { return 0; }' |
      clang++ -x c++ -fsanitize=fuzzer - -o "${TMPDIR:-/tmp}/kbench_fuzzer_probe.$$" 2>/dev/null &&
    rm -f "${TMPDIR:-/tmp}/kbench_fuzzer_probe.$$"
}

# Each need: its name, the check, and the Debian package that provides it ("pip" for CMake).
needs=(
  "cmake>=3.28|cmake_ok|pip"
  "ninja|command -v ninja|ninja-build"
  "g++|command -v g++|g++"
  "python3|command -v python3|python3"
  "nvcc|command -v nvcc|cuda"
  "CLI11 (CLI/CLI.hpp)|header_ok CLI/CLI.hpp|libcli11-dev"
  "nlohmann/json (nlohmann/json.hpp)|header_ok nlohmann/json.hpp|nlohmann-json3-dev"
  "valijson (valijson/validator.hpp)|header_ok valijson/validator.hpp|libvalijson-dev"
  "spdlog (spdlog/spdlog.h)|header_ok spdlog/spdlog.h|libspdlog-dev"
  "Eigen (Eigen/Core)|header_ok Eigen/Core|libeigen3-dev"
  "GoogleTest (gtest/gtest.h)|header_ok gtest/gtest.h|libgtest-dev"
  "OpenSSL (openssl/sha.h)|header_ok openssl/sha.h|libssl-dev"
  "clang++ -fsanitize=fuzzer|fuzzer_ok|clang"
)

# Prints one line per need; sets `missing` to the packages of those missing.
check_all() {
  missing=()
  local entry name test pkg
  for entry in "${needs[@]}"; do
    IFS='|' read -r name test pkg <<<"$entry"
    if eval "$test" >/dev/null 2>&1; then
      echo "setup: present  $name"
    else
      echo "setup: missing  $name (${pkg})"
      missing+=("$pkg")
    fi
  done
}

check_all
if ((${#missing[@]} == 0)); then
  echo "setup: ok ($(cmake --version | head -1))"
  exit 0
fi
((check_only)) && exit 1

apt_packages=()
for pkg in "${missing[@]}"; do
  case "$pkg" in
    cuda) echo "setup: nvcc not found: install the CUDA Toolkit first" >&2; exit 1 ;;
    pip) ;;
    *) apt_packages+=("$pkg") ;;
  esac
done
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
if ((${#apt_packages[@]})); then
  command -v apt-get >/dev/null ||
    { echo "setup: missing ${apt_packages[*]} and there is no apt-get to install them" >&2; exit 1; }
  echo "setup: installing ${apt_packages[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${apt_packages[@]}" >/dev/null
  # The fuzzer runtime comes apart from clang on some releases.
  if [[ " ${apt_packages[*]} " == *" clang "* ]] && ! fuzzer_ok; then
    major=$(clang++ --version | sed -n 's/.*clang version \([0-9]*\).*/\1/p' | head -1)
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "libclang-rt-$major-dev" >/dev/null
  fi
fi
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

check_all
if ((${#missing[@]})); then
  echo "setup: still missing after installing: ${missing[*]} (a CMake from pip may be in $HOME/.local/bin, off PATH)" >&2
  exit 1
fi
echo "setup: ok ($(cmake --version | head -1))"
