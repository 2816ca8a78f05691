# Hostile inputs (docs/security.md; issue 26 items 1, 3, 5):
#
#   sec_escape   common/escape.c: escaped input text cannot end or close a comment and decodes back
#   sec_inject   names that would end a comment of the emitted .cu (newline, CR, "*/", "??/",
#                backslash, non-UTF-8) as main and imported paths: compile, --check, run on ref
#                and sim emit the plain code and run nothing; a control character in an import
#                path is a located error (tests/cli/inject.sh)
#   sec_links    outputs never follow a symbolic link: -o, --plan-out, --logits, mask -o, --svg and
#                sim outputs refuse one (target untouched); --force replaces the link itself
#                (tests/cli/links.sh)
add_executable(escape_unit ${TESTS_DIR}/common/escape_unit.c)
target_link_libraries(escape_unit PRIVATE shortc_common)
add_test(NAME sec_escape COMMAND escape_unit)
add_test(NAME sec_inject COMMAND sh ${TESTS_DIR}/cli/inject.sh ${SHORTC_BIN} ${CMAKE_SOURCE_DIR}/models)
set_tests_properties(sec_inject PROPERTIES LABELS "cli;sim;security" SKIP_RETURN_CODE 77 TIMEOUT 600)
set_tests_properties(sec_escape PROPERTIES LABELS security)
add_test(NAME sec_links COMMAND sh ${TESTS_DIR}/cli/links.sh ${SHORTC_BIN} ${CMAKE_SOURCE_DIR}/models
         ${TESTS_DIR}/simbench/data)
set_tests_properties(sec_links PROPERTIES LABELS "cli;security" TIMEOUT 300)
#   sec_external cuobjdump with an argument vector ($TMPDIR with shell syntax runs nothing), the sim
#                host compiler killed at SHORTC_SIM_COMPILE_TIMEOUT (a .cu including a FIFO), stale
#                tmp-sim-* build directories removed (tests/cli/external.sh)
add_test(NAME sec_external COMMAND sh ${TESTS_DIR}/cli/external.sh ${SHORTC_BIN} ${CMAKE_SOURCE_DIR}/models
         ${TESTS_DIR}/simbench/data)
set_tests_properties(sec_external PROPERTIES LABELS "cli;sim;security" TIMEOUT 300)
