/*
 * The runtime over the whole pipeline (compiler library + simulator): real
 * models from models/ opened as .arch and as emitted .cu, run on the ref and
 * sim backends (and cuda when a driver is present), compared with each
 * other; weights from a safetensors file written from the plan (with the
 * "transformer." prefix, transposed where the plan says) must give the same
 * logits as the same values from srt_model_random_weights; binding errors on
 * real names; compiler diagnostics as the error message; no allocation left
 * behind.
 */
#define _GNU_SOURCE
#include "rt_test.h"
#include "rt_internal.h"

#include <dlfcn.h>
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

static srt_context *ctx;
static char dir[256];
static const int32_t toks[12] = {3, 141, 59, 26, 5, 35, 89, 79, 32, 38, 46, 26};

/* Opens path on backend b, loads weights (file if given, else seed 5), runs toks[0..n), returns malloc'd logits. */
static float *run(const char *path, srt_backend b, const char *weights, int n, int *vocab) {
    srt_options opt;
    srt_options_init(&opt);
    opt.backend = b;
    srt_model *m = NULL;
    srt_session *s = NULL;
    float *logits = NULL;
    srt_status st = srt_model_open(ctx, path, &opt, &m);
    if (st == SRT_OK) st = weights ? srt_model_load_weights(m, weights) : srt_model_random_weights(m, 5);
    srt_model_info info;
    if (st == SRT_OK) st = srt_model_get_info(m, &info);
    if (st == SRT_OK) st = srt_session_create(m, 1, &s);
    if (st == SRT_OK) {
        CHECK(info.backend == b);
        *vocab = info.vocab;
        logits = malloc(sizeof *logits * (size_t)n * (size_t)info.vocab);
        st = srt_forward(s, toks, n, logits);
        if (st != SRT_OK) {
            free(logits);
            logits = NULL;
        }
    }
    if (st != SRT_OK) {
        fprintf(stderr, "%s on %s: %s: %s\n", path, srt_backend_name(b), srt_status_name(st), srt_last_error(ctx));
        check_failures++;
    }
    srt_model_close(m);
    return logits;
}

/* max |a - b| / (max |b| + tiny) */
static double rel_diff(const float *a, const float *b, size_t n) {
    double md = 0, mb = 1e-6;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(a[i]) || !isfinite(b[i])) return INFINITY;
        md = fmax(md, fabs((double)a[i] - b[i]));
        mb = fmax(mb, fabs((double)b[i]));
    }
    return md / mb;
}

/* Compiles models/NAME.arch to DIR/NAME.cu through the same library path srt_model_open uses. */
static void emit(const char *name, char *cu_path, size_t len) {
    char arch[256];
    snprintf(arch, sizeof arch, "models/%s.arch", name);
    char *cu = NULL, *plan = NULL;
    size_t cu_len = 0;
    CHECK(rt_compile_arch(ctx, arch, NULL, 0, NULL, &cu, &cu_len, &plan, NULL) == SRT_OK);
    snprintf(cu_path, len, "%s/%s.cu", dir, name);
    if (cu) rt_test_write(cu_path, cu, cu_len);
    rt_free(ctx, cu);
    rt_free(ctx, plan);
}

