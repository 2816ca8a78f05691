# Static kernel facts in the kernel cache (issue 11 item 2).
#   cli_facts_cache  `shortc compare --kernels sm_90` fills a fresh kernel cache with a .facts
#                    entry, a second call reads it ("facts_cached": true) with the same JSON and
#                    table, a truncated or malformed entry is recomputed, and a store that fails
#                    does not fail the command (tests/cli/facts_cache.sh)
add_test(NAME cli_facts_cache COMMAND sh ${TESTS_DIR}/cli/facts_cache.sh ${SHORTC_BIN} ${CMAKE_SOURCE_DIR}/models)
set_tests_properties(cli_facts_cache PROPERTIES LABELS cli TIMEOUT 300)
