# A Makefile project built against the installed package through pkg-config, with g++ and
# clang++. Each binary is linked with --no-as-needed (Debian's clang++ does not default to
# --as-needed) and must carry no DT_NEEDED on libcupti; then it runs where libcupti cannot be
# found (NVSCOPE_CUPTI_PATH names a missing file; only libcudart is on LD_LIBRARY_PATH) and
# must start, say that libcupti did not load, and finish.
#   cmake -DSOURCE=<tests/consumers/makefile> -DBINARY=<folder> -DPREFIX=<install prefix>
#         -DCOMPILERS=<g++;clang++> -P makefile_consumer.cmake
find_program(MAKE_EXE NAMES make gmake REQUIRED)
find_program(PKG_CONFIG_EXE pkg-config REQUIRED)
find_program(READELF_EXE NAMES readelf llvm-readelf REQUIRED)
file(REMOVE_RECURSE ${BINARY})
set(ENV{PKG_CONFIG_PATH} ${PREFIX}/share/pkgconfig)
set(ENV{PKG_CONFIG} ${PKG_CONFIG_EXE})

execute_process(COMMAND ${PKG_CONFIG_EXE} --variable=cuda_libdir nvscope-capture
  OUTPUT_VARIABLE _cuda_libdir OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0 OR NOT _cuda_libdir)
  message(FATAL_ERROR "makefile_consumer: pkg-config finds no nvscope-capture under ${PREFIX}")
endif()
file(GLOB _cudart ${_cuda_libdir}/libcudart.so.[0-9]*)
file(MAKE_DIRECTORY ${BINARY}/lib)
foreach(_lib IN LISTS _cudart)
  file(COPY ${_lib} DESTINATION ${BINARY}/lib)
endforeach()

set(_checked 0)
foreach(_cxx IN LISTS COMPILERS)
  get_filename_component(_name ${_cxx} NAME)
  set(_out ${BINARY}/${_name})
  file(MAKE_DIRECTORY ${_out})
  execute_process(COMMAND ${MAKE_EXE} -f ${SOURCE}/Makefile CXX=${_cxx} O=${_out}
                          LDFLAGS=-Wl,--no-as-needed
    RESULT_VARIABLE _rc OUTPUT_VARIABLE _log ERROR_VARIABLE _log)
  message("${_log}")
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "makefile_consumer: make with ${_name} failed")
  endif()
  foreach(_prog consumer consumer_plain)
    execute_process(COMMAND ${READELF_EXE} -d ${_out}/${_prog} OUTPUT_VARIABLE _dyn)
    string(REGEX MATCHALL "NEEDED[^\n]*" _needed "${_dyn}")
    message("${_name} ${_prog}: ${_needed}")
    if(NOT _needed MATCHES "libcudart")
      message(FATAL_ERROR "makefile_consumer: ${_name} ${_prog}: readelf shows no libcudart either; the check sees nothing")
    endif()
    if(_needed MATCHES "libcupti")
      message(FATAL_ERROR "makefile_consumer: ${_name} ${_prog} needs libcupti at load time")
    endif()
    execute_process(COMMAND ${CMAKE_COMMAND} -E env --unset=CUDA_HOME --unset=CUDA_PATH
                            LD_LIBRARY_PATH=${BINARY}/lib NVSCOPE_CUPTI_PATH=/nonexistent/libcupti.so
                            ${_out}/${_prog}
      RESULT_VARIABLE _rc OUTPUT_VARIABLE _run ERROR_VARIABLE _err)
    message("${_name} ${_prog} ran (${_rc}):\n${_run}${_err}")
    if(NOT _rc EQUAL 0 OR NOT _run MATCHES "collector: libcupti not loaded, start refused"
       OR NOT _run MATCHES "consumer ok")
      message(FATAL_ERROR "makefile_consumer: ${_name} ${_prog} did not start and refuse cleanly")
    endif()
    string(REGEX MATCHALL "[^\n]+" _lines "${_err}")
    list(LENGTH _lines _n)
    if(NOT _n EQUAL 1 OR NOT _err MATCHES "^nvscope: collector: ")
      message(FATAL_ERROR "makefile_consumer: ${_name} ${_prog}: the refusal is not one 'nvscope: ' line")
    endif()
    math(EXPR _checked "${_checked} + 1")
  endforeach()
endforeach()
message("makefile consumer ok: ${_checked} binaries, none needs libcupti, each refused in one line")
