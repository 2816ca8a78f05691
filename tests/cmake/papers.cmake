# The papers' models (issue 20 item 2, issue 19 item 4):
#   paper_params  each bundled paper model's parameter count (`shortc report --json`) equals the
#                 authors' module count for its configuration and is within 1 % of the paper's figure
#                 where that figure fits the released configuration; the paper-size models store bf16 and
#                 say so in their headers, the test-size models store fp32 (tests/papers/params.sh)
add_test(NAME paper_params COMMAND sh ${TESTS_DIR}/papers/params.sh ${SHORTC_BIN} ${CMAKE_SOURCE_DIR})
set_tests_properties(paper_params PROPERTIES LABELS "cli;doc")
