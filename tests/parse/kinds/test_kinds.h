/*
 * Made-up attention kinds for the front-end test build (shortc_front_test,
 * tests/cmake/parse.cmake). They have parameters, required and optional,
 * so that sema's table-driven parameter checks, per-layer selection and
 * conflicting overrides can be observed in --dump-spec output. They exist
 * only in that build; their rows (compiler/attn_kinds.c) give the parameters'
 * spelling and defaults alone (ATTN_FIELD_NONE: no typed field, no range).
 */
#define SHORTC_TEST_ATTN_KINDS(X) \
    X(ATTN_TEST_WINDOW, "test_window") \
    X(ATTN_TEST_STRIDED, "test_strided")

/* A front-end-only parameter: spelled, defaulted, never typed. */
#define TEST_PARAM(name, def) {name, ATTN_FIELD_NONE, def, 0, 0, "made up"}
#define SHORTC_TEST_ATTN_ROWS \
    [ATTN_TEST_WINDOW] = {.params = {TEST_PARAM("size", NULL), TEST_PARAM("global", "0")}}, \
    [ATTN_TEST_STRIDED] = {.params = {TEST_PARAM("stride", NULL), TEST_PARAM("groups", "1"), TEST_PARAM("offset", "0")}},
