# The recurrence module (issue 8 item 4; docs/attention/recurrence.md):
#   recur_golden_{ref,sim}  `shortc run` of gpt2_recurrent_tiny over 45 tokens (its own way: windows of
#                           16 overlapping by 4, h_prev carried) against the independent PyTorch goldens
#                           of tests/memory/gen_recur.py
#   recur_goldens_check     regenerates those goldens (skipped, exit 77, where torch is missing)
#   recur_simref_*          the simulator against the interpreter over several windows on odd shapes,
#                           fp32, fp16 and bf16 (tests/suite/golden_suite.sh)
#   recur_props_{ref,sim}   window 0 == plain GPT-2; a zero FFN output layer cuts the dependence on
#                           earlier windows; reset == fresh session; state bytes; refused modes
#   recur_errors            caret errors of bad `recurrence` statements
#   recur_cost              FLOPs/token of gpt2_recurrent against Yoshida et al.'s Table 1
#   recur_cli_refusals      --chunk and generate on a recurrent model: clear errors
#   recur_cli_report        `shortc run --report`: the state bytes and what carries between windows
#   recur_convert           tools/convert_checkpoint.py recurrence on a torch.save'd GPT2LMHeadModel state dict
#                           plus a recurrence nn.Module: shortc's names bit for bit, and `shortc run` on the
#                           result gives the golden logits (tests/memory/convert_recur.py; 77 without torch)
set(RECUR_DIR ${TESTS_DIR}/memory)
set(RECUR_RUN ${SHORTC_BIN} run ${CMAKE_SOURCE_DIR}/models/gpt2_recurrent_tiny.arch
    --weights ${RECUR_DIR}/recur_tiny.safetensors --tokens ${RECUR_DIR}/recur_tiny.tokens)
foreach(backend ref sim)
  add_test(NAME recur_golden_${backend}
           COMMAND sh -c "\"$0\" \"$@\" --backend ${backend} --logits recur_${backend}.npy && \"$0\" cmp recur_${backend}.npy ${RECUR_DIR}/recur_tiny.logits.npy --atol 1e-4 --rtol 1e-4"
                   ${RECUR_RUN})
  set_tests_properties(recur_golden_${backend} PROPERTIES LABELS "recur;golden" TIMEOUT 300
                       ENVIRONMENT "SHORTC_CACHE=${CMAKE_BINARY_DIR}/test_cache")
endforeach()
add_test(NAME recur_goldens_check COMMAND /usr/bin/python3 ${RECUR_DIR}/gen_recur.py --check --out ${RECUR_DIR})
set_tests_properties(recur_goldens_check PROPERTIES LABELS "recur;golden" SKIP_RETURN_CODE 77)
add_test(NAME recur_convert COMMAND /usr/bin/python3 ${RECUR_DIR}/convert_recur.py ${SHORTC_BIN}
                                    ${CMAKE_SOURCE_DIR}/tools/convert_checkpoint.py)
set_tests_properties(recur_convert PROPERTIES LABELS "recur" SKIP_RETURN_CODE 77 TIMEOUT 300
                     ENVIRONMENT "SHORTC_CACHE=${CMAKE_BINARY_DIR}/test_cache")

function(recur_simref model tol)
  add_test(NAME recur_simref_${model}
           COMMAND sh ${TESTS_DIR}/suite/golden_suite.sh ${SHORTC_BIN} ${RECUR_DIR}/${model}.arch 37 ${tol} ${tol})
  set_tests_properties(recur_simref_${model} PROPERTIES LABELS "recur;sim" TIMEOUT 600)
endfunction()
recur_simref(recur_odd 1e-4)
recur_simref(recur_odd_fp16 2e-2)
recur_simref(recur_odd_bf16 2e-2)

add_executable(recur_props ${RECUR_DIR}/recur_props.c)
target_link_libraries(recur_props PRIVATE shortrt)
target_include_directories(recur_props PRIVATE ${TESTS_DIR}/rt ${CMAKE_SOURCE_DIR}/runtime/src)
target_include_directories(recur_props SYSTEM PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
target_compile_definitions(recur_props PRIVATE SHORTC_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
foreach(backend ref sim)
  add_test(NAME recur_props_${backend} COMMAND recur_props ${backend})
  set_tests_properties(recur_props_${backend} PROPERTIES LABELS recur TIMEOUT 300
                       ENVIRONMENT "SHORTC_CACHE=${CMAKE_BINARY_DIR}/test_cache")
endforeach()

add_test(NAME recur_errors COMMAND sh ${RECUR_DIR}/recur_errors.sh ${SHORTC_BIN} ${CMAKE_SOURCE_DIR}/models)
set_tests_properties(recur_errors PROPERTIES LABELS recur)

# The cost model on gpt2_recurrent against Yoshida et al.'s Table 1 (FLOPs/token at overlaps 0 to 50).
add_test(NAME recur_cost COMMAND sh ${RECUR_DIR}/recur_cost.sh ${SHORTC_BIN} ${CMAKE_SOURCE_DIR}/models/gpt2_recurrent.arch)
set_tests_properties(recur_cost PROPERTIES LABELS recur)

# What the command line refuses for a recurrent model: splitting its windows, token-by-token generation.
add_test(NAME recur_cli_refusals
         COMMAND sh -c "sh \"$0\" --fail --grep \"chunk cannot split the windows of recurrent model 'gpt2_recurrent_tiny'\" -- \"$1\" run \"$2\" --backend ref --random-weights 1 --chunk 4 && sh \"$0\" --fail --grep \"model 'gpt2_recurrent_tiny' is recurrent .*generate cannot run it\" -- \"$1\" generate \"$2\" --backend ref --random-weights 1 --max-new 2 --tokens \"$3\""
                 ${TESTS_DIR}/gate/expect.sh ${SHORTC_BIN} ${CMAKE_SOURCE_DIR}/models/gpt2_recurrent_tiny.arch ${RECUR_DIR}/recur_tiny.tokens)
set_tests_properties(recur_cli_refusals PROPERTIES LABELS recur)

# The CLI's report of a recurrent model's state (issue 8 item 6): bytes of state and what carries over.
add_test(NAME recur_cli_report
         COMMAND sh ${TESTS_DIR}/gate/expect.sh --grep "state 0\\.02 MiB"
                 --grep "continuing calls: one window each \\(positions restart\\), h_prev of 64 values carried; windows overlap 4"
                 -- ${RECUR_RUN} --backend ref --report)
set_tests_properties(recur_cli_report PROPERTIES LABELS recur)
