/*
 * plan_models.c — the full plan checks over every bundled model's plan.
 *
 * The compiler writes its plans without checking them against the plan
 * schema (plan_build checks only in debug builds: it is the writer the
 * schema describes), so this test keeps that promise honest: each model
 * given, fused and with --no-fuse, is compiled in memory and its plan must
 * (1) be compact (no indentation) and parse, (2) pass plan_schema_check, and
 * (3) be accepted by the runtime's reader (rt_plan_extract + rt_plan_parse
 * on the emitted .cu: values, ranges, references and the schema again).
 *
 * Usage: plan_models MODEL.arch...
 */
#define _POSIX_C_SOURCE 200809L
#include "plan_schema.h"
#include "rt_internal.h"
#include "shortc.h"

#include <cjson/cJSON.h>

#include "../check.h"

static srt_context *ctx;

/* The checks of one model's plan (no_fuse: compiled with --no-fuse). */
static void check_model(const char *path, bool no_fuse) {
    Arena a;
    arena_init(&a);
    Diag d;
    diag_init(&d, &a, stderr);
    CompileOptions co = {.path = path, .no_fuse = no_fuse};
    CompileResult cr;
    bool ok = shortc_compile(&a, &d, &co, &cr);
    CHECK(ok);
    if (!ok) {
        fprintf(stderr, "plan_models: %s%s does not compile\n", path, no_fuse ? " (--no-fuse)" : "");
        goto out;
    }
    CHECK(!strchr(cr.emit.plan_json, '\t') && !strstr(cr.emit.plan_json, "  ")); /* compact */
    cJSON *plan = cJSON_Parse(cr.emit.plan_json);
    CHECK(plan != NULL);
    char why[320] = "";
    if (plan && !plan_schema_check(plan, why, sizeof why)) {
        fprintf(stderr, "plan_models: %s%s: %s\n", path, no_fuse ? " (--no-fuse)" : "", why);
        check_failures++;
    }
    cJSON_Delete(plan);
    const char *json;
    size_t jlen;
    RtPlan p;
    srt_status st = rt_plan_extract(ctx, path, cr.emit.cu, cr.emit.cu_len, &json, &jlen);
    if (st == SRT_OK) st = rt_plan_parse(ctx, path, json, jlen, &p);
    if (st == SRT_OK) rt_plan_free(ctx, &p);
    else {
        fprintf(stderr, "plan_models: %s%s: the runtime refuses the plan: %s\n", path, no_fuse ? " (--no-fuse)" : "",
                srt_last_error(ctx));
        check_failures++;
    }
out:
    compile_result_free(&cr);
    arena_free(&a);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: plan_models MODEL.arch...\n");
        return 2;
    }
    CHECK(srt_context_create(&ctx, NULL, NULL) == SRT_OK);
    for (int i = 1; i < argc; i++) {
        check_model(argv[i], false);
        check_model(argv[i], true);
    }
    srt_context_destroy(ctx);
    printf("plan_models: %d models\n", argc - 1);
    return check_done("plan_models");
}
