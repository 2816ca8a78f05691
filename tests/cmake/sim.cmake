# Simulator tests (tests/sim/): C programs linking libshortrt that drive the
# CPU SIMT simulator through its RtDriver table. The kernel tests compile
# tests/sim/kernels/*.cu with the host C++ compiler (cached in test_cache).
# bench_sim (tests/bench/bench_sim.c) prints figures and is not a test.
set(SHORTC_SIM_TEST_INCLUDES ${TESTS_DIR}/sim ${CMAKE_SOURCE_DIR}/runtime/src ${CMAKE_SOURCE_DIR}/runtime/sim)

function(shortc_sim_program name src)
  add_executable(${name} ${src})
  target_link_libraries(${name} PRIVATE shortrt m)
  target_include_directories(${name} PRIVATE ${SHORTC_SIM_TEST_INCLUDES})
  target_include_directories(${name} SYSTEM PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
  target_compile_definitions(${name} PRIVATE SHORTC_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
endfunction()

shortc_sim_program(sim_fiber ${TESTS_DIR}/sim/test_fiber.c)
shortc_sim_program(sim_gemm ${TESTS_DIR}/sim/test_gemm.c)
shortc_sim_program(sim_kernels ${TESTS_DIR}/sim/test_kernels.c)
shortc_sim_program(sim_rewrite ${TESTS_DIR}/sim/test_rewrite.c)
shortc_sim_program(bench_sim ${TESTS_DIR}/bench/bench_sim.c)

set(SHORTC_SIM_ENV "SHORTC_CACHE=${CMAKE_BINARY_DIR}/test_cache")
add_test(NAME sim_fiber COMMAND sim_fiber)
add_test(NAME sim_gemm COMMAND sim_gemm)
add_test(NAME sim_rewrite COMMAND sim_rewrite)
set_tests_properties(sim_fiber sim_gemm sim_rewrite PROPERTIES LABELS sim ENVIRONMENT "${SHORTC_SIM_ENV}")

# One ctest per case of test_kernels.c; the first to run compiles basic.cu,
# the others find it in the cache (sim_kernels_compile checks the hit).
set(SHORTC_SIM_CASES fast_path barrier_sum prelude_sum shuffles halfwarps late_collective divergence trap
    oob limits dyn_smem static_smem half atomics mma transpose bar_reduce determinism compile events)
foreach(case ${SHORTC_SIM_CASES})
  add_test(NAME sim_kernels_${case} COMMAND sim_kernels ${case})
  set_tests_properties(sim_kernels_${case} PROPERTIES LABELS sim ENVIRONMENT "${SHORTC_SIM_ENV}" TIMEOUT 300)
endforeach()

# Nothing on stderr from a simulator run (under -DSHORTC_SANITIZE=ON this
# checks ASan's fiber annotations): the CLI on gpt2_tiny, a block fault
# (divergence) and a hardware fault inside a kernel (oob, siglongjmp).
add_test(NAME sim_quiet_cli COMMAND sh ${TESTS_DIR}/sim/quiet_stderr.sh ${SHORTC_BIN} run
         ${CMAKE_SOURCE_DIR}/models/gpt2_tiny.arch --backend sim --random-weights 1)
add_test(NAME sim_quiet_divergence COMMAND sh ${TESTS_DIR}/sim/quiet_stderr.sh $<TARGET_FILE:sim_kernels> divergence)
add_test(NAME sim_quiet_oob COMMAND sh ${TESTS_DIR}/sim/quiet_stderr.sh $<TARGET_FILE:sim_kernels> oob)
set_tests_properties(sim_quiet_cli sim_quiet_divergence sim_quiet_oob PROPERTIES LABELS sim
                     ENVIRONMENT "${SHORTC_SIM_ENV}" TIMEOUT 300)

# The attention grid has one block per QT queries and head, no idle block
# (tests/sim/test_attn_grid.c counts the blocks the simulator ran).
shortc_sim_program(sim_attn_grid ${TESTS_DIR}/sim/test_attn_grid.c)
target_link_libraries(sim_attn_grid PRIVATE shortc_core)
add_test(NAME sim_attn_grid COMMAND sim_attn_grid)
set_tests_properties(sim_attn_grid PROPERTIES LABELS sim ENVIRONMENT "${SHORTC_SIM_ENV}" TIMEOUT 300)

# The simulator under valgrind with the options `ctest -T memcheck` uses: no memory error and no
# definite or indirect leak on a barrier kernel (fiber stacks registered, docs/fuzzing.md). Only when
# valgrind and its header were there at build time; not under the sanitizers (they do not mix).
find_program(VALGRIND_BIN valgrind)
include(CheckIncludeFile)
check_include_file(valgrind/valgrind.h SHORTC_HAVE_VALGRIND_H)
if(VALGRIND_BIN AND SHORTC_HAVE_VALGRIND_H AND NOT SHORTC_SANITIZE)
  separate_arguments(SHORTC_MEMCHECK_OPTS UNIX_COMMAND "${MEMORYCHECK_COMMAND_OPTIONS}")
  add_test(NAME sim_valgrind_barrier_sum
           COMMAND ${VALGRIND_BIN} ${SHORTC_MEMCHECK_OPTS} --error-exitcode=1 $<TARGET_FILE:sim_kernels> barrier_sum)
  set_tests_properties(sim_valgrind_barrier_sum PROPERTIES LABELS "sim;no-sanitize" ENVIRONMENT "${SHORTC_SIM_ENV}"
                       TIMEOUT 300 DEPENDS sim_kernels_compile)
endif()