/* A safetensors file holding weights[i] of the plan as F32 in file order (random, seed), names prefixed. */
static void write_weights(const RtPlan *p, uint64_t seed, const char *path, int skip) {
    char *hdr = malloc(65536);
    size_t hn = 0, off = 0;
    hn += (size_t)sprintf(hdr + hn, "{\"__metadata__\": {\"format\": \"pt\"}");
    for (int i = 0; i < p->nweights; i++) {
        const RtPlanWeight *w = &p->weights[i];
        if (i == skip) continue;
        hn += (size_t)sprintf(hdr + hn, ", \"transformer.%s\": {\"dtype\": \"F32\", \"shape\": [", w->name);
        for (int d = 0; d < w->rank; d++) hn += (size_t)sprintf(hdr + hn, "%s%lld", d ? ", " : "", (long long)w->file_shape[d]);
        hn += (size_t)sprintf(hdr + hn, "], \"data_offsets\": [%zu, %zu]}", off, off + w->count * 4);
        off += w->count * 4;
    }
    hn += (size_t)sprintf(hdr + hn, "}");
    while ((8 + hn) % 8) hdr[hn++] = ' ';
    unsigned char *b = malloc(8 + hn + off);
    for (int i = 0; i < 8; i++) b[i] = (unsigned char)((uint64_t)hn >> (8 * i));
    memcpy(b + 8, hdr, hn);
    off = 0;
    for (int i = 0; i < p->nweights; i++) {
        const RtPlanWeight *w = &p->weights[i];
        if (i == skip) continue;
        rt_random_tensor(seed, w->name, w->rank, w->file_shape, (float *)(void *)(b + 8 + hn + off), w->count);
        off += w->count * 4;
    }
    rt_test_write(path, b, 8 + hn + off);
    free(b);
    free(hdr);
}

static bool cuda_present(void) {
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (h) dlclose(h);
    return h != NULL;
}

/* gpt2_tiny's logits of toks[0..n) on m with its current weights (malloc'd), or NULL. */
static float *logits_of(srt_model *m, int n) {
    srt_model_info info;
    srt_session *s = NULL;
    if (srt_model_get_info(m, &info) != SRT_OK || srt_session_create(m, 1, &s) != SRT_OK) return NULL;
    float *l = malloc(sizeof *l * (size_t)n * (size_t)info.vocab);
    if (srt_forward(s, toks, n, l) != SRT_OK) {
        fprintf(stderr, "forward: %s\n", srt_last_error(ctx));
        free(l);
        l = NULL;
    }
    srt_session_destroy(s);
    return l;
}

/* srt_model_open_source (an .arch as text, its imports found from its name), srt_last_error_location, and
 * srt_model_load_tensors (weights from memory, checked like a file's). */
