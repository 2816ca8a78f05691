# Hopper intrinsics (templates/hopper.cuh, docs/attention/hopper.md):
#   sim_hopper_*      tests/sim/kernels/hopper.cu on the simulator against plain C: wgmma with A and B from
#                     shared memory (K- and MN-major, every swizzle mode) and A from registers (accumulators reused as A), TMA loads and
#                     stores (2D/3D, swizzles, out-of-bounds boxes), TMA feeding wgmma, an mbarrier ring
#                     between warpgroups, cuTensorMapEncodeTiled's refusals, and each misuse the simulator reports
#   gate_hopper_sass  the same kernels compile with NVRTC for sm_90a and their SASS holds HGMMA, UTMALDG,
#                     UTMASTG and SYNCS (skipped without NVRTC's gate tool or cuobjdump)
shortc_sim_program(sim_hopper ${TESTS_DIR}/sim/test_hopper.c)
foreach(case ss rs tma tma_store tma_gemm pipeline tmap_errors faults setmaxnreg)
  add_test(NAME sim_hopper_${case} COMMAND sim_hopper ${case})
  set_tests_properties(sim_hopper_${case} PROPERTIES LABELS "sim;hopper" ENVIRONMENT "${SHORTC_SIM_ENV}" TIMEOUT 300)
endforeach()
if(TARGET CUDA::nvrtc)
  add_test(NAME gate_hopper_sass
           COMMAND sh ${GATE_DIR}/hopper_sass.sh ${GATE_TOOL} ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/hopper)
  set_tests_properties(gate_hopper_sass PROPERTIES LABELS "gate;hopper;no-sanitize" SKIP_RETURN_CODE 77)
endif()
