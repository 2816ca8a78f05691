# Where the cost model prices attention, and the worked comparison of docs/cost-model.md.
#
#   cost_peak        fp16/bf16 layers on the tensor-core path at the tensor-core peak of their key/value
#                    dtype with the tiles they execute; fp32, position-infused and flash-decoding calls at
#                    the fp32 CUDA-core peak; the priced path is the emitted one (tests/costdoc/cost_peak.c)
add_executable(cost_peak ${TESTS_DIR}/costdoc/cost_peak.c)
target_link_libraries(cost_peak PRIVATE shortc_core)
target_include_directories(cost_peak PRIVATE ${TESTS_DIR})
add_test(NAME cost_peak COMMAND cost_peak ${CMAKE_SOURCE_DIR}/models ${TESTS_DIR}/costdoc/cost_peak.arch)
set_tests_properties(cost_peak PROPERTIES LABELS ir)
#   costdoc_numbers  the worked comparison of docs/cost-model.md: each quoted `shortc compare` command is
#                    rerun and every quoted line of its output must still be printed
#                    (tests/costdoc/doc_numbers.sh)
add_test(NAME costdoc_numbers COMMAND sh ${TESTS_DIR}/costdoc/doc_numbers.sh ${SHORTC_BIN} ${CMAKE_SOURCE_DIR})
set_tests_properties(costdoc_numbers PROPERTIES LABELS "cli;doc")
