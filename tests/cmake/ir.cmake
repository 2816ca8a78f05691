# Middle-end tests (tests/ir/): lowering, passes, verifier, buffer plan and the
# reference interpreter (docs/ir.md).
#
#   ir_unit            C unit tests on hand-built specs; compares the
#                      interpreter with the PyTorch goldens in tests/golden
#   ir_kernels_depth   `shortc --dump-ir` kernel count is the same for 2 and 24 layers
#   ir_dump            `shortc X.arch --dump-ir` against tests/ir/X.out (via tests/run_golden.sh)
add_executable(ir_unit ${TESTS_DIR}/ir/ir_unit.c ${TESTS_DIR}/common/golden_files.c)
target_link_libraries(ir_unit PRIVATE shortc_core)
add_test(NAME ir_unit COMMAND ir_unit ${TESTS_DIR}/golden)
set_tests_properties(ir_unit PROPERTIES LABELS ir)

foreach(pair "gpt2_tiny;gpt2_tiny_24l" "mixed_tiny;mixed_tiny_24l" "baseline_ba_tiny;baseline_ba_tiny_24l")
  list(GET pair 0 shallow)
  list(GET pair 1 deep)
  add_test(NAME ir_kernels_depth_${shallow}
           COMMAND sh ${TESTS_DIR}/ir/kernel_count.sh ${SHORTC_BIN}
                   ${CMAKE_SOURCE_DIR}/models/${shallow}.arch ${TESTS_DIR}/ir/depth/${deep}.arch)
  set_tests_properties(ir_kernels_depth_${shallow} PROPERTIES LABELS ir)
endforeach()

if(EXISTS ${TESTS_DIR}/run_golden.sh)
  add_test(NAME ir_dump COMMAND sh ${TESTS_DIR}/run_golden.sh ${SHORTC_BIN} "--dump-ir" ${TESTS_DIR}/ir)
  set_tests_properties(ir_dump PROPERTIES LABELS ir)
endif()

#   ir_state           the interpreter's sessions on every bundled tiny model and the odd-shape
#                      test models: one call == chunks of 1 == chunks of 7, the KV state equals
#                      the one call's K/V, reset == fresh, going past the positions is an error
add_executable(state_unit ${TESTS_DIR}/ir/state_unit.c)
target_link_libraries(state_unit PRIVATE shortc_core)
file(GLOB SHORTC_STATE_MODELS ${CMAKE_SOURCE_DIR}/models/*_tiny*.arch ${TESTS_DIR}/suite/odd_*.arch)
# recurrent models run one window per call (no chunked prefill): tests/cmake/recur.cmake covers their sessions;
# Transformer-XL's memories make chunked calls differ from one call (without same_length) and never run out of
# positions: tests/cmake/txl.cmake covers their sessions
list(FILTER SHORTC_STATE_MODELS EXCLUDE REGEX "recurrent|/txl_")
add_test(NAME ir_state COMMAND state_unit ${SHORTC_STATE_MODELS})
set_tests_properties(ir_state PROPERTIES LABELS ir)

#   cost_unit          the cost model (compiler/cost.c) against hand-computed figures for
#                      gpt2_tiny and gpt2_small, and Yoshida et al. Table 1's overlap trend
add_executable(cost_unit ${TESTS_DIR}/ir/cost_unit.c)
target_link_libraries(cost_unit PRIVATE shortc_core)
target_include_directories(cost_unit PRIVATE ${TESTS_DIR})
add_test(NAME cost_unit COMMAND cost_unit ${CMAKE_SOURCE_DIR}/models)
set_tests_properties(cost_unit PROPERTIES LABELS ir)

#   cost_modes         the token modes' closed forms (compiler/cost.c) equal the brute-force mean over their
#                      calls for every bundled model, and attn_pattern_pairs the visible pairs (issue 26)
#   cost_bound         `report` on gpt2_small at segment 32768 in under 2 s and 16777216 in under 10 s (timing)
file(GLOB SHORTC_COST_MODELS ${CMAKE_SOURCE_DIR}/models/*.arch ${CMAKE_SOURCE_DIR}/models/adaptive/*.arch)
add_executable(cost_modes ${TESTS_DIR}/ir/cost_modes.c)
target_link_libraries(cost_modes PRIVATE shortc_core)
target_include_directories(cost_modes PRIVATE ${TESTS_DIR})
add_test(NAME cost_modes COMMAND cost_modes ${SHORTC_COST_MODELS})
set_tests_properties(cost_modes PROPERTIES LABELS ir)
add_test(NAME cost_bound COMMAND sh ${TESTS_DIR}/ir/cost_bound.sh ${SHORTC_BIN} ${CMAKE_SOURCE_DIR}/models/gpt2_small.arch)
set_tests_properties(cost_bound PROPERTIES LABELS "ir;timing;no-sanitize")
