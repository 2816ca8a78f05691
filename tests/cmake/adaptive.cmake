# Adaptive input and adaptive softmax (docs/ir.md, "Adaptive input and softmax").
#
#   adaptive_ref_<model>  the interpreter's adaptive embedding and log-probabilities on a
#                         models/adaptive/*_tiny.arch model against the independent NumPy
#                         reference tests/adaptive/adaptive_ref.py (skipped without numpy)
#   adaptive_errors       bad adaptive settings get their messages (tests/adaptive/errors.sh)
add_executable(adaptive_dump ${TESTS_DIR}/adaptive/adaptive_dump.c)
target_link_libraries(adaptive_dump PRIVATE shortc_core)
foreach(m baseline_ba_adaptive_tiny txl_adaptive_tiny)
  add_test(NAME adaptive_ref_${m}
           COMMAND sh ${TESTS_DIR}/adaptive/ref_check.sh $<TARGET_FILE:adaptive_dump>
                   ${CMAKE_SOURCE_DIR}/models/adaptive/${m}.arch ${TESTS_DIR}/adaptive/adaptive_ref.py)
  set_tests_properties(adaptive_ref_${m} PROPERTIES LABELS adaptive SKIP_RETURN_CODE 77)
endforeach()
add_test(NAME adaptive_errors COMMAND sh ${TESTS_DIR}/adaptive/errors.sh ${SHORTC_BIN} ${TESTS_DIR}/adaptive)
set_tests_properties(adaptive_errors PROPERTIES LABELS adaptive)

#   adaptive_convert      tools/convert_checkpoint.py on fairseq (tied, untied) and Transformer-XL
#                         state dicts built with NumPy under the frameworks' key names
#                         (tests/adaptive/convert_test.py; skipped without numpy)
add_test(NAME adaptive_convert
         COMMAND sh -c "/usr/bin/python3 -c 'import numpy' 2>/dev/null || { echo 'numpy not found: skipped'; exit 77; }; exec /usr/bin/python3 \"$0\" \"$1\""
                 ${TESTS_DIR}/adaptive/convert_test.py ${CMAKE_SOURCE_DIR}/tools/convert_checkpoint.py)
set_tests_properties(adaptive_convert PROPERTIES LABELS adaptive SKIP_RETURN_CODE 77)
