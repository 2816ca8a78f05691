/*
 * cost_unit.c — unit tests of the cost model (compiler/cost.c,
 * docs/cost-model.md) against figures computed by hand.
 *
 *   cost_unit MODELS_DIR
 *
 * gpt2_tiny: exact FLOPs and bytes of each GEMM, attention scores and
 * FLOPs, parameters, the token-by-token mean in closed form. gpt2_small:
 * FLOPs per token within 1% of the standard 2 N + 2 d V + 2 n_layer n_ctx d,
 * and Yoshida et al. Table 1 (seed 004): FLOPs/token for 300-token windows
 * with overlap 0..200 within 2% (non-embedding convention: no logits), with
 * the exact W / (W - K) trend. Options out of range are errors; the
 * roofline picks the right bound.
 */
#define _POSIX_C_SOURCE 200809L
#include "check.h"
#include "shortc.h"

#include <math.h>

static const char *models_dir;

/* Compiles models_dir/file through the passes and costs it; NULL (with a failed check) on error. */
static ModelCost *cost_of(Arena *a, const char *file, const CostOptions *o, char *why, size_t whylen) {
    Diag d;
    diag_init(&d, a, stderr);
    CompileOptions co = {.path = arena_printf(a, "%s/%s", models_dir, file), .stop = COMPILE_STOP_AFTER_PASSES};
    CompileResult cr;
    bool ok = shortc_compile(a, &d, &co, &cr);
    compile_result_free(&cr);
    CHECK(ok && cr.graph);
    if (!ok || !cr.graph) return NULL;
    return cost_model(cr.graph, o, why, whylen);
}

static bool near(double got, double want, double rel) { return fabs(got - want) <= rel * fabs(want); }

/* The group whose label starts with prefix, or NULL. */
static const CostGroup *group(const ModelCost *m, const char *prefix) {
    for (int i = 0; i < m->ngroups; i++)
        if (strncmp(m->groups[i].label, prefix, strlen(prefix)) == 0) return &m->groups[i];
    return NULL;
}

static void check_gemm(const ModelCost *m, const char *label, int uses, double flops, double bytes) {
    const CostGroup *g = group(m, label);
    CHECK(g != NULL);
    if (!g) {
        fprintf(stderr, "no step '%s'\n", label);
        return;
    }
    CHECK(g->gemm);
    CHECK(g->uses == uses);
    CHECK(g->per_use.flops == flops);
    CHECK(op_cost_bytes_read(&g->per_use) + op_cost_bytes_written(&g->per_use) == bytes);
}

/* gpt2_tiny: vocab 256, d 64, 4 heads x 16, ffn 256, segment 128, 2 layers, fp32. */
static void test_gpt2_tiny(void) {
    Arena a;
    arena_init(&a);
    char why[256];
    ModelCost *m = cost_of(&a, "gpt2_tiny.arch", &(CostOptions){0}, why, sizeof why);
    CHECK(m != NULL);
    if (!m) goto out;
    enum { T = 128, D = 64, F = 256, V = 256, H = 4, HD = 16, NL = 2 };
    CHECK(m->window == T && m->segment == T && m->layers == NL);
    /* GEMMs: 2 T N K FLOPs; bytes = x + w + bias (+ residual) read, y written, all fp32 */
    check_gemm(m, "matmul 128x192x64", NL, 2.0 * T * 3 * D * D, 4.0 * (T * D + D * 3 * D + 3 * D + T * 3 * D));
    check_gemm(m, "matmul 128x64x64", NL, 2.0 * T * D * D, 4.0 * (T * D + D * D + D + T * D + T * D));
    check_gemm(m, "matmul 128x256x64", NL, 2.0 * T * F * D, 4.0 * (T * D + D * F + F + T * F));
    check_gemm(m, "matmul 128x64x256", NL, 2.0 * T * D * F, 4.0 * (T * F + F * D + D + T * D + T * D));
    check_gemm(m, "logits 128x256x64", 1, 2.0 * T * V * D, 4.0 * (T * D + V * D + T * V));
    /* causal attention: T (T + 1) / 2 scores per head, 2 hd FLOPs each for q.k and for p.v */
    double scores = (double)T * (T + 1) / 2 * H;
    for (int l = 0; l < NL; l++) {
        CHECK(m->attn[l].queries == T && m->attn[l].keys == T && m->attn[l].heads == H);
        CHECK(m->attn[l].scores == scores);
        CHECK(near(m->attn[l].density, (T + 1.0) / (2.0 * T), 1e-12));
    }
    CHECK(m->flops_attention == NL * 4.0 * HD * scores);
    CHECK(m->forward.attn_scores == NL * scores);
    double gemm = NL * 2.0 * T * (3 * D * D + D * D + 2 * D * F);
    CHECK(m->flops_gemm == gemm);
    CHECK(m->flops_logits == 2.0 * T * V * D);
    CHECK(m->forward.flops == gemm + m->flops_logits + m->flops_attention);
    /* parameters: wte, wpe, per layer 2 norms and 4 biased matrices, the final norm */
    double per_layer = 4 * D + (D * 3 * D + 3 * D) + (D * D + D) + (D * F + F) + (F * D + D);
    CHECK(m->params == V * D + T * D + NL * per_layer + 2 * D);
    CHECK(m->weight_bytes == 4 * m->params);
    CHECK(m->peak_activation_bytes > 0 && m->peak_activation_bytes <= m->naive_activation_bytes);
    CHECK(m->state_bytes == 0);
    /* modes: nonoverlap / W; sliding S = W/2; overlap K = W/4 */
    CHECK(m->modes[MODE_NONOVERLAP].flops == m->forward.flops / T);
    CHECK(m->modes[MODE_SLIDING].param == T / 2 && m->modes[MODE_SLIDING].flops == m->forward.flops / (T / 2));
    CHECK(m->modes[MODE_OVERLAP].param == T / 4 && near(m->modes[MODE_OVERLAP].flops, m->forward.flops / (T - T / 4), 1e-12));
    /* token by token: token i re-runs i tokens; mean over i = 1..T in closed form */
    double per_tok_linear = (gemm + m->flops_logits) / T;
    double tri = (double)T * (T + 1) * (T + 2) / 6; /* sum of i (i + 1) / 2 */
    double want = per_tok_linear * (T + 1) / 2 + NL * 4.0 * HD * H * tri / T;
    CHECK(near(m->modes[MODE_TOKEN].flops, want, 1e-9));
out:
    arena_free(&a);
}

