# The build manifest: SHA-256 of every source file that goes into kbench, compiled into the
# binary so that each result can name the exact code it measured (src/record/manifest.hpp).
#
# The file list is globbed at configure time (CONFIGURE_DEPENDS re-globs on every build, so a
# new or deleted file re-runs CMake) and written to a file rather than a command line, which
# would grow past the shell's limit. The generated .cpp depends on every listed file, so any
# edit re-hashes before kbench is linked. Sets KBENCH_MANIFEST_CPP for kbench_lib.

file(GLOB_RECURSE _kbench_manifest_abs CONFIGURE_DEPENDS
  ${PROJECT_SOURCE_DIR}/src/*
  ${PROJECT_SOURCE_DIR}/kernels/*
  ${PROJECT_SOURCE_DIR}/experiments/*
  ${PROJECT_SOURCE_DIR}/cmake/*.cmake)
foreach(_top CMakeLists.txt CMakePresets.json tests/CMakeLists.txt)
  if(EXISTS ${PROJECT_SOURCE_DIR}/${_top})
    list(APPEND _kbench_manifest_abs ${PROJECT_SOURCE_DIR}/${_top})
  endif()
endforeach()
# Hidden files (editor swap files) are not sources; manifest.cpp skips them the same way.
list(FILTER _kbench_manifest_abs EXCLUDE REGEX "/\\.[^/]*(/|$)")
list(SORT _kbench_manifest_abs)

set(_kbench_manifest_list "")
foreach(_file IN LISTS _kbench_manifest_abs)
  file(RELATIVE_PATH _relative ${PROJECT_SOURCE_DIR} ${_file})
  string(APPEND _kbench_manifest_list "${_relative}\n")
endforeach()
set(_kbench_generated ${CMAKE_BINARY_DIR}/generated)
set(_kbench_list_file ${_kbench_generated}/manifest_files.txt)
# configure_file(COPYONLY) only touches the list when its content changes, so a re-configure
# alone does not re-hash and rebuild.
file(WRITE ${_kbench_list_file}.new "${_kbench_manifest_list}")
configure_file(${_kbench_list_file}.new ${_kbench_list_file} COPYONLY)

add_executable(kbench_manifest_tool
  ${PROJECT_SOURCE_DIR}/src/record/manifest_tool.cpp
  ${PROJECT_SOURCE_DIR}/src/record/sha256.cpp)
target_include_directories(kbench_manifest_tool PRIVATE ${PROJECT_SOURCE_DIR}/src)
# sha256.cpp throws kbench::UsageError, whose header includes the CUDA runtime API header.
target_link_libraries(kbench_manifest_tool PRIVATE OpenSSL::Crypto CUDA::toolkit)

set(KBENCH_MANIFEST_CPP ${_kbench_generated}/manifest_data.cpp)
add_custom_command(
  OUTPUT ${KBENCH_MANIFEST_CPP}
  COMMAND kbench_manifest_tool ${PROJECT_SOURCE_DIR} ${_kbench_list_file} ${KBENCH_MANIFEST_CPP}
  DEPENDS kbench_manifest_tool ${_kbench_list_file} ${_kbench_manifest_abs}
  COMMENT "Hashing kbench sources into the build manifest"
  VERBATIM)
