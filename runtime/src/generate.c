/*
 * generate.c — srt_generate: the generation loop of `shortc generate` and the Python package's
 * Session.generate over srt_forward_batch_sample. Each call feeds every sequence not done its prompt's next
 * chunk (at most a segment) or its last drawn token; the call that feeds a prompt's last chunk, and every
 * later one, draws with the sequence's sampler, earlier chunks draw greedily with a private sampler (which
 * takes nothing from any stream) and drop the token. A sequence stops after max_new tokens or at eos (not
 * kept); with max_new 0 its prompt is fed and nothing is drawn.
 */
#include "rt_internal.h"

#include <stdbool.h>
#include <string.h>

/* Where each sequence is between calls. */
typedef struct GenState {
    int fed;                 /* prompt tokens fed so far */
    bool done;               /* reached max_new or eos */
} GenState;

/* The scratch of one srt_generate (ctx memory). */
typedef struct GenScratch {
    GenState *st;            /* per sequence */
    const int32_t **tok;     /* per sequence: the tokens of this call */
    int *n;                  /* their counts (0: sits the call out) */
    srt_sampler **smp;       /* the sampler of this call */
    int32_t *drawn;          /* the tokens drawn */
} GenScratch;

/* One call for every sequence not done (*busy false, no call, once none is left); *info says what it fed. */
static srt_status gen_step(srt_session *s, srt_gen_seq *q, int B, int L, srt_sampler *skip, int max_new,
                           int64_t eos, GenScratch *w, bool *busy, srt_gen_step *info) {
    *busy = false;
    info->batch = info->prefill = 0;
    for (int b = 0; b < B; b++) {
        GenState *g = &w->st[b];
        w->n[b] = 0;
        if (g->done) continue;
        *busy = true;
        info->batch++;
        info->prefill |= g->fed < q[b].nprompt;
        if (g->fed < q[b].nprompt) {
            w->n[b] = q[b].nprompt - g->fed < L ? q[b].nprompt - g->fed : L;
            w->tok[b] = q[b].prompt + g->fed;
            w->smp[b] = g->fed + w->n[b] == q[b].nprompt && max_new > 0 ? q[b].sampler : skip;
        } else {
            w->n[b] = 1;
            w->tok[b] = &q[b].out[q[b].ngen - 1];
            w->smp[b] = q[b].sampler;
        }
    }
    if (!*busy) return SRT_OK;
    srt_status st = srt_forward_batch_sample(s, w->tok, w->n, w->smp, w->drawn);
    for (int b = 0; st == SRT_OK && b < B; b++) {
        GenState *g = &w->st[b];
        if (!w->n[b]) continue;
        if (g->fed < q[b].nprompt) g->fed += w->n[b];
        if (max_new == 0 && g->fed == q[b].nprompt) g->done = true;
        if (w->smp[b] == skip) continue;
        if (w->drawn[b] == eos) g->done = true, q[b].eos = 1;
        else q[b].out[q[b].ngen++] = w->drawn[b];
        if (q[b].ngen == max_new) g->done = true;
    }
    return st;
}

/* Checks the sequences before any call. */
static srt_status gen_check(srt_session *s, const srt_gen_seq *q, int B, int max_new) {
    srt_context *ctx = s->m->ctx;
    if (B != srt_session_batch(s))
        return rt_error(ctx, SRT_ERR_INVALID, "srt_generate: %d sequences for a session of %d", B, srt_session_batch(s));
    if (max_new < 0) return rt_error(ctx, SRT_ERR_INVALID, "srt_generate: max_new %d", max_new);
    for (int b = 0; b < B; b++)
        if (!q[b].prompt || q[b].nprompt < 1 || !q[b].sampler || (max_new > 0 && !q[b].out))
            return rt_error(ctx, SRT_ERR_INVALID, "srt_generate: sequence %d needs a prompt, a sampler and out", b);
    return SRT_OK;
}

srt_status srt_generate(srt_session *s, srt_gen_seq *seqs, int nseqs, int max_new, int64_t eos,
                        srt_gen_step_fn on_step, void *ud) {
    if (!s || !seqs) return SRT_ERR_INVALID;
    srt_context *ctx = s->m->ctx;
    srt_status st = gen_check(s, seqs, nseqs, max_new);
    if (st != SRT_OK) return st;
    srt_model_info mi;
    srt_model_get_info(s->m, &mi);
    size_t B = (size_t)nseqs;
    GenScratch w = {rt_alloc(ctx, sizeof *w.st * B), rt_alloc(ctx, sizeof *w.tok * B), rt_alloc(ctx, sizeof *w.n * B),
                    rt_alloc(ctx, sizeof *w.smp * B), rt_alloc(ctx, sizeof *w.drawn * B)};
    srt_sampling greedy;
    srt_sampling_init(&greedy);
    srt_sampler *skip = NULL;
    if (!w.st || !w.tok || !w.n || !w.smp || !w.drawn) st = rt_error(ctx, SRT_ERR_NOMEM, "srt_generate: out of memory");
    else st = srt_sampler_create(ctx, &greedy, mi.vocab, &skip);
    for (int b = 0; b < nseqs; b++) {
        seqs[b].ngen = seqs[b].eos = 0;
        if (w.st) w.st[b].done = false;
    }
    srt_gen_step info = {.step = -1, .total = (int64_t)max_new * nseqs};
    for (bool busy = true; st == SRT_OK && busy;) {
        st = gen_step(s, seqs, nseqs, mi.segment, skip, max_new, eos, &w, &busy, &info);
        if (st != SRT_OK || !busy) break;
        info.step++;
        info.made = 0;
        for (int b = 0; b < nseqs; b++) info.made += seqs[b].ngen;
        if (on_step) on_step(ud, &info);
    }
    srt_sampler_destroy(skip);
    rt_free(ctx, w.st), rt_free(ctx, w.tok), rt_free(ctx, w.n), rt_free(ctx, w.smp), rt_free(ctx, w.drawn);
    return st;
}
