# Which CUDA architectures kbench is built for. Included before project(), so that CMake's
# compiler check already uses the list.
#
#   not set, or "native"   the GPUs of this machine, asked of nvidia-smi (compute_cap), with
#                          Hopper as 90a: its own instructions (wgmma, setmaxnreg, TMA) exist only
#                          on the "a" target, and CMake's own "native" would give 90 and leave the
#                          wgmma kernels compiled to a trap. With no GPU visible: 90a (the H200),
#                          said in a message.
#   anything else          kept as given (the ci preset's 90a, "89;90a", "all-major", ...).
#
# Sets CMAKE_CUDA_ARCHITECTURES, and KBENCH_CUDA_ARCHITECTURES_FROM (a few words on where the list
# came from, which `kbench --version` prints).

# The compute capabilities nvidia-smi reports ("9.0", "8.9"), or nothing.
function(kbench_visible_compute_caps out)
  set(_caps "")
  find_program(KBENCH_NVIDIA_SMI nvidia-smi)
  if(KBENCH_NVIDIA_SMI)
    execute_process(COMMAND ${KBENCH_NVIDIA_SMI} --query-gpu=compute_cap --format=csv,noheader
                    OUTPUT_VARIABLE _out ERROR_QUIET RESULT_VARIABLE _rc TIMEOUT 20)
    if(_rc EQUAL 0)
      string(REGEX MATCHALL "[0-9]+\\.[0-9]+" _caps "${_out}")
      list(REMOVE_DUPLICATES _caps)
    endif()
  endif()
  set(${out} "${_caps}" PARENT_SCOPE)
endfunction()

# "9.0" -> "90a" (Hopper's own target), "8.9" -> "89", "12.0" -> "120".
function(kbench_architecture_of_cap cap out)
  string(REPLACE "." "" _arch "${cap}")
  if(_arch STREQUAL "90")
    set(_arch "90a")
  endif()
  set(${out} "${_arch}" PARENT_SCOPE)
endfunction()

set(_kbench_requested "")
if(DEFINED CMAKE_CUDA_ARCHITECTURES)
  set(_kbench_requested "${CMAKE_CUDA_ARCHITECTURES}")
elseif(DEFINED ENV{CUDAARCHS})
  set(_kbench_requested "$ENV{CUDAARCHS}")
endif()

if(DEFINED CACHE{KBENCH_CUDA_ARCHITECTURES_RESOLVED} AND
   "${_kbench_requested}" STREQUAL "${KBENCH_CUDA_ARCHITECTURES_RESOLVED}")
  # A re-configure of a build whose list this file resolved: keep the list and where it came from.
elseif(_kbench_requested STREQUAL "" OR _kbench_requested STREQUAL "native")
  kbench_visible_compute_caps(_kbench_caps)
  if(_kbench_caps)
    set(_kbench_archs "")
    foreach(_cap IN LISTS _kbench_caps)
      kbench_architecture_of_cap(${_cap} _arch)
      list(APPEND _kbench_archs ${_arch})
    endforeach()
    string(REPLACE ";" ", " _kbench_caps_text "${_kbench_caps}")
    set(KBENCH_CUDA_ARCHITECTURES_FROM "native: nvidia-smi shows compute capability ${_kbench_caps_text}")
  else()
    set(_kbench_archs 90a)
    set(KBENCH_CUDA_ARCHITECTURES_FROM "native, but no GPU visible: the H200's 90a")
    message(STATUS "kbench: no GPU visible to nvidia-smi, building for sm_90a; set "
                   "CMAKE_CUDA_ARCHITECTURES for another GPU (README, 'Builds for other GPUs')")
  endif()
  # FORCE: a cache entry of "native" from an earlier configure is replaced by what it meant.
  set(CMAKE_CUDA_ARCHITECTURES "${_kbench_archs}" CACHE STRING "CUDA architectures to build for" FORCE)
  set(KBENCH_CUDA_ARCHITECTURES_RESOLVED "${_kbench_archs}" CACHE INTERNAL "")
  set(KBENCH_CUDA_ARCHITECTURES_FROM "${KBENCH_CUDA_ARCHITECTURES_FROM}" CACHE INTERNAL "")
else()
  unset(KBENCH_CUDA_ARCHITECTURES_RESOLVED CACHE)
  set(KBENCH_CUDA_ARCHITECTURES_FROM "CMAKE_CUDA_ARCHITECTURES as given" CACHE INTERNAL "")
endif()
message(STATUS "kbench: CUDA architectures ${CMAKE_CUDA_ARCHITECTURES} (${KBENCH_CUDA_ARCHITECTURES_FROM})")
