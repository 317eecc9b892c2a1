# Helpers shared by tests, examples and benchmarks. Not installed; consumers never see them.

# LeakSanitizer's stop-the-world tracer now and then crashes at a process's exit, after the
# test passed and before any leak is looked for (google/sanitizers#1353). Every leak-checked
# test runs through cmake/lsan_tracer_retry.sh, which reruns it once on that signature alone
# (its comment lists what is never rerun): the fuzzers always, and in a build compiled with
# AddressSanitizer (the asan preset) every test that runs an executable target, through the
# test launcher (CMake >= 3.29) or the emulator that CMake <= 3.28 puts before such commands.
set(NVSCOPE_LSAN_RETRY sh ${CMAKE_CURRENT_LIST_DIR}/lsan_tracer_retry.sh)
if(CMAKE_CXX_FLAGS MATCHES "-fsanitize=[^ ]*address")
  if(CMAKE_VERSION VERSION_GREATER_EQUAL 3.29)
    set(CMAKE_TEST_LAUNCHER ${NVSCOPE_LSAN_RETRY})
  else()
    set(CMAKE_CROSSCOMPILING_EMULATOR ${NVSCOPE_LSAN_RETRY})
  endif()
  set(NVSCOPE_TESTS_LEAK_CHECKED ON)
endif()

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

# nvscope_libfuzzer_clang(out): sets `out` to the clang++ that links libFuzzer with ASan and
#   UBSan, or to "" where there is none (no clang, or a clang without its sanitizer runtimes:
#   Debian's libclang-rt-*-dev). The probe links once per build folder; the answer is cached
#   (NVSCOPE_CLANGXX, NVSCOPE_LIBFUZZER_WORKS).
function(nvscope_libfuzzer_clang out)
  find_program(NVSCOPE_CLANGXX NAMES clang++ clang++-19 clang++-18 clang++-17 clang++-16 clang++-15 clang++-14)
  if(NVSCOPE_CLANGXX AND NOT DEFINED NVSCOPE_LIBFUZZER_WORKS)
    set(_probe_dir ${PROJECT_BINARY_DIR}/libfuzzer_probe)
    file(WRITE ${_probe_dir}/probe.cpp
      "#include <cstddef>\n#include <cstdint>\nextern \"C\" int LLVMFuzzerTestOneInput(const std::uint8_t*, std::size_t) { return 0; }\n")
    execute_process(COMMAND ${NVSCOPE_CLANGXX} -fsanitize=fuzzer,address,undefined ${_probe_dir}/probe.cpp -o ${_probe_dir}/probe
      RESULT_VARIABLE _probe_rc OUTPUT_QUIET ERROR_QUIET)
    if(_probe_rc EQUAL 0)
      set(NVSCOPE_LIBFUZZER_WORKS ON CACHE INTERNAL "clang links libFuzzer with ASan and UBSan")
    else()
      set(NVSCOPE_LIBFUZZER_WORKS OFF CACHE INTERNAL "clang links libFuzzer with ASan and UBSan")
    endif()
  endif()
  if(NVSCOPE_CLANGXX AND NVSCOPE_LIBFUZZER_WORKS)
    set(${out} ${NVSCOPE_CLANGXX} PARENT_SCOPE)
  else()
    set(${out} "" PARENT_SCOPE)
  endif()
endfunction()

# nvscope_add_fuzzer(test TARGET target OUTPUT file SOURCES ... [FLAGS ...] [LIBS ...]
#                    [DEPENDS ...] SECONDS n ARTIFACT_PREFIX prefix WORK_CORPUS dir
#                    SEEDS dir... WHAT text)
#   A libFuzzer program built with clang++ directly, whatever the project's compiler, with
#   ASan and UBSan (call only where nvscope_libfuzzer_clang found one), and the ctest `test`
#   that runs it for SECONDS: new inputs go to WORK_CORPUS (in the build folder), the
#   checked-in SEEDS seed it. Labelled fuzz;nosan: it brings its own sanitizers and never runs
#   under the asan/tsan presets' ones. OUTPUT and WORK_CORPUS are relative to the current
#   build folder; FLAGS come before the sources, LIBS after them.
function(nvscope_add_fuzzer test)
  cmake_parse_arguments(F "" "TARGET;OUTPUT;SECONDS;ARTIFACT_PREFIX;WORK_CORPUS;WHAT"
                        "SOURCES;FLAGS;LIBS;DEPENDS;SEEDS" ${ARGN})
  set(_out ${CMAKE_CURRENT_BINARY_DIR}/${F_OUTPUT})
  add_custom_command(OUTPUT ${_out}
    COMMAND ${NVSCOPE_CLANGXX} -std=c++17 -g -O1 -Wall -Wextra -Werror
            -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
            -I${PROJECT_SOURCE_DIR}/include ${F_FLAGS} ${F_SOURCES} -o ${_out} ${F_LIBS}
    DEPENDS ${F_SOURCES} ${F_DEPENDS}
    COMMENT "Building the ${F_WHAT} fuzzer with ${NVSCOPE_CLANGXX} (libFuzzer)"
    VERBATIM)
  add_custom_target(${F_TARGET} ALL DEPENDS ${_out})
  file(MAKE_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/${F_WORK_CORPUS})
  add_test(NAME ${test}
    COMMAND ${NVSCOPE_LSAN_RETRY} ${CMAKE_COMMAND} -E env ASAN_OPTIONS=detect_leaks=1
            ${_out} -max_total_time=${F_SECONDS} -timeout=5 -rss_limit_mb=2048 -print_final_stats=1
            -artifact_prefix=${F_ARTIFACT_PREFIX}
            ${CMAKE_CURRENT_BINARY_DIR}/${F_WORK_CORPUS} ${F_SEEDS})
  set_tests_properties(${test} PROPERTIES LABELS "fuzz;nosan" TIMEOUT 120)
endfunction()
