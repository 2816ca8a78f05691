# Tensor-core building blocks (templates/prelude.cuh intrinsics, templates/mma_frag.cuh):
#   sim_tcore_*        tests/sim/kernels/tcore.cu on the simulator against plain C (f16, bf16 and TF32)
shortc_sim_program(sim_tcore ${TESTS_DIR}/sim/test_tcore.c)
foreach(case ldmatrix qk pv attn tf32 faults cp_async)
  add_test(NAME sim_tcore_${case} COMMAND sim_tcore ${case})
  set_tests_properties(sim_tcore_${case} PROPERTIES LABELS "sim;tcore" ENVIRONMENT "${SHORTC_SIM_ENV}" TIMEOUT 300)
endforeach()

# The static tensor-core gate (docs/checks.md), from the NVRTC cubins' SASS at sm_80 and sm_90
# (needs cuobjdump, the PyPI wheel nvidia-cuda-cuobjdump that .ci/setup installs; skipped without):
#   gate_tcore_nvrtc           the test kernels compile at sm_80 and sm_90 without spills (no cuobjdump needed)
#   gate_tcore_sass            ... and their SASS contains HMMA, LDSM and LDGSTS
#   gate_tensor_core_<model>   fp16/bf16 attention kernels: HMMA (not decode partials), 128-bit loads (tests/gate/tensor_core.allow)
#   gate_tensor_core_selftest  the gate fails on a CUDA-core fp16 kernel (head_dim 20) and on a stale allow entry
#   gate_vector_<model>        embed, norm and epilogue kernels: LDG.128, no 8/16-bit loads (issue 12)
#   gate_vector_selftest       the vector gate rejects a scalar half kernel
#   gate_attn_sass_goals       the tensor-core attention path's main loop at sm_80/sm_90 for causal at head_dim
#                              64 and 128 (tests/bench/attn_sass.sh --check: <= 4 other instructions per HMMA,
#                              no local memory in the loop, >= 2 blocks per SM, issue estimate >= 50 %)
if(TARGET CUDA::nvrtc)
  set(TCORE_OUT ${CMAKE_CURRENT_BINARY_DIR}/tcore)
  add_test(NAME gate_tcore_nvrtc
           COMMAND sh ${GATE_DIR}/tcore_sass.sh --compile-only ${GATE_TOOL} ${PROJECT_SOURCE_DIR} ${TCORE_OUT}/nvrtc)
  add_test(NAME gate_tcore_sass COMMAND sh ${GATE_DIR}/tcore_sass.sh ${GATE_TOOL} ${PROJECT_SOURCE_DIR} ${TCORE_OUT})
  add_test(NAME gate_tensor_core_selftest
           COMMAND sh ${GATE_DIR}/tensor_core_selftest.sh ${SHORTC_BIN} ${GATE_TOOL} ${PROJECT_SOURCE_DIR} ${TCORE_OUT}/self)
  add_test(NAME gate_vector_selftest
           COMMAND sh ${GATE_DIR}/vector_selftest.sh ${SHORTC_BIN} ${GATE_TOOL} ${PROJECT_SOURCE_DIR} ${TCORE_OUT}/vector_self)
  add_test(NAME gate_attn_sass_goals COMMAND sh ${PROJECT_SOURCE_DIR}/tests/bench/attn_sass.sh ${CMAKE_BINARY_DIR} --check)
  set(tcore_gate_tests gate_tcore_nvrtc gate_tcore_sass gate_tensor_core_selftest gate_vector_selftest
      gate_attn_sass_goals)
  foreach(model ${GATE_MODELS})
    get_filename_component(name ${model} NAME_WE)
    # both read the SASS of the model's one NVRTC compile, the fixture gate_compile_<model> (gate.cmake)
    add_test(NAME gate_vector_${name}
             COMMAND sh ${GATE_DIR}/vector_gate.sh --shortc ${SHORTC_BIN} --gate ${GATE_TOOL} --out ${TCORE_OUT}/vector
                     --compiled ${GATE_COMPILED} ${model})
    add_test(NAME gate_tensor_core_${name}
             COMMAND sh ${GATE_DIR}/tensor_core_gate.sh --shortc ${SHORTC_BIN} --gate ${GATE_TOOL} --out ${TCORE_OUT}
                     --allow ${GATE_DIR}/tensor_core.allow --compiled ${GATE_COMPILED} ${model})
    set_tests_properties(gate_vector_${name} gate_tensor_core_${name}
                         PROPERTIES FIXTURES_REQUIRED gate_compiled_${name})
    list(APPEND tcore_gate_tests gate_vector_${name} gate_tensor_core_${name})
  endforeach()
  set_tests_properties(${tcore_gate_tests} PROPERTIES LABELS "gate;tcore;no-sanitize" SKIP_RETURN_CODE 77)
  # `shortc compare --kernels` prints the SASS mix (and a note without cuobjdump)
  add_test(NAME cli_compare_sass COMMAND sh ${GATE_DIR}/compare_sass.sh ${SHORTC_BIN} ${PROJECT_SOURCE_DIR}/models/gpt2_tiny.arch)
  set_tests_properties(cli_compare_sass PROPERTIES LABELS "cli;tcore;no-sanitize" SKIP_RETURN_CODE 77)
endif()
