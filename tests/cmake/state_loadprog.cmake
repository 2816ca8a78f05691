# The plan's load program (issue 8; docs/plan.md, "The load program"): Shortformer's positional tables computed
# once per weights load on sim and ref (load_runs, the table kernel's blocks counted by the simulator), not per
# session, call or reset; recomputed when weights are reloaded; equal to interp_derive's; excluded from the state
# bytes; malformed load programs rejected by the reader and the checker's schema check (tests/sim/test_loadprog.c).
shortc_sim_program(loadprog_once ${TESTS_DIR}/sim/test_loadprog.c)
target_link_libraries(loadprog_once PRIVATE shortc_core)
add_test(NAME loadprog_once COMMAND loadprog_once)
set_tests_properties(loadprog_once PROPERTIES LABELS "pia;sim;state" ENVIRONMENT "${SHORTC_SIM_ENV}" TIMEOUT 600)
# shortc run --report prints the derived tables on their own line, once per model, after the state (which no
# longer lists them): 2 layers x 32 slots x 128 floats.
add_test(NAME loadprog_report COMMAND sh ${TESTS_DIR}/gate/expect.sh
         --grep "derived 0\\.03 MiB \\(computed once per weights load, shared by every session; computed 1 time\\)"
         -- ${SHORTC_BIN} run ${CMAKE_SOURCE_DIR}/models/shortformer_tiny.arch --backend ref --random-weights 1 --report)
set_tests_properties(loadprog_report PROPERTIES LABELS "pia")
# shortc compare --json reports the tables per model (derived_bytes) apart from the session state: Shortformer's
# 2 x 32 x 128 floats, Transformer-XL's 2 layers x (5 + 7) distances x 32 floats; the state is the caches alone.
add_test(NAME loadprog_compare_json COMMAND sh ${TESTS_DIR}/gate/expect.sh
         --grep "\"state_bytes\":.32768," --grep "\"derived_bytes\":.32768," --grep "\"derived_bytes\":.3072,"
         -- ${SHORTC_BIN} compare ${CMAKE_SOURCE_DIR}/models/shortformer_tiny.arch ${CMAKE_SOURCE_DIR}/models/txl_tiny.arch --json)
set_tests_properties(loadprog_compare_json PROPERTIES LABELS "pia;cli")
