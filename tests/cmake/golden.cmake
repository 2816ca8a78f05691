# Golden suite (issue: runtime): the CPU simulator running the emitted CUDA
# against the reference interpreter, for every bundled model (test-size
# siblings; gpt2_small itself on a few tokens) and for odd-shape models that
# put every template at sizes that are not multiples of its tiles.
# Tolerances: fp32 storage |sim - ref| <= 1e-4 + 1e-4*|ref|;
#             fp16/bf16 storage |sim - ref| <= 2e-2 + 2e-2*|ref|;
#             gpt2_small, bf16 through 12 layers: 5e-2 + 5e-2*|ref| (its rounding noise: 0.034 at most,
#             0.005 on average, against logits up to 2.6 with seed 7; the tensor-core path feeds P.V bf16
#             probabilities where the interpreter keeps them exact).
# The same models are also checked step by step (each kernel launch and GEMM
# alone, its inputs from the interpreter) by tests/cmake/steps.cmake
# (tests/suite/step_check.c, label steps).
set(GOLDEN_SUITE ${TESTS_DIR}/suite/golden_suite.sh)
function(shortc_golden name model ntok atol rtol)
  add_test(NAME golden_${name} COMMAND sh ${GOLDEN_SUITE} ${SHORTC_BIN} ${model} ${ntok} ${atol} ${rtol})
  set_tests_properties(golden_${name} PROPERTIES LABELS "golden;sim" TIMEOUT 600)
endfunction()
set(M ${CMAKE_SOURCE_DIR}/models)
shortc_golden(gpt2_tiny        ${M}/gpt2_tiny.arch        37 1e-4 1e-4)
shortc_golden(baseline_ba_tiny ${M}/baseline_ba_tiny.arch 53 1e-4 1e-4)
shortc_golden(mixed_tiny       ${M}/mixed_tiny.arch       33 1e-4 1e-4)
shortc_golden(gpt2_tiny_half   ${M}/gpt2_tiny_half.arch   37 2e-2 2e-2)
shortc_golden(llama_tiny       ${M}/llama_tiny.arch       41 1e-4 1e-4)
shortc_golden(neox_tiny        ${M}/neox_tiny.arch        41 1e-4 1e-4)
shortc_golden(geglu_tiny_half  ${M}/geglu_tiny_half.arch  41 2e-2 2e-2)
shortc_golden(llama_tiny_half  ${M}/llama_tiny_half.arch  41 2e-2 2e-2)
shortc_golden(gpt2_small       ${M}/gpt2_small.arch        5 5e-2 5e-2)  # bf16, 12 layers (below)
# gpt2_small again with fp32 storage (every bf16 layout line rewritten to fp32 by
# tests/suite/golden_fp32.sh, the rest of the model as it is) at the fp32 tolerance
# 1e-4: the full-size shapes held to the check they had before the model moved to bf16.
add_test(NAME golden_gpt2_small_fp32
         COMMAND sh ${TESTS_DIR}/suite/golden_fp32.sh ${SHORTC_BIN} ${M}/gpt2_small.arch 5 1e-4 1e-4)
# The slowest tests (a 124M-parameter model on the simulator): also labelled
# `slow`; the README's test command skips them (`ctest -LE slow`) and .ci/run
# runs them in a step of their own (`ctest -L slow`), so CI runs every label.
set_tests_properties(golden_gpt2_small golden_gpt2_small_fp32 PROPERTIES LABELS "golden;sim;slow" TIMEOUT 900)
# The sanitizer pass runs the *_tiny goldens (the same kernels, interpreter and simulator at test size), not
# these two (two minutes each under the sanitizers).
set_tests_properties(golden_gpt2_small golden_gpt2_small_fp32 PROPERTIES LABELS "golden;sim;slow;no-sanitize")
shortc_golden(odd_ln_learned   ${TESTS_DIR}/suite/odd_ln_learned.arch 61 1e-4 1e-4)
shortc_golden(odd_rms_sin      ${TESTS_DIR}/suite/odd_rms_sin.arch    43 1e-4 1e-4)
shortc_golden(odd_half         ${TESTS_DIR}/suite/odd_half.arch       29 2e-2 2e-2)
