/*
 * compare_json.c — checks the JSON of `shortc compare --json` (tests/cli/compare.sh).
 *
 *   compare_json FILE.json
 *   compare_json --kernels FILE.json    (`shortc report gpt2_tiny.arch --kernels sm_90 --json`)
 *
 * The file must hold, in order, gpt2_tiny and baseline_ba_tiny with every
 * documented field (docs/cost-model.md, "JSON"); the figures are checked
 * against hand-computed values and against each other: attention scores =
 * queries x keys x density x heads per layer, the forward's FLOPs = the sum
 * of its steps' FLOPs x uses, per-token figures = forward / scored tokens.
 * With --kernels: gpt2_tiny's 7 kernels each with registers, a block, an
 * occupancy in (0, 1], no spills, and an attention kernel that synchronizes,
 * reads shared memory and does fp32 FMAs.
 */
#include "check.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdbool.h>

static double num(const cJSON *o, const char *key) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    CHECK(cJSON_IsNumber(v));
    if (!cJSON_IsNumber(v)) fprintf(stderr, "missing number '%s'\n", key);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static const cJSON *obj(const cJSON *o, const char *key) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    CHECK(v != NULL);
    if (!v) fprintf(stderr, "missing '%s'\n", key);
    return v;
}

static bool near(double a, double b) { return fabs(a - b) <= 1e-9 * fabs(b); }

static void check_model(const cJSON *m, const char *name, double flops) {
    const cJSON *n = obj(m, "name");
    CHECK(cJSON_IsString(n) && strcmp(n->valuestring, name) == 0);
    const cJSON *fwd = obj(m, "forward");
    CHECK(num(fwd, "flops") == flops);
    CHECK(num(m, "state_bytes") > 0); /* the KV cache at capacity (exact figure: cost_unit) */
    double W = num(m, "window"), layers = num(m, "layers");
    /* attention: one entry per layer, scores = q x k x density x heads */
    const cJSON *attn = obj(m, "attention");
    CHECK(cJSON_GetArraySize(attn) == (int)layers);
    double scores = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, attn) {
        CHECK(num(e, "queries") == W && num(e, "keys") == W);
        CHECK(near(num(e, "queries") * num(e, "keys") * num(e, "density") * num(e, "heads"), num(e, "scores")));
        scores += num(e, "scores");
        /* fp32 models: q.k and p.v on CUDA cores at the fp32 peak, no tensor-core tiles */
        const cJSON *path = obj(e, "path"), *peak = obj(e, "peak");
        CHECK(cJSON_IsString(path) && strcmp(path->valuestring, "cuda_cores") == 0);
        CHECK(cJSON_IsString(peak) && strcmp(peak->valuestring, "fp32") == 0);
        CHECK(num(e, "mma_flops") == 0);
    }
    CHECK(near(num(fwd, "attn_scores"), scores));
    /* steps: FLOPs x uses sum to the forward */
    double sum = 0;
    cJSON_ArrayForEach(e, obj(m, "steps")) sum += num(e, "flops") * num(e, "uses");
    CHECK(near(sum, num(fwd, "flops")));
    CHECK(near(num(fwd, "flops"), num(fwd, "flops_gemm") + num(fwd, "flops_attention") + num(fwd, "flops_logits")));
    /* modes */
    const cJSON *modes = obj(m, "modes");
    CHECK(near(num(obj(modes, "nonoverlap"), "flops_per_token"), num(fwd, "flops") / W));
    const cJSON *sl = obj(modes, "sliding"), *ov = obj(modes, "overlap");
    CHECK(near(num(sl, "flops_per_token"), num(fwd, "flops") / num(sl, "stride")));
    CHECK(near(num(ov, "flops_per_token"), num(fwd, "flops") / (W - num(ov, "overlap"))));
    CHECK(num(obj(modes, "token"), "flops_per_token") > 0);
    CHECK(num(fwd, "seconds_estimate") > 0);
}