static void check_source_and_tensors(const srt_options *opt) {
    const char *bad = "model x {\n  vocab 10;\n  bogus 3;\n}\n";
    char name[600];
    snprintf(name, sizeof name, "%s/x.arch", dir);
    srt_model *m = (srt_model *)1;
    const char *file = NULL;
    int line = 0, col = 0;
    CHECK(srt_model_open_source(ctx, name, bad, strlen(bad), opt, &m) == SRT_ERR_FORMAT && m == NULL);
    CHECK(srt_last_error_location(ctx, &file, &line, &col) == 1);
    CHECK(file && strcmp(file, name) == 0 && line == 3 && col == 3);
    CHECK_HAS(srt_last_error(ctx), "x.arch:3:3: error: unknown setting 'bogus'\n  bogus 3;\n  ^~~~~");
    CHECK(srt_model_open_source(ctx, NULL, "model\0", 6, opt, &m) == SRT_ERR_FORMAT);
    CHECK_HAS(srt_last_error(ctx), "<source>: the .arch text contains a NUL byte");
    CHECK(srt_last_error_location(ctx, &file, &line, &col) == 0 && file == NULL && line == 0);

    /* srt_mask: the causal triangle of gpt2_tiny, every layer and head; refusals */
    uint8_t *mk = NULL;
    int layers = 0, heads = 0;
    CHECK(srt_mask(ctx, "models/gpt2_tiny.arch", NULL, 0, NULL, 5, &mk, &layers, &heads) == SRT_OK);
    CHECK(layers == 2 && heads == 4);
    for (int k = 0; mk && k < layers * heads * 25; k++) CHECK(mk[k] == ((k % 25) % 5 <= (k % 25) / 5));
    srt_free(ctx, mk);
    CHECK(srt_mask(ctx, "models/gpt2_tiny.arch", NULL, 0, NULL, 129, &mk, &layers, &heads) == SRT_ERR_INVALID);
    CHECK_HAS(srt_last_error(ctx), "129 tokens: gpt2_tiny takes 1 to 128 (its segment)");
    CHECK(srt_mask(ctx, name, bad, strlen(bad), NULL, 4, &mk, &layers, &heads) == SRT_ERR_FORMAT && mk == NULL);
    CHECK(srt_last_error_location(ctx, NULL, &line, &col) == 1 && line == 3 && col == 3);

    /* srt_compare_json: the document of shortc compare --json; refusals */
    const char *paths[2] = {"models/gpt2_tiny.arch", "models/gpt2_tiny.arch"}, *names[2] = {NULL, "gpt2_small"};
    char *json = NULL;
    CHECK(srt_compare_json(ctx, paths, names, 2, NULL, &json) == SRT_OK && json);
    if (json) {
        CHECK_HAS(json, "\"schema\":\t\"shortc.compare/1\"");
        CHECK_HAS(json, "\"device\":\t\"h100-sxm\"");
        CHECK(strstr(json, "\"name\":\t\"gpt2_tiny\"") < strstr(json, "\"name\":\t\"gpt2_small\""));
    }
    srt_free(ctx, json);
    srt_cost_options co = {.device = "z80", .overlap = -1};
    CHECK(srt_compare_json(ctx, paths, NULL, 1, &co, &json) == SRT_ERR_INVALID && json == NULL);
    CHECK_HAS(srt_last_error(ctx), "unknown device 'z80'; known: h100-sxm");
    CHECK(srt_compare_json(ctx, paths, NULL, 0, NULL, &json) == SRT_ERR_INVALID);
    paths[1] = name;
    rt_test_write(name, bad, strlen(bad));
    CHECK(srt_compare_json(ctx, paths, NULL, 2, NULL, &json) == SRT_ERR_FORMAT && json == NULL);
    CHECK(srt_last_error_location(ctx, NULL, &line, &col) == 1 && line == 3 && col == 3);

    /* the text of gpt2_tiny.arch named beside it: its import of gpt2_small.arch is found */
    char *text = NULL;
    size_t len = 0;
    CHECK(rt_read_file(ctx, "models/gpt2_tiny.arch", &text, &len) == SRT_OK);
    srt_model *a = NULL, *b = NULL;
    CHECK(srt_model_open(ctx, "models/gpt2_tiny.arch", opt, &a) == SRT_OK);
    CHECK(srt_model_open_source(ctx, "models/text_copy.arch", text, len, opt, &b) == SRT_OK);
    srt_free(ctx, text);
    if (!a || !b) return;
    CHECK(srt_model_random_weights(a, 5) == SRT_OK);
    float *want = logits_of(a, 12);

    /* the same weights as tensors in memory: identical logits */
    char wpath[600];
    snprintf(wpath, sizeof wpath, "%s/tensors.safetensors", dir);
    CHECK(srt_model_save_random_weights(a, 5, wpath) == SRT_OK);
    RtSafetensors sf;
    CHECK(rt_st_open(ctx, wpath, &sf) == SRT_OK);
    srt_tensor *ts = calloc((size_t)sf.ntensors, sizeof *ts);
    for (int i = 0; i < sf.ntensors; i++) {
        const RtStTensor *t = &sf.tensors[i];
        ts[i] = (srt_tensor){.name = t->name, .dtype = "F32", .data = sf.data + t->begin, .nbytes = t->end - t->begin,
                             .shape = t->shape, .rank = t->rank};
    }
    CHECK(srt_model_load_tensors(b, ts, sf.ntensors) == SRT_OK);
    float *got = logits_of(b, 12);
    srt_model_info info;
    CHECK(srt_model_get_info(b, &info) == SRT_OK);
    if (want && got) CHECK(memcmp(want, got, sizeof *got * 12 * (size_t)info.vocab) == 0);
    free(got);

    /* refused: a missing tensor (named), a wrong dtype, a size that is not the shape's, a name given twice;
     * each failure keeps the weights loaded before */
    CHECK(srt_model_load_tensors(b, ts + 1, sf.ntensors - 1) == SRT_ERR_WEIGHTS);
    CHECK_HAS(srt_last_error(ctx), ts[0].name);
    srt_tensor keep = ts[0];
    ts[0].dtype = "I32";
    CHECK(srt_model_load_tensors(b, ts, sf.ntensors) == SRT_ERR_WEIGHTS);
    CHECK_HAS(srt_last_error(ctx), "dtype 'I32' is not supported");
    ts[0] = keep;
    ts[0].nbytes -= 4;
    CHECK(srt_model_load_tensors(b, ts, sf.ntensors) == SRT_ERR_INVALID);
    CHECK_HAS(srt_last_error(ctx), "bytes, given");
    ts[0] = keep;
    ts[1].name = ts[0].name;
    CHECK(srt_model_load_tensors(b, ts, sf.ntensors) == SRT_ERR_FORMAT);
    CHECK_HAS(srt_last_error(ctx), "duplicate tensor name");
    CHECK(srt_model_load_tensors(b, NULL, 3) == SRT_ERR_INVALID);
    got = logits_of(b, 12);
    if (want && got) CHECK(memcmp(want, got, sizeof *got * 12 * (size_t)info.vocab) == 0);
    free(got);
    /* srt_generate refuses before any forward: a count that is not the session's, a sequence without a prompt */
    srt_session *gs = NULL;
    srt_gen_seq q = {0};
    CHECK(srt_session_create(b, 1, &gs) == SRT_OK);
    CHECK(srt_generate(gs, &q, 2, 4, -1, NULL, NULL) == SRT_ERR_INVALID);
    CHECK_HAS(srt_last_error(ctx), "2 sequences for a session of 1");
    CHECK(srt_generate(gs, &q, 1, 4, -1, NULL, NULL) == SRT_ERR_INVALID);
    CHECK_HAS(srt_last_error(ctx), "sequence 0 needs a prompt, a sampler and out");
    CHECK(srt_session_position(gs) == 0);
    srt_session_destroy(gs);
    free(ts);
    free(want);
    rt_st_close(&sf);
    srt_model_close(a);
    srt_model_close(b);
}

