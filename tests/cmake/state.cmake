# Sessions and state (issue 6): the backend table, plan v2, KV state on sim and cuda.
add_test(NAME state_backend_table COMMAND sh ${TESTS_DIR}/tools/check_backend_table.sh ${CMAKE_SOURCE_DIR})
set_tests_properties(state_backend_table PROPERTIES LABELS "layering")


# One call == chunks of 1 == chunks of 7 on ref and sim for every bundled tiny model (every attention
# kind) and tests/sim/kinds_mixed_tiny.arch, reset == a fresh session, kv_cache / position limit / state
# bytes reported, the sim session's KV state equal to the interpreter's after a call, and the decode
# program's attention blocks per step (flash-decoding for causal layers, the engine at T = 1 for the
# others) (tests/sim/test_state.c).
shortc_sim_program(state_sessions ${TESTS_DIR}/sim/test_state.c)
target_link_libraries(state_sessions PRIVATE shortc_core)
add_test(NAME state_sessions COMMAND state_sessions)
set_tests_properties(state_sessions PROPERTIES LABELS "sim;state" ENVIRONMENT "${SHORTC_SIM_ENV}" TIMEOUT 600)

# bench_decode (tests/bench/bench_decode.c): simulator time and cost-model FLOPs per generated token with the
# KV cache vs re-running the prefix. Prints figures; run by hand, not a test.
shortc_sim_program(bench_decode ${TESTS_DIR}/bench/bench_decode.c)
target_link_libraries(bench_decode PRIVATE shortc_core)

# A plan of version 1 gets a clear error from the checker and from the runtime.
add_test(NAME state_plan_v1_check
         COMMAND sh ${TESTS_DIR}/gate/expect.sh --fail
                 --grep "plan version 1 \\(from an older shortc, before state and programs\\) is not supported; emit the \\.cu again"
                 -- ${SHORTC_BIN} --check ${TESTS_DIR}/gate/plan_v1.cu)
add_test(NAME state_plan_v1_run
         COMMAND sh ${TESTS_DIR}/gate/expect.sh --fail
                 --grep "plan_v1\\.cu: plan: version: plan version 1 \\(from an older shortc, before state and programs\\) is not supported"
                 -- ${SHORTC_BIN} run ${TESTS_DIR}/gate/plan_v1.cu --backend sim --random-weights 1 --tokens ${TESTS_DIR}/golden/gpt2_tiny.tokens)
set_tests_properties(state_plan_v1_check state_plan_v1_run PROPERTIES LABELS "state")

# A batch session equals each of its sequences alone, bitwise, on ref and sim for every bundled tiny model:
# prompts of mixed lengths (one joining a call late), decode steps, and seeded draws fed back
# (tests/sim/test_batch.c; issue 21).
shortc_sim_program(batch_exact ${TESTS_DIR}/sim/test_batch.c)
add_test(NAME batch_exact COMMAND batch_exact)
set_tests_properties(batch_exact PROPERTIES LABELS "sim;state" ENVIRONMENT "${SHORTC_SIM_ENV}" TIMEOUT 600)

# Continuous batching (srt_scheduler): requests joining and leaving mid-stream on 3 slots equal each alone
# (greedy, seeded, eos, prompts past a segment), cancel, clear errors, a decode pass's counts flat in its batch
# (tests/sim/test_sched.c; issue 21).
shortc_sim_program(sched_exact ${TESTS_DIR}/sim/test_sched.c)
add_test(NAME sched_exact COMMAND sched_exact)
set_tests_properties(sched_exact PROPERTIES LABELS "sim;state" ENVIRONMENT "${SHORTC_SIM_ENV}" TIMEOUT 600)
# Issue 22's kernels in batched decode steps: ALiBi's decode score and kv_write's rotation at each row's own
# position, grouped K/V heads' (H + 2G)-wide qkv rows (fp32: CUDA cores; fp16: tensor cores)
add_test(NAME batch_exact_positions COMMAND batch_exact models/alibi_tiny models/alibi_half_tiny models/gqa_tiny
                                            models/gqa_half_tiny models/llama_rope_tiny models/mistral_tiny)
set_tests_properties(batch_exact_positions PROPERTIES LABELS "sim;state" ENVIRONMENT "${SHORTC_SIM_ENV}" TIMEOUT 600)
