# The package-only install, as the README gives it: the `install-sdk` presets, with nothing on
# PATH but the system's folders (no nvcc), and then proof from the build's cache that no
# test library (doctest, Google Benchmark) and no CUDA compiler was looked for.
#   cmake -DSOURCE=<repo> -DBINARY=<folder> -DPREFIX=<prefix> -DCXX=<compiler> -P package_only.cmake
foreach(_v SOURCE BINARY PREFIX CXX)
  if(NOT DEFINED ${_v})
    message(FATAL_ERROR "package_only.cmake: ${_v} not given")
  endif()
endforeach()
file(REMOVE_RECURSE ${BINARY} ${PREFIX})

function(run)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env PATH=/usr/bin:/bin ${ARGN}
    WORKING_DIRECTORY ${SOURCE} RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
  message("${_out}")
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "package_only: failed (${_rc}): ${ARGN}")
  endif()
endfunction()

set(_extra "")
if(DEFINED CUDA_ROOT AND NOT CUDA_ROOT STREQUAL "")
  list(APPEND _extra -DCUDAToolkit_ROOT=${CUDA_ROOT})
endif()
run(${CMAKE_COMMAND} --preset install-sdk -B ${BINARY} -DCMAKE_INSTALL_PREFIX=${PREFIX}
    -DCMAKE_CXX_COMPILER=${CXX} ${_extra})
run(${CMAKE_COMMAND} --build ${BINARY} --target install)

file(STRINGS ${BINARY}/CMakeCache.txt _looked_for
     REGEX "^(doctest_DIR|NVSCOPE_DOCTEST_INCLUDE|benchmark_DIR|CMAKE_CUDA_COMPILER)[:=]")
if(_looked_for)
  message(FATAL_ERROR "package_only: the package-only build looked for ${_looked_for}")
endif()
foreach(_f include/nvscope/nvscope.hpp include/nvscope/collector.hpp
           share/cmake/nvscope/nvscopeConfig.cmake share/pkgconfig/nvscope.pc share/doc/nvscope/run.md)
  if(NOT EXISTS ${PREFIX}/${_f})
    message(FATAL_ERROR "package_only: ${_f} was not installed")
  endif()
endforeach()
file(GLOB_RECURSE _installed RELATIVE ${PREFIX} ${PREFIX}/*)
list(LENGTH _installed _n)
message("package-only install ok: ${_n} files, no doctest, Google Benchmark or nvcc")