int main(void) {
    CHECK(chdir(SHORTC_SOURCE_DIR) == 0); /* plans record their .arch relative to the source tree */
    if (!rt_test_mkdtemp(dir, sizeof dir, "model")) return check_done("test_model");
    Counter cnt = COUNTER_INIT;
    CHECK(srt_context_create(&ctx, count_alloc, &cnt) == SRT_OK);
    bool cuda = cuda_present();

    const struct {
        const char *name;
        double tol;  /* sim/cuda vs ref, relative to the largest logit */
    } models[] = {{"gpt2_tiny", 1e-4}, {"gpt2_tiny_half", 2e-2}, {"mixed_tiny", 2e-2}, {"baseline_ba_tiny", 1e-4}};
    for (size_t k = 0; k < sizeof models / sizeof *models; k++) {
        const char *name = models[k].name;
        char arch[256], cu[512];
        snprintf(arch, sizeof arch, "models/%s.arch", name);
        emit(name, cu, sizeof cu);
        int vocab = 0, v2 = 0;
        const int n = 12;
        float *ref = run(arch, SRT_BACKEND_REF, NULL, n, &vocab);
        float *ref_cu = run(cu, SRT_BACKEND_REF, NULL, n, &v2); /* .cu -> its source .arch */
        float *sim = run(cu, SRT_BACKEND_SIM, NULL, n, &v2);
        if (ref && ref_cu) CHECK(memcmp(ref, ref_cu, sizeof *ref * (size_t)n * (size_t)vocab) == 0);
        if (ref && sim) {
            double d = rel_diff(sim, ref, (size_t)n * (size_t)vocab);
            printf("%-18s sim vs ref: %.3g (tolerance %.0e)\n", name, d, models[k].tol);
            CHECK(d <= models[k].tol);
        }
        if (cuda && ref) {
            float *cu_l = run(cu, SRT_BACKEND_CUDA, NULL, n, &v2);
            if (cu_l) {
                double d = rel_diff(cu_l, ref, (size_t)n * (size_t)vocab);
                printf("%-18s cuda vs ref: %.3g\n", name, d);
                CHECK(d <= models[k].tol);
            }
            free(cu_l);
        }

        /* the same weights from a file: identical logits on ref */
        RtPlan plan;
        char *cusrc = NULL, *pj = NULL;
        size_t cl;
        CHECK(rt_compile_arch(ctx, arch, NULL, 0, NULL, &cusrc, &cl, &pj, NULL) == SRT_OK);
        CHECK(pj && rt_plan_parse(ctx, arch, pj, strlen(pj), &plan) == SRT_OK);
        char wpath[600];
        snprintf(wpath, sizeof wpath, "%s/%s.safetensors", dir, name);
        write_weights(&plan, 5, wpath, -1);
        float *ref_file = run(arch, SRT_BACKEND_REF, wpath, n, &v2);
        if (ref && ref_file) CHECK(memcmp(ref, ref_file, sizeof *ref * (size_t)n * (size_t)vocab) == 0);
        float *sim_file = run(cu, SRT_BACKEND_SIM, wpath, n, &v2);
        if (sim && sim_file) CHECK(memcmp(sim, sim_file, sizeof *sim * (size_t)n * (size_t)vocab) == 0);
        /* a file lacking one tensor */
        int miss = plan.nweights / 2;
        write_weights(&plan, 5, wpath, miss);
        srt_options opt;
        srt_options_init(&opt);
        opt.backend = SRT_BACKEND_REF;
        srt_model *m;
        if (srt_model_open(ctx, arch, &opt, &m) == SRT_OK) {
            char want[700];
            snprintf(want, sizeof want, "weight '%s' is missing from %s", plan.weights[miss].name, wpath);
            CHECK(srt_model_load_weights(m, wpath) == SRT_ERR_WEIGHTS);
            CHECK_HAS(srt_last_error(ctx), want);
            srt_model_close(m);
        }
        rt_plan_free(ctx, &plan);
        rt_free(ctx, cusrc);
        rt_free(ctx, pj);
        free(ref);
        free(ref_cu);
        free(sim);
        free(ref_file);
        free(sim_file);
    }

    /* ref on a .cu whose plan the .arch no longer gives */
    {
        char cu[512];
        emit("gpt2_tiny", cu, sizeof cu);
        size_t len;
        char *text = check_read_file(cu, &len);
        /* a kernel's line 10 -> 910: still a valid plan, no longer the compiled one */
        char *edited = text ? rt_test_replace(text, "\"line\":", "\"line\":9") : NULL;
        if (edited) rt_test_write(cu, edited, strlen(edited));
        free(text);
        free(edited);
        srt_options o;
        srt_options_init(&o);
        o.backend = SRT_BACKEND_REF;
        srt_model *mm = NULL;
        CHECK(srt_model_open(ctx, cu, &o, &mm) == SRT_ERR_UNSUPPORTED && mm == NULL);
        CHECK_HAS(srt_last_error(ctx), "no longer gives the plan embedded in the .cu");
    }

    /* sessions continue the sequence from their KV caches (ref: the interpreter's; sim: the plan's state), reset
     * starts over */
    for (int b = 0; b < 2; b++) {
        srt_options o;
        srt_options_init(&o);
        o.backend = b == 0 ? SRT_BACKEND_REF : SRT_BACKEND_SIM;
        srt_model *mm = NULL;
        srt_session *ss = NULL;
        srt_model_info mi;
        CHECK(srt_model_open(ctx, "models/gpt2_tiny.arch", &o, &mm) == SRT_OK && srt_model_random_weights(mm, 5) == SRT_OK &&
              srt_session_create(mm, 1, &ss) == SRT_OK && srt_model_get_info(mm, &mi) == SRT_OK);
        if (ss) {
            CHECK(mi.stateful == 1 && mi.kv_cache == 1 && mi.max_positions == 128);
            size_t row = (size_t)mi.vocab, n = 12 * row;
            float *one = calloc(n, sizeof *one), *two = calloc(n, sizeof *two), *big = calloc((size_t)mi.segment * row, sizeof *big);
            int32_t many[128];
            for (int i = 0; i < 128; i++) many[i] = toks[i % 12];
            CHECK(srt_forward(ss, toks, 12, one) == SRT_OK && srt_session_position(ss) == 12);
            CHECK(srt_session_state_bytes(ss) == 2 * 2 * 128 * 64 * sizeof(float)); /* 2 layers x K,V x 128 x 64 */
            CHECK(srt_session_reset(ss) == SRT_OK && srt_session_position(ss) == 0);
            CHECK(srt_forward(ss, toks, 5, two) == SRT_OK && srt_forward(ss, toks + 5, 7, two + 5 * row) == SRT_OK);
            CHECK(memcmp(one, two, sizeof *one * n) == 0);
            CHECK(srt_session_reset(ss) == SRT_OK && srt_forward(ss, many, 128, big) == SRT_OK);
            CHECK(memcmp(one, big, sizeof *one * n) == 0);
            CHECK(srt_forward(ss, toks, 1, two) == SRT_ERR_UNSUPPORTED && srt_session_position(ss) == 128);
            CHECK_HAS(srt_last_error(ctx), "go past the 128 positions");
            /* only the rows asked for: the last row of a 12-token call */
            CHECK(srt_session_reset(ss) == SRT_OK && srt_forward_rows(ss, toks, 12, 11, two) == SRT_OK);
            CHECK(memcmp(two, one + 11 * row, sizeof *one * row) == 0);
            CHECK(srt_forward_rows(ss, toks, 2, 2, two) == SRT_ERR_INVALID && srt_session_position(ss) == 12);
            CHECK(mi.state_bytes == srt_session_state_bytes(ss));
            free(one);
            free(two);
            free(big);
        }
        srt_model_close(mm);
    }

    /* compiler diagnostics become the message */
    char bad[600];
    snprintf(bad, sizeof bad, "%s/bad.arch", dir);
    const char *src = "model broken {\n  vocab 256;\n  d_model 64;\n  heads 3;\n  bogus_setting 7;\n}\n";
    rt_test_write(bad, src, strlen(src));
    srt_options opt;
    srt_options_init(&opt);
    opt.backend = SRT_BACKEND_REF;
    srt_model *m = NULL;
    CHECK(srt_model_open(ctx, bad, &opt, &m) == SRT_ERR_FORMAT && m == NULL);
    CHECK_HAS(srt_last_error(ctx), "bad.arch:");
    CHECK_HAS(srt_last_error(ctx), "error");
    /* model selection */
    opt.model_name = "gpt2_small";
    CHECK(srt_model_open(ctx, "models/gpt2_tiny.arch", &opt, &m) == SRT_OK);
    srt_model_info info;
    CHECK(m && srt_model_get_info(m, &info) == SRT_OK && strcmp(info.name, "gpt2_small") == 0 && info.d_model == 768);
    srt_model_close(m);
    opt.model_name = "no_such_model";
    CHECK(srt_model_open(ctx, "models/gpt2_tiny.arch", &opt, &m) == SRT_ERR_FORMAT);
    CHECK_HAS(srt_last_error(ctx), "no_such_model");
    CHECK(srt_last_error_location(ctx, NULL, NULL, NULL) == 0); /* a diagnostic without a position */
    opt.model_name = NULL;
    check_source_and_tensors(&opt);

    CHECK(cnt.live == 1);
    srt_context_destroy(ctx);
    CHECK(cnt.live == 0);
    rt_test_rmdir(dir);
    return check_done("test_model");
}
