# fairseq-style embedding positions (`positions sinusoidal style=fairseq`,
# docs/language.md): the embed kernel on the simulator against the reference
# interpreter, step by step (tests/suite/step_check.c), in fp32 and fp16, from
# position 0 and from position 17 (a continued session). The interpreter's
# fairseq sinusoid itself is checked against independent references:
# golden_baseline_ba_tiny (PyTorch logits, tests/gen_goldens.py) and
# adaptive_ref_baseline_ba_adaptive_tiny (NumPy, tests/adaptive/adaptive_ref.py).
# (This file is included before steps.cmake, so it registers step_check itself;
# the target is resolved when the tests are generated.)
function(fsq_steps name model ntok)
  add_test(NAME steps_${name} COMMAND step_check ${model} ${ntok} ${ARGN})
  set_tests_properties(steps_${name} PROPERTIES LABELS "golden;sim;steps;fsq" TIMEOUT 600
                       ENVIRONMENT "SHORTC_CACHE=${CMAKE_BINARY_DIR}/test_cache")
endfunction()
fsq_steps(fsq_fairseq_odd      ${TESTS_DIR}/fsq/fairseq_odd.arch  43)
fsq_steps(fsq_fairseq_odd_p17  ${TESTS_DIR}/fsq/fairseq_odd.arch  13 --position 17)
fsq_steps(fsq_fairseq_half     ${TESTS_DIR}/fsq/fairseq_half.arch 43)
