# Tensor-core building blocks (templates/prelude.cuh intrinsics, templates/mma_frag.cuh):
#   sim_tcore_*        tests/sim/kernels/tcore.cu on the simulator against plain C (f16 and bf16)
shortc_sim_program(sim_tcore ${TESTS_DIR}/sim/test_tcore.c)
foreach(case ldmatrix qk pv attn misaligned)
  add_test(NAME sim_tcore_${case} COMMAND sim_tcore ${case})
  set_tests_properties(sim_tcore_${case} PROPERTIES LABELS "sim;tcore" ENVIRONMENT "${SHORTC_SIM_ENV}" TIMEOUT 300)
endforeach()
