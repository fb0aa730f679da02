# The Python module `kbench` (src/python/, docs/python.md), target kbench_python: built when
# Python's development headers and pybind11 are found, left out with a message otherwise (nothing
# else needs them). Included from the top-level CMakeLists.txt, not added as a subdirectory, so
# that the generated manifest and schema sources are rules of the same directory.
#
# pybind11, in this order: its CMake package (Debian's python3-pybind11 or pip's, found through
# `python -m pybind11 --cmakedir`), then its headers where PyTorch bundles them (the GPU machine's
# Python holds torch and no pybind11 package), then .deps/include.

find_package(Python 3.8 COMPONENTS Interpreter Development.Module QUIET)
if(NOT Python_FOUND)
  message(STATUS "kbench_python: left out (no Python development headers; apt-get install python3-dev)")
  return()
endif()
execute_process(COMMAND ${Python_EXECUTABLE} -m pybind11 --cmakedir
  OUTPUT_VARIABLE _kbench_pybind11_dir OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
find_package(pybind11 2.10 CONFIG QUIET HINTS ${_kbench_pybind11_dir})
if(NOT TARGET pybind11::headers)
  find_path(KBENCH_PYBIND11_INCLUDE pybind11/pybind11.h
    PATHS ${Python_SITEARCH}/torch/include ${Python_SITELIB}/torch/include ${PROJECT_SOURCE_DIR}/.deps/include)
  if(NOT KBENCH_PYBIND11_INCLUDE)
    message(STATUS "kbench_python: left out (no pybind11 for ${Python_EXECUTABLE}; apt-get install python3-pybind11)")
    return()
  endif()
  add_library(pybind11::headers INTERFACE IMPORTED)
  target_include_directories(pybind11::headers SYSTEM INTERFACE ${KBENCH_PYBIND11_INCLUDE})
endif()

# The harness, as position-independent code for a shared module: the layers below the registry
# (core, device, harness, record) and the generated manifest and schemas. kbench_lib itself stays
# as it is (compiled once, not -fPIC); these files compile a second time only for this target.
file(GLOB _kbench_python_core CONFIGURE_DEPENDS
  ${PROJECT_SOURCE_DIR}/src/core/*.cpp ${PROJECT_SOURCE_DIR}/src/device/*.cpp ${PROJECT_SOURCE_DIR}/src/device/*.cu
  ${PROJECT_SOURCE_DIR}/src/harness/*.cpp ${PROJECT_SOURCE_DIR}/src/harness/*.cu ${PROJECT_SOURCE_DIR}/src/record/*.cpp)
list(FILTER _kbench_python_core EXCLUDE REGEX "/src/record/manifest_tool\\.cpp$")
add_library(kbench_python_core STATIC ${_kbench_python_core} ${KBENCH_MANIFEST_CPP} ${KBENCH_SCHEMAS_CPP})
# Hidden, and bound inside the module (below): under PyTorch, whose libraries bring their own
# fmt, spdlog-like and CUDA symbols and are loaded RTLD_GLOBAL, a default-visibility symbol of
# this copy would be resolved to theirs at its first call (the GPU test aborted in free() so).
set_target_properties(kbench_python_core PROPERTIES POSITION_INDEPENDENT_CODE ON CUDA_SEPARABLE_COMPILATION OFF
  EXCLUDE_FROM_ALL ON CXX_VISIBILITY_PRESET hidden CUDA_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
target_include_directories(kbench_python_core PUBLIC ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR})
target_link_libraries(kbench_python_core PUBLIC ${KBENCH_LIB_LINK})
target_compile_options(kbench_python_core PUBLIC ${KBENCH_LIB_OPTIONS})
target_compile_definitions(kbench_python_core PUBLIC KBENCH_SOURCE_DIR="${PROJECT_SOURCE_DIR}")

file(GLOB _kbench_python_sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/python/*.cpp)
Python_add_library(kbench_python MODULE WITH_SOABI ${_kbench_python_sources})
set_target_properties(kbench_python PROPERTIES OUTPUT_NAME kbench CXX_VISIBILITY_PRESET hidden
  VISIBILITY_INLINES_HIDDEN ON)
target_link_libraries(kbench_python PRIVATE kbench_python_core pybind11::headers)
target_link_options(kbench_python PRIVATE -Wl,-Bsymbolic -Wl,--exclude-libs,ALL)
set(KBENCH_PYTHON_MODULE ON)
