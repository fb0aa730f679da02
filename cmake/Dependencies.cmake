# Every dependency comes from the distribution's packages (scripts/setup.sh installs them).
# Debian 12 and Ubuntu 24.04 ship different versions, and not all of them ship CMake package
# files, so each lookup falls back to finding the header.

find_package(CUDAToolkit REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(spdlog REQUIRED)
find_package(Eigen3 3.3 REQUIRED NO_MODULE)
find_package(OpenSSL REQUIRED COMPONENTS Crypto)

# CLI11: header-only; Debian's 2.1 package has a CMake config, some builds do not.
find_package(CLI11 CONFIG QUIET)
add_library(kbench_cli11 INTERFACE)
if(TARGET CLI11::CLI11)
  target_link_libraries(kbench_cli11 INTERFACE CLI11::CLI11)
else()
  find_path(KBENCH_CLI11_INCLUDE CLI/CLI.hpp REQUIRED)
  target_include_directories(kbench_cli11 INTERFACE ${KBENCH_CLI11_INCLUDE})
endif()
add_library(kbench::cli11 ALIAS kbench_cli11)

# valijson (JSON Schema validation, src/core/json_schema.cpp): header-only, Debian's
# libvalijson-dev. The GPU machine has no such package and no network, so .deps/include (git-
# ignored) is searched after the system: `scripts/gpu_session.sh --prepare` copies the headers
# there from a machine that has them, and the device call carries .deps.
find_path(KBENCH_VALIJSON_INCLUDE valijson/validator.hpp PATHS ${PROJECT_SOURCE_DIR}/.deps/include)
if(NOT KBENCH_VALIJSON_INCLUDE)
  message(FATAL_ERROR "valijson not found: install libvalijson-dev (scripts/setup.sh), or, on a machine "
                      "without it, run scripts/gpu_session.sh --prepare where it is installed and carry .deps")
endif()
add_library(kbench_valijson INTERFACE)
target_include_directories(kbench_valijson SYSTEM INTERFACE ${KBENCH_VALIJSON_INCLUDE})
add_library(kbench::valijson ALIAS kbench_valijson)

if(KBENCH_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
