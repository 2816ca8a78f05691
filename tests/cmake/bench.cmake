# Benchmarks: built with the project, run by hand (tests/bench/README.md);
# they print figures and assert nothing, so they are not timed tests (bench_compile_runs
# only runs bench_compile once, briefly, and checks that it prints its figures).
add_executable(bench_compile ${TESTS_DIR}/bench/bench_compile.c)
target_link_libraries(bench_compile PRIVATE shortc_core)
target_compile_definitions(bench_compile PRIVATE SHORTC_SOURCE_DIR="${CMAKE_SOURCE_DIR}" SHORTC_BIN="$<TARGET_FILE:shortc>")
add_dependencies(bench_compile shortc)
# bench_compile runs once, briefly, so it cannot rot: it must print every figure (not a timed test: no goal is checked)
add_test(NAME bench_compile_runs COMMAND bench_compile --repeat 2 ${CMAKE_SOURCE_DIR}/models/gpt2_small.arch)
set_tests_properties(bench_compile_runs PROPERTIES LABELS bench
  PASS_REGULAR_EXPRESSION "gpt2_small\\.arch +12 +[0-9]+ +[0-9]+ +[0-9.]+ +[0-9.]+ +[0-9.]+.*shortc --version +[0-9.]+ +[0-9.]+.*shortc gpt2_small\\.arch -o x\\.cu +[0-9.]+ +[0-9.]+")

# Work follows the pattern (issue 7): key tiles loaded / needed per attention kind, from an instrumented
# engine on the simulator. Also a test at small T (tests/cmake/attention.cmake: attn_tiles_40, attn_tiles_129).
add_executable(bench_attn ${TESTS_DIR}/bench/bench_attn.c)
target_link_libraries(bench_attn PRIVATE shortc_core shortrt m)
target_include_directories(bench_attn PRIVATE ${CMAKE_SOURCE_DIR}/compiler ${CMAKE_SOURCE_DIR}/runtime/src)
target_include_directories(bench_attn SYSTEM PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
