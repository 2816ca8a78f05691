/* Plan extraction and parsing: a valid plan, DIM evaluation, and malformed plans with precise messages. */
#include "rt_test.h"
#include "rt_internal.h"
#include "toy_plan.h"

static srt_context *ctx;

/* Parses json; expects failure with SRT_ERR_FORMAT and a message containing want. */
static void bad(const char *json, const char *want) {
    if (!json) return;
    RtPlan p;
    srt_status st = rt_plan_parse(ctx, "toy.cu", json, strlen(json), &p);
    CHECK(st == SRT_ERR_FORMAT);
    CHECK_HAS(srt_last_error(ctx), want);
    CHECK_HAS(srt_last_error(ctx), "toy.cu: plan");
}

static void mutate(const char *from, const char *to, const char *want) {
    char *j = rt_test_replace(TOY_PLAN_JSON, from, to);
    bad(j, want);
    free(j);
}

int main(void) {
    CHECK(srt_context_create(&ctx, NULL, NULL) == SRT_OK);

    /* DIM: ceil((t*T + p*P + fill*F + b*B + c) / div) */
    SymEnv e7 = {.T = 7, .B = 1}, e8 = {.T = 8, .B = 1}, e1 = {.T = 1, .B = 1}, e3 = {.T = 3, .B = 1};
    CHECK(symdim_eval((RtDim){.c = 64, .div = 1}, &e7) == 64);
    CHECK(symdim_eval((RtDim){.t = 1, .div = 1}, &e7) == 7);
    CHECK(symdim_eval((RtDim){.t = 1, .div = 4}, &e7) == 2);
    CHECK(symdim_eval((RtDim){.t = 1, .div = 4}, &e8) == 2);
    CHECK(symdim_eval((RtDim){.t = 3, .c = 5, .div = 4}, &e1) == 2);
    CHECK(symdim_eval((RtDim){.t = 1, .c = -8, .div = 1}, &e3) == -5);
    SymEnv ep = {.T = 1, .P = 40, .fill = 40, .B = 1};
    CHECK(symdim_eval((RtDim){.t = 1, .fill = 1, .div = 1}, &ep) == 41);

    RtPlan p;
    srt_status st = rt_plan_parse(ctx, "toy.cu", TOY_PLAN_JSON, strlen(TOY_PLAN_JSON), &p);
    CHECK(st == SRT_OK);
    if (st != SRT_OK) fprintf(stderr, "%s\n", srt_last_error(ctx));
    if (st == SRT_OK) {
        CHECK(strcmp(p.model, "toy") == 0 && strcmp(p.source, "toy.arch") == 0);
        CHECK(p.vocab == 8 && p.segment == 4 && p.d_model == 4 && p.arena_bytes == 512);
        CHECK(p.nweights == 4 && p.nstate == 1 && p.nkernels == 1 && p.nsteps == 2 && p.nprograms == 1);
        CHECK(strcmp(p.programs[0].name, "forward") == 0 && p.programs[0].tmin == 1 && p.programs[0].tmax == 4);
        CHECK(p.scalar_min[0] == 1 && p.scalar_max[0] == 4 && p.scalar_max[1] == 15 && p.scalar_max[3] == 1);
        CHECK(p.nconsts == 1 && p.consts[0].dtype == DT_F32 && p.consts[0].count == 2 && p.const_bytes == 256);
        CHECK(((const float *)p.consts[0].data)[0] == 2.0f && ((const float *)p.consts[0].data)[1] == 0.5f);
        CHECK(p.state[0].role == 1 && p.state[0].capacity == 16 && p.state[0].rank == 1 && p.state[0].shape[0] == 16);
        CHECK(p.nlaunches == 1 && p.ngemms == 1 && p.max_args == 6);
        CHECK(p.kernels[0].nparams == 6 && p.kernels[0].params[0] == RT_ARG_REF &&
              p.kernels[0].params[3] == RT_ARG_INT && p.kernels[0].params[4] == RT_ARG_FLOAT);
        CHECK(p.weights[1].transpose && p.weights[1].dtype == DT_F16 && p.weights[1].bytes == 48);
        CHECK(p.weights[0].offset == 0 && p.weights[1].offset == 256 && p.weights[2].offset == 512);
        CHECK(p.weights[3].optional && p.weight_bytes == 1024);
        CHECK(p.state_bytes == 64 && p.state[0].persistent);
        const RtStep *l = &p.steps[0];
        CHECK(l->op == RT_STEP_LAUNCH && l->kernel == 0 && l->line == 3 && l->nargs == 6);
        CHECK(symdim_eval(l->grid[0], &e3) == 3 && symdim_eval(l->block[0], &e3) == 4);
        CHECK(l->args[1].kind == RT_ARG_REF && l->args[1].ref.kind == RT_REF_WEIGHT);
        CHECK(l->args[3].kind == RT_ARG_INT && symdim_eval(l->args[3].dim, &e3) == 3);
        CHECK(l->args[4].kind == RT_ARG_FLOAT && l->args[4].f == 0.5f);
        CHECK(l->args[5].ref.kind == RT_REF_STATE && l->args[5].ref.offset == 16);
        const RtStep *g = &p.steps[1];
        CHECK(g->op == RT_STEP_GEMM && g->transa && !g->transb && g->line == 7);
        SymEnv e2 = {.T = 2, .B = 1};
        CHECK(symdim_eval(g->n, &e2) == 2 && symdim_eval(g->ldc, &e2) == 8 && g->C.offset == 256);
        rt_plan_free(ctx, &p);
    }

    /* extraction from a .cu */
    const char *cu = "// header\n/* SHORTC-PLAN-BEGIN\n{\"x\": 1}\nSHORTC-PLAN-END */\nextern \"C\" __global__ void k() {}\n";
    const char *json;
    size_t jlen;
    CHECK(rt_plan_extract(ctx, "a.cu", cu, strlen(cu), &json, &jlen) == SRT_OK);
    CHECK(jlen == 10 && strncmp(json, "\n{\"x\": 1}\n", jlen) == 0);
    CHECK(rt_plan_extract(ctx, "a.cu", "int x;", 6, &json, &jlen) == SRT_ERR_FORMAT);
    CHECK_HAS(srt_last_error(ctx), "a.cu: no plan found");
    CHECK(rt_plan_extract(ctx, "a.cu", "/* SHORTC-PLAN-BEGIN {", 22, &json, &jlen) == SRT_ERR_FORMAT);
    CHECK_HAS(srt_last_error(ctx), "not closed");

    /* malformed plans */
    bad("{\"format\": \"shortc-plan\",\n \"version\": 1,,}", "invalid JSON at line 2");
    bad("[1, 2]", "expected a JSON object, got an array");
    mutate("\"shortc-plan\"", "\"other\"", "format: expected \"shortc-plan\"");
    /* a plan of version 1 (before state and programs) or of a later shortc gets a clear error */
    mutate("\"version\": 2", "\"version\": 1", "version: plan version 1 (from an older shortc, before state and programs) "
                                                 "is not supported; emit the .cu again");
    mutate("\"version\": 2", "\"version\": 3", "version: plan version is newer than this shortc reads (version 2)");
    mutate("\"version\": 2", "\"version\": 1.5", "version: expected an integer, got a number");
    mutate("\"vocab\": 8, ", "", "config.vocab: missing");
    mutate("\"arena_bytes\": 512", "\"arena_bytes\": \"512\"", "arena_bytes: expected an integer, got a string");
    mutate("\"kernel\": \"toy_embed\"", "\"kernel\": \"toy_other\"", "programs[0].steps[0].kernel: 'toy_other' is not in the plan's kernels");
    /* the optional "node" (the IR node a step computes) must be a non-negative integer */
    mutate("\"kernel\": \"toy_embed\"", "\"kernel\": \"toy_embed\", \"node\": \"x\"", "programs[0].steps[0].node");
    mutate("\"kernel\": \"toy_embed\"", "\"kernel\": \"toy_embed\", \"node\": -2", "programs[0].steps[0].node");
    mutate("\"kernel\": \"toy_embed\"", "\"kernel\": \"toy_embed\", \"node\": 1.5", "programs[0].steps[0].node");
    mutate("{\"weight\": 0}, {\"arena\": 64}", "{\"weight\": 9}, {\"arena\": 64}", "programs[0].steps[0].args[1].weight: 9 is out of range [0, 3]");
    mutate("{\"arena\": 64}, {\"int\"", "{\"arena\": 600}, {\"int\"", "programs[0].steps[0].args[2].arena: 600 is out of range [0, 511]");
    mutate("{\"state\": 0, \"offset\": 16}", "{\"state\": 0, \"offset\": 64}", "programs[0].steps[0].args[5].offset: 64 is out of range [0, 63]");
    mutate("{\"float\": 0.5}", "{\"float\": \"x\"}", "programs[0].steps[0].args[4]: float: expected a number, got a string");
    mutate("{\"float\": 0.5}", "{\"pointer\": 1}", "programs[0].steps[0].args[4]: expected {\"arena\"");
    mutate("{\"int\": {\"t\": 1}}", "{\"int\": {\"t\": 1, \"div\": 0}}", "programs[0].steps[0].args[3].int.div: 0 is out of range");
    mutate("{\"int\": {\"t\": 1}}", "{\"int\": {\"t\": 1, \"x\": 0}}", "programs[0].steps[0].args[3].int: unexpected key 'x'");
    mutate("\"grid\": [{\"t\": 1}, 1, 1]", "\"grid\": [{\"t\": 1}, 1]", "programs[0].steps[0].grid: expected 3 dimensions, got 2");
    mutate("\"block\": [4, 1, 1]", "\"block\": [2048, 1, 1]", "programs[0].steps[0].block: 2048 threads per block");
    mutate("\"op\": \"gemm\"", "\"op\": \"conv\"", "programs[0].steps[1].op: unknown op 'conv'");
    mutate("\"transa\": \"T\"", "\"transa\": \"C\"", "programs[0].steps[1].transa: expected \"N\" or \"T\"");
    mutate("\"atype\": \"f32\"", "\"atype\": \"f64\"", "programs[0].steps[1].atype: unknown dtype 'f64'");
    mutate("\"compute\": \"f32\"", "\"compute\": \"f16\"", "programs[0].steps[1].compute: \"f32\" (CUBLAS_COMPUTE_32F) or");
    mutate("\"compute\": \"f32\"", "\"compute\": \"f32\", \"epilogue\": \"bias\"", "programs[0].steps[1].bias: epilogue 'bias' needs a bias");
    mutate("\"compute\": \"f32\"", "\"compute\": \"f32\", \"epilogue\": \"tanh\"", "programs[0].steps[1].epilogue: one of none, bias");
    mutate("\"compute\": \"f32\"", "\"compute\": \"f32\", \"bias\": {\"arena\": 0}", "programs[0].steps[1].bias: a bias without an epilogue");
    mutate("\"C\": {\"arena\": 256}", "\"C\": 256", "programs[0].steps[1].C: expected {\"arena\"");
    mutate("\"file_shape\": [6, 4]", "\"file_shape\": [6, 5]", "weights[1].file_shape: does not match shape transposed");
    mutate("\"shape\": [4], \"dtype\": \"bf16\"", "\"shape\": [0], \"dtype\": \"bf16\"", "weights[2].shape: element 0: expected a positive integer");
    mutate("\"dtype\": \"bf16\"", "\"dtype\": \"bf17\"", "weights[2].dtype: unknown dtype 'bf17'");
    mutate("\"dtype\": \"bf16\"", "\"dtype\": \"bf16\", \"round\": \"f16\"", "weights[2].round: values rounded to f16 must be held in f32");
    mutate("\"dtype\": \"bf16\"", "\"dtype\": \"bf16\", \"round\": \"f64\"", "weights[2].round: unknown dtype 'f64'");
    mutate("\"name\": \"ln_f.bias\"", "\"name\": \"ln_f.weight\"", "weights[3].name: 'ln_f.weight' is listed twice");
    mutate("\"logits\": {\"arena\": 256, \"dtype\": \"f32\"", "\"logits\": {\"arena\": 256, \"dtype\": \"f16\"", "logits.dtype: logits must be f32");
    mutate("\"shape\": [{\"t\": 1}, 8]", "\"shape\": [{\"t\": 1}, 9]", "logits.shape: expected [{\"t\": 1}, 8]");
    mutate("\"logits\": {\"arena\": 256", "\"logits\": {\"arena\": 448", "logits: 4 x 8 logits at offset 448 overrun the 512-byte arena");
    mutate("\"steps\": [", "\"steps\": [] , \"x\": [", "programs[0].steps: no steps");
    mutate("\"name\": \"toy_embed\"", "\"name\": \"toy-embed\"", "kernels[0].name: 'toy-embed' is not a C identifier");
    /* launch arguments must match the kernel's params in count and kind */
    mutate("{\"float\": 0.5}", "{\"int\": 2}",
           "programs[0].steps[0].args[4]: step 0 passes an int as argument 4 of kernel 'toy_embed', whose parameter 4 is a float");
    mutate("{\"int\": {\"t\": 1}}", "{\"arena\": 128}",
           "programs[0].steps[0].args[3]: step 0 passes a pointer (REF) as argument 3 of kernel 'toy_embed', whose parameter 3 is an int");
    mutate("\"int\", \"float\", \"ptr\"]", "\"int\", \"float\", \"int\"]",
           "programs[0].steps[0].args[5]: step 0 passes a pointer (REF) as argument 5 of kernel 'toy_embed', whose parameter 5 is an int");
    mutate(", {\"state\": 0, \"offset\": 16}]", "]",
           "programs[0].steps[0].args: step 0 passes 5 arguments to kernel 'toy_embed', which takes 6");
    mutate("\"float\", \"ptr\"]", "\"float\", \"ptr\", \"ptr\"]",
           "programs[0].steps[0].args: step 0 passes 6 arguments to kernel 'toy_embed', which takes 7");
    mutate(",\n   \"params\": [\"ptr\", \"ptr\", \"ptr\", \"int\", \"float\", \"ptr\"]", "", "kernels[0].params: missing");
    mutate("\"params\": [\"ptr\"", "\"params\": [\"pointer\"",
           "kernels[0].params[0]: expected \"ptr\", \"int\" or \"float\", got a string 'pointer'");
    mutate("\"params\": [\"ptr\"", "\"params\": [1", "kernels[0].params[0]: expected \"ptr\", \"int\" or \"float\", got a number");

    /* v2: scalars, constants, state entries, programs */
    mutate(", {\"name\": \"P\", \"min\": 0, \"max\": 15}", "", "scalars: no entry for 'P'");
    mutate("\"name\": \"B\"", "\"name\": \"T\"", "scalars[3].name: 'T' is listed twice");
    mutate("\"name\": \"B\"", "\"name\": \"Q\"", "scalars[3].name: expected \"T\", \"P\", \"fill\" or \"B\"");
    mutate("\"max\": 4}", "\"max\": 5}", "scalars: T must range over 1 to the segment (4)");
    mutate("\"bytes\": 64,", "\"bytes\": 60,", "state[0].bytes: 60 bytes, but its shape and dtype take 64");
    mutate("\"kv_cache\"", "\"kvcache\"", "state[0].role: unknown role 'kvcache'");
    mutate("\"capacity\": 16, ", "", "state[0].capacity: missing");
    mutate("\"capacity\": 16, ", "\"capacity\": 15, ", "state[0].capacity: 15 rows cannot hold the positions the plan allows (P up to 15)");
    mutate("\"dtype\": \"f32\", \"values\"", "\"dtype\": \"f16\", \"values\"", "constants[0].dtype: constants are i32 or f32");
    mutate("\"values\": [2.0, 0.5]", "\"values\": []", "constants[0].values: an empty table");
    mutate("\"dtype\": \"f32\", \"values\": [2.0, 0.5]", "\"dtype\": \"i32\", \"values\": [2.0, 0.5]",
           "constants[0].values: entry 1: expected a 32-bit integer");
    mutate("{\"state\": 0, \"offset\": 16}", "{\"const\": 0, \"offset\": 8}", "programs[0].steps[0].args[5].offset: 8 is out of range [0, 7]");
    mutate("{\"state\": 0, \"offset\": 16}", "{\"const\": 1}", "programs[0].steps[0].args[5].const: 1 is out of range [0, 0]");
    mutate("\"t\": [1, 4]", "\"t\": [2, 4]", "programs: no program runs 1 tokens (T 1 to 4 must be covered)");
    mutate("\"t\": [1, 4]", "\"t\": [1, 5]", "programs[0].t: expected [first, last] with 1 <= first <= last <= 4");
    mutate("\"programs\": [", "\"programs\": [{\"name\": \"forward\", \"t\": [1, 1], \"steps\": [" TOY_STEPS("{\"arena\": 8}") "]}, ",
           "programs[1].name: 'forward' is listed twice");
    mutate("\"programs\": [", "\"steps\": [], \"programs\": [", "toy.cu: plan: unknown field 'steps'");
    /* the programs run on request (loss, sample) come with their objects and are never chosen by T */
    {
#define TOY_LOSS "\"loss\": {\"targets\": {\"arena\": 0}, \"nll\": {\"arena\": 16}}, \"buffers\": []"
#define TOY_LOSS_PROGRAM "{\"name\": \"loss\", \"t\": [1, 4], \"steps\": [" TOY_STEPS("{\"arena\": 8}") "]}, "
        mutate("\"buffers\": []", TOY_LOSS,
               "loss: a \"loss\" object and a program named \"loss\" come together; the plan has only the object");
        mutate("\"programs\": [", "\"programs\": [{\"name\": \"sample\", \"t\": [1, 4], \"steps\": ["
               TOY_STEPS("{\"arena\": 8}") "]}, ",
               "sample: a \"sample\" object and a program named \"sample\" come together; the plan has only the program");
        char *j1 = rt_test_replace(TOY_PLAN_JSON, "\"buffers\": []", TOY_LOSS);
        char *j2 = rt_test_replace(j1, "\"programs\": [", "\"programs\": [" TOY_LOSS_PROGRAM);
        char *j3 = rt_test_replace(j2, "{\"arena\": 16}}", "{\"arena\": 500}}");
        char *j4 = rt_test_replace(j2, "\"t\": [1, 4], \"steps\": [", "\"t\": [1, 3], \"steps\": [");
        bad(j3, "loss.nll: 16 bytes must lie in the 512-byte arena");
        bad(j4, "loss: program \"loss\" must run T 1 to 4 (the segment)");
        RtPlan q;
        CHECK(j2 && rt_plan_parse(ctx, "toy.cu", j2, strlen(j2), &q) == SRT_OK);
        if (j2 && q.nprograms == 2) {
            CHECK(q.loss_program == 0 && q.sample_program == -1 && q.programs[0].on_request);
            CHECK(rt_plan_program(&q, 4) == &q.programs[1] && rt_plan_program(&q, 1) == &q.programs[1]);
            CHECK(q.loss_targets.offset == 0 && q.loss_nll.offset == 16);
            rt_plan_free(ctx, &q);
        }
        free(j1), free(j2), free(j3), free(j4);
#undef TOY_LOSS
#undef TOY_LOSS_PROGRAM
    }
    /* "batch": batched decode steps need a decode program, B ranging 0 to their max, a table inside the arena */
    {
#define TOY_BATCH(max, at) "\"batch\": {\"max\": " #max ", \"sequences\": {\"arena\": " #at "}}, \"buffers\": []"
        mutate("\"buffers\": []", TOY_BATCH(2, 0), "batch: batched decode steps need a program named \"decode\"");
        char *j1 = rt_test_replace(TOY_PLAN_JSON, "\"programs\": [", "\"programs\": [" TOY_DECODE_PROGRAM);
        char *j2 = rt_test_replace(j1, "{\"name\": \"B\", \"min\": 1, \"max\": 1}", "{\"name\": \"B\", \"min\": 0, \"max\": 2}");
        char *ok = rt_test_replace(j2, "\"buffers\": []", TOY_BATCH(2, 0));
        char *range = rt_test_replace(j1, "\"buffers\": []", TOY_BATCH(2, 0));
        char *big = rt_test_replace(j2, "\"buffers\": []", TOY_BATCH(5, 0));
        char *out = rt_test_replace(j2, "\"buffers\": []", TOY_BATCH(2, 500));
        bad(range, "batch.max: 2 sequences, but the scalar B ranges over 1 to 1 (expected 0 to 2)");
        bad(big, "batch.max");
        bad(out, "batch.sequences: 2 positions and sequence indices must lie in the 512-byte arena");
        RtPlan q;
        CHECK(ok && rt_plan_parse(ctx, "toy.cu", ok, strlen(ok), &q) == SRT_OK);
        if (ok && q.nprograms == 2) {
            CHECK(q.decode_batch == 2 && q.decode_program == 0 && q.seq_table.kind == RT_REF_ARENA && q.seq_table.offset == 0);
            rt_plan_free(ctx, &q);
        }
        free(j1), free(j2), free(ok), free(range), free(big), free(out);
#undef TOY_BATCH
    }
    /* DIMs over P and the state's fill, a REF into the constants, and a second program for one token */
    {
        char *j1 = rt_test_replace(TOY_PLAN_JSON, "{\"int\": {\"t\": 1}}", "{\"int\": {\"fill\": 1, \"t\": 1, \"p\": 2, \"b\": 3}}");
        char *j2 = rt_test_replace(j1, "\"programs\": [", "\"programs\": [" TOY_DECODE_PROGRAM);
        RtPlan q;
        CHECK(rt_plan_parse(ctx, "toy.cu", j2, strlen(j2), &q) == SRT_OK);
        if (q.nprograms == 2) {
            SymEnv env = {.T = 2, .P = 5, .fill = 5, .B = 1};
            CHECK(symdim_eval(q.steps[2].args[3].dim, &env) == 5 + 2 + 10 + 3);
            CHECK(rt_plan_program(&q, 1) == &q.programs[0] && rt_plan_program(&q, 2) == &q.programs[1]);
            CHECK(q.steps[0].args[5].ref.kind == RT_REF_CONST && q.steps[0].args[5].ref.index == 0);
            CHECK(q.nlaunches == 1 && q.ngemms == 1 && q.nsteps == 4); /* per forward: the program of a segment */
            rt_plan_free(ctx, &q);
        }
        free(j1);
        free(j2);
    }

    /* the plan schema (common/plan_schema.c): fields the reader does not use must still be known and well typed */
    mutate("\"buffers\": []", "\"buffers\": [], \"extra\": 1", "toy.cu: plan: unknown field 'extra'");
    mutate("\"uses\": 1", "\"uses\": \"one\"", "toy.cu: plan: kernels[0].uses: expected an integer, got a string");
    mutate("\"layer\": -1}]}", "\"layer\": -1, \"lyer\": 2}]}", "toy.cu: plan: programs[0].steps[1]: unknown field 'lyer'");
    mutate("\"buffers\": []", "\"buffers\": [{\"value\": \"%x\", \"offset\": 0, \"bytes\": 4, \"dtype\": \"f32\"}]",
           "toy.cu: plan: buffers[0]: missing field 'shape'");

    /* nothing leaks from failed parses: a fresh parse after all of them still works */
    CHECK(rt_plan_parse(ctx, "toy.cu", TOY_PLAN_JSON, strlen(TOY_PLAN_JSON), &p) == SRT_OK);
    rt_plan_free(ctx, &p);
    srt_context_destroy(ctx);
    return check_done("test_plan");
}
