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
add_test(NAME txl_interp COMMAND txl_test ${CMAKE_SOURCE_DIR}/models ${TESTS_DIR}/memory)
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
# The CUDA steps (the memory projection's cuBLAS GEMM, templates/txl_mem_write.cuh, attn_engine.cuh or, fp16/bf16 at
# head_dim a multiple of 8, attn_mma.cuh with REL):
#   txl_sim_<name>   tests/suite/golden_suite.sh: sim == ref, bitwise across thread counts and from the
#                    emitted .cu, and in modes cached and tokenwise (memories across calls): txl_tiny,
#                    odd shapes in fp32 (per-layer memories, clamp), fp16 (pre-norm, same_length, untie)
#                    and bf16 ([out, in] weights, a layer without memory); mixed: bf16 weights with fp16
#                    activations, the memory projection's GEMM on fp32 copies
function(shortc_txl_suite name model ntok atol rtol)
  add_test(NAME txl_sim_${name} COMMAND sh ${TESTS_DIR}/suite/golden_suite.sh ${SHORTC_BIN} ${model} ${ntok} ${atol} ${rtol}
                                       "cached tokenwise")
  set_tests_properties(txl_sim_${name} PROPERTIES LABELS "memory;txl;sim" TIMEOUT 600)
endfunction()
shortc_txl_suite(txl_tiny ${CMAKE_SOURCE_DIR}/models/txl_tiny.arch 23 1e-4 1e-4)
shortc_txl_suite(odd_f32  ${TESTS_DIR}/memory/txl_odd_f32.arch  23 1e-4 1e-4)
shortc_txl_suite(odd_half ${TESTS_DIR}/memory/txl_odd_half.arch 23 2e-2 2e-2)
shortc_txl_suite(odd_bf16 ${TESTS_DIR}/memory/txl_odd_bf16.arch 23 2e-2 2e-2)
shortc_txl_suite(mixed    ${TESTS_DIR}/memory/txl_mixed.arch    23 2e-2 2e-2)
#   txl_run_<backend>      `shortc run --mode cached` over several segments == the PyTorch goldens (txl_tiny,
#                          txl_lrm_tiny also stored fp16 (2e-2) and bf16 (6e-2): the tensor-core path,
#                          txl_lrm_tiny, txl_tiny_pre; and tokenwise with same_length), nonoverlapping differs
#                          (tests/memory/txl_run.sh)
#   txl_eval_cached_<backend>  `shortc eval --mode cached`: the golden logits' NLL (tests/memory/txl_nll.py)
foreach(backend ref sim)
  add_test(NAME txl_run_${backend} COMMAND sh ${TESTS_DIR}/memory/txl_run.sh ${SHORTC_BIN} ${CMAKE_SOURCE_DIR} ${backend})
  set_tests_properties(txl_run_${backend} PROPERTIES LABELS "memory;txl" TIMEOUT 600)
  if(PY3)
    add_test(NAME txl_eval_cached_${backend}
             COMMAND ${PY3} ${TESTS_DIR}/memory/txl_nll.py ${SHORTC_BIN} ${CMAKE_SOURCE_DIR} ${backend})
    set_tests_properties(txl_eval_cached_${backend} PROPERTIES LABELS "memory;txl" SKIP_RETURN_CODE 77)
  endif()
endforeach()
#   txl_report            --report names the memories, not a KV cache of 2^30 tokens
add_test(NAME txl_report COMMAND sh ${TESTS_DIR}/gate/expect.sh
         --grep "continuing calls: per-layer memories of earlier layer inputs \\(any length, up to 1073741824 positions\\)"
         -- ${SHORTC_BIN} run ${CMAKE_SOURCE_DIR}/models/txl_tiny.arch --backend ref --random-weights 1 --report)
set_tests_properties(txl_report PROPERTIES LABELS "memory;txl")
#   txl_matrix_<dt>_hd<hd>  the tensor-core path of relative attention (templates/attn_mma.cuh REL) in fp16 and bf16
#                         at head_dim 16, 64, 80 and 128 (tests/memory/matrix: memories 150, 37 with clamp and
#                         same_length, none with clamp), 180 tokens (two segments of 160) fed 1, 2, 15, 17, 63, 65
#                         and 129 per call: sim == ref at the half tolerance (tests/memory/txl_chunks.sh)
file(GLOB TXL_MATRIX CONFIGURE_DEPENDS ${TESTS_DIR}/memory/matrix/*.arch)
foreach(model ${TXL_MATRIX})
  get_filename_component(name ${model} NAME_WE)
  string(REGEX REPLACE "^txl_" "" name ${name})
  add_test(NAME txl_matrix_${name}
           COMMAND sh ${TESTS_DIR}/memory/txl_chunks.sh ${SHORTC_BIN} ${model} 180 2e-2 2e-2 1 2 15 17 63 65 129)
  # about 40 s each on two cores: label slow (CI's own step runs them) and kept out of the sanitizer pass, where
  # txl_sim_* and txl_run_sim run relative attention on tensor cores already
  set_tests_properties(txl_matrix_${name} PROPERTIES LABELS "memory;txl;sim;slow;no-sanitize" TIMEOUT 900 COST 80)
  # ... and that path is the one emitted: every layer's relative kernel ends in _tc
  add_test(NAME txl_matrix_${name}_tc COMMAND sh ${TESTS_DIR}/gate/expect.sh
           --grep "void __launch_bounds__\\(4 \\* 32, 2\\) shortc_attn_relative_m150_c0_s0_h[0-9]+_hd[0-9]+_b?f16_tc\\("
           --grep "void __launch_bounds__\\(4 \\* 32, 2\\) shortc_attn_relative_m37_c40_s1_h[0-9]+_hd[0-9]+_b?f16_tc\\("
           --grep "void __launch_bounds__\\(4 \\* 32, 2\\) shortc_attn_relative_m0_c20_s0_h[0-9]+_hd[0-9]+_b?f16_tc\\("
           -- ${SHORTC_BIN} ${model} -o -)
  set_tests_properties(txl_matrix_${name}_tc PROPERTIES LABELS "memory;txl")
endforeach()
