# COST of the slowest tests, so that `ctest -j` starts them first on a clean tree (CI's clean clone has no
# Testing/Temporary/CTestCostData.txt, which ctest would otherwise use) and -j2 does not end on a long tail
# (docs/testing.md, "Costs: longest first"). Seconds each took in a whole-suite run with -j2 on a 2-core
# machine that others shared (inflated, but only their order matters). This file is included last
# (tests/CMakeLists.txt includes the areas in name order); a name no longer registered is passed over.
# Refresh after a run of the whole suite: sh tests/tools/test_costs.sh build 12
set(SHORTC_TEST_COSTS
  fuzz_short                                   245
  gpu_bench_dry                                205
  gate_compile_bigbird_lm                      202
  gate_compile_longformer_lm                   172
  gate_attn_sass_goals                         169
  golden_gpt2_small_fp32                       164
  golden_gpt2_small                            137
  install_tree                                 128
  sec_inject                                   102
  gpu_accept_dry                               98
  gate_compile_gaussian                        97
  attn_tiles_129                               96
  state_sessions                               93
  attn_unit_mma_f16                            85
  attn_unit_mma_mix                            85
  attn_matrix_attn_fp16_hd128                  69
  attn_matrix_attn_fp16_hd80                   66
  doc_commands_usage                           55
  attn_matrix_attn_fp16_hd16                   55
  attn_matrix_attn_bf16_hd80                   52
  attn_unit_engine                             50
  attn_matrix_attn_bf16_hd128                  49
  pia_state_sessions                           48
  pia_props_sim                                45
  gate_tensor_core_selftest                    44
  cost_modes                                   41
  attn_tiles_40                                41
  cli_facts_cache                              41
  gate_compile_baseline_ba                     35
  attn_matrix_attn_bf16_hd16                   34
  rt_cli_sim_cache                             34
  adaptive_state                               31
  attn_matrix_attn_fp32_hd128                  31
  attn_unit_renderings                         30
  cli_state                                    27
  attn_matrix_attn_fp32_hd80                   26
  loadprog_once                                26
  device_sampler                               25
  cli_sim_files                                25
  cli_stream                                   24
  attn_matrix_attn_fp32_hd16                   24
  attn_matrix_attn_fp16_hd20                   24
  residue_cost                                 24
  gate_compile_gaussian_tiny                   24
  device_sampler_50k                           23
  loss_kernel                                  23
  gate_compile_gpt2_recurrent                  22
  gate_compile_sparse_strided                  22
  attn_matrix_attn_bf16_hd20                   21
  doc_commands_readme                          20
  attn_matrix_attn_fp32_hd20                   20
  gate_compile_txl_wt103_lrm3                  19
  golden_gpt2_tiny_half                        17
  recur_convert                                17
  gate_compile_txl_wt103                       16
  recur_simref_recur_odd_fp16                  16
  gate_compile_gpt2_24l                        16
  gate_compile_gpt2_small                      15
  gate_compile_txl_wt103_eval                  15
  rt_cuda_include_env                          15
  cli_files                                    15
  rt_model                                     15
  golden_txl_adaptive_tiny_half                14
  golden_odd_half                              14
  gate_compile_bigbird_lm_tiny                 14
  gate_compile_longformer_lm_tiny              14
  sim_tcore_ldmatrix                           13
  gate_nvrtc_txl_adaptive_tiny                 13
  gate_compile_gpt2_recurrent_tiny             13
  golden_baseline_ba_adaptive_tiny_half        13
  pia_odd_f32                                  13
  gate_compile_sparse_fixed                    13
  steps_fsq_fairseq_half                       13
  steps_baseline_ba_adaptive_tiny_half         13
  gate_compile_baseline_ba_tiny                12
  gate_compile_local                           12
  golden_txl_adaptive_tiny                     12
  pia_odd_bf16                                 12
  recur_simref_recur_odd_bf16                  12
)
list(LENGTH SHORTC_TEST_COSTS n_costs)
math(EXPR last_cost "${n_costs} - 1")
foreach(i RANGE 0 ${last_cost} 2)
  math(EXPR j "${i} + 1")
  list(GET SHORTC_TEST_COSTS ${i} test_name)
  list(GET SHORTC_TEST_COSTS ${j} test_cost)
  if(TEST ${test_name})
    set_tests_properties(${test_name} PROPERTIES COST ${test_cost})
  endif()
endforeach()
