# Command-line checks of cli/main.c that no golden covers:
#
#   cli_args   `shortc run` / `shortc cmp` flag values and token files are
#              one-line errors, the default prompt fits any vocabulary, and
#              -o/--plan-out are written together or not at all (tests/cli/args.sh)
add_test(NAME cli_args COMMAND sh ${TESTS_DIR}/cli/args.sh ${SHORTC_BIN} ${CMAKE_SOURCE_DIR}/models)
set_tests_properties(cli_args PROPERTIES LABELS cli)

#   cli_files  hostile files and directories: outputs that are devices, FIFOs,
#              symlinks (refused) or directories; FIFO and directory inputs; escaped
#              token bytes; diagnostics under run; NaN weights (tests/cli/files.sh,
#              with tests/cli/file_tool.c making the files)
add_executable(file_tool ${TESTS_DIR}/cli/file_tool.c)
target_link_libraries(file_tool PRIVATE shortrt)
target_include_directories(file_tool PRIVATE ${CMAKE_SOURCE_DIR}/runtime/src)
target_include_directories(file_tool SYSTEM PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
add_test(NAME cli_files COMMAND sh ${TESTS_DIR}/cli/files.sh ${SHORTC_BIN} ${CMAKE_SOURCE_DIR}/models $<TARGET_FILE:file_tool>)
set_tests_properties(cli_files PROPERTIES LABELS cli TIMEOUT 300)

#   cli_weight_checks  loading checks the checkpoint against the model: unused tensors (more layers, an
#              untied lm_head) listed unless --allow-unused, config.json sizes (heads, layers, vocab,
#              tying), missing tensors and shapes, through run, eval and generate (tests/cli/weight_checks.sh)
add_test(NAME cli_weight_checks COMMAND sh ${TESTS_DIR}/cli/weight_checks.sh ${SHORTC_BIN} ${CMAKE_SOURCE_DIR}/models)
set_tests_properties(cli_weight_checks PROPERTIES LABELS cli TIMEOUT 300)

#   cli_state  the session state through `shortc run --chunk`, token files longer than
#              the segment and `shortc generate` on the ref backend; the errors on a
#              backend without state (tests/cli/state.sh)
add_test(NAME cli_state COMMAND sh ${TESTS_DIR}/cli/state.sh ${SHORTC_BIN} ${CMAKE_SOURCE_DIR}/models)
set_tests_properties(cli_state PROPERTIES LABELS cli TIMEOUT 300)

#   cli_compare  `shortc compare` / `shortc report` (cli/cmd_compare.c): table, CSV and report
#                goldens (tests/cli/compare/), the JSON checked by compare_json, the SVG, and
#                argument errors (tests/cli/compare.sh; regenerate with --update)
add_executable(compare_json ${TESTS_DIR}/cli/compare_json.c)
target_link_libraries(compare_json PRIVATE PkgConfig::CJSON m)
target_include_directories(compare_json PRIVATE ${TESTS_DIR})
add_test(NAME cli_compare COMMAND sh ${TESTS_DIR}/cli/compare.sh ${SHORTC_BIN} ${CMAKE_SOURCE_DIR}
                                     $<TARGET_FILE:compare_json>)
set_tests_properties(cli_compare PROPERTIES LABELS cli ENVIRONMENT "SHORTC_CACHE=${CMAKE_BINARY_DIR}/test_cache")

# `shortc sim` with relative cache and temporary directories, a missing $HOME, #include and -I
# (and the cache key over included headers), compile errors quoting the user's line, all-or-nothing
# outputs (tests/cli/sim_files.sh).
add_test(NAME cli_sim_files COMMAND sh ${TESTS_DIR}/cli/sim_files.sh ${SHORTC_BIN} ${TESTS_DIR}/simbench/data)
set_tests_properties(cli_sim_files PROPERTIES LABELS "cli;sim" TIMEOUT 300)

# every subcommand and option of `shortc --help` and `shortc sim --help` is in docs/man/shortc.1,
# every function of shortrt.h in docs/man/shortrt.3
add_test(NAME cli_man_usage COMMAND sh ${TESTS_DIR}/cli/man_usage.sh ${SHORTC_BIN} ${CMAKE_SOURCE_DIR}/docs/man/shortc.1
         ${CMAKE_SOURCE_DIR}/runtime/include/shortrt.h ${CMAKE_SOURCE_DIR}/docs/man/shortrt.3)
set_tests_properties(cli_man_usage PROPERTIES LABELS cli)

#   cli_lean_start  start-up loads nothing unused: no DT_NEEDED on libnvrtc in shortc or
#                   libshortrt.so, no NVRTC loaded by --version or a compile (LD_DEBUG=libs),
#                   one clear error naming NVRTC where it is needed and missing (tests/cli/lean_start.sh)
add_test(NAME cli_lean_start COMMAND sh ${TESTS_DIR}/cli/lean_start.sh ${SHORTC_BIN} $<TARGET_FILE:shortrt_shared>
                                     ${CMAKE_SOURCE_DIR}/models $<TARGET_FILE:rt_fake_cuda>)
set_tests_properties(cli_lean_start PROPERTIES LABELS cli)

#   cli_stream  `shortc run` streams its logits (issue 26 item 4): the file equals the in-memory one byte
#               for byte over run's segments and the runtime's modes on several models (stream_ref), peak
#               memory stays flat over 4096 tokens of a 4096-word vocabulary (maxrss), an error after
#               segments were written leaves no file (tests/cli/stream.sh)
add_executable(stream_ref ${TESTS_DIR}/cli/stream/stream_ref.c)
target_link_libraries(stream_ref PRIVATE shortrt)
add_executable(maxrss ${TESTS_DIR}/cli/stream/maxrss.c)
add_test(NAME cli_stream COMMAND sh ${TESTS_DIR}/cli/stream.sh ${SHORTC_BIN} ${CMAKE_SOURCE_DIR}/models ${TESTS_DIR}
                                    $<TARGET_FILE:stream_ref> $<TARGET_FILE:maxrss> $<TARGET_FILE:file_tool>)
set_tests_properties(cli_stream PROPERTIES LABELS "cli;timing;no-sanitize" TIMEOUT 300
                     ENVIRONMENT "SHORTC_CACHE=${CMAKE_BINARY_DIR}/test_cache")

#   cli_habits  issue 20 item 5: --help on every subcommand and `shortc help CMD`, did-you-mean, the exit codes,
#               '-' and pipes and FIFOs, --json schemas and precision, --progress/--quiet, .npy tokens,
#               --save-weights read back, the tokenizer's vocabulary checked, `shortc convert` (tests/cli/habits.sh)
add_test(NAME cli_habits COMMAND sh ${TESTS_DIR}/cli/habits.sh ${SHORTC_BIN} ${CMAKE_SOURCE_DIR}/models
                                    ${TESTS_DIR}/tokenizer/data)
set_tests_properties(cli_habits PROPERTIES LABELS cli TIMEOUT 300)

#   cli_model_path  models by name along $SHORTC_PATH and the installed models, imports searched along the
#                   same path with the import rules of docs/security.md kept (tests/cli/model_path.sh)
add_test(NAME cli_model_path COMMAND sh ${TESTS_DIR}/cli/model_path.sh ${SHORTC_BIN} ${CMAKE_SOURCE_DIR}/models)
set_tests_properties(cli_model_path PROPERTIES LABELS cli TIMEOUT 120)

#   doc_commands_readme, doc_commands_usage, doc_commands_training  every ```sh block of README.md (docs/usage.md,
#                 docs/training.md) runs and exits 0
#                 (blocks marked `<!-- doc-test: skip (WHY) -->` are counted, not run: builds, installs,
#                 downloads) (tests/cli/doc_commands.sh); one entry per document, so that they run side by side
# name|document|the fewest blocks that must run (the runnable blocks it has now)
foreach(doc "readme|README.md|2" "usage|docs/usage.md|11" "training|docs/training.md|3")
  string(REPLACE "|" ";" parts "${doc}")
  list(GET parts 0 name)
  list(GET parts 1 file)
  list(GET parts 2 min)
  add_test(NAME doc_commands_${name}
           COMMAND sh ${TESTS_DIR}/cli/doc_commands.sh --min ${min} ${SHORTC_BIN} ${CMAKE_SOURCE_DIR} ${file})
  set_tests_properties(doc_commands_${name} PROPERTIES LABELS "cli;doc" TIMEOUT 600
                       ENVIRONMENT "SHORTC_CACHE=${CMAKE_BINARY_DIR}/test_cache")
endforeach()
