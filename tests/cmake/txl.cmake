# Transformer-XL relative attention with per-layer memories (docs/attention/relative.md).
#
#   txl_interp            the interpreter over segments with memories against the PyTorch goldens
#                         of tests/memory/gen_txl.py (txl_tiny, txl_lrm_tiny with "transformer."
#                         names, txl_tiny_pre: pre-norm, clamp, same_length, untie), memory 0 is
#                         single-segment attention, reset = fresh session, long sessions, state
#                         bytes = sum_l m_l x d x bytes (tests/memory/txl_test.c)
#   txl_goldens_reproducible  tests/memory/gen_txl.py --check (skipped, 77, without torch)
#   txl_errors            bad relative-attention and memory settings get their messages
#                         (tests/memory/bad, through tests/adaptive/errors.sh)
add_executable(txl_test ${TESTS_DIR}/memory/txl_test.c ${TESTS_DIR}/common/golden_files.c)
target_link_libraries(txl_test PRIVATE shortc_core)
add_test(NAME txl_interp COMMAND txl_test ${CMAKE_SOURCE_DIR}/models/txl ${TESTS_DIR}/memory)
set_tests_properties(txl_interp PROPERTIES LABELS "memory;txl")
if(PY3)
  add_test(NAME txl_goldens_reproducible COMMAND ${PY3} ${TESTS_DIR}/memory/gen_txl.py --check)
  set_tests_properties(txl_goldens_reproducible PROPERTIES LABELS "memory;txl" SKIP_RETURN_CODE 77)
endif()
add_test(NAME txl_errors COMMAND sh ${TESTS_DIR}/adaptive/errors.sh ${SHORTC_BIN} ${TESTS_DIR}/memory)
set_tests_properties(txl_errors PROPERTIES LABELS "memory;txl")
#   txl_convert           tools/convert_checkpoint.py transformer_xl on an HF TransfoXL-style state dict
#                         ("transformer." names): every tensor under the names shortc reads, bit for bit
#                         (tests/memory/convert_txl.py; skipped without numpy)
add_test(NAME txl_convert
         COMMAND sh -c "/usr/bin/python3 -c 'import numpy' 2>/dev/null || { echo 'numpy not found: skipped'; exit 77; }; exec /usr/bin/python3 \"$0\" \"$1\""
                 ${TESTS_DIR}/memory/convert_txl.py ${CMAKE_SOURCE_DIR}/tools/convert_checkpoint.py)
set_tests_properties(txl_convert PROPERTIES LABELS "memory;txl" SKIP_RETURN_CODE 77)
#   txl_emit_refused      no CUDA kernels yet: `shortc txl_tiny.arch -o` fails with a located error and no
#                         output, --dump-spec and `shortc report` work (tests/memory/emit_refused.sh)
add_test(NAME txl_emit_refused COMMAND sh ${TESTS_DIR}/memory/emit_refused.sh ${SHORTC_BIN}
                                       ${CMAKE_SOURCE_DIR}/models/txl/txl_tiny.arch)
set_tests_properties(txl_emit_refused PROPERTIES LABELS "memory;txl")
