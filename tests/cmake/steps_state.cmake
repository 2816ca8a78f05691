# Steps that read and write state (issue 6; after steps.cmake, whose shortc_steps it uses) (tests/suite/step_check.c --position): the checked call continues a
# sequence of P tokens, so the embedding is at positions P.., kv_write commits rows P..P+T-1 of the
# session's KV state (strided by its capacity) and attention reads the P cached keys. Both KV layouts
# (heads-tokens-dim: gpt2_tiny, odd_half; tokens-heads-dim: odd_rms_sin) and sinusoidal positions.
shortc_steps(continue_gpt2_tiny ${CMAKE_SOURCE_DIR}/models/gpt2_tiny.arch 9 --position 50)
shortc_steps(continue_odd_half ${TESTS_DIR}/suite/odd_half.arch 11 --position 17)
shortc_steps(continue_odd_rms_sin ${TESTS_DIR}/suite/odd_rms_sin.arch 13 --position 17)
shortc_steps(continue_decode_mixed_tiny ${CMAKE_SOURCE_DIR}/models/mixed_tiny.arch 1 --position 38)
add_test(NAME steps_continue_detects_perturbed_state
         COMMAND sh ${STEPS_EXPECT} --fail --grep "^step 3 launch shortc_kv_write_.* FAIL$" --grep "^[0-9]+ passed, 1 failed$"
                 -- $<TARGET_FILE:step_check> ${TESTS_DIR}/suite/odd_half.arch 11 --position 17 --perturb 3)
set_tests_properties(steps_continue_detects_perturbed_state PROPERTIES LABELS "golden;sim;steps" ENVIRONMENT "${STEPS_ENV}"
                     TIMEOUT 600)

# The "decode" program (T = 1): attention split into chunks of 64 keys (attn_decode.cuh) and combined;
# at P = 100 the query sees two chunks.
shortc_steps(decode_gpt2_tiny ${CMAKE_SOURCE_DIR}/models/gpt2_tiny.arch 1 --position 100)
shortc_steps(decode_odd_rms_sin ${TESTS_DIR}/suite/odd_rms_sin.arch 1 --position 30)
