/*
 * scheduler.c — continuous batching (issue 21): srt_scheduler runs requests on a batch session of max_batch
 * sequence slots. Requests wait in a first-in first-out queue; at each step free slots take queued requests
 * (the slot's sequence reset), a prefill pass feeds every request still feeding its prompt its next chunk (at
 * most a segment), and a decode pass feeds every request that had drawn a token before the step that token.
 * Each pass is one srt_forward_batch_sample over the slots (those not in it sit it out), so on sim and cuda the
 * decode pass is one batched decode step and a joining request's prompt runs as its own pass, as srt_generate
 * feeds it (same chunks, same draws: earlier chunks draw with a private greedy sampler and drop the token).
 * A request leaves its slot when it draws eos, has max_new tokens or is cancelled; its tokens wait in the
 * finished list until collected.
 */
#include "rt_internal.h"

#include <stdbool.h>
#include <string.h>

/* One request, queued or in a slot. */
typedef struct Req {
    int64_t id;              /* srt_scheduler_add's id */
    int32_t *prompt;         /* its prompt (a copy, ctx memory) */
    int nprompt;             /* its length */
    srt_sampler *sampler;    /* the caller's sampler */
    int max_new;             /* tokens at most */
    int64_t eos;             /* the id that ends it, or -1 */
    int fed;                 /* prompt tokens fed so far */
    int32_t *out;            /* room for max_new tokens (ctx memory) */
    int ngen;                /* tokens generated */
} Req;

struct srt_scheduler {
    srt_model *m;            /* the model */
    srt_session *s;          /* the slots: a session of max_batch sequences */
    srt_sampler *skip;       /* greedy, for the draws of prompt chunks before the last (dropped) */
    int max_batch;           /* slots */
    int max_queue;           /* requests queued or running at most (0: no bound) */
    int64_t next_id;         /* the id of the next request added */
    Req **slot;              /* per slot: its request, or NULL when free */
    Req **queue;             /* the waiting requests, oldest first */
    int nqueue, qcap;        /* waiting, room */
    srt_finished *done;      /* finished requests not yet collected, oldest first */
    int ndone, dcap;         /* finished, room */
    /* one pass's arguments to srt_forward_batch_sample, per slot */
    const int32_t **tok;     /* the tokens fed */
    int *n;                  /* their count (0: the slot sits the pass out) */
    srt_sampler **smp;       /* the sampler it draws with */
    int32_t *drawn;          /* the token drawn */
    bool *decoding;          /* the slot's request decodes at this step */
};

static srt_status sched_nomem(srt_context *ctx) { return rt_error(ctx, SRT_ERR_NOMEM, "srt_scheduler: out of memory"); }

srt_status srt_scheduler_create(srt_model *m, int max_batch, int max_queue, srt_scheduler **out) {
    if (out) *out = NULL;
    if (!m) return SRT_ERR_INVALID;
    srt_context *ctx = m->ctx;
    if (!out) return rt_error(ctx, SRT_ERR_INVALID, "srt_scheduler_create: out is NULL");
    if (max_queue < 0)
        return rt_error(ctx, SRT_ERR_INVALID, "srt_scheduler_create: max_queue %d (0: no bound)", max_queue);
    srt_scheduler *q = rt_alloc(ctx, sizeof *q);
    if (!q) return sched_nomem(ctx);
    memset(q, 0, sizeof *q);
    q->m = m, q->max_batch = max_batch, q->max_queue = max_queue;
    srt_status st = srt_session_create(m, max_batch, &q->s); /* checks max_batch */
    size_t B = (size_t)max_batch;
    if (st == SRT_OK && (!(q->slot = rt_alloc(ctx, sizeof *q->slot * B)) || !(q->tok = rt_alloc(ctx, sizeof *q->tok * B)) ||
                         !(q->n = rt_alloc(ctx, sizeof *q->n * B)) || !(q->smp = rt_alloc(ctx, sizeof *q->smp * B)) ||
                         !(q->drawn = rt_alloc(ctx, sizeof *q->drawn * B)) ||
                         !(q->decoding = rt_alloc(ctx, sizeof *q->decoding * B))))
        st = sched_nomem(ctx);
    if (st == SRT_OK) {
        memset(q->slot, 0, sizeof *q->slot * B);
        srt_sampling greedy;
        srt_sampling_init(&greedy);
        st = srt_sampler_create(ctx, &greedy, m->plan.vocab, &q->skip);
    }
    if (st != SRT_OK) {
        srt_scheduler_destroy(q);
        return st;
    }
    *out = q;
    return SRT_OK;
}

