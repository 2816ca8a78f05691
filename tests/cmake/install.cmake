# The installable package (tests/install/install_tree.sh): a copy of the
# project is built and installed into a temporary prefix, its source and build
# trees are deleted and the prefix moved; samples/argmax.c is then built
# against it with pkg-config and with find_package(shortrt), and the installed
# shortc runs a bundled model from another directory. It builds the project
# again (Release, no tests), so it is not run again under the sanitizers.
add_test(NAME install_tree COMMAND sh ${TESTS_DIR}/install/install_tree.sh ${CMAKE_SOURCE_DIR}
  ${CMAKE_CURRENT_BINARY_DIR} ${PROJECT_VERSION} ${CMAKE_COMMAND} ${CMAKE_C_COMPILER} ${CMAKE_CXX_COMPILER})
set_tests_properties(install_tree PROPERTIES LABELS "install;no-sanitize" TIMEOUT 300)

# `shortc --version` and `shortc version` print the project version, for the
# compiler and for the library linked in (srt_version()).
string(REPLACE "." "\\." SHORTC_VERSION_RE ${PROJECT_VERSION})
add_test(NAME cli_version COMMAND ${SHORTC_BIN} --version)
add_test(NAME cli_version_command COMMAND ${SHORTC_BIN} version)
set_tests_properties(cli_version cli_version_command PROPERTIES LABELS cli
  PASS_REGULAR_EXPRESSION "^shortc ${SHORTC_VERSION_RE} \\(libshortrt ${SHORTC_VERSION_RE}\\)\n$")
