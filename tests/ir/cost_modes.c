/*
 * cost_modes.c — the cost model's token modes (closed form, compiler/cost.c) against the brute force they
 * replaced (issue 26: O(W^2) made `report` at segment 8192 take 68 s):
 *
 *   cost_modes MODEL.arch...
 *
 * For every model, at windows W = min(segment, 40) and min(segment, 150): the token-by-token figures
 * without and with a cache (FLOPs, other ops, bytes, scores, roofline seconds on h100-sxm) equal, to
 * 1e-9, the mean over the W calls of cost_call (each call node by node, the old loop). And for every
 * attention node, attn_pattern_pairs (closed form or row sums) equals the count of visible (query, key)
 * pairs of attn_pattern_visible at several T.
 */
#define _POSIX_C_SOURCE 200809L
#include "check.h"
#include "shortc.h"

#include <math.h>

/* The graph of path after the passes (in a); NULL (with a failed check) on error. */
static Graph *graph_of(Arena *a, const char *path) {
    Diag d;
    diag_init(&d, a, stderr);
    CompileOptions co = {.path = path, .stop = COMPILE_STOP_AFTER_PASSES};
    CompileResult cr;
    bool ok = shortc_compile(a, &d, &co, &cr);
    compile_result_free(&cr);
    CHECK(ok && cr.graph);
    return ok ? cr.graph : NULL;
}

static bool same(double got, double want) {
    return (isnan(got) && isnan(want)) || fabs(got - want) <= 1e-9 * fabs(want) + 1e-300;
}

/* One figure of mode `what` against the oracle's. */
static void expect(const char *path, int W, const char *what, const char *fig, double got, double want) {
    if (same(got, want)) return;
    fprintf(stderr, "%s W=%d %s %s: closed form %.17g, brute force %.17g\n", path, W, what, fig, got, want);
    check_failures++;
}

/* The mean of cost_call over the mode's W calls (the old token_mode / cached_token_mode loops). */
static ModeCost oracle(Graph *g, const DeviceSpec *dev, bool cached, int W) {
    ModeCost sum = {0};
    if (cached && ir_recurrent(g)) return (ModeCost){.flops = NAN, .other_ops = NAN, .bytes = NAN, .attn_scores = NAN, .seconds = NAN};
    for (int t = cached ? 0 : 1; t <= (cached ? W - 1 : W); t++) {
        ModeCost c;
        CHECK(cost_call(g, dev, cached, t, &c));
        sum.flops += c.flops / W;
        sum.other_ops += c.other_ops / W;
        sum.bytes += c.bytes / W;
        sum.attn_scores += c.attn_scores / W;
        sum.seconds += c.seconds / W;
    }
    return sum;
}

static void check_mode(const char *path, int W, const char *what, const ModeCost *got, const ModeCost *want) {
    expect(path, W, what, "flops", got->flops, want->flops);
    expect(path, W, what, "other_ops", got->other_ops, want->other_ops);
    expect(path, W, what, "bytes", got->bytes, want->bytes);
    expect(path, W, what, "attn_scores", got->attn_scores, want->attn_scores);
    expect(path, W, what, "seconds", got->seconds, want->seconds);
}

/* attn_pattern_pairs of every attention node against the visible pairs counted one by one, T = 1..W. */
static void check_pairs(const char *path, const Graph *g, int W) {
    for (int i = 0; i < g->nnodes; i++) {
        const Node *n = g->nodes[i];
        AttnPattern p;
        char err[256];
        if (n->dead || n->op != OP_ATTENTION || !attn_pattern_build(&p, &n->attn, n->layer, n->heads, W, err, sizeof err))
            continue;
        double visible = 0;
        for (int T = 1; T <= W; T++) {
            for (int h = 0; h < p.heads; h++)
                for (int j = 0; j < T; j++) visible += attn_pattern_visible(&p, h, T - 1, j);
            if (attn_pattern_pairs(&p, T) != visible) {
                fprintf(stderr, "%s layer %d (%s): pairs(%d) = %.0f, visible %.0f\n", path, n->layer,
                        attn_kind_name(n->attn.kind), T, attn_pattern_pairs(&p, T), visible);
                check_failures++;
                break;
            }
        }
        attn_pattern_free(&p);
    }
}

int main(int argc, char **argv) {
    const DeviceSpec *dev = device_find("h100-sxm");
    CHECK(dev != NULL);
    for (int k = 1; k < argc; k++) {
        Arena a;
        arena_init(&a);
        Graph *g = graph_of(&a, argv[k]);
        for (int w = 0; g && w < 2; w++) {
            int W = g->spec->segment < (w ? 150 : 40) ? g->spec->segment : (w ? 150 : 40);
            char why[256];
            ModelCost *m = cost_model(g, &(CostOptions){.window = W, .device = dev}, why, sizeof why);
            CHECK(m != NULL);
            if (!m) {
                fprintf(stderr, "%s: %s\n", argv[k], why);
                break;
            }
            ModeCost token = oracle(g, dev, false, W), cached = oracle(g, dev, true, W);
            check_mode(argv[k], W, "token", &m->modes[MODE_TOKEN], &token);
            check_mode(argv[k], W, "token_cached", &m->modes[MODE_CACHED_TOKEN], &cached);
            if (w) check_pairs(argv[k], g, W);
        }
        arena_free(&a);
    }
    return check_done("cost_modes");
}
