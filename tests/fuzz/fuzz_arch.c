/*
 * fuzz_arch.c — libFuzzer target: an .arch file through the whole compiler,
 * parse -> sema -> lower -> passes -> emit, as `shortc FILE.arch -o OUT.cu`
 * runs it. The input is written to model.arch in a private temporary
 * directory that holds copies of the project's models (so `import` of a
 * sibling resolves, and a relative import cannot reach the source tree);
 * diagnostics go to /dev/null. Built by tests/fuzz/CMakeLists.txt.
 */
#define _GNU_SOURCE
#include "shortc.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char sandbox[256];   /* the private directory (created once) */
static char input[300];     /* sandbox/model.arch */
static FILE *sink;          /* /dev/null for diagnostics */

/* Creates the sandbox and copies models/*.arch into it (SHORTC_FUZZ_MODELS: the models directory). */
static void setup(void) {
    const char *tmp = getenv("TMPDIR");
    snprintf(sandbox, sizeof sandbox, "%s/shortc-fuzz-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(sandbox)) abort();
    snprintf(input, sizeof input, "%s/model.arch", sandbox);
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "cp %s/*.arch %s/ 2>/dev/null", SHORTC_FUZZ_MODELS, sandbox);
    if (system(cmd) != 0) { /* no models: imports simply fail */ }
    if (chdir(sandbox) != 0) abort();
    sink = fopen("/dev/null", "w");
    if (!sink) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!sink) setup();
    FILE *f = fopen(input, "wb");
    if (!f) abort();
    if (size && fwrite(data, 1, size, f) != size) abort();
    fclose(f);
    Arena a;
    arena_init(&a);
    Diag d;
    diag_init(&d, &a, sink);
    CompileOptions co = {.path = input, .stop = COMPILE_STOP_AFTER_EMIT};
    CompileResult cr;
    shortc_compile(&a, &d, &co, &cr);
    compile_result_free(&cr);
    arena_free(&a);
    return 0;
}
