# The plan's load program (issue 8; docs/plan.md, "The load program"): Shortformer's positional tables computed
# once per weights load on sim and ref (load_runs, the table kernel's blocks counted by the simulator), not per
# session, call or reset; recomputed when weights are reloaded; equal to interp_derive's; excluded from the state
# bytes; malformed load programs rejected by the reader and the checker's schema check (tests/sim/test_loadprog.c).
shortc_sim_program(loadprog_once ${TESTS_DIR}/sim/test_loadprog.c)
target_link_libraries(loadprog_once PRIVATE shortc_core)
add_test(NAME loadprog_once COMMAND loadprog_once)
set_tests_properties(loadprog_once PROPERTIES LABELS "pia;sim;state" ENVIRONMENT "${SHORTC_SIM_ENV}" TIMEOUT 600)