/* GPT-2 small against the standard estimate and against Yoshida et al. Table 1. */
static void test_gpt2_small(void) {
    Arena a;
    arena_init(&a);
    char why[256];
    const double d = 768, V = 50257, nl = 12, N = 124439808; /* HF GPT-2 small parameter count */
    ModelCost *m = cost_of(&a, "gpt2_small.arch", &(CostOptions){0}, why, sizeof why);
    CHECK(m != NULL);
    if (m) {
        CHECK(m->params == N);
        /* 2 N (embeddings only looked up, so N over-counts a little) + the logits' 2 d V + attention */
        double standard = 2 * (N - V * d - 1024 * d) + 2 * d * V + 2 * nl * 1024 * d;
        CHECK(near(m->modes[MODE_NONOVERLAP].flops, standard, 0.01));
    }
    static const int overlap[] = {0, 5, 10, 30, 50, 75, 100, 150, 200};
    static const double table1[] = {1.75e8, 1.78e8, 1.81e8, 1.94e8, 2.10e8, 2.33e8, 2.62e8, 3.50e8, 5.25e8};
    double base = 0;
    for (int i = 0; i < (int)(sizeof overlap / sizeof overlap[0]); i++) {
        CostOptions o = {.window = 300, .overlap = overlap[i], .overlap_given = true};
        ModelCost *w = cost_of(&a, "gpt2_small.arch", &o, why, sizeof why);
        CHECK(w != NULL);
        if (!w) continue;
        double body = (w->forward.flops - w->flops_logits) / (300 - overlap[i]);
        if (!near(body, table1[i], 0.02))
            fprintf(stderr, "overlap %d: %.4g FLOPs/token, Table 1 says %.3g\n", overlap[i], body, table1[i]);
        CHECK(near(body, table1[i], 0.02));
        if (i == 0) base = w->modes[MODE_OVERLAP].flops;
        CHECK(near(w->modes[MODE_OVERLAP].flops / base, 300.0 / (300 - overlap[i]), 1e-12));
    }
    arena_free(&a);
}

/* Options out of range are refused with a reason. */
static void test_bad_options(void) {
    Arena a;
    arena_init(&a);
    char why[256] = "";
    CHECK(!cost_of(&a, "gpt2_tiny.arch", &(CostOptions){.window = 129}, why, sizeof why));
    CHECK_HAS(why, "window 129 is outside 1..128");
    CHECK(!cost_of(&a, "gpt2_tiny.arch", &(CostOptions){.window = 64, .stride = 65}, why, sizeof why));
    CHECK_HAS(why, "stride 65 is outside 1..64");
    CHECK(!cost_of(&a, "gpt2_tiny.arch", &(CostOptions){.window = 64, .overlap = 64, .overlap_given = true}, why,
                   sizeof why));
    CHECK_HAS(why, "overlap 64 is outside 0..63");
    arena_free(&a);
}

/* The roofline takes the larger of compute and memory time at the dtype's peak. */
static void test_roofline(void) {
    const DeviceSpec *h = device_find("h100-sxm");
    CHECK(h != NULL && device_find("a100-sxm") && device_find("l4") && !device_find("h100"));
    if (!h) return;
    OpCost c = {.flops = 1e12};
    c.bytes_read[DT_F32] = 1e6;
    CHECK(near(roofline_seconds(h, &c, true, DT_F32), 1e12 / h->fp32, 1e-12));
    CHECK(near(roofline_seconds(h, &c, true, DT_F16), 1e12 / h->fp16, 1e-12));
    CHECK(near(roofline_seconds(h, &c, true, DT_BF16), 1e12 / h->bf16, 1e-12));
    OpCost mem = {.flops = 1};
    mem.bytes_written[DT_F16] = 3.35e9;
    CHECK(near(roofline_seconds(h, &mem, false, DT_F16), 3.35e9 / h->bandwidth, 1e-12));
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: cost_unit MODELS_DIR\n");
        return 2;
    }
    models_dir = argv[1];
    test_gpt2_tiny();
    test_gpt2_small();
    test_bad_options();
    test_roofline();
    return check_done("cost_unit");
}
