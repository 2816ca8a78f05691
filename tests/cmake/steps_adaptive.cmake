# The kernels of adaptive input and adaptive softmax (issue 9 item 5; docs/emission.md, "Adaptive input
# and softmax"). In a file of its own that sorts after golden.cmake and steps.cmake, whose functions
# (shortc_golden, shortc_steps) it uses; the interpreter-side adaptive tests are in adaptive.cmake.
#
# Kernels: templates/embed_band.cuh, embed.cuh (FROM_X: pos_add), adaptive_logprob.cuh.
#   golden_<model>         the simulator running the emitted .cu against the interpreter (fp32 and fp16
#                          storage; tests/suite/golden_suite.sh)
#   steps_<model>          each launch and GEMM alone against the interpreter, continuing a sequence at
#                          P = 17 (positions at P + t; tests/suite/step_check.c)
#   adaptive_state         one call == chunks of 1 == chunks of 7 on ref and sim, the KV state equal to the
#                          interpreter's (tests/sim/test_state.c on the adaptive models)
shortc_golden(txl_adaptive_tiny ${M}/adaptive/txl_adaptive_tiny.arch 37 1e-4 1e-4)
shortc_golden(baseline_ba_adaptive_tiny ${M}/adaptive/baseline_ba_adaptive_tiny.arch 53 1e-4 1e-4)
shortc_golden(txl_adaptive_tiny_half ${TESTS_DIR}/adaptive/txl_adaptive_tiny_half.arch 37 2e-2 2e-2)
shortc_golden(baseline_ba_adaptive_tiny_half ${TESTS_DIR}/adaptive/baseline_ba_adaptive_tiny_half.arch 29 2e-2 2e-2)
shortc_steps(txl_adaptive_tiny ${M}/adaptive/txl_adaptive_tiny.arch 13 --position 17)
shortc_steps(baseline_ba_adaptive_tiny_half ${TESTS_DIR}/adaptive/baseline_ba_adaptive_tiny_half.arch 11 --position 17)
add_test(NAME adaptive_state COMMAND state_sessions models/adaptive/txl_adaptive_tiny
                                     models/adaptive/baseline_ba_adaptive_tiny tests/adaptive/txl_adaptive_tiny_half)
set_tests_properties(adaptive_state PROPERTIES LABELS "sim;state;adaptive" ENVIRONMENT "${SHORTC_SIM_ENV}" TIMEOUT 600)
foreach(t golden_txl_adaptive_tiny golden_baseline_ba_adaptive_tiny golden_txl_adaptive_tiny_half
          golden_baseline_ba_adaptive_tiny_half steps_txl_adaptive_tiny steps_baseline_ba_adaptive_tiny_half)
  set_tests_properties(${t} PROPERTIES LABELS "golden;sim;adaptive")
endforeach()

# The static gate on the test-size adaptive models (docs/checks.md; tests/kernels.baseline covers
# models/*.arch, the full-size adaptive models baseline_ba, shortformer and txl_wt103* among them):
#   gate_check_<model>   `shortc --check` (libclang parse, kernels against the plan)
#   gate_nvrtc_<model>   NVRTC compile at sm_80 and sm_90 with no spills (gate_model.sh --table-only)
foreach(model baseline_ba_adaptive_tiny txl_adaptive_tiny)
  add_test(NAME gate_check_${model} COMMAND ${SHORTC_BIN} ${M}/adaptive/${model}.arch --check)
  set_tests_properties(gate_check_${model} PROPERTIES LABELS "gate;adaptive")
  if(TARGET nvrtc_gate)
    add_test(NAME gate_nvrtc_${model}
             COMMAND sh ${GATE_DIR}/gate_model.sh --shortc ${SHORTC_BIN} --gate $<TARGET_FILE:nvrtc_gate>
                     --out ${GATE_OUT}/adaptive --table-only ${M}/adaptive/${model}.arch)
    set_tests_properties(gate_nvrtc_${model} PROPERTIES LABELS "gate;no-sanitize;adaptive")
  endif()
endforeach()

#   adaptive_eval_<model>  `shortc eval --random-weights` on sim = on ref, nonoverlapping and sliding
#                          (tests/adaptive/eval_check.sh)
foreach(model baseline_ba_adaptive_tiny txl_adaptive_tiny)
  add_test(NAME adaptive_eval_${model} COMMAND sh ${TESTS_DIR}/adaptive/eval_check.sh ${SHORTC_BIN} ${M}/adaptive/${model}.arch)
  set_tests_properties(adaptive_eval_${model} PROPERTIES LABELS "sim;adaptive" ENVIRONMENT "${SHORTC_SIM_ENV}" TIMEOUT 600)
endforeach()