static void req_free(srt_context *ctx, Req *r) {
    if (!r) return;
    rt_free(ctx, r->prompt);
    rt_free(ctx, r->out);
    rt_free(ctx, r);
}

void srt_scheduler_destroy(srt_scheduler *q) {
    if (!q) return;
    srt_context *ctx = q->m->ctx;
    for (int i = 0; q->slot && i < q->max_batch; i++) req_free(ctx, q->slot[i]);
    for (int i = 0; i < q->nqueue; i++) req_free(ctx, q->queue[i]);
    for (int i = 0; i < q->ndone; i++) rt_free(ctx, q->done[i].tokens);
    rt_free(ctx, q->slot), rt_free(ctx, q->queue), rt_free(ctx, q->done);
    rt_free(ctx, q->tok), rt_free(ctx, q->n), rt_free(ctx, q->smp), rt_free(ctx, q->drawn), rt_free(ctx, q->decoding);
    srt_sampler_destroy(q->skip);
    srt_session_destroy(q->s);
    rt_free(ctx, q);
}

static int running(const srt_scheduler *q) {
    int n = 0;
    for (int i = 0; i < q->max_batch; i++) n += q->slot[i] != NULL;
    return n;
}

int srt_scheduler_pending(const srt_scheduler *q) { return q ? running(q) + q->nqueue : 0; }

srt_session *srt_scheduler_session(srt_scheduler *q) { return q ? q->s : NULL; }

/* The request using smp, queued or running (NULL: none). */
static const Req *sampler_user(const srt_scheduler *q, const srt_sampler *smp) {
    for (int i = 0; i < q->max_batch; i++)
        if (q->slot[i] && q->slot[i]->sampler == smp) return q->slot[i];
    for (int i = 0; i < q->nqueue; i++)
        if (q->queue[i]->sampler == smp) return q->queue[i];
    return NULL;
}

/* srt_scheduler_add's checks: everything a step would refuse is refused now. */
static srt_status check_request(const srt_scheduler *q, const srt_request *r) {
    srt_model *m = q->m;
    srt_context *ctx = m->ctx;
    const char *fn = "srt_scheduler_add";
    if (!r->prompt || r->nprompt < 1 || !r->sampler)
        return rt_error(ctx, SRT_ERR_INVALID, "%s: a request needs a prompt of at least 1 token and a sampler", fn);
    if (r->max_new < 0) return rt_error(ctx, SRT_ERR_INVALID, "%s: max_new %d", fn, r->max_new);
    if (rt_sampler_vocab(r->sampler) != m->plan.vocab)
        return rt_error(ctx, SRT_ERR_INVALID, "%s: a sampler for %d tokens; model '%s' has %d", fn,
                        rt_sampler_vocab(r->sampler), m->plan.model, m->plan.vocab);
    const Req *user = sampler_user(q, r->sampler);
    if (user)
        return rt_error(ctx, SRT_ERR_INVALID, "%s: the sampler is request %lld's (each request needs its own)", fn,
                        (long long)user->id);
    for (int t = 0; t < r->nprompt; t++)
        if (r->prompt[t] < 0 || r->prompt[t] >= m->plan.vocab)
            return rt_error(ctx, SRT_ERR_INVALID, "%s: prompt token %d is %d, outside the vocabulary of %d", fn, t,
                            (int)r->prompt[t], m->plan.vocab);
    int limit = m->ops->max_positions(m);
    long long fed = (long long)r->nprompt + (r->max_new > 0 ? r->max_new - 1 : 0); /* the last draw is not fed */
    if (limit > 0 && m->ops->state_keep(m) < 0 && fed > limit)
        return rt_error(ctx, SRT_ERR_UNSUPPORTED,
                        "%s: a prompt of %d tokens and %d new ones reach position %lld, past the %d positions model "
                        "'%s' can address",
                        fn, r->nprompt, r->max_new, fed, limit, m->plan.model);
    if (q->max_queue > 0 && srt_scheduler_pending(q) >= q->max_queue)
        return rt_error(ctx, SRT_ERR_INVALID,
                        "%s: the scheduler is full (%d requests queued or running, max_queue %d): step until some "
                        "finish, or cancel one", fn, srt_scheduler_pending(q), q->max_queue);
    return SRT_OK;
}

