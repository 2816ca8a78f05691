# The forward outside attention (issue 12; docs/emission.md, docs/plan.md):
#   fastpath_tf32   `math tf32`: the plan's fp32 GEMMs use TF32 compute, the
#                   simulator shows its rounding, within the stated tolerance
#                   (tests/fastpath/tf32.sh)
add_test(NAME fastpath_tf32 COMMAND sh ${TESTS_DIR}/fastpath/tf32.sh ${SHORTC_BIN} ${CMAKE_SOURCE_DIR})
set_tests_properties(fastpath_tf32 PROPERTIES LABELS "fastpath;sim")
#   fastpath_launches  launches per forward of gpt2_small from its plan: 4 L + 2
#                   (was 8 L + 2), no epilogue or conversion kernel left
#                   (tests/fastpath/launches.sh)
add_test(NAME fastpath_launches COMMAND sh ${TESTS_DIR}/fastpath/launches.sh ${SHORTC_BIN} ${CMAKE_SOURCE_DIR})
set_tests_properties(fastpath_launches PROPERTIES LABELS "fastpath")
#   fastpath_weights_once  fp16 weights with fp32 activations: GEMM weights held
#                   in fp32 (rounded to fp16) from load, no conversion launch
#                   per forward (tests/fastpath/weights_once.sh)
add_test(NAME fastpath_weights_once COMMAND sh ${TESTS_DIR}/fastpath/weights_once.sh ${SHORTC_BIN} ${CMAKE_SOURCE_DIR})
set_tests_properties(fastpath_weights_once PROPERTIES LABELS "fastpath")
