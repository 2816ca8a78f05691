# The tensor-core attention path (templates/attn_mma.cuh) in the static gate (docs/checks.md):
#   gate_tensor_core_matrix_M   every forward attention kernel (all kinds) of the fp16/bf16 attention-matrix
#                               models at head_dim 16, 80 and 128 has HMMA, 128-bit K/V loads, no 8/16-bit
#                               loads (the decode program's flash-decoding kernels are not checked: CUDA-core
#                               by design, docs/attention/README.md); no allow list
# head_dim 20 (not a multiple of 8) keeps the CUDA-core engine: gate_tensor_core_selftest (tcore.cmake) requires
# its fp16 kernel to fail the check; attn_matrix_attn_fp16_hd20 runs it sim = ref.
# Correctness: attn_unit (tests/attention/test_engine.c, "mma") and attn_matrix_* (sim = ref per step).
if(TARGET CUDA::nvrtc)
  set(TCA_OUT ${CMAKE_CURRENT_BINARY_DIR}/tcore_attn)
  file(WRITE ${TCA_OUT}/empty.allow "")
  set(tca_tests "")
  foreach(dt fp16 bf16)
    foreach(hd 16 80 128)
      set(name attn_${dt}_hd${hd})
      add_test(NAME gate_tensor_core_matrix_${name}
               COMMAND sh ${GATE_DIR}/tensor_core_gate.sh --shortc ${SHORTC_BIN} --gate ${GATE_TOOL} --out ${TCA_OUT}
                       --allow ${TCA_OUT}/empty.allow
                       --kernels "^shortc_attn_(causal|window|dilated|strided|bigbird|gaussian).*_b?f16(_|$)"
                       ${TESTS_DIR}/attention/matrix/${name}.arch)
      list(APPEND tca_tests gate_tensor_core_matrix_${name})
    endforeach()
  endforeach()
  set_tests_properties(${tca_tests} PROPERTIES LABELS "gate;tcore;no-sanitize" SKIP_RETURN_CODE 77)
endif()
