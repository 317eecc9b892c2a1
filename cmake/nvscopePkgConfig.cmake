# pkg-config files for builds outside CMake (Makefiles): nvscope (annotation), nvscope-capture
# (+ CUDA runtime) and nvscope-cupti (+ CUPTI's headers; libcupti is loaded at run time, so no
# -lcupti). Installed to <prefix>/share/pkgconfig (the package is header-only, so
# arch-independent) and relocatable: paths inside the prefix are taken from ${pcfiledir}.
# The CUDA folders found at configure time are variables a user may override:
#   pkg-config --define-variable=cuda_includedir=/opt/cuda/include --cflags nvscope-cupti

set(NVSCOPE_INSTALL_PKGCONFIGDIR ${CMAKE_INSTALL_DATADIR}/pkgconfig)
if(IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  set(_pc_includedir "${CMAKE_INSTALL_INCLUDEDIR}")
else()
  # share/pkgconfig -> the prefix is two folders up.
  set(_pc_includedir "\${pcfiledir}/../../${CMAKE_INSTALL_INCLUDEDIR}")
endif()

# NVTX3's headers: from the CUDA toolkit, or from the nvtx3 package.
set(_pc_nvtx_dirs "")
if(NVSCOPE_NVTX_PROVIDER STREQUAL "CUDAToolkit")
  set(_pc_nvtx_dirs ${CUDAToolkit_INCLUDE_DIRS})
elseif(TARGET nvtx3::nvtx3-cpp)
  get_target_property(_pc_nvtx_dirs nvtx3::nvtx3-cpp INTERFACE_INCLUDE_DIRECTORIES)
endif()
list(REMOVE_DUPLICATES _pc_nvtx_dirs)
# The first folder is a variable (cuda_includedir for the toolkit's, nvtx_includedir for the
# nvtx3 package's) that --define-variable moves; folders under it follow it.
set(_pc_nvtx_cflags "")
set(_pc_nvtx_vars "")
set(_pc_nvtx_var nvtx_includedir)
if(NVSCOPE_NVTX_PROVIDER STREQUAL "CUDAToolkit")
  set(_pc_nvtx_var cuda_includedir)
endif()
if(_pc_nvtx_dirs)
  list(GET _pc_nvtx_dirs 0 _pc_nvtx_root)
  set(_pc_nvtx_vars "${_pc_nvtx_var}=${_pc_nvtx_root}\n")
endif()
foreach(_dir IN LISTS _pc_nvtx_dirs)
  string(FIND "${_dir}" "${_pc_nvtx_root}" _at)
  if(_at EQUAL 0)
    string(REPLACE "${_pc_nvtx_root}" "\${${_pc_nvtx_var}}" _dir "${_dir}")
  endif()
  string(APPEND _pc_nvtx_cflags " -I${_dir}")
endforeach()

set(_pc_version ${PROJECT_VERSION})
set(_pc_files nvscope)
file(CONFIGURE OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/pkgconfig/nvscope.pc CONTENT [[
includedir=@_pc_includedir@
@_pc_nvtx_vars@
Name: nvscope
Description: nvscope annotation: NVTX ranges, marks and domains (header-only, C++17)
Version: @_pc_version@
Cflags: -I${includedir}@_pc_nvtx_cflags@
Libs: -ldl
]] @ONLY)

if(CUDAToolkit_FOUND)
  set(_pc_cuda_includedir "${CUDAToolkit_INCLUDE_DIRS}")
  list(GET _pc_cuda_includedir 0 _pc_cuda_includedir)
  set(_pc_cuda_libdir "${CUDAToolkit_LIBRARY_DIR}")
  set(_pc_cupti_includedir "${CUDAToolkit_CUPTI_INCLUDE_DIR}")
  if(NOT _pc_cupti_includedir)
    set(_pc_cupti_includedir "${_pc_cuda_includedir}")
  endif()
  # CUPTI's folder follows cuda_includedir where it lies in the same toolkit (include/ itself, or
  # extras/CUPTI/include beside it), so that --define-variable=cuda_includedir moves both.
  get_filename_component(_pc_cuda_root "${_pc_cuda_includedir}" DIRECTORY)
  if(_pc_cupti_includedir STREQUAL _pc_cuda_includedir)
    set(_pc_cupti_includedir "\${cuda_includedir}")
  else()
    string(FIND "${_pc_cupti_includedir}" "${_pc_cuda_root}/" _at)
    if(_at EQUAL 0)
      string(LENGTH "${_pc_cuda_root}/" _n)
      string(SUBSTRING "${_pc_cupti_includedir}" ${_n} -1 _rest)
      set(_pc_cupti_includedir "\${cuda_includedir}/../${_rest}")
    endif()
  endif()
  file(CONFIGURE OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/pkgconfig/nvscope-capture.pc CONTENT [[
cuda_includedir=@_pc_cuda_includedir@
cuda_libdir=@_pc_cuda_libdir@

Name: nvscope-capture
Description: nvscope capture control around cudaProfilerStart/Stop (+ the shared CUDA runtime)
Version: @_pc_version@
Requires: nvscope = @_pc_version@
Cflags: -DNVSCOPE_HAS_CUDART=1 -I${cuda_includedir}
Libs: -L${cuda_libdir} -lcudart
]] @ONLY)
  file(CONFIGURE OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/pkgconfig/nvscope-cupti.pc CONTENT [[
cuda_includedir=@_pc_cuda_includedir@
cupti_includedir=@_pc_cupti_includedir@

Name: nvscope-cupti
Description: nvscope's in-process CUPTI collector (libcupti is loaded at run time: no -lcupti)
Version: @_pc_version@
Requires: nvscope-capture = @_pc_version@
Cflags: -DNVSCOPE_HAS_CUPTI=1 -I${cupti_includedir} -pthread
Libs: -pthread
]] @ONLY)
  list(APPEND _pc_files nvscope-capture nvscope-cupti)
endif()

foreach(_pc IN LISTS _pc_files)
  install(FILES ${CMAKE_CURRENT_BINARY_DIR}/pkgconfig/${_pc}.pc DESTINATION ${NVSCOPE_INSTALL_PKGCONFIGDIR})
endforeach()
