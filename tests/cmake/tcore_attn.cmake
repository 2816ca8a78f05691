# The tensor-core attention path (templates/attn_mma.cuh) in the static gate (docs/checks.md):
#   gate_tensor_core_matrix_M   every attention kernel (all kinds) of the fp16/bf16 attention-matrix models at
#                               head_dim 16, 80 and 128 has HMMA (the decode program's flash-decoding partial
#                               kernel: CUDA cores by design, docs/attention/README.md), 128-bit K/V loads and
#                               no 8/16-bit loads; no allow list
# head_dim 20 (not a multiple of 8) keeps the CUDA-core engine: gate_tensor_core_selftest (tcore.cmake) requires
# its fp16 kernel to fail the check; attn_matrix_attn_fp16_hd20 runs it sim = ref.
# Correctness: attn_unit_mma_f16, attn_unit_mma_mix (tests/attention/test_engine.c), attn_matrix_* and steps_decode_* below (sim = ref
# per step).
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
                       ${TESTS_DIR}/attention/matrix/${name}.arch)
      list(APPEND tca_tests gate_tensor_core_matrix_${name})
    endforeach()
  endforeach()
  set_tests_properties(${tca_tests} PROPERTIES LABELS "gate;tcore;no-sanitize" SKIP_RETURN_CODE 77)
endif()

# The decode program (T = 1, position 100: two chunks of keys) on fp16/bf16 K/V: the flash-decoding partial
# kernel with 128-bit loads (attn_decode.cuh VEC_KV) and the non-causal kinds' tensor-core kernels at T = 1,
# each step against the interpreter.
shortc_steps(decode_gpt2_tiny_half ${CMAKE_SOURCE_DIR}/models/gpt2_tiny_half.arch 1 --position 100)
shortc_steps(decode_attn_bf16_hd128 ${TESTS_DIR}/attention/matrix/attn_bf16_hd128.arch 1 --position 100)
shortc_steps(decode_attn_fp16_hd80 ${TESTS_DIR}/attention/matrix/attn_fp16_hd80.arch 1 --position 100)
