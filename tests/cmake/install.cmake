# The installable package and what lets it move (tests/install/).
# install_tree (install_tree.sh): a copy of the
# project is built and installed into a temporary prefix, its source and build
# trees are deleted and the prefix moved; samples/argmax.c is then built
# against it with pkg-config and with find_package(shortrt), and the installed
# shortc runs a bundled model from another directory. It builds the project
# again (Release, no tests), so it is not run again under the sanitizers.
add_test(NAME install_tree COMMAND sh ${TESTS_DIR}/install/install_tree.sh ${CMAKE_SOURCE_DIR}
  ${CMAKE_CURRENT_BINARY_DIR} ${PROJECT_VERSION} ${CMAKE_COMMAND} ${CMAKE_C_COMPILER} ${CMAKE_CXX_COMPILER})
set_tests_properties(install_tree PROPERTIES LABELS "install;no-sanitize;slow" TIMEOUT 300)

# `shortc --version` and `shortc version` print the project version, for the
# compiler and for the library linked in (srt_version()).
string(REPLACE "." "\\." SHORTC_VERSION_RE ${PROJECT_VERSION})
add_test(NAME cli_version COMMAND ${SHORTC_BIN} --version)
add_test(NAME cli_version_command COMMAND ${SHORTC_BIN} version)
set_tests_properties(cli_version cli_version_command PROPERTIES LABELS cli
  PASS_REGULAR_EXPRESSION "^shortc ${SHORTC_VERSION_RE} \\(libshortrt ${SHORTC_VERSION_RE}\\)\n$")

# $SHORTC_CUDA_INCLUDE overrides the toolkit include directories compiled in.
list(GET CUDAToolkit_INCLUDE_DIRS 0 SHORTC_TEST_CUDA_INCLUDE)
add_test(NAME rt_cuda_include_env COMMAND sh ${TESTS_DIR}/install/cuda_include_env.sh ${SHORTC_BIN}
  ${CMAKE_SOURCE_DIR}/models/gpt2_tiny.arch ${SHORTC_TEST_CUDA_INCLUDE} ${CMAKE_CURRENT_BINARY_DIR})
set_tests_properties(rt_cuda_include_env PROPERTIES LABELS "rt;sim" TIMEOUT 300)

# bundle_scrubbed (bundle_scrubbed.sh): `--target bundle` makes build/bundle, which runs
# copied elsewhere under `env -i` on the simulator and the interpreter, needs nothing but
# libc, the CUDA libraries and its own cJSON (readelf), and stays under 32 MiB. It
# installs into the build tree, so it is not run again under the sanitizers.
add_test(NAME bundle_scrubbed COMMAND sh ${TESTS_DIR}/install/bundle_scrubbed.sh ${CMAKE_COMMAND} ${CMAKE_BINARY_DIR})
set_tests_properties(bundle_scrubbed PROPERTIES LABELS "install;no-sanitize" TIMEOUT 300 RUN_SERIAL ON)
