# Attention kinds and the attention engine (issue 7; docs/attention/):
#   attn_mask_M           `shortc mask models/M.arch --tokens 40` equals tests/attention/masks/M.npy, written
#                         by tests/attention/gen_masks.py (an independent NumPy implementation of every pattern)
#   attn_masks_reproducible  gen_masks.py --check (skipped without numpy)
#   attn_doc_pictures     the `shortc mask` pictures in docs/attention/*.md are its output (doc_masks.py;
#                         `doc_masks.py SHORTC --update docs/attention/*.md` rewrites them)
#   attn_golden_M         the golden suite (sim == ref, thread-count and .cu bitwise checks) on each
#                         sparse tiny model
#   attn_mask_cli_*       `shortc mask` errors and the ASCII drawing
#   attn_unit_PART        the pattern module and the hooks (tests/attention/test_engine.c), one entry per part
#                         so that they run in parallel: patterns (no simulator), renderings, engine, and the
#                         tensor-core path's variants mma_f16, mma_mix, mma_tf32 (`attn_unit mma` runs all), and
#                         mma_memory (PIA and the recurrence's extra key on the tensor-core path), mma_residue (the
#                         residue kinds' two tile loops, each against the reference at odd T around the crossover)
#   attn_tiles_T          key tiles loaded / needed per kind (bench_attn at T 40, 129: one entry per T, in parallel)
#   attn_lists_too_large, attn_banded_long_segment  long segments
set(ATTN_DIR ${TESTS_DIR}/attention)
set(ATTN_MODELS gpt2_tiny local_tiny longformer_lm_tiny sparse_strided_tiny sparse_fixed_tiny bigbird_lm_tiny gaussian_tiny)
foreach(m ${ATTN_MODELS})
  add_test(NAME attn_mask_${m}
           COMMAND sh ${ATTN_DIR}/mask_golden.sh ${SHORTC_BIN} ${PROJECT_SOURCE_DIR}/models/${m}.arch
                   ${ATTN_DIR}/masks/${m}.npy 40)
  set_tests_properties(attn_mask_${m} PROPERTIES LABELS attention)
  if(NOT m STREQUAL "gpt2_tiny")
    add_test(NAME attn_golden_${m}
             COMMAND sh ${TESTS_DIR}/suite/golden_suite.sh ${SHORTC_BIN} ${PROJECT_SOURCE_DIR}/models/${m}.arch
                     61 1e-4 1e-4)
    set_tests_properties(attn_golden_${m} PROPERTIES LABELS "attention;golden;sim" TIMEOUT 600)
  endif()
