# Shortformer's position-infused attention with a cache (issue 8 item 1,
# docs/attention/pia.md; tests/memory/).
set(PIA_DIR ${TESTS_DIR}/memory)

# tests/suite/golden_suite.sh (sim == ref, thread counts, the emitted .cu) plus sim == ref in modes cached
# and tokenwise (several segments through the cache; one token per call on the decode program): the test
# model and odd shapes in fp32, fp16 ([tokens, heads, dim] KV, post-norm, Vaswani positions) and bf16
# ([out, in] weights, RMSNorm).
function(shortc_pia_suite name model ntok atol rtol)
  add_test(NAME pia_${name} COMMAND sh ${TESTS_DIR}/suite/golden_suite.sh ${SHORTC_BIN} ${model} ${ntok} ${atol} ${rtol}
                                   "cached tokenwise")
  set_tests_properties(pia_${name} PROPERTIES LABELS "pia;sim" TIMEOUT 600)
endfunction()
shortc_pia_suite(shortformer_tiny ${CMAKE_SOURCE_DIR}/models/shortformer_tiny.arch 50 1e-4 1e-4)
shortc_pia_suite(odd_f32  ${PIA_DIR}/pia_odd_f32.arch  40 1e-4 1e-4)
shortc_pia_suite(odd_half ${PIA_DIR}/pia_odd_half.arch 30 2e-2 2e-2)
shortc_pia_suite(odd_bf16 ${PIA_DIR}/pia_odd_bf16.arch 35 2e-2 2e-2)

# The PyTorch goldens (cached, tokenwise, Vaswani), L' = 0 == nonoverlapping, token by token == sliding S = 1
# (tests/memory/pia_props.sh) on ref and sim.
foreach(backend ref sim)
  add_test(NAME pia_props_${backend} COMMAND sh ${PIA_DIR}/pia_props.sh ${SHORTC_BIN} ${CMAKE_SOURCE_DIR} ${backend})
  set_tests_properties(pia_props_${backend} PROPERTIES LABELS "pia" TIMEOUT 600)
endforeach()

# The goldens are reproducible from their generator, which checks the cached pass against the explicit-pattern
# pass (needs torch; skipped without it).
if(PY3)
  add_test(NAME pia_goldens_reproducible COMMAND ${PY3} ${PIA_DIR}/gen_pia.py --check)
  set_tests_properties(pia_goldens_reproducible PROPERTIES LABELS "pia" SKIP_RETURN_CODE 77)
endif()

# Bad settings: an error with a caret at the offending text, non-zero exit.
set(EXPECT ${TESTS_DIR}/gate/expect.sh)
add_test(NAME pia_err_options COMMAND sh ${EXPECT} --fail
         --grep "pia_err_options.arch:3:66: error: unknown position style 'vaswany'; did you mean 'vaswani'"
         --grep "pia_err_options.arch:4:67: error: 'cache' must be between 0 and"
         --grep "pia_err_options.arch:5:61: error: 'positions sinusoidal infused' has no option 'max' \\(options: style\\)"
         --grep "^ +\\^~~~~~~$"
         -- ${SHORTC_BIN} ${PIA_DIR}/pia_err_options.arch --dump-spec)
add_test(NAME pia_err_cache COMMAND sh ${EXPECT} --fail
         --grep "pia_err_cache.arch:3:39: error: a cache without position-infused attention must hold whole segments \\(a multiple of the segment, 128\\)"
         --grep "note: positions set here"
         -- ${SHORTC_BIN} ${PIA_DIR}/pia_err_cache.arch --dump-spec)
add_test(NAME pia_err_kind COMMAND sh ${EXPECT} --fail
         --grep "pia_err_kind.arch:6:13: error: position-infused attention is causal; layer 1 has attention 'window'"
         -- ${SHORTC_BIN} ${PIA_DIR}/pia_err_kind.arch --dump-spec)
# Mode cached needs a model that carries its state.
add_test(NAME pia_cached_refused COMMAND sh ${EXPECT} --fail
         --grep "model 'gpt2_tiny' keeps no state across segments"
         -- ${SHORTC_BIN} run ${CMAKE_SOURCE_DIR}/models/gpt2_tiny.arch --backend ref --random-weights 1 --mode cached)
set_tests_properties(pia_err_options pia_err_cache pia_err_kind pia_cached_refused PROPERTIES LABELS "pia;parse")
# Generation through the cache is not bounded by the cache's rows: a 50-token prompt and 40 new tokens on a
# model holding 32 rows.
add_test(NAME pia_generate_long COMMAND sh ${EXPECT} --grep "^([0-9]+ ){39}[0-9]+$"
         -- ${SHORTC_BIN} generate ${CMAKE_SOURCE_DIR}/models/shortformer_tiny.arch --backend ref
            --weights ${PIA_DIR}/pia_tiny.safetensors --tokens ${PIA_DIR}/pia_tiny.tokens --max-new 40)
set_tests_properties(pia_generate_long PROPERTIES LABELS "pia")
# --report names the cache, not a position limit.
add_test(NAME pia_report COMMAND sh ${EXPECT} --grep "continuing calls: KV cache keeping the last 16 tokens \\(any length\\)"
         -- ${SHORTC_BIN} run ${CMAKE_SOURCE_DIR}/models/shortformer_tiny.arch --backend ref --random-weights 1 --report)
set_tests_properties(pia_report PROPERTIES LABELS "pia")
# shortc eval --mode cached: its NLL equals the NLL of the PyTorch golden logits (NumPy; skipped without it).
if(PY3)
  foreach(backend ref sim)
    add_test(NAME pia_eval_cached_${backend} COMMAND ${PY3} ${PIA_DIR}/pia_nll.py ${SHORTC_BIN} ${CMAKE_SOURCE_DIR} ${backend})
    set_tests_properties(pia_eval_cached_${backend} PROPERTIES LABELS "pia" SKIP_RETURN_CODE 77)
  endforeach()
endif()
# tests/sim/test_state.c on the PIA models (segments of 16): one call == chunks of 1 == chunks of 7, reset ==
# a fresh session, batches, state bytes, the sim session's KV state equal to the interpreter's, on ref and sim.
add_test(NAME pia_state_sessions COMMAND state_sessions models/shortformer_tiny tests/memory/pia_vaswani_tiny)
set_tests_properties(pia_state_sessions PROPERTIES LABELS "pia;sim;state" ENVIRONMENT "${SHORTC_SIM_ENV}" TIMEOUT 600)
