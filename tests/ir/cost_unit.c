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
 * roofline picks the right bound; the ptxas log and PTX mix readers and the
 * occupancy limits on literal inputs.
 */
#define _POSIX_C_SOURCE 200809L
#include "check.h"
#include "shortc.h"

#include <math.h>

static const char *models_dir;

/* The graph of models_dir/file after the passes, in a (fused unless no_fuse); NULL (with a failed check) on error. */
static Graph *graph_of(Arena *a, const char *file, bool no_fuse) {
    Diag d;
    diag_init(&d, a, stderr);
    CompileOptions co = {.path = arena_printf(a, "%s/%s", models_dir, file), .stop = COMPILE_STOP_AFTER_PASSES,
                         .no_fuse = no_fuse};
    CompileResult cr;
    bool ok = shortc_compile(a, &d, &co, &cr);
    compile_result_free(&cr);
    CHECK(ok && cr.graph);
    return ok ? cr.graph : NULL;
}

/* Compiles models_dir/file through the passes and costs it; NULL (with a failed check) on error. */
static ModelCost *cost_of(Arena *a, const char *file, const CostOptions *o, char *why, size_t whylen) {
    Graph *g = graph_of(a, file, false);
    return g ? cost_model(g, o, why, whylen) : NULL;
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
    /* the projections' residual adds are fused into the next norm (pass_fuse), not into the GEMM */
    check_gemm(m, "matmul 128x64x64", NL, 2.0 * T * D * D, 4.0 * (T * D + D * D + D + T * D));
    check_gemm(m, "matmul 128x256x64", NL, 2.0 * T * F * D, 4.0 * (T * D + D * F + F + T * F));
    check_gemm(m, "matmul 128x64x256", NL, 2.0 * T * D * F, 4.0 * (T * F + F * D + D + T * D));
    /* a norm with the add fused in: both operands, gamma and beta read; the sum and the result written */
    const CostGroup *na = group(m, "norm.layernorm eps=1e-05 +add [");
    CHECK(na && na->uses == 2 * NL - 1 && !na->gemm);
    CHECK(na && op_cost_bytes_read(&na->per_use) == 4.0 * (2 * T * D + 2 * D));
    CHECK(na && op_cost_bytes_written(&na->per_use) == 4.0 * 2 * T * D);
    /* the final norm's sum is read by nothing else: not stored */
    const CostGroup *last = group(m, "norm.layernorm eps=1e-05 +add sum_unused");
    CHECK(last && last->uses == 1 && op_cost_bytes_written(&last->per_use) == 4.0 * T * D);
    const CostGroup *in_norm = group(m, "add in_norm");
    CHECK(in_norm && op_cost_bytes_read(&in_norm->per_use) + op_cost_bytes_written(&in_norm->per_use) == 0);
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
    CHECK(m->state_bytes == NL * 2.0 * T * D * 4); /* fp32 K and V per layer at capacity = 128 positions */
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

/* The ptxas -v reader, the PTX mix counter and the occupancy limits (compiler/kernel_facts.c). */
static void test_kernel_facts(void) {
    static const char log[] =
        "ptxas info    : 0 bytes gmem\n"
        "ptxas info    : Compiling entry function 'k_attn' for 'sm_80'\n"
        "ptxas info    : Function properties for k_attn\n"
        "ptxas         .     8 bytes stack frame, 4 bytes spill stores, 12 bytes spill loads\n"
        "ptxas info    : Used 72 registers, used 1 barriers, 5248 bytes smem, 400 bytes cmem[0]\n"
        "ptxas info    : Compiling entry function 'k_copy' for 'sm_80'\n"
        "ptxas info    : Function properties for k_copy\n"
        "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
        "ptxas info    : Used 12 registers, 360 bytes cmem[0]\n";
    KernelFacts t[4];
    int n = 0;
    CHECK(ptxas_parse_log(log, 80, t, &n, 4) == 2 && n == 2);
    CHECK(strcmp(t[0].name, "k_attn") == 0 && t[0].entry && t[0].regs == 72 && t[0].smem == 5248);
    CHECK(t[0].barriers == 1 && t[0].stack == 8 && t[0].spill_st == 4 && t[0].spill_ld == 12);
    CHECK(strcmp(t[1].name, "k_copy") == 0 && t[1].regs == 12 && t[1].smem == 0 && t[1].barriers == 0);
    int m = 0;
    CHECK(ptxas_parse_log(log, 80, t, &m, 1) == -1); /* table full */
    CHECK(ptxas_parse_log("ptxas         .     bytes stack frame\n", 80, t, &m, 4) == -1);
    static const char ptx[] =
        ".visible .entry k_attn(\n"
        "\t.param .u64 k_attn_param_0\n)\n{\n"
        "\tld.global.nc.v4.f32 {%f1, %f2, %f3, %f4}, [%rd1];\n"
        "\tld.global.v2.f32 {%f5, %f6}, [%rd2];\n"
        "\tld.global.f32 %f7, [%rd3];\n"
        "\t@%p1 ld.global.u16 %rs1, [%rd4];\n"
        "\tfma.rn.f32 %f8, %f1, %f2, %f3;\n"
        "\tfma.rn.f16x2 %r1, %r2, %r3, %r4;\n"
        "\tmma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f1}, {%r1}, {%r2}, {%f2};\n"
        "\tld.shared.f32 %f9, [%r5];\n"
        "\tbar.sync 0;\n}\n"
        ".visible .entry k_copy(\n)\n{\n\tld.global.f32 %f1, [%rd1];\n"
        "\tst.global.v4.u32 [%rd2], {%r1, %r2, %r3, %r4};\n\tst.global.v2.f32 [%rd3], {%f1, %f2};\n}\n";
    ptx_count_mix(ptx, t, 2);
    const PtxMix *x = &t[0].mix;
    CHECK(x->ld_global_128 == 1 && x->ld_global_64 == 1 && x->ld_global_32 == 2);
    CHECK(x->ffma == 1 && x->hfma == 1 && x->mma == 1 && x->ld_shared == 1 && x->bar == 1);
    CHECK(t[1].mix.ld_global_32 == 1 && t[1].mix.ffma == 0);
    CHECK(x->st_global_128 == 0 && t[1].mix.st_global_128 == 1); /* 128-bit stores only */
    const DeviceSpec *h = device_find("h100-sxm"), *a = device_find("a100-sxm");
    if (!h || !a) return;
    /* 72 regs x 32 lanes = 2304 per warp, 4 warps: 65536 / 9216 = 7 blocks (registers bind) */
    CHECK(occupancy_blocks(h, 72, 5248, 128) == 7);
    /* 12 regs, 192 threads: 6 warps, 64 / 6 = 10 blocks (warps bind) */
    CHECK(occupancy_blocks(h, 12, 0, 192) == 10);
    /* 32 threads, tiny: the 32-block limit binds */
    CHECK(occupancy_blocks(h, 8, 0, 32) == 32);
    /* 48 KB of shared memory: 228 / 48 = 4 on H100, 164 / 48 = 3 on A100 */
    CHECK(occupancy_blocks(h, 16, 48 * 1024, 64) == 4 && occupancy_blocks(a, 16, 48 * 1024, 64) == 3);
    CHECK(occupancy_blocks(h, 16, 0, 0) == 0);
}

/* sass_count_mix on a cuobjdump -sass listing of two kernels (lines as cuobjdump prints them). */
static void test_sass_mix(void) {
    static const char sass[] =
        "\n\tcode for sm_90\n\t\tFunction : k_tc\n"
        "\t.headerflags\t@\"EF_CUDA_SM90 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)\"\n"
        "        /*0000*/                   LDC R1, c[0x0][0x28] ;             /* 0x00000a00ff017b82 */\n"
        "                                                                      /* 0x000ff00000000800 */\n"
        "        /*0010*/                   LDG.E.128 R4, desc[UR4][R2.64] ;   /* 0x0000000402047981 */\n"
        "        /*0020*/               @!P0 LDG.E.64 R8, desc[UR4][R2.64] ;   /* 0x0000000402087981 */\n"
        "        /*0030*/                   LDG.E.U16 R9, desc[UR4][R2.64] ;   /* 0x0000000402097981 */\n"
        "        /*0040*/                   LDG.E R10, desc[UR4][R2.64] ;      /* 0x00000004020a7981 */\n"
        "        /*0050*/                   LDGSTS.E.BYPASS.128 [R3], desc[UR4][R4.64] ; /* 0x0 */\n"
        "        /*0060*/                   LDSM.16.M88.4 R12, [R3] ;          /* 0x0 */\n"
        "        /*0070*/                   LDSM.16.MT88.4 R16, [R3] ;         /* 0x0 */\n"
        "        /*0080*/                   HMMA.16816.F32.BF16 R20, R12, R16, R20 ; /* 0x0 */\n"
        "        /*0090*/                   LDS R5, [R3] ;                     /* 0x0 */\n"
        "        /*00a0*/                   STS.128 [R3], R4 ;                 /* 0x0 */\n"
        "        /*00b0*/                   SHFL.BFLY PT, R6, R5, 0x1, 0x1f ;  /* 0x0 */\n"
        "        /*00c0*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;      /* 0x0 */\n"
        "        /*00d0*/                   FFMA R7, R6, R5, R7 ;              /* 0x0 */\n"
        "        /*00e0*/                   HFMA2 R7, R6, R5, R7 ;             /* 0x0 */\n"
        "        /*00e8*/                   HFMA2.MMA R8, -RZ, RZ, 1.875, 0 ;  /* 0x0 */\n"
        "        /*00f0*/                   STL [R1], R7 ;                     /* 0x0 */\n"
        "        /*0100*/                   LDL R7, [R1] ;                     /* 0x0 */\n"
        "        /*0110*/                   EXIT ;                             /* 0x0 */\n"
        "        /*0120*/                   BRA 0x120;                         /* 0x0 */\n"
        "        /*0130*/                   NOP;                               /* 0x0 */\n"
        "\t\t..........\n\n\t\tFunction : k_other\n"
        "        /*0000*/                   FFMA R7, R6, R5, R7 ;              /* 0x0 */\n";
    KernelFacts t[3] = {{.name = "k_tc", .entry = true, .arch = 90}, {.name = "k_tc", .entry = true, .arch = 80},
                        {.name = "k_gone", .entry = true, .arch = 90}};
    CHECK(sass_count_mix(sass, 90, t, 3) == 1);
    const SassMix *m = &t[0].sass;
    CHECK(t[0].has_sass && !t[1].has_sass && !t[2].has_sass);
    CHECK(m->total == 19); /* LDC .. EXIT; the branch-to-self and the NOP are padding */
    CHECK(m->ld_global_128 == 1 && m->ld_global_64 == 1 && m->ld_global_16 == 1 && m->ld_global_32 == 1);
    CHECK(m->cp_async == 1 && m->ldsm == 2 && m->mma == 1 && m->ld_shared == 1 && m->st_shared == 1);
    CHECK(m->shfl == 1 && m->bar == 1 && m->ffma == 1 && m->hfma == 1 /* not the constant move */ && m->st_local == 1 && m->ld_local == 1);
    CHECK(sass_count_mix("no listing here\n", 90, t, 3) == -1);
}

/* Kernel traffic of gpt2_tiny at T = segment, fused or not. */
static void kernel_traffic(bool no_fuse, double *moved, double *minimum) {
    Arena a;
    arena_init(&a);
    Graph *g = graph_of(&a, "gpt2_tiny.arch", no_fuse);
    *moved = *minimum = -1;
    if (g) cost_kernel_traffic(g, g->spec->segment, moved, minimum);
    arena_free(&a);
}

/* Fused, the generated kernels move the minimum (every epilogue in cuBLASLt, every residual add in a
 * norm); unfused, the bias / activation / add kernels move more. */
static void test_kernel_traffic(void) {
    enum { T = 128, D = 64, F = 256, NL = 2 };
    double moved, minimum, umoved, uminimum;
    kernel_traffic(false, &moved, &minimum);
    kernel_traffic(true, &umoved, &uminimum);
    CHECK(moved == minimum && moved > 0);
    /* the unfused graph's bias, act and add kernels: each reads and writes [T, width] (+ the bias) */
    double extra = NL * 4.0 * (2.0 * T * 3 * D + 3 * D + 2.0 * T * D + D + 2.0 * T * F + F + 2.0 * T * D + D) /* biases */
                   + NL * 4.0 * 2.0 * T * F                                                               /* gelu */
                   + NL * 2 * 4.0 * 3.0 * T * D;                                                          /* adds */
    /* fused, the norms read both operands of each add and write its sum (+2 [T, D] per add), except the
     * last add, whose sum only the final norm reads (+1) */
    double fused_norm_extra = NL * 2 * 4.0 * 2.0 * T * D - 4.0 * T * D;
    CHECK(near(umoved, moved + extra - fused_norm_extra, 1e-12));
}

/* Token by token through the cache costs what one call costs: the tokens at positions 0..T-1 sum to the forward
 * on T tokens (every node but attention is linear in T; attention's row pairs telescope), for causal and for a
 * sparse kind. */
static void cached_tokens_sum_to(const char *model, int T) {
    Arena a;
    arena_init(&a);
    Graph *g = graph_of(&a, arena_printf(&a, "%s.arch", model), false);
    if (g) {
        OpCost whole, one;
        cost_forward(g, T, &whole);
        double flops = 0, scores = 0;
        for (int C = 0; C < T; C++) {
            cost_cached_token(g, C, &one);
            flops += one.flops, scores += one.attn_scores;
        }
        CHECK(near(flops, whole.flops, 1e-12) && near(scores, whole.attn_scores, 1e-12));
        if (!near(flops, whole.flops, 1e-12))
            fprintf(stderr, "%s: cached tokens %.17g FLOPs, one call %.17g\n", model, flops, whole.flops);
    }
    arena_free(&a);
}

static void test_cached_token(void) {
    cached_tokens_sum_to("gpt2_tiny", 37);
    cached_tokens_sum_to("local_tiny", 45);
    cached_tokens_sum_to("bigbird_lm_tiny", 50);
}

/* The compare's "token by token, cached" mode: with a KV cache, a W-token generation costs one forward on W
 * tokens (the sum above) over W; through Shortformer's cache token i sees min(floor(i/L) L, L') + i mod L
 * earlier tokens (the window grows through each segment: within the first, W = L, every earlier token); a
 * recurrent model has no such mode. */
static void test_cached_token_mode(void) {
    Arena a;
    arena_init(&a);
    char why[256];
    CostOptions o = {0};
    ModelCost *m = cost_of(&a, "gpt2_tiny.arch", &o, why, sizeof why);
    CHECK(m && near(m->modes[MODE_CACHED_TOKEN].flops, m->forward.flops / m->window, 1e-12));
    Graph *g = graph_of(&a, "../tests/ir/pia_cache4.arch", false); /* cache 4, segment 16 */
    m = g ? cost_model(g, &o, why, sizeof why) : NULL;
    CHECK(m && g->spec->cache < m->window - 1);
    if (m) {
        double want = 0;
        int L = g->spec->segment, Lc = g->spec->cache;
        for (int i = 0; i < m->window; i++) {
            OpCost c;
            cost_cached_token(g, (i / L * L < Lc ? i / L * L : Lc) + i % L, &c);
            want += c.flops / m->window;
        }
        OpCost last;
        cost_cached_token(g, m->window - 1, &last); /* the first segment's last token sees all W - 1 before it */
        CHECK(near(m->modes[MODE_CACHED_TOKEN].flops, want, 1e-12) && last.flops > want && m->window == L);
    }
    m = cost_of(&a, "gpt2_recurrent_tiny.arch", &o, why, sizeof why);
    CHECK(m && isnan(m->modes[MODE_CACHED_TOKEN].flops));
    arena_free(&a);
}

/* Shortformer's comparison (seeds/000 §5): the attention matrix of one call is 512 x 1024 with PIA and a cache
 * of 512 against the baseline's 3072 x 3072, and PIA computes one q.k product per score (q.k + p.v: 4 hd FLOPs). */
static void test_shortformer_matrices(void) {
    Arena a;
    arena_init(&a);
    char why[256];
    CostOptions o = {0};
    ModelCost *pia = cost_of(&a, "shortformer.arch", &o, why, sizeof why);
    ModelCost *base = cost_of(&a, "baseline_ba.arch", &o, why, sizeof why);
    CHECK(pia && pia->attn[0].queries == 512 && pia->attn[0].keys == 1024);
    CHECK(base && base->attn[0].queries == 3072 && base->attn[0].keys == 3072);
    if (pia) CHECK(near(pia->flops_attention, 4.0 * 128 * pia->forward.attn_scores, 1e-12)); /* head_dim 1024/8 */
    arena_free(&a);
}

/* llama_tiny: vocab 256, d 64, 4 heads x 16, SwiGLU ffn 176, no biases, untied, no positions, segment 64, 2 layers,
 * fp32. The gate's GEMM plain; up's GEMM reads the gate result in its epilogue (gate and SiLU per element). */
static void test_llama_tiny(void) {
    Arena a;
    arena_init(&a);
    char why[256];
    ModelCost *m = cost_of(&a, "llama_tiny.arch", &(CostOptions){0}, why, sizeof why);
    CHECK(m != NULL);
    if (!m) goto out;
    enum { T = 64, D = 64, F = 176, V = 256, NL = 2 };
    /* no bias vectors: x and w read, y written */
    check_gemm(m, "matmul 64x192x64", NL, 2.0 * T * 3 * D * D, 4.0 * (T * D + D * 3 * D + T * 3 * D));
    check_gemm(m, "matmul 64x64x64", NL, 2.0 * T * D * D, 4.0 * (T * D + D * D + T * D));
    /* the gate GEMM and the up GEMM (same shape; the up one also reads the gate result) */
    const CostGroup *g = group(m, "matmul 64x176x64");
    CHECK(g && g->gemm && g->uses == NL && g->per_use.flops == 2.0 * T * F * D);
    CHECK(g && g->per_use.other_ops == 0 && op_cost_bytes_read(&g->per_use) == 4.0 * (T * D + D * F));
    const CostGroup *up = group(m, "matmul 64x176x64 epilogue=gate_silu");
    CHECK(up && up->gemm && up->uses == NL && up->per_use.flops == 2.0 * T * F * D);
    CHECK(up && up->per_use.other_ops == (1 + 4) * (double)T * F); /* product + SiLU (negate, exp, add, divide) */
    CHECK(up && op_cost_bytes_read(&up->per_use) == 4.0 * (T * D + D * F + T * F));
    check_gemm(m, "matmul 64x64x176", NL, 2.0 * T * D * F, 4.0 * (T * F + F * D + T * D));
    CHECK(m->flops_gemm == NL * 2.0 * T * (3 * D * D + D * D + 3 * D * F));
    check_gemm(m, "logits 64x256x64", 1, 2.0 * T * V * D, 4.0 * (T * D + V * D + T * V));
    /* parameters: wte and lm_head, per layer 2 RMSNorm gains and 6 bias-free matrices, the final gain */
    CHECK(m->params == 2.0 * V * D + NL * (2 * D + 3 * D * D + D * D + 3 * D * F) + D);
out:
    arena_free(&a);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: cost_unit MODELS_DIR\n");
        return 2;
    }
    models_dir = argv[1];
    test_gpt2_tiny();
    test_gpt2_small();
    test_llama_tiny();
    test_bad_options();
    test_roofline();
    test_kernel_facts();
    test_sass_mix();
    test_kernel_traffic();
    test_cached_token();
    test_cached_token_mode();
    test_shortformer_matrices();
    return check_done("cost_unit");
}
