# Layering (docs/architecture.md, "Layering"): common/ below compiler/ below
# runtime/ (whose only compiler user is backend_ref.c), no ir.c -> pass_*.c or
# plan.c -> emit.c calls; checked on #includes and on the libraries' symbols.
add_test(NAME layering
         COMMAND sh ${TESTS_DIR}/tools/check_layering.sh ${CMAKE_SOURCE_DIR}
                 $<TARGET_FILE:shortc_common> $<TARGET_FILE:shortc_core> $<TARGET_FILE:shortrt>)
set_tests_properties(layering PROPERTIES LABELS "layering")
