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
#   emit_plan_schema  every bundled model's plan (models/*.arch, models/adaptive/*.arch;
#                 fused and --no-fuse) is compact, passes plan_schema_check and is
#                 accepted by the runtime's reader: the compiler does not check the
#                 plans it writes (docs/plan.md, "Schema"), this test does
add_executable(emit_unit ${TESTS_DIR}/emit/test_emit.c)
target_link_libraries(emit_unit PRIVATE shortc_core PkgConfig::CJSON)
add_test(NAME emit_unit COMMAND emit_unit ${CMAKE_SOURCE_DIR})
set_tests_properties(emit_unit PROPERTIES LABELS emit)

if(EXISTS ${TESTS_DIR}/run_golden.sh)
  add_test(NAME emit_golden COMMAND sh ${TESTS_DIR}/run_golden.sh ${SHORTC_BIN} "-o -" ${TESTS_DIR}/emit)
  set_tests_properties(emit_golden PROPERTIES LABELS emit)
endif()

file(GLOB SHORTC_BUNDLED_MODELS CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/models/*.arch ${CMAKE_SOURCE_DIR}/models/adaptive/*.arch)
add_executable(plan_models ${TESTS_DIR}/emit/plan_models.c)
target_link_libraries(plan_models PRIVATE shortrt)
target_include_directories(plan_models PRIVATE ${CMAKE_SOURCE_DIR}/runtime/src)
target_include_directories(plan_models SYSTEM PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
add_test(NAME emit_plan_schema COMMAND plan_models ${SHORTC_BUNDLED_MODELS})
set_tests_properties(emit_plan_schema PROPERTIES LABELS emit)
