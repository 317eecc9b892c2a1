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
set(_pc_nvtx_cflags "")
foreach(_dir IN LISTS _pc_nvtx_dirs)
  string(APPEND _pc_nvtx_cflags " -I${_dir}")
endforeach()

set(_pc_version ${PROJECT_VERSION})
set(_pc_files nvscope)
file(CONFIGURE OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/pkgconfig/nvscope.pc CONTENT [[
includedir=@_pc_includedir@

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
