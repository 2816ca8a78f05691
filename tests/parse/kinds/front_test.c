/*
 * front_test.c — the front end alone, built with the made-up attention
 * kinds of test_kinds.h: `shortc_front_test FILE.arch [--dump-spec]
 * [--model NAME]` behaves like `shortc FILE.arch --dump-spec [--model NAME]`.
 */
#include "shortc.h"

#include <string.h>

int main(int argc, char **argv) {
    const char *path = NULL, *model = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--model") == 0 && i + 1 < argc) model = argv[++i];
        else if (strcmp(argv[i], "--dump-spec") == 0) continue;
        else if (!path && argv[i][0] != '-') path = argv[i];
        else {
            fprintf(stderr, "usage: %s FILE.arch [--dump-spec] [--model NAME]\n", argv[0]);
            return 2;
        }
    }
    if (!path) {
        fprintf(stderr, "usage: %s FILE.arch [--dump-spec] [--model NAME]\n", argv[0]);
        return 2;
    }
    Arena a;
    arena_init(&a);
    Diag d;
    diag_init(&d, &a, stderr);
    ModelSpec *spec = shortc_load_model(&a, &d, path, model);
    if (spec && !d.errors) spec_print(stdout, spec);
    int rc = spec && !d.errors ? 0 : 1;
    arena_free(&a);
    return rc;
}