srt_status srt_scheduler_add(srt_scheduler *q, const srt_request *r, int64_t *id) {
    if (!q) return SRT_ERR_INVALID;
    srt_context *ctx = q->m->ctx;
    if (!r || !id) return rt_error(ctx, SRT_ERR_INVALID, "srt_scheduler_add: request and id must not be NULL");
    srt_status st = check_request(q, r);
    if (st != SRT_OK) return st;
    if (q->nqueue == q->qcap) {
        int cap = q->qcap ? 2 * q->qcap : 16;
        Req **p = rt_realloc(ctx, q->queue, sizeof *p * (size_t)cap);
        if (!p) return sched_nomem(ctx);
        q->queue = p, q->qcap = cap;
    }
    Req *e = rt_alloc(ctx, sizeof *e);
    if (e) *e = (Req){.id = q->next_id, .nprompt = r->nprompt, .sampler = r->sampler, .max_new = r->max_new,
                      .eos = r->eos};
    if (!e || !(e->prompt = rt_alloc(ctx, sizeof *e->prompt * (size_t)r->nprompt)) ||
        !(e->out = rt_alloc(ctx, sizeof *e->out * (size_t)(r->max_new > 0 ? r->max_new : 1)))) {
        req_free(ctx, e);
        return sched_nomem(ctx);
    }
    memcpy(e->prompt, r->prompt, sizeof *e->prompt * (size_t)r->nprompt);
    q->queue[q->nqueue++] = e;
    *id = q->next_id++;
    return SRT_OK;
}

/* Ends r (in slot i, or queued with i = -1): its tokens go to the finished list, r is freed. */
static srt_status finish(srt_scheduler *q, Req *r, int i, srt_finish_reason why) {
    srt_context *ctx = q->m->ctx;
    if (q->ndone == q->dcap) {
        int cap = q->dcap ? 2 * q->dcap : 16;
        srt_finished *p = rt_realloc(ctx, q->done, sizeof *p * (size_t)cap);
        if (!p) return sched_nomem(ctx); /* r stays where it is */
        q->done = p, q->dcap = cap;
    }
    srt_finished *f = &q->done[q->ndone++];
    *f = (srt_finished){.id = r->id, .tokens = r->ngen ? r->out : NULL, .ntokens = r->ngen, .reason = why};
    if (r->ngen) r->out = NULL; /* now the finished entry's */
    if (i >= 0) q->slot[i] = NULL;
    req_free(ctx, r);
    return SRT_OK;
}

srt_status srt_scheduler_cancel(srt_scheduler *q, int64_t id) {
    if (!q) return SRT_ERR_INVALID;
    for (int i = 0; i < q->max_batch; i++)
        if (q->slot[i] && q->slot[i]->id == id) return finish(q, q->slot[i], i, SRT_FINISH_CANCELLED);
    for (int i = 0; i < q->nqueue; i++) {
        if (q->queue[i]->id != id) continue;
        Req *r = q->queue[i];
        srt_status st = finish(q, r, -1, SRT_FINISH_CANCELLED);
        if (st != SRT_OK) return st;
        memmove(&q->queue[i], &q->queue[i + 1], sizeof *q->queue * (size_t)(q->nqueue - i - 1));
        q->nqueue--;
        return SRT_OK;
    }
    return rt_error(q->m->ctx, SRT_ERR_INVALID,
                    "srt_scheduler_cancel: no request %lld is queued or running (finished, cancelled or never added)",
                    (long long)id);
}

int srt_scheduler_collect(srt_scheduler *q, srt_finished *out) {
    if (!q || !out || q->ndone == 0) return 0;
    *out = q->done[0];
    memmove(&q->done[0], &q->done[1], sizeof *q->done * (size_t)(q->ndone - 1));
    q->ndone--;
    return 1;
}

/* Free slots take the oldest queued requests (each slot's sequence reset first); the number that joined. */
static srt_status admit(srt_scheduler *q, int *joined) {
    *joined = 0;
    for (int i = 0; i < q->max_batch && q->nqueue > 0; i++) {
        if (q->slot[i]) continue;
        srt_status st = srt_session_reset_sequence(q->s, i);
        if (st != SRT_OK) return st;
        q->slot[i] = q->queue[0];
        memmove(&q->queue[0], &q->queue[1], sizeof *q->queue * (size_t)(q->nqueue - 1));
        q->nqueue--;
        ++*joined;
    }
    return SRT_OK;
}

