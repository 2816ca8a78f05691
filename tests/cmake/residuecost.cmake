# The cost model's tensor-core tile work for residue kinds (dilated, strided):
#   residue_cost  a full-segment forward's mma_flops equal the warp-tiles the instrumented tensor-core kernel
#                 computes on the simulator, for dilated (with and without bands across key tiles) and
#                 strided fp16 models (tests/costdoc/residue_cost.c)
add_executable(residue_cost ${TESTS_DIR}/costdoc/residue_cost.c)
target_link_libraries(residue_cost PRIVATE shortc_core shortrt m)
target_include_directories(residue_cost PRIVATE ${TESTS_DIR} ${CMAKE_SOURCE_DIR}/compiler ${CMAKE_SOURCE_DIR}/runtime/src)
target_include_directories(residue_cost SYSTEM PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
add_test(NAME residue_cost COMMAND residue_cost ${TESTS_DIR}/costdoc/residue_cost.arch)
set_tests_properties(residue_cost PROPERTIES LABELS "ir;sim" ENVIRONMENT "SHORTC_CACHE=${CMAKE_BINARY_DIR}/test_cache"
                     TIMEOUT 600)
