# CUDA emission tests (tests/emit/; docs/emission.md).
#
#   emit_unit     C unit tests: template syntax and errors, every template
#                 with every flag combination, and every models/*.arch (fused
#                 and --no-fuse) emitted twice (byte-identical) with a plan
#                 consistent with its kernels, cuBLAS-valid GEMM types and
#                 arena references inside the arena
#   emit_golden   `shortc X.arch -o -` against tests/emit/X.out for the tiny
#                 models (via tests/run_golden.sh; regenerate with
#                 `sh tests/run_golden.sh --update build/shortc "-o -" tests/emit`)
add_executable(emit_unit ${TESTS_DIR}/emit/test_emit.c)
target_link_libraries(emit_unit PRIVATE shortc_core PkgConfig::CJSON)
add_test(NAME emit_unit COMMAND emit_unit ${CMAKE_SOURCE_DIR})
set_tests_properties(emit_unit PROPERTIES LABELS emit)

if(EXISTS ${TESTS_DIR}/run_golden.sh)
  add_test(NAME emit_golden COMMAND sh ${TESTS_DIR}/run_golden.sh ${SHORTC_BIN} "-o -" ${TESTS_DIR}/emit)
  set_tests_properties(emit_golden PROPERTIES LABELS emit)
endif()
