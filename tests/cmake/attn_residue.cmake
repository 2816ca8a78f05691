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
# The per-call choice between residue grouping and the plain tile loop (compiler/cost.c attn_residue_choice;
# docs/attention/dilated.md "Two tile loops"):
#   attn_residue_report_T  `shortc run --report` on the simulator names the loop each residue kernel ran: the plain
#                          loop at T 7, residue grouping at T 257 (past the cost model's last plain run, 256)
# (both loops equal the reference around the crossover: attn_unit_mma_residue; the plan's runs, the flip at their
# ends and each loop's tile count against the kernel's: residue_cost.)
foreach(case "7|plain tile loop at T = 7" "257|residue grouping at T = 257")
  string(REPLACE "|" ";" parts "${case}")
  list(GET parts 0 T)
  list(GET parts 1 msg)
  add_test(NAME attn_residue_report_${T}
           COMMAND sh ${TESTS_DIR}/gate/expect.sh
                   --grep "^  shortc_attn_dilated_[a-z0-9_]+_tc: ${msg} \\(plain tile loop for T in \\[2, 128\\] \\[194, 256\\]\\)$"
                   -- ${SHORTC_BIN} run ${TESTS_DIR}/costdoc/residue_cost.arch --model dilated_half --backend sim
                      --random-weights 3 --tokens ${TESTS_DIR}/attention/residue_${T}.tokens --report --quiet)
  set_tests_properties(attn_residue_report_${T} PROPERTIES LABELS "attention;sim"
                       ENVIRONMENT "SHORTC_CACHE=${CMAKE_BINARY_DIR}/test_cache" TIMEOUT 600)
endforeach()
