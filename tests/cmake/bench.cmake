# Benchmarks: built with the project, run by hand (tests/bench/README.md);
# they print figures and assert nothing, so they are not ctest tests.
add_executable(bench_compile ${TESTS_DIR}/bench/bench_compile.c)
target_link_libraries(bench_compile PRIVATE shortc_core)
target_compile_definitions(bench_compile PRIVATE SHORTC_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
