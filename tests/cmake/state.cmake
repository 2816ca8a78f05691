# Sessions and state (issue 6): the backend table, plan v2, KV state on sim and cuda.
add_test(NAME state_backend_table COMMAND sh ${TESTS_DIR}/tools/check_backend_table.sh ${CMAKE_SOURCE_DIR})
set_tests_properties(state_backend_table PROPERTIES LABELS "layering")
