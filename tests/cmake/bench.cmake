# Benchmarks: built with the project, run by hand (tests/bench/README.md);
# they print figures and assert nothing, so they are not ctest tests.
add_executable(bench_compile ${TESTS_DIR}/bench/bench_compile.c)
target_link_libraries(bench_compile PRIVATE shortc_core)
target_compile_definitions(bench_compile PRIVATE SHORTC_SOURCE_DIR="${CMAKE_SOURCE_DIR}")

# Work follows the pattern (issue 7): key tiles loaded / needed per attention kind, from an instrumented
# engine on the simulator. Also a test at small T (tests/cmake/attention.cmake: attn_tiles).
add_executable(bench_attn ${TESTS_DIR}/bench/bench_attn.c)
target_link_libraries(bench_attn PRIVATE shortc_core shortrt m)
target_include_directories(bench_attn PRIVATE ${CMAKE_SOURCE_DIR}/compiler ${CMAKE_SOURCE_DIR}/runtime/src)
target_include_directories(bench_attn SYSTEM PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
