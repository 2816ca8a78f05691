# Command-line checks of cli/main.c that no golden covers:
#
#   cli_args   `shortc run` / `shortc cmp` flag values and token files are
#              one-line errors, the default prompt fits any vocabulary, and
#              -o/--plan-out are written together or not at all (tests/cli/args.sh)
add_test(NAME cli_args COMMAND sh ${TESTS_DIR}/cli/args.sh ${SHORTC_BIN} ${CMAKE_SOURCE_DIR}/models)
set_tests_properties(cli_args PROPERTIES LABELS cli)
