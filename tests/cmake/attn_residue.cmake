# Residue kinds (dilated, strided; issue 7: dilation skips work, docs/attention/dilated.md):
#   attn_residue_long_segment  a residue kind over a 1M-token segment emits its per-head dilation and band
#                              hooks and no key lists (the kernel does not grow with the segment)
# (sim = ref for both kinds at odd T and head dims: attn_matrix_*; tiles loaded = residue-space tiles
# needed: attn_tiles_T; the residue description against the pattern: attn_unit_patterns.)
add_test(NAME attn_residue_long_segment
         COMMAND sh ${TESTS_DIR}/gate/expect.sh
                 --grep "constexpr int shortc_attn_dilated_dilation2_global1_size4_size_last0_undilated_heads0_h2_hd16_f32_globals = 1;"
                 --grep "shortc_attn_strided_local_heads1_stride1000_h2_hd16_f32_dil\\(int h\\)"
                 --absent "_off\\[" -- ${SHORTC_BIN} ${TESTS_DIR}/attention/long_dilated.arch -o -)
set_tests_properties(attn_residue_long_segment PROPERTIES LABELS attention)
