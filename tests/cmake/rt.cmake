# Runtime tests (tests/rt/test_*.c -> ctest rt_*): small C programs linking
# libshortrt. They see the runtime's private headers (runtime/src) to test
# internals such as the cache and the NVRTC compile path; none needs a GPU.
file(GLOB SHORTC_RT_TESTS CONFIGURE_DEPENDS ${TESTS_DIR}/rt/test_*.c)
foreach(src ${SHORTC_RT_TESTS})
  get_filename_component(name ${src} NAME_WE)
  string(REGEX REPLACE "^test_" "rt_" name ${name})
  add_executable(${name} ${src})
  target_link_libraries(${name} PRIVATE shortrt)
  target_include_directories(${name} PRIVATE ${TESTS_DIR}/rt ${CMAKE_SOURCE_DIR}/runtime/src)
  target_include_directories(${name} SYSTEM PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
  target_compile_definitions(${name} PRIVATE SHORTC_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
  add_test(NAME ${name} COMMAND ${name})
  set_tests_properties(${name} PROPERTIES LABELS rt ENVIRONMENT "SHORTC_CACHE=${CMAKE_BINARY_DIR}/test_cache")
endforeach()

# A host-memory libcuda/libcublas stand-in that rt_exec runs the executor on.
add_library(rt_fake_cuda SHARED ${TESTS_DIR}/rt/fake_cuda.c)
target_include_directories(rt_fake_cuda SYSTEM PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
target_link_libraries(rt_fake_cuda PRIVATE m)
target_compile_definitions(rt_exec PRIVATE FAKE_CUDA_LIB="$<TARGET_FILE:rt_fake_cuda>")
add_dependencies(rt_exec rt_fake_cuda)

# The command line without a CUDA driver: one line, exit status 1.
add_test(NAME rt_cli_no_cuda COMMAND sh ${TESTS_DIR}/rt/cli_no_cuda.sh ${SHORTC_BIN} ${CMAKE_SOURCE_DIR}/models/gpt2_tiny.arch)
set_tests_properties(rt_cli_no_cuda PROPERTIES LABELS rt)

# The simulator's kernel cache from the command line: concurrent runs on an
# empty cache, a hit, an unusable cache directory (not a failure), and hostile
# caches (planted, truncated or foreign objects; a directory in the way).
add_test(NAME rt_cli_sim_cache COMMAND sh ${TESTS_DIR}/rt/cli_sim_cache.sh ${SHORTC_BIN} ${CMAKE_SOURCE_DIR}/models/gpt2_tiny.arch
         $<TARGET_FILE:file_tool> ${CMAKE_C_COMPILER})
set_tests_properties(rt_cli_sim_cache PROPERTIES LABELS "rt;sim" TIMEOUT 300)

# Denial-of-service bounds (issue 26): a 320,000-tensor safetensors header loaded, and refused with a duplicate
# name, in under 2 CPU seconds each. Timed: not under the sanitizers.
add_test(NAME rt_safetensors_bound COMMAND rt_safetensors bound)
set_tests_properties(rt_safetensors_bound PROPERTIES LABELS "rt;timing;no-sanitize")
# BPE merging of a 320,000-letter run without whitespace in under 2 CPU seconds (issue 26: quadratic before). Timed.
add_test(NAME rt_bpe_bound COMMAND rt_bpe bound)
set_tests_properties(rt_bpe_bound PROPERTIES LABELS "rt;tokenizer;timing;no-sanitize")
# The cache against a second user (nobody) swapping its directory for a symbolic link to a planted
# object by renameat2(RENAME_EXCHANGE) while root runs `shortc sim` on it (tests/rt/race_cache.c):
# the planted object never runs. Skipped without root.
add_library(rt_race_planted MODULE ${TESTS_DIR}/rt/race_planted.c)
add_executable(rt_race_cache ${TESTS_DIR}/rt/race_cache.c)
target_link_libraries(rt_race_cache PRIVATE shortrt)
target_include_directories(rt_race_cache PRIVATE ${TESTS_DIR}/rt ${CMAKE_SOURCE_DIR}/runtime/src)
target_include_directories(rt_race_cache SYSTEM PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
add_dependencies(rt_race_cache rt_race_planted)
add_test(NAME rt_race_cache COMMAND rt_race_cache ${SHORTC_BIN} ${TESTS_DIR}/rt/race_kernel.cu
         ${TESTS_DIR}/simbench/data/fault_64.npy $<TARGET_FILE:rt_race_planted>)
set_tests_properties(rt_race_cache PROPERTIES LABELS "rt;sim" SKIP_RETURN_CODE 77 TIMEOUT 300)
