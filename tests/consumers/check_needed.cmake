# Fails when FILE has a DT_NEEDED entry matching FORBIDDEN, or none matching EXPECTED (the
# check's own sanity: readelf must show something).
#   cmake -DFILE=<binary> -DFORBIDDEN=libcupti -DEXPECTED=libcudart -P check_needed.cmake
find_program(READELF_EXE NAMES readelf llvm-readelf REQUIRED)
execute_process(COMMAND ${READELF_EXE} -d ${FILE} OUTPUT_VARIABLE _dyn RESULT_VARIABLE _rc)
string(REGEX MATCHALL "NEEDED[^\n]*" _needed "${_dyn}")
message("${FILE}: ${_needed}")
if(NOT _rc EQUAL 0 OR NOT _needed MATCHES "${EXPECTED}")
  message(FATAL_ERROR "check_needed: no ${EXPECTED} among the needed libraries; the check sees nothing")
endif()
if(_needed MATCHES "${FORBIDDEN}")
  message(FATAL_ERROR "check_needed: ${FILE} needs ${FORBIDDEN} at load time")
endif()
message("check_needed ok: no ${FORBIDDEN}")