static void check_kernels(const cJSON *root) {
    const cJSON *m = cJSON_GetArrayItem(obj(root, "models"), 0);
    const cJSON *k = m ? obj(m, "kernels") : NULL;
    if (!k) return;
    const cJSON *arch = obj(k, "arch"), *list = obj(k, "list"), *e;
    CHECK(cJSON_IsString(arch) && strcmp(arch->valuestring, "sm_90") == 0);
    /* gpt2_tiny forward: embed, norm, norm+add (storing the sum and not), kv_write, attention; decode: partial,
     * combine, and the batched decode step's embed and kv_write (_seq: one row per sequence); loss; sample */
    CHECK(cJSON_GetArraySize(list) == 12);
    int attn = 0, vectorized = 0;
    cJSON_ArrayForEach(e, list) {
        CHECK(num(e, "regs") > 0 && num(e, "block") > 0 && num(e, "blocks_per_sm") >= 1);
        CHECK(num(e, "occupancy") > 0 && num(e, "occupancy") <= 1);
        CHECK(num(e, "spill_stores") == 0 && num(e, "spill_loads") == 0);
        const cJSON *name = obj(e, "name");
        /* the embed and norm kernels move their rows with 128-bit loads and stores (issue 12) */
        if (cJSON_IsString(name) && (strstr(name->valuestring, "_embed_") || strstr(name->valuestring, "_norm_"))) {
            const cJSON *mix = obj(e, "mix");
            vectorized++;
            CHECK(num(mix, "ld_global_128") >= 1 && num(mix, "st_global_128") >= 1);
            if (!(num(mix, "ld_global_128") >= 1 && num(mix, "st_global_128") >= 1))
                fprintf(stderr, "%s: no 128-bit global load or store in its PTX\n", name->valuestring);
        }
        if (cJSON_IsString(name) && strstr(name->valuestring, "attn")) attn++;
        if (cJSON_IsString(name) && strstr(name->valuestring, "attn_causal")) {
            const cJSON *mix = obj(e, "mix");
            CHECK(num(e, "barriers") >= 1 && num(mix, "bar_sync") >= 1);
            CHECK(num(mix, "ffma") > 0 && num(mix, "ld_shared") > 0);
        }
    }
    CHECK(attn == 3); /* causal, decode partial, decode combine */
    CHECK(vectorized == 5); /* embed, its _seq form, norm, the two norm+add */
}

int main(int argc, char **argv) {
    bool kernels = argc == 3 && strcmp(argv[1], "--kernels") == 0;
    if (argc != 2 && !kernels) {
        fprintf(stderr, "usage: compare_json [--kernels] FILE.json\n");
        return 2;
    }
    FILE *f = fopen(argv[argc - 1], "rb");
    if (!f) {
        perror(argv[argc - 1]);
        return 2;
    }
    static char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    cJSON *root = cJSON_Parse(buf);
    CHECK(root != NULL);
    if (!root) return check_done("compare_json");
    if (kernels) {
        check_kernels(root);
        cJSON_Delete(root);
        return check_done("compare_json --kernels");
    }
    const cJSON *dev = obj(root, "device");
    CHECK(cJSON_IsString(dev) && strcmp(dev->valuestring, "a100-sxm") == 0);
    const cJSON *models = obj(root, "models");
    CHECK(cJSON_GetArraySize(models) == 2);
    if (cJSON_GetArraySize(models) == 2) {
        /* gpt2_tiny: see tests/ir/cost_unit.c; baseline_ba_tiny: vocab 256, d 64, 4 heads, ffn 256, T 96, 2 layers */
        check_model(cJSON_GetArrayItem(models, 0), "gpt2_tiny", 33587200);
        double T = 96, D = 64, F = 256, V = 256;
        double base = 2 * (2 * T * (4 * D * D + 2 * D * F) + 4 * 16 * 4 * T * (T + 1) / 2) + 2 * T * V * D;
        check_model(cJSON_GetArrayItem(models, 1), "baseline_ba_tiny", base);
    }
    cJSON_Delete(root);
    return check_done("compare_json");
}
