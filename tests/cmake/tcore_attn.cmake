# The tensor-core attention path (templates/attn_mma.cuh) in the static gate (docs/checks.md):
#   gate_tensor_core_matrix_M   every attention kernel (all kinds) of the fp16/bf16 attention-matrix models at
#                               head_dim 16, 80 and 128 has HMMA (the decode program's flash-decoding partial
#                               kernel: CUDA cores by design, docs/attention/README.md), 128-bit K/V loads and
#                               no 8/16-bit loads; no allow list
#   gate_tensor_core_matrix_attn_tf32_hdD   the same for the fp32 models under `math tf32` at head_dim 16, 20, 64,
#                               80 and 128: every prefill attention kernel (_f32..._tc) has HMMA (TF32 MMAs)
#   gate_nvrtc_tf32_M           the TF32 models (those five, PIA at head_dim 128, the recurrence at 64) compile at
#                               sm_80 and sm_90 without a spill (gate_model.sh --table-only; models/ has no TF32
#                               model, so tests/kernels.baseline does not cover them)
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
  foreach(hd 16 20 64 80 128)
    set(name attn_tf32_hd${hd})
    add_test(NAME gate_tensor_core_matrix_${name}
             COMMAND sh ${GATE_DIR}/tensor_core_gate.sh --shortc ${SHORTC_BIN} --gate ${GATE_TOOL} --out ${TCA_OUT}
                     --allow ${TCA_OUT}/empty.allow --kernels "^shortc_attn_.*_f32.*_tc$"
                     ${TESTS_DIR}/attention/matrix/${name}.arch)
    list(APPEND tca_tests gate_tensor_core_matrix_${name})
  endforeach()
  foreach(model matrix/attn_tf32_hd16 matrix/attn_tf32_hd20 matrix/attn_tf32_hd64 matrix/attn_tf32_hd80
          matrix/attn_tf32_hd128 tc_memory/pia_tf32_hd128 tc_memory/recur_tf32_hd64)
    get_filename_component(name ${model} NAME)
    add_test(NAME gate_nvrtc_tf32_${name}
             COMMAND sh ${GATE_DIR}/gate_model.sh --shortc ${SHORTC_BIN} --gate ${GATE_TOOL} --out ${TCA_OUT}/tf32
                     --table-only ${TESTS_DIR}/attention/${model}.arch)
    list(APPEND tca_tests gate_nvrtc_tf32_${name})
  endforeach()
  set_tests_properties(${tca_tests} PROPERTIES LABELS "gate;tcore;no-sanitize" SKIP_RETURN_CODE 77)
  # The README's command keeps head_dim 20 and 128 (odd width, widest) and the memory models; the other head
  # dims are the same kernels at other sizes, one NVRTC compile each (15-20 s): CI's slow step runs them.
  foreach(t ${tca_tests})
    if(t MATCHES "_hd(16|64|80)$")
      set_tests_properties(${t} PROPERTIES LABELS "gate;tcore;no-sanitize;slow")
    endif()
  endforeach()
endif()

# The decode program (T = 1, position 100: two chunks of keys) on fp16/bf16 K/V: the flash-decoding partial
# kernel with 128-bit loads (attn_decode.cuh VEC_KV) and the non-causal kinds' tensor-core kernels at T = 1,
# each step against the interpreter.
shortc_steps(decode_gpt2_tiny_half ${CMAKE_SOURCE_DIR}/models/gpt2_tiny_half.arch 1 --position 100)
shortc_steps(decode_attn_bf16_hd128 ${TESTS_DIR}/attention/matrix/attn_bf16_hd128.arch 1 --position 100)
shortc_steps(decode_attn_fp16_hd80 ${TESTS_DIR}/attention/matrix/attn_fp16_hd80.arch 1 --position 100)

# Position-infused attention and the recurrence's extra key on the tensor-core path (attn_mma.cuh PIA, REC_KEY;
# tests/attention/tc_memory/, issue 19 item 3):
#   tcore_mem_steps_M      step_check at odd T (1 to 129) on fp16/bf16 models at head_dim 24, 64 and 128 (and fp32
#                          under `math tf32`: PIA at 128, the recurrence at 64): PIA calls
#                          continue 70 cached tokens (P = 70: the cache's slots), recurrent ones follow a window of 100
#                          (h_prev present); the load program's tables against interp_derive
#   tcore_mem_golden_M     the golden suite (sim == ref, threads, the .cu): PIA over several segments in the cached and
#                          tokenwise modes (the cache slides; token by token the window grows), the recurrence over
#                          three windows
# The kernels alone against a double-precision reference (inputs in [-1, 1): stringent where random weights give
# near-uniform softmaxes): attn_unit's "mma memory" (tests/attention/test_engine.c).
set(TCM_DIR ${TESTS_DIR}/attention/tc_memory)
foreach(case "pia_bf16_hd128|70" "pia_fp16_hd64|70" "pia_bf16_hd24|70" "recur_bf16_hd64|100" "recur_bf16_hd128|100"
        "recur_fp16_hd24|100" "pia_tf32_hd128|70" "recur_tf32_hd64|100")
  string(REPLACE "|" ";" parts "${case}")
  list(GET parts 0 name)
  list(GET parts 1 pos)
  add_test(NAME tcore_mem_steps_${name}
           COMMAND sh ${TESTS_DIR}/attention/matrix_steps.sh $<TARGET_FILE:step_check> ${TCM_DIR}/${name}.arch
                   --position ${pos} 1 2 15 17 63 65 129)
  set_tests_properties(tcore_mem_steps_${name} PROPERTIES LABELS "attention;tcore;sim;steps"
                       ENVIRONMENT "SHORTC_CACHE=${CMAKE_BINARY_DIR}/test_cache" TIMEOUT 900)
  # the sanitizer pass keeps the head_dim 24 cases (PIA and the recurrence): the others are the same host code
  if(NOT name MATCHES "_hd24$")
    set_tests_properties(tcore_mem_steps_${name} PROPERTIES LABELS "attention;tcore;sim;steps;no-sanitize")
  endif()
endforeach()
add_test(NAME tcore_mem_golden_pia_seg_bf16_hd32
         COMMAND sh ${TESTS_DIR}/suite/golden_suite.sh ${SHORTC_BIN} ${TCM_DIR}/pia_seg_bf16_hd32.arch 70 2e-2 2e-2
                 "cached tokenwise")
add_test(NAME tcore_mem_golden_recur_bf16_hd64
         COMMAND sh ${TESTS_DIR}/suite/golden_suite.sh ${SHORTC_BIN} ${TCM_DIR}/recur_bf16_hd64.arch 239 2e-2 2e-2)
set_tests_properties(tcore_mem_golden_pia_seg_bf16_hd32 tcore_mem_golden_recur_bf16_hd64 PROPERTIES
                     LABELS "attention;tcore;sim;golden" TIMEOUT 600)
