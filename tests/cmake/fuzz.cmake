# Fuzzing (tests/fuzz, docs/checks.md "Fuzzing"):
#
#   SHORTC_FUZZ=ON (a clang build): the libFuzzer targets fuzz_arch (the
#   whole compiler), fuzz_safetensors, fuzz_plan, fuzz_npy and fuzz_tokenizer
#   (the runtime's readers) and fuzz_tokens (the CLI's token-file reader).
#
#   fuzz_short (the ordinary build): tests/fuzz/run.sh configures such a clang
#   build in fuzz-build/, builds the targets and runs each for a few seconds
#   on seeds from models/ and tests/. Skipped (exit 77) without clang;
#   labelled no-sanitize: it is its own ASan + UBSan build; and slow (it builds the
#   project a second time, with clang): the README command leaves it out, CI runs it
#   (.ci/run, `ctest -L slow`; docs/testing.md).
if(SHORTC_FUZZ)
  foreach(target fuzz_arch fuzz_safetensors fuzz_plan fuzz_npy fuzz_tokenizer fuzz_tokens)
    add_executable(${target} ${TESTS_DIR}/fuzz/${target}.c)
    target_link_libraries(${target} PRIVATE shortrt shortc_core)
    target_include_directories(${target} PRIVATE ${CMAKE_SOURCE_DIR}/runtime/src)
    target_include_directories(${target} SYSTEM PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
    target_link_options(${target} PRIVATE -fsanitize=fuzzer)
  endforeach()
  target_compile_definitions(fuzz_arch PRIVATE SHORTC_FUZZ_MODELS="${CMAKE_SOURCE_DIR}/models")
  target_sources(fuzz_tokens PRIVATE ${CMAKE_SOURCE_DIR}/cli/tokens_file.c)
  target_include_directories(fuzz_tokens PRIVATE ${CMAKE_SOURCE_DIR}/cli)
else()
  add_test(NAME fuzz_short COMMAND sh ${TESTS_DIR}/fuzz/run.sh ${CMAKE_SOURCE_DIR} ${CMAKE_BINARY_DIR}/fuzz-build
           ${SHORTC_BIN} 8)
  set_tests_properties(fuzz_short PROPERTIES LABELS "fuzz;no-sanitize;slow" SKIP_RETURN_CODE 77 TIMEOUT 900)
endif()
