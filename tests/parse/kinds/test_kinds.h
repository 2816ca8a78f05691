/*
 * Made-up attention kinds for the front-end test build (shortc_front_test,
 * tests/cmake/parse.cmake). They have parameters, required and optional,
 * so that sema's table-driven parameter checks, per-layer selection and
 * conflicting overrides can be observed in --dump-spec output. They exist
 * only in that build; shortc itself knows `causal` alone.
 */
#define SHORTC_TEST_ATTN_KINDS(X) \
    X(ATTN_TEST_WINDOW, "test_window", "size,global=0") \
    X(ATTN_TEST_STRIDED, "test_strided", "stride,groups=1,offset=0")
