# Symbolic dimensions in the IR (tests/ir/symdim_unit.c; docs/ir.md, "Symbolic
# dimensions"): value dims are SymDims (T, a state's rows fill+T, constants).
#
#   ir_symdim   the shape rules on SymDims (matmul [T,d] x [d,e], attention over
#               fill+T keys, mismatches printing both symbolic shapes), the
#               verifier's dimension checks and the dump's dims, on gpt2_tiny
add_executable(symdim_unit ${TESTS_DIR}/ir/symdim_unit.c)
target_link_libraries(symdim_unit PRIVATE shortc_core)
add_test(NAME ir_symdim COMMAND symdim_unit ${CMAKE_SOURCE_DIR}/models/gpt2_tiny.arch)
set_tests_properties(ir_symdim PROPERTIES LABELS ir)
