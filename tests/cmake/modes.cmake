# Issue 9: the tokenizer, inference modes, evaluation and sampling.
#
#   tokenizer_bpe  GPT-2 byte-level BPE (runtime/src/tokenizer.c) through `shortc tokenize` and
#                  --text/--prompt: known answers from tests/tokenizer/make_bpe.py (an independent
#                  Python reference), round trips, the committed files regenerated, errors
#                  (tests/tokenizer/tokenize.sh)
add_test(NAME tokenizer_bpe COMMAND sh ${TESTS_DIR}/tokenizer/tokenize.sh ${SHORTC_BIN} ${TESTS_DIR} ${PY3})
set_tests_properties(tokenizer_bpe PROPERTIES LABELS "cli;tokenizer" TIMEOUT 300)

#   tokenizer_hf   ids and decoded text equal HF tokenizers' (0.15.2, /opt/shortc-hf from .ci/setup) on
#                  vocabularies it trains in the test: ByteLevel with and without prefix space and regex,
#                  Metaspace with byte fallback, with prepend_scheme first and after NFC, Sequences of
#                  pre-tokenizers and decoders, merges out of learning order, Llama's normalizers and
#                  decoders, added and special tokens (and --special-as-text), texts of every Unicode
#                  general category (tests/tokenizer/hf_compare.py; skipped, 77, without tokenizers)
if(PY3)
  add_test(NAME tokenizer_hf COMMAND ${PY3} ${TESTS_DIR}/tokenizer/hf_compare.py ${SHORTC_BIN})
  set_tests_properties(tokenizer_hf PROPERTIES LABELS "cli;tokenizer" TIMEOUT 300 SKIP_RETURN_CODE 77
                       ENVIRONMENT "PYTHONPATH=/opt/shortc-hf")
endif()

#   modes_ref, modes_sim  the inference modes of the runtime (runtime/src/modes.c): every row of each
#                  mode equals its window computed by hand from the issue's formulas, the losses equal
#                  -log softmax of the rows, sliding stride L and windows overlap 0 equal nonoverlapping,
#                  the errors (tests/modes/test_modes.c; on sim the slow modes are left to ref)
add_executable(test_modes ${TESTS_DIR}/modes/test_modes.c)
target_link_libraries(test_modes PRIVATE shortrt m)
target_include_directories(test_modes PRIVATE ${TESTS_DIR})
add_test(NAME modes_ref COMMAND test_modes ${TESTS_DIR}/tokenizer/tok_tiny.arch ref)
add_test(NAME modes_sim COMMAND test_modes ${TESTS_DIR}/tokenizer/tok_tiny.arch sim)
set_tests_properties(modes_ref modes_sim PROPERTIES LABELS "modes" TIMEOUT 600
                     ENVIRONMENT "SHORTC_CACHE=${CMAKE_BINARY_DIR}/test_cache")

#   modes_eval  `shortc run --mode` and `shortc eval`: eval's NLL equals numpy's -log p sum over
#               run's logits file for each mode, --json, text output, errors (tests/modes/eval.sh)
add_test(NAME modes_eval COMMAND sh ${TESTS_DIR}/modes/eval.sh ${SHORTC_BIN} ${TESTS_DIR} ${PY3})
set_tests_properties(modes_eval PROPERTIES LABELS "cli;modes" TIMEOUT 300)

#   modes_sampler  srt_sampler_* against softmax / top-k / top-p distributions computed from their
#                  definitions, seeds, errors (tests/modes/test_sampler.c)
add_executable(test_sampler ${TESTS_DIR}/modes/test_sampler.c)
target_link_libraries(test_sampler PRIVATE shortrt m)
target_include_directories(test_sampler PRIVATE ${TESTS_DIR})
add_test(NAME modes_sampler COMMAND test_sampler)
set_tests_properties(modes_sampler PROPERTIES LABELS "modes")

#   modes_generate  `shortc generate` sampling flags: greedy equivalents, seeds, --eos, --report's
#                   tokens/s, errors (tests/modes/generate.sh)
add_test(NAME modes_generate COMMAND sh ${TESTS_DIR}/modes/generate.sh ${SHORTC_BIN} ${TESTS_DIR})
set_tests_properties(modes_generate PROPERTIES LABELS "cli;modes" TIMEOUT 300)

# bench_modes: tokens/s of each mode on the test-size models (a benchmark run by hand,
# tests/bench/README.md; not a test)
add_executable(bench_modes ${TESTS_DIR}/bench/bench_modes.c)
target_link_libraries(bench_modes PRIVATE shortrt shortc_core)
target_compile_definitions(bench_modes PRIVATE SHORTC_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