endforeach()
if(PY3)
  add_test(NAME attn_masks_reproducible COMMAND ${PY3} ${ATTN_DIR}/gen_masks.py --check)
  set_tests_properties(attn_masks_reproducible PROPERTIES LABELS attention SKIP_RETURN_CODE 77)
  file(GLOB ATTN_DOCS CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/docs/attention/*.md)
  add_test(NAME attn_doc_pictures COMMAND ${PY3} ${ATTN_DIR}/doc_masks.py ${SHORTC_BIN} ${ATTN_DOCS})
  set_tests_properties(attn_doc_pictures PROPERTIES LABELS attention)
endif()

set(ATTN_EXPECT ${TESTS_DIR}/gate/expect.sh)
set(M ${PROJECT_SOURCE_DIR}/models)
add_test(NAME attn_mask_cli_ascii
         COMMAND sh ${ATTN_EXPECT} --grep "^longformer_lm_tiny layer 1 head 3: attention dilated, 8 tokens"
                 --grep "^##\\.#\\.\\.\\.\\.$" --grep "^##\\.\\.#\\.\\.\\.$"
                 -- ${SHORTC_BIN} mask ${M}/longformer_lm_tiny.arch --tokens 8 --ascii --layer 1 --head 3)
add_test(NAME attn_mask_cli_too_many_tokens
         COMMAND sh ${ATTN_EXPECT} --fail --grep "--tokens 129 exceeds the segment of local_tiny"
                 -- ${SHORTC_BIN} mask ${M}/local_tiny.arch --tokens 129 --ascii)
add_test(NAME attn_mask_cli_no_output
         COMMAND sh ${ATTN_EXPECT} --fail --grep "mask needs -o MASKS.npy or --ascii"
                 -- ${SHORTC_BIN} mask ${M}/local_tiny.arch --tokens 4)
add_test(NAME attn_mask_cli_bad_head
         COMMAND sh ${ATTN_EXPECT} --fail --grep "local_tiny has 2 layers and 4 heads"
                 -- ${SHORTC_BIN} mask ${M}/local_tiny.arch --tokens 4 --ascii --head 4)
add_test(NAME attn_mask_cli_bad_param
         COMMAND sh ${ATTN_EXPECT} --fail --grep "attention 'strided': local_heads=5 must be a whole number in \\[0, 4\\]"
                 -- ${SHORTC_BIN} mask ${ATTN_DIR}/bad_local_heads.arch --tokens 4 --ascii)
add_test(NAME attn_mask_cli_output_is_input
         COMMAND sh ${ATTN_EXPECT} --fail --grep "is the same file as input .*nothing written"
                 -- ${SHORTC_BIN} mask ${ATTN_DIR}/bad_local_heads.arch --tokens 4 -o ${ATTN_DIR}/bad_local_heads.arch)
# Issue 20's pattern parameters, errors located at the attention statement (line 4 of each file).
foreach(case "bigbird_even|window=2 must be odd" "fixed_c|attention 'fixed': c=9 must be a whole number in \\[1, 8\\]"
        "gaussian_self|self=1 needs base=0" "ramp|size_last=2.5 must be a whole number"
        "undilated_heads|undilated_heads=5 must be a whole number in \\[0, 4\\]")
  string(REPLACE "|" ";" parts "${case}")
  list(GET parts 0 name)
  list(GET parts 1 msg)
  add_test(NAME attn_param_${name}
           COMMAND sh ${ATTN_EXPECT} --fail --grep "bad_${name}.arch:4:3: error: .*${msg}" --grep "^  \\^~~~"
                   -- ${SHORTC_BIN} ${ATTN_DIR}/bad_${name}.arch --dump-ir)
  set_tests_properties(attn_param_${name} PROPERTIES LABELS attention)
endforeach()
set_tests_properties(attn_mask_cli_ascii attn_mask_cli_too_many_tokens attn_mask_cli_no_output attn_mask_cli_bad_head
                     attn_mask_cli_bad_param attn_mask_cli_output_is_input PROPERTIES LABELS attention)

# Every kind (one per layer) x {fp32, fp16, bf16} x head_dim {16, 20, 80, 128}, each step alone against
# the interpreter (step_check, tests/cmake/steps.cmake) at odd token counts.
file(GLOB ATTN_MATRIX CONFIGURE_DEPENDS ${ATTN_DIR}/matrix/*.arch)
foreach(model ${ATTN_MATRIX})
  get_filename_component(name ${model} NAME_WE)
  add_test(NAME attn_matrix_${name}
           COMMAND sh ${ATTN_DIR}/matrix_steps.sh $<TARGET_FILE:step_check> ${model} 1 2 15 16 17 63 65 129)
  set_tests_properties(attn_matrix_${name} PROPERTIES LABELS "attention;sim;steps"
                       ENVIRONMENT "SHORTC_CACHE=${CMAKE_BINARY_DIR}/test_cache" TIMEOUT 600)
  # The sanitizer pass keeps the head_dim 20 models (odd widths, every dtype): the others run the same host
  # code (step_check, the simulator) at other sizes, 30-60 s each under the sanitizers.
  if(NOT name MATCHES "_hd20$")
    set_tests_properties(attn_matrix_${name} PROPERTIES LABELS "attention;sim;steps;no-sanitize")
  endif()
  # The README's command keeps head_dim 20 and 128 of every dtype; 16, 64 and 80 run in CI's slow step.
  if(name MATCHES "_hd(16|64|80)$")
    set_tests_properties(attn_matrix_${name} PROPERTIES LABELS "attention;sim;steps;no-sanitize;slow")
  endif()
endforeach()

# Patterns, key lists, hooks and the engine kernel alone (P > 0, kv_rows > P+T) on the simulator.
add_executable(attn_unit ${TESTS_DIR}/attention/test_engine.c)
target_link_libraries(attn_unit PRIVATE shortc_core shortrt m)
target_include_directories(attn_unit PRIVATE ${CMAKE_SOURCE_DIR}/compiler ${CMAKE_SOURCE_DIR}/runtime/src)
target_include_directories(attn_unit SYSTEM PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
target_compile_definitions(attn_unit PRIVATE SHORTC_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
foreach(part patterns renderings engine mma_f16 mma_mix mma_tf32 mma_memory mma_residue)
  add_test(NAME attn_unit_${part} COMMAND attn_unit ${part})
  set_tests_properties(attn_unit_${part} PROPERTIES LABELS "attention;sim"
                       ENVIRONMENT "SHORTC_CACHE=${CMAKE_BINARY_DIR}/test_cache" TIMEOUT 600)
endforeach()

# The engine loads the key tiles the pattern needs and no more (bench_attn's goal check at small T).
# Each (T, kind, path) is its own instrumented compile, and the token counts are independent: one entry per T.
foreach(T 40 129)
  add_test(NAME attn_tiles_${T} COMMAND bench_attn ${T})
  set_tests_properties(attn_tiles_${T} PROPERTIES LABELS "attention;sim"
                       ENVIRONMENT "SHORTC_CACHE=${CMAKE_BINARY_DIR}/test_cache" TIMEOUT 600)
endforeach()

# Long segments: a listed kind whose key lists would be too large is refused at the attention
# statement; banded kinds (causal, window) emit no lists, so a 10^6-token segment compiles.
add_test(NAME attn_lists_too_large
         COMMAND sh ${ATTN_EXPECT} --fail
                 --grep "err_huge_lists\\.arch:12:3: error: attention 'bigbird': the key lists for 1000000 positions"
                 -- ${SHORTC_BIN} ${ATTN_DIR}/err_huge_lists.arch -o -)
add_test(NAME attn_banded_long_segment
         COMMAND sh ${ATTN_EXPECT} --grep "constexpr int shortc_attn_window_size100_h2_hd16_f32_reach = 100;"
                 --absent "_off\\[" -- ${SHORTC_BIN} ${ATTN_DIR}/long_causal.arch -o -)
set_tests_properties(attn_lists_too_large attn_banded_long_segment PROPERTIES LABELS attention)
