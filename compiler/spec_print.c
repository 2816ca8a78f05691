/*
 * spec_print.c — the stable text form of a resolved ModelSpec
 * (`shortc FILE.arch --dump-spec`; format in docs/language.md).
 *
 * One `key value` line per setting, in .arch spelling and a fixed order,
 * with every default filled in; then the per-layer settings, one line per
 * run of consecutive layers that ended up identical:
 *
 *   layers 0-10: attention causal
 *   layer 11: attention causal
 */
#include "shortc.h"

#include <stdlib.h>
#include <math.h>
#include <string.h>

/* Shortest %g form that reads back as the same double (1e-05, not 1.0000000000000001e-05); whole numbers as
 * integers (250, not 2.5e+02). */
static const char *num(char buf[32], double v) {
    if (v == floor(v) && fabs(v) < 1e15) {
        snprintf(buf, 32, "%.0f", v);
        return buf;
    }
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, 32, "%.*g", prec, v);
        if (strtod(buf, NULL) == v) break;
    }
    return buf;
}

static void print_attn(FILE *out, const AttnSpec *a) {
    fprintf(out, "attention %s", attn_kind_name(a->kind));
    char buf[32];
    for (int i = 0; i < a->nparams; i++) fprintf(out, " %s=%s", a->params[i].key, num(buf, a->params[i].value));
}

static bool same_attn(const AttnSpec *a, const AttnSpec *b) {
    if (a->kind != b->kind || a->nparams != b->nparams) return false;
    for (int i = 0; i < a->nparams; i++)
        if (strcmp(a->params[i].key, b->params[i].key) != 0 || a->params[i].value != b->params[i].value)
            return false;
    return true;
}

void spec_print(FILE *out, const ModelSpec *s) {
    static const char *const class_names[TC_COUNT] = {"weights", "activations", "kv"};

    fprintf(out, "model %s\n", s->name);
    fprintf(out, "parent %s\n", s->parent ? s->parent : "none");
    fprintf(out, "source %s\n", s->path ? s->path : "-");
    fprintf(out, "vocab %d\n", s->vocab);
    fprintf(out, "d_model %d\n", s->d_model);
    fprintf(out, "heads %d\n", s->n_heads);
    fprintf(out, "head_dim %d\n", s->head_dim);
    fprintf(out, "ffn %d %s\n", s->d_ff, s->gated ? (s->act == ACT_SILU ? "swiglu" : "geglu") : activation_name(s->act));
    char buf[32];
    fprintf(out, "norm %s %s eps=%s\n", norm_kind_name(s->norm), norm_place_name(s->norm_place), num(buf, s->eps));
    switch (s->pos) {
    case POS_NONE:
        if (s->infused != PIA_NONE) fprintf(out, "positions sinusoidal infused style=%s\ncache %d\n",
                                            pia_style_name(s->infused), s->cache);
        else fprintf(out, "positions none\n");
        break;
    case POS_SINUSOIDAL:
        fprintf(out, "positions sinusoidal");
        if (s->max_pos) fprintf(out, " max=%d", s->max_pos);
        fprintf(out, "%s\n", s->pos_style == PIA_FAIRSEQ ? " style=fairseq" : ""); /* vaswani: the default */
        break;
    case POS_LEARNED: fprintf(out, "positions learned max=%d\n", s->max_pos); break;
    case POS_ALIBI: fprintf(out, "positions alibi\n"); break;
    case POS_ROPE: {
        const RopeSpec *r = &s->rope;
        fprintf(out, "positions rope theta=%s dims=%d pairs=%s", num(buf, r->theta), r->dims,
                r->interleaved ? "interleaved" : "halves");
        if (r->scaling != ROPE_SCALE_NONE) fprintf(out, " scaling=%s factor=%s", rope_scaling_name(r->scaling), num(buf, r->factor));
        if (r->scaling != ROPE_SCALE_NONE && r->scaling != ROPE_SCALE_LINEAR) fprintf(out, " original_max=%d", r->original_max);
        if (r->scaling == ROPE_SCALE_YARN) {
            fprintf(out, " beta_fast=%s", num(buf, r->beta_fast));
            fprintf(out, " beta_slow=%s", num(buf, r->beta_slow));
            if (r->mscale > 0) fprintf(out, " mscale=%s", num(buf, r->mscale));
        }
        if (r->scaling == ROPE_SCALE_LLAMA3) {
            fprintf(out, " low_freq=%s", num(buf, r->low_freq));
            fprintf(out, " high_freq=%s", num(buf, r->high_freq));
        }
        fputc('\n', out);
        break;
    }
    }
    if (s->kv_heads != s->n_heads) fprintf(out, "kv_heads %d\n", s->kv_heads);
    fprintf(out, "embedding %s", s->tied ? "tied" : "untied");
    const AdaptiveSpec *a = &s->adaptive;
    if (a->style != ADAPTIVE_NONE) {
        fprintf(out, " adaptive=%s cutoffs=[", adaptive_style_name(a->style));
        for (int i = 0; i < a->ncutoffs; i++) fprintf(out, "%s%d", i ? "," : "", a->cutoffs[i]);
        fprintf(out, "] factor=%d scale=%.9g", a->factor, a->scale);
    }
    fputc('\n', out);
    fprintf(out, "segment %d\n", s->segment);
    fprintf(out, "layers %d\n", s->n_layers);
    switch (s->naming) {
    case NAMING_HF_GPT2: fprintf(out, "weights hf_gpt2\n"); break;
    case NAMING_TXL: fprintf(out, "weights transformer_xl\n"); break;
    }
    for (int c = 0; c < TC_COUNT; c++)
        fprintf(out, "layout %s %s %s\n", class_names[c], dtype_name(s->layout[c].dtype),
                dim_order_name(s->layout[c].order));
    if (s->tf32) fprintf(out, "math tf32\n");
    if (s->no_final_norm) fprintf(out, "final_norm off\n");
    if (s->no_bias) fprintf(out, "bias off\n");
    if (s->parallel) fprintf(out, "block parallel\n");
    const RecurrenceSpec *r = &s->rec;
    if (r->on) {
        fprintf(out, "recurrence insert=%d ffn=[", r->insert);
        for (int i = 0; i < r->nhidden; i++) fprintf(out, "%s%d", i ? "," : "", r->hidden[i]);
        fprintf(out, "] act=%s pool=%s states=%s norm=%d overlap=%d\n", activation_name(r->act),
                r->pool == REC_POOL_MEAN ? "mean" : "sum", r->states == REC_STATES_BLOCKS ? "blocks" : "embed_blocks",
                r->norm ? 1 : 0, r->overlap);
    }
    for (int i = 0; i < s->n_layers;) {
        int j = i;
        while (j + 1 < s->n_layers && same_attn(&s->layers[j + 1].attn, &s->layers[i].attn) &&
               s->layers[j + 1].memory == s->layers[i].memory)
            j++;
        if (j > i) fprintf(out, "layers %d-%d: ", i, j);
        else fprintf(out, "layer %d: ", i);
        print_attn(out, &s->layers[i].attn);
        if (s->layers[i].memory > 0) fprintf(out, "; memory %d", s->layers[i].memory);
        fputc('\n', out);
        i = j + 1;
    }
}
