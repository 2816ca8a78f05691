/*
 * cost_json.c — the cost model (cost.c) as the JSON of `shortc compare --json` / `report --json`
 * (schema shortc.compare/1, docs/usage.md "JSON outputs"): shared by the CLI (cli/cmd_compare.c, which adds
 * the NVRTC kernel facts of --kernels) and the runtime's srt_compare_json.
 */
#include "shortc.h"

#include <cjson/cJSON.h>

double op_cost_bytes(const OpCost *c) { return op_cost_bytes_read(c) + op_cost_bytes_written(c); }

double op_cost_intensity(const OpCost *c) {
    double b = op_cost_bytes(c);
    return b > 0 ? (c->flops + c->other_ops) / b : 0;
}

static cJSON *bytes_by_dtype(const double *b) {
    cJSON *o = cJSON_CreateObject();
    for (int t = 0; t < DT_COUNT; t++)
        if (b[t] > 0) cJSON_AddNumberToObject(o, dtype_name((DType)t), b[t]);
    return o;
}

static cJSON *op_cost_json(const OpCost *c, double seconds) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "flops", c->flops);
    cJSON_AddNumberToObject(o, "other_ops", c->other_ops);
    cJSON_AddItemToObject(o, "bytes_read", bytes_by_dtype(c->bytes_read));
    cJSON_AddItemToObject(o, "bytes_written", bytes_by_dtype(c->bytes_written));
    cJSON_AddNumberToObject(o, "bytes", op_cost_bytes(c));
    cJSON_AddNumberToObject(o, "intensity", op_cost_intensity(c));
    cJSON_AddNumberToObject(o, "seconds_estimate", seconds);
    if (c->mma_flops > 0) cJSON_AddNumberToObject(o, "mma_flops", c->mma_flops); /* tensor-core attention's tiles */
    return o;
}

static cJSON *modes_json(const ModelCost *m) {
    cJSON *o = cJSON_CreateObject();
    for (int k = 0; k < MODE_COUNT; k++) {
        const ModeCost *mc = &m->modes[k];
        cJSON *e = cJSON_AddObjectToObject(o, cost_mode_name((CostMode)k));
        if (k == MODE_SLIDING) cJSON_AddNumberToObject(e, "stride", mc->param);
        if (k == MODE_OVERLAP) cJSON_AddNumberToObject(e, "overlap", mc->param);
        cJSON_AddNumberToObject(e, "flops_per_token", mc->flops);
        cJSON_AddNumberToObject(e, "other_ops_per_token", mc->other_ops);
        cJSON_AddNumberToObject(e, "bytes_per_token", mc->bytes);
        cJSON_AddNumberToObject(e, "attn_scores_per_token", mc->attn_scores);
        cJSON_AddNumberToObject(e, "seconds_per_token_estimate", mc->seconds);
    }
    return o;
}

static cJSON *attention_json(const ModelCost *m) {
    cJSON *a = cJSON_CreateArray();
    for (int l = 0; l < m->layers; l++) {
        const LayerAttn *la = &m->attn[l];
        cJSON *e = cJSON_CreateObject();
        cJSON_AddNumberToObject(e, "layer", l);
        cJSON_AddStringToObject(e, "kind", la->kind ? la->kind : "?");
        cJSON_AddNumberToObject(e, "heads", la->heads);
        cJSON_AddNumberToObject(e, "queries", la->queries);
        cJSON_AddNumberToObject(e, "keys", la->keys);
        cJSON_AddNumberToObject(e, "density", la->density);
        cJSON_AddNumberToObject(e, "scores", la->scores);
        cJSON_AddStringToObject(e, "path", la->peak != PEAK_FP32 ? "tensor_cores" : "cuda_cores");
        cJSON_AddStringToObject(e, "peak", cost_peak_name(la->peak));
        cJSON_AddNumberToObject(e, "mma_flops", la->mma_flops);
        cJSON_AddStringToObject(e, "one_token_peak", cost_peak_name(la->decode_peak));
        cJSON_AddItemToArray(a, e);
    }
    return a;
}

static cJSON *steps_json(const ModelCost *m, const DeviceSpec *dev) {
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < m->ngroups; i++) {
        const CostGroup *g = &m->groups[i];
        cJSON *e = op_cost_json(&g->per_use, roofline_seconds_at(dev, &g->per_use, g->peak));
        cJSON_AddStringToObject(e, "step", g->label);
        cJSON_AddBoolToObject(e, "gemm", g->gemm);
        cJSON_AddNumberToObject(e, "uses", g->uses);
        cJSON_AddStringToObject(e, "peak", cost_peak_name(g->peak));
        if (g->gemm) {
            cJSON *shape = cJSON_AddObjectToObject(e, "gemm_shape");
            cJSON_AddNumberToObject(shape, "m", g->per_use.gemm_m);
            cJSON_AddNumberToObject(shape, "n", g->per_use.gemm_n);
            cJSON_AddNumberToObject(shape, "k", g->per_use.gemm_k);
        }
        cJSON_AddItemToArray(a, e);
    }
    return a;
}

cJSON *cost_model_json(const ModelCost *m, const char *path, const DeviceSpec *dev) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", m->name);
    cJSON_AddStringToObject(o, "path", path);
    cJSON_AddNumberToObject(o, "segment", m->segment);
    cJSON_AddNumberToObject(o, "window", m->window);
    cJSON_AddNumberToObject(o, "layers", m->layers);
    cJSON_AddNumberToObject(o, "params", m->params);
    cJSON_AddNumberToObject(o, "weight_bytes", m->weight_bytes);
    cJSON_AddNumberToObject(o, "peak_activation_bytes", m->peak_activation_bytes);
    cJSON_AddNumberToObject(o, "naive_activation_bytes", m->naive_activation_bytes);
    cJSON_AddNumberToObject(o, "state_bytes", m->state_bytes);
    cJSON_AddNumberToObject(o, "derived_bytes", m->derived_bytes); /* per model, computed when the weights load */
    cJSON *fwd = op_cost_json(&m->forward, m->forward_seconds);
    cJSON_AddNumberToObject(fwd, "flops_gemm", m->flops_gemm);
    cJSON_AddNumberToObject(fwd, "flops_attention", m->flops_attention);
    cJSON_AddNumberToObject(fwd, "flops_logits", m->flops_logits);
    cJSON_AddNumberToObject(fwd, "attn_scores", m->forward.attn_scores);
    cJSON_AddItemToObject(o, "forward", fwd);
    cJSON_AddItemToObject(o, "attention", attention_json(m));
    cJSON_AddItemToObject(o, "modes", modes_json(m));
    cJSON_AddItemToObject(o, "steps", steps_json(m, dev));
    return o;
}

cJSON *cost_compare_json(const DeviceSpec *dev) {
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "schema", "shortc.compare/1"); /* compare and report (docs/usage.md, "JSON outputs") */
    cJSON_AddStringToObject(root, "device", dev->name);
    cJSON_AddStringToObject(root, "estimate", "roofline estimate from peak rates, not a measurement");
    cJSON_AddStringToObject(root, "convention", "docs/cost-model.md: 2 FLOPs per multiply-add in matrix products; "
                                                "elementwise work in other_ops; each operand read once");
    cJSON_AddStringToObject(root, "state_note", "state_bytes: every state value (KV caches) at its compile-time capacity");
    cJSON_AddArrayToObject(root, "models");
    return root;
}
