# Front-end tests: parser, diagnostics and semantic analysis.
#
#   parse_golden         tests/parse/*.arch through `shortc FILE --dump-spec` (goldens .out/.err/.rc)
#   parse_kinds_golden   tests/parse/kinds/*.arch through shortc_front_test: the front end
#                        built with made-up attention kinds that have parameters
#                        (tests/parse/kinds/test_kinds.h), for selectors, conflicts and
#                        parameter checks that `causal` alone cannot show
#   parse_malformed      tests/malformed: every input fails cleanly (exit 3, located error, no sanitizer report)
#   parse_fuzz           500 seeded byte-level mutations of models/*.arch through shortc_front_test
#                        (the same front end as shortc, without its start-up cost; skipped without python3)
#
# Regenerate goldens: sh tests/run_golden.sh --update build/shortc --dump-spec tests/parse

set(FRONT_TEST_GEN ${CMAKE_CURRENT_BINARY_DIR}/front_test)
file(MAKE_DIRECTORY ${FRONT_TEST_GEN})
BISON_TARGET(FrontTestParser ${CMAKE_SOURCE_DIR}/grammar/arch.y ${FRONT_TEST_GEN}/arch.tab.c
             DEFINES_FILE ${FRONT_TEST_GEN}/arch.tab.h COMPILE_FLAGS "-Wall -Werror")
FLEX_TARGET(FrontTestLexer ${CMAKE_SOURCE_DIR}/grammar/arch.l ${FRONT_TEST_GEN}/arch.lex.c
            DEFINES_FILE ${FRONT_TEST_GEN}/arch.lex.h)
ADD_FLEX_BISON_DEPENDENCY(FrontTestLexer FrontTestParser)
set_source_files_properties(${FLEX_FrontTestLexer_OUTPUTS} PROPERTIES
                            COMPILE_OPTIONS "-Wno-unused-function;-Wno-sign-compare;-Wno-unused-parameter")
add_executable(shortc_front_test
  ${TESTS_DIR}/parse/kinds/front_test.c
  ${CMAKE_SOURCE_DIR}/compiler/arena.c ${CMAKE_SOURCE_DIR}/compiler/ast.c
  ${CMAKE_SOURCE_DIR}/compiler/diag.c ${CMAKE_SOURCE_DIR}/compiler/names.c
  ${CMAKE_SOURCE_DIR}/compiler/attn_kinds.c ${CMAKE_SOURCE_DIR}/compiler/attn_pattern.c
  ${CMAKE_SOURCE_DIR}/compiler/sema.c ${CMAKE_SOURCE_DIR}/compiler/spec_print.c
  ${BISON_FrontTestParser_OUTPUTS} ${FLEX_FrontTestLexer_OUTPUTS})
target_include_directories(shortc_front_test PRIVATE ${FRONT_TEST_GEN} ${CMAKE_SOURCE_DIR}/compiler)
target_compile_options(shortc_front_test PRIVATE -include ${TESTS_DIR}/parse/kinds/test_kinds.h)
target_link_libraries(shortc_front_test PRIVATE shortc_common m)

add_test(NAME parse_golden
         COMMAND sh ${TESTS_DIR}/run_golden.sh ${SHORTC_BIN} --dump-spec ${TESTS_DIR}/parse)
add_test(NAME parse_kinds_golden
         COMMAND sh ${TESTS_DIR}/run_golden.sh $<TARGET_FILE:shortc_front_test> --dump-spec
                 ${TESTS_DIR}/parse/kinds)
add_test(NAME parse_malformed
         COMMAND sh ${TESTS_DIR}/malformed/run.sh ${SHORTC_BIN} ${TESTS_DIR}/malformed)
if(PY3)
  add_test(NAME parse_fuzz
           COMMAND ${PY3} ${TESTS_DIR}/malformed/fuzz.py $<TARGET_FILE:shortc_front_test> ${CMAKE_SOURCE_DIR}/models)
else()
  add_test(NAME parse_fuzz COMMAND sh -c "echo 'python3 not found: skipped'; exit 77")
endif()
set_tests_properties(parse_fuzz PROPERTIES SKIP_RETURN_CODE 77)
set_tests_properties(parse_golden parse_kinds_golden parse_malformed parse_fuzz PROPERTIES LABELS parse)
