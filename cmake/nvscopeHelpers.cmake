# Helpers shared by tests, examples and benchmarks. Not installed; consumers never see them.

# Strict warnings for nvscope's own targets, in C++ and (through the host compiler) CUDA.
function(nvscope_strict_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Werror>
    $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra,-Werror --Werror all-warnings>)
endfunction()

# True when this build compiles CUDA (nvcc found and NVSCOPE_ENABLE_CUDA on).
function(nvscope_cuda_enabled out)
  get_property(_langs GLOBAL PROPERTY ENABLED_LANGUAGES)
  if("CUDA" IN_LIST _langs)
    set(${out} TRUE PARENT_SCOPE)
  else()
    set(${out} FALSE PARENT_SCOPE)
  endif()
endfunction()

# nvscope_add_test(name SOURCES ... [LINK ...] [LABELS ...] [ENV ...] [GPU])
#   A doctest executable registered with ctest. GPU tests link a main that exits 77 with a
#   one-line reason where no CUDA device is present; ctest reports them as skipped.
function(nvscope_add_test name)
  cmake_parse_arguments(T "GPU" "" "SOURCES;LINK;LABELS;ENV" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  nvscope_strict_warnings(${name})
  if(T_GPU)
    target_link_libraries(${name} PRIVATE nvscope_test_gpu_main ${T_LINK})
    list(APPEND T_LABELS gpu)
  else()
    target_link_libraries(${name} PRIVATE nvscope_test_main ${T_LINK})
  endif()
  add_test(NAME ${name} COMMAND ${name})
  set_tests_properties(${name} PROPERTIES SKIP_RETURN_CODE 77)
  if(T_LABELS)
    set_tests_properties(${name} PROPERTIES LABELS "${T_LABELS}")
  endif()
  if(T_ENV)
    set_tests_properties(${name} PROPERTIES ENVIRONMENT "${T_ENV}")
  endif()
endfunction()

# nvscope_add_example(name SOURCES ... [LINK ...] [ARGS ...])
#   An example program, also run as a ctest. An example that finds no GPU prints one line
#   containing "no CUDA device" and exits 0; ctest reports it as skipped.
function(nvscope_add_example name)
  cmake_parse_arguments(E "" "" "SOURCES;LINK;ARGS" ${ARGN})
  add_executable(${name} ${E_SOURCES})
  nvscope_strict_warnings(${name})
  target_link_libraries(${name} PRIVATE ${E_LINK})
  add_test(NAME example.${name} COMMAND ${name} ${E_ARGS})
  set_tests_properties(example.${name} PROPERTIES
    LABELS "example;gpu" SKIP_REGULAR_EXPRESSION "no CUDA device")
endfunction()
