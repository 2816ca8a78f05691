# Per-step oracle checks (tests/suite/step_check.c; issue 3): every step of a
# plan run alone on the CPU simulator, its inputs taken from the reference
# interpreter and its output compared with the interpreter's value (a
# matmul's staging conversions, GEMM and epilogue as one group), with seeded
# random weights and token counts that are not multiples of any tile.
# Tolerances as the golden suite (golden.cmake). Two negative tests show the
# harness fails when one step's output is wrong (--perturb) or never written
# (--skip).
add_executable(step_check ${TESTS_DIR}/suite/step_check.c)
target_link_libraries(step_check PRIVATE shortrt shortc_core m)
target_include_directories(step_check PRIVATE ${CMAKE_SOURCE_DIR}/runtime/src)
target_include_directories(step_check SYSTEM PRIVATE ${CUDAToolkit_INCLUDE_DIRS})

set(STEPS_ENV "SHORTC_CACHE=${CMAKE_BINARY_DIR}/test_cache")
function(shortc_steps name model ntok)
  add_test(NAME steps_${name} COMMAND step_check ${model} ${ntok} ${ARGN})
  set_tests_properties(steps_${name} PROPERTIES LABELS "golden;sim;steps" ENVIRONMENT "${STEPS_ENV}" TIMEOUT 600)
endfunction()
shortc_steps(odd_ln_learned ${TESTS_DIR}/suite/odd_ln_learned.arch 61)
shortc_steps(odd_rms_sin    ${TESTS_DIR}/suite/odd_rms_sin.arch    43)
shortc_steps(odd_half       ${TESTS_DIR}/suite/odd_half.arch       29)
shortc_steps(mixed_tiny     ${CMAKE_SOURCE_DIR}/models/mixed_tiny.arch     33)
shortc_steps(gpt2_tiny_half ${CMAKE_SOURCE_DIR}/models/gpt2_tiny_half.arch 37)
# the block families: the gate epilogue (SwiGLU, GEGLU) alone, bias-free GEMMs, parallel blocks
shortc_steps(llama_tiny      ${CMAKE_SOURCE_DIR}/models/llama_tiny.arch      41)
shortc_steps(geglu_tiny_half ${CMAKE_SOURCE_DIR}/models/geglu_tiny_half.arch 29)

# The harness can fail: a perturbed output, and a step that is not run.
set(STEPS_EXPECT ${TESTS_DIR}/gate/expect.sh)
add_test(NAME steps_detects_perturbed_output
         COMMAND sh ${STEPS_EXPECT} --fail --grep "^step 4 launch shortc_attn_causal_.* FAIL$"
                 --grep "^[0-9]+ passed, 1 failed$"
                 -- $<TARGET_FILE:step_check> ${TESTS_DIR}/suite/odd_half.arch 29 --perturb 4)
add_test(NAME steps_detects_skipped_step
         COMMAND sh ${STEPS_EXPECT} --fail --grep "^step 3 launch shortc_attn_causal_.* FAIL$" --grep "^[0-9]+ passed, 1 failed$"
                 -- $<TARGET_FILE:step_check> ${TESTS_DIR}/suite/odd_rms_sin.arch 43 --skip 3)
set_tests_properties(steps_detects_perturbed_output steps_detects_skipped_step PROPERTIES
                     LABELS "golden;sim;steps" ENVIRONMENT "${STEPS_ENV}" TIMEOUT 600)
