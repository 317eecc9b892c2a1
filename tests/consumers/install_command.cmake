# The documented install of the command (README, "Install"): the `install` presets into a
# prefix of the test's own, then proof that bin/nvscope, lib/libnvscope_inject.so, the man
# page, the bash completion and the guides are in place and that the installed command runs
# (its --version, and a program under `nvscope run`, which on a machine without a GPU still
# starts and exits with the program's status). The build folder is kept: the Python package's
# test builds from it (python.package_from_source).
#   cmake -DSOURCE=<repo> -DBINARY=<folder> -DPREFIX=<prefix> -DCXX=<compiler> [-DCUDA_ROOT=...] -P install_command.cmake
foreach(_v SOURCE BINARY PREFIX CXX)
  if(NOT DEFINED ${_v})
    message(FATAL_ERROR "install_command.cmake: ${_v} not given")
  endif()
endforeach()
file(REMOVE_RECURSE ${PREFIX})

function(run)
  execute_process(COMMAND ${ARGN} WORKING_DIRECTORY ${SOURCE} RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
  set(run_output "${_out}" PARENT_SCOPE)
  set(run_status "${_rc}" PARENT_SCOPE)
endfunction()

set(_extra "")
if(DEFINED CUDA_ROOT AND NOT CUDA_ROOT STREQUAL "")
  list(APPEND _extra -DCUDAToolkit_ROOT=${CUDA_ROOT})
endif()
run(${CMAKE_COMMAND} --preset install -B ${BINARY} -DCMAKE_INSTALL_PREFIX=${PREFIX} -DCMAKE_CXX_COMPILER=${CXX} ${_extra})
if(NOT run_status EQUAL 0)
  message(FATAL_ERROR "install_command: the install preset did not configure:\n${run_output}")
endif()
run(${CMAKE_COMMAND} --build ${BINARY} --target install)
if(NOT run_status EQUAL 0)
  message(FATAL_ERROR "install_command: the install preset did not build and install:\n${run_output}")
endif()

include(GNUInstallDirs)
foreach(_f bin/nvscope ${CMAKE_INSTALL_LIBDIR}/libnvscope_inject.so share/man/man1/nvscope.1
           share/bash-completion/completions/nvscope share/doc/nvscope/run.md share/doc/nvscope/output.md
           share/nvscope/schemas/summary.schema.json include/nvscope/nvscope.hpp share/cmake/nvscope/nvscopeConfig.cmake)
  if(NOT EXISTS ${PREFIX}/${_f})
    message(FATAL_ERROR "install_command: ${_f} was not installed in ${PREFIX}")
  endif()
endforeach()

run(${PREFIX}/bin/nvscope --version)
if(NOT run_status EQUAL 0 OR NOT run_output MATCHES "nvscope [0-9]+\\.[0-9]+\\.[0-9]+")
  message(FATAL_ERROR "install_command: the installed nvscope --version said (${run_status}): ${run_output}")
endif()
string(STRIP "${run_output}" _version)
run(${PREFIX}/bin/nvscope run -- sh -c "exit 3")
if(NOT run_status EQUAL 3)
  message(FATAL_ERROR "install_command: nvscope run -- sh -c 'exit 3' exited ${run_status}, not 3: ${run_output}")
endif()
message("command install ok: ${_version}, bin/nvscope and ${CMAKE_INSTALL_LIBDIR}/libnvscope_inject.so in place")