/* Runs the pass set up in q->tok / n / smp over the slots (when any slot takes part), timing it and counting
 * what it asked of the device; then applies each slot's draw. */
static srt_status run_pass(srt_scheduler *q, bool prefill, double *ms, srt_call_counts *calls, srt_sched_step *info) {
    int any = 0;
    for (int i = 0; i < q->max_batch; i++) any |= q->n[i] > 0;
    if (!any) return SRT_OK;
    srt_call_counts c0, c1;
    srt_session_call_counts(q->s, &c0);
    double t0 = rt_now_ms();
    srt_status st = srt_forward_batch_sample(q->s, q->tok, q->n, q->smp, q->drawn);
    *ms = rt_now_ms() - t0;
    srt_session_call_counts(q->s, &c1);
    *calls = (srt_call_counts){c1.launches - c0.launches, c1.gemms - c0.gemms, c1.graph_launches - c0.graph_launches,
                               c1.syncs - c0.syncs, c1.copies - c0.copies, c1.bytes - c0.bytes};
    for (int i = 0; st == SRT_OK && i < q->max_batch; i++) {
        Req *r = q->slot[i];
        if (!r || q->n[i] == 0) continue;
        if (prefill) r->fed += q->n[i];
        srt_finish_reason why = 0;
        if (r->max_new == 0 && r->fed == r->nprompt) why = SRT_FINISH_LENGTH;
        else if (q->smp[i] != q->skip && q->drawn[i] == r->eos) why = SRT_FINISH_EOS;
        else if (q->smp[i] != q->skip) {
            r->out[r->ngen++] = q->drawn[i];
            info->generated++;
            if (r->ngen == r->max_new) why = SRT_FINISH_LENGTH;
        }
        if (why && (st = finish(q, r, i, why)) == SRT_OK) info->finished++;
    }
    return st;
}

/* Sets up the prefill pass: each slot still feeding its prompt gets its next chunk. */
static void setup_prefill(srt_scheduler *q, int segment, srt_sched_step *info) {
    for (int i = 0; i < q->max_batch; i++) {
        Req *r = q->slot[i];
        q->n[i] = 0;
        q->decoding[i] = r && r->fed == r->nprompt; /* it drew a token before this step */
        if (!r || q->decoding[i]) continue;
        int left = r->nprompt - r->fed;
        q->n[i] = left < segment ? left : segment;
        q->tok[i] = r->prompt + r->fed;
        q->smp[i] = r->fed + q->n[i] == r->nprompt && r->max_new > 0 ? r->sampler : q->skip;
        info->prefill_batch++;
        info->prefill_tokens += q->n[i];
    }
}

/* Sets up the decode pass: each slot whose request decodes at this step (and is still there) feeds its last
 * token. */
static void setup_decode(srt_scheduler *q, srt_sched_step *info) {
    for (int i = 0; i < q->max_batch; i++) {
        Req *r = q->slot[i];
        q->n[i] = 0;
        if (!r || !q->decoding[i]) continue;
        q->n[i] = 1;
        q->tok[i] = &r->out[r->ngen - 1];
        q->smp[i] = r->sampler;
        info->decode_batch++;
    }
}

srt_status srt_scheduler_step(srt_scheduler *q, srt_sched_step *info) {
    if (!q) return SRT_ERR_INVALID;
    srt_sched_step local;
    if (!info) info = &local;
    memset(info, 0, sizeof *info);
    srt_status st = admit(q, &info->joined);
    if (st == SRT_OK) {
        setup_prefill(q, q->m->plan.segment, info);
        st = run_pass(q, true, &info->prefill_ms, &info->prefill_calls, info);
    }
    if (st == SRT_OK) {
        setup_decode(q, info);
        st = run_pass(q, false, &info->decode_ms, &info->decode_calls, info);
    }
    if (st != SRT_OK) { /* the slots' states are unknown: their requests end here */
        char msg[512];
        snprintf(msg, sizeof msg, "%s", srt_last_error(q->m->ctx));
        for (int i = 0; i < q->max_batch; i++)
            if (q->slot[i]) finish(q, q->slot[i], i, SRT_FINISH_CANCELLED);
        rt_error(q->m->ctx, st, "%s", msg); /* the failure's message, not a later one */
    }
    info->running = running(q);
    info->queued = q->nqueue;
    return st;
}
