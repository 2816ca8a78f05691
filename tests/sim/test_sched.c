/*
 * test_sched.c — continuous batching (srt_scheduler, issue 21) on ref and sim.
 *
 *   - exact: 7 requests (prompts of 1 to more than a segment, capped by the model; max_new 1 to 6; greedy and
 *     seeded temperature-0.9 samplers; one with an eos it meets) on a scheduler of 3 slots: requests wait,
 *     join as slots free up and leave at different steps, prompts are prefilled while others decode. Each
 *     request's tokens and finish reason are those srt_generate gives it alone on a single session;
 *   - cancel: a running and a queued request cancelled mid-stream end as cancelled (the running one with a
 *     prefix of its tokens alone, the queued one with none) and the others still equal alone; cancelling again
 *     or an id never added is a clear error;
 *   - errors: a full scheduler, a token outside the vocabulary, a shared sampler, a request past the model's
 *     positions, a bad max_batch, each refused with its message and nothing queued; on ref every block of the
 *     context's allocator is returned once the model is closed (schedulers destroyed with requests queued,
 *     running and uncollected);
 *   - counts (sim, graphs off): a decode pass of 3 requests makes the GEMM calls of a decode pass of 1, and the
 *     same launches beside one sample launch per row;
 *   - only needed work (sim, graphs on and off): a forward that hands back only its last logits row (generation's
 *     prefill, srt_forward_rows / srt_forward_sample) computes that row alone: none of the logits buffer's other
 *     rows holds its logits (the buffer was set to a sentinel; the plan may keep activations there earlier in
 *     the program), the row is bitwise the one of a forward of every row, the draw its argmax; the fused loss
 *     (eval) still computes every row, bitwise. (tests/rt/test_exec.c checks the GEMM's n on the fake driver.)
 */
#include "rt_internal.h" /* the plan's logits and the arena, for the row-range check */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;
#define CHECK(c, ...)                                                              \
    do {                                                                           \
        if (!(c)) {                                                                \
            failures++;                                                            \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                            \
            printf(__VA_ARGS__);                                                   \
            printf("\n");                                                          \
        }                                                                          \
    } while (0)

enum { NREQ = 7, SLOTS = 3, MAX_NEW = 6, MAX_PROMPT = 160 };

/* The requests of one test: prompt, limits, sampler settings; and what each gives alone. */
typedef struct Work {
    int32_t prompt[NREQ][MAX_PROMPT];  /* prompts */
    int len[NREQ];                     /* their lengths */
    int max_new[NREQ];                 /* their limits */
    int64_t eos[NREQ];                 /* their eos (-1: none) */
    double temp[NREQ];                 /* 0: greedy; else seeded by the request's index */
    int32_t alone[NREQ][MAX_NEW];      /* tokens alone */
    int nalone[NREQ];                  /* how many */
    srt_finish_reason why[NREQ];       /* why it ends alone */
} Work;

static srt_sampler *make_sampler(srt_context *ctx, double temp, int i, int vocab) {
    srt_sampling cfg;
    srt_sampling_init(&cfg);
    cfg.temperature = temp;
    cfg.seed = (uint64_t)i + 11;
    srt_sampler *smp = NULL;
    return srt_sampler_create(ctx, &cfg, vocab, &smp) == SRT_OK ? smp : NULL;
}

/* Request i alone: srt_generate on a fresh single-sequence session. */
static bool run_alone(srt_context *ctx, srt_model *m, Work *w, int i, int vocab) {
    srt_session *s = NULL;
    srt_sampler *smp = make_sampler(ctx, w->temp[i], i, vocab);
    srt_gen_seq q = {.prompt = w->prompt[i], .nprompt = w->len[i], .sampler = smp, .out = w->alone[i]};
    bool ok = smp && srt_session_create(m, 1, &s) == SRT_OK &&
              srt_generate(s, &q, 1, w->max_new[i], w->eos[i], NULL, NULL) == SRT_OK;
    w->nalone[i] = q.ngen;
    w->why[i] = q.eos ? SRT_FINISH_EOS : SRT_FINISH_LENGTH;
    srt_session_destroy(s);
    srt_sampler_destroy(smp);
    return ok;
}

/* The requests for a model: lengths cycling through 1, 4, 9, 2, a segment + 5, 17, 3 (capped). */
static bool make_work(srt_context *ctx, srt_model *m, const srt_model_info *mi, int max_pos, Work *w) {
    static const int want[NREQ] = {1, 4, 9, 2, -1, 17, 3};
    memset(w, 0, sizeof *w);
    for (int i = 0; i < NREQ; i++) {
        int l = want[i] < 0 ? mi->segment + 5 : want[i];
        if (l > MAX_PROMPT) l = MAX_PROMPT;
        if (max_pos > 0 && l > max_pos - MAX_NEW) l = max_pos - MAX_NEW;
        w->len[i] = l;
        w->max_new[i] = 1 + (i * 5) % MAX_NEW;
        w->eos[i] = -1;
        w->temp[i] = i % 2 ? 0.9 : 0.0;
        for (int t = 0; t < l; t++) w->prompt[i][t] = (int32_t)((i * 37 + t * 11 + 5) % mi->vocab);
    }
    bool ok = true;
    for (int i = 0; ok && i < NREQ; i++) ok = run_alone(ctx, m, w, i, mi->vocab);
    /* request 5 stops at the eos it meets: its third token alone (the first occurrence ends it) */
    if (ok && w->nalone[5] >= 3) {
        w->eos[5] = w->alone[5][2];
        ok = run_alone(ctx, m, w, 5, mi->vocab);
        CHECK(!ok || w->why[5] == SRT_FINISH_EOS, "request 5 alone does not stop at its eos");
    }
    return ok;
}

/* Adds request i of w (its own sampler in smp[i]); the id. */
static int64_t add(srt_context *ctx, srt_scheduler *q, const Work *w, int i, int vocab, srt_sampler **smp) {
    smp[i] = make_sampler(ctx, w->temp[i], i, vocab);
    srt_request r = {w->prompt[i], w->len[i], smp[i], w->max_new[i], w->eos[i]};
    int64_t id = -1;
    srt_status st = smp[i] ? srt_scheduler_add(q, &r, &id) : SRT_ERR_NOMEM;
    CHECK(st == SRT_OK, "add %d: %s", i, srt_last_error(ctx));
    return id;
}

/* Collects every finished request: tokens and reason per id (ids are request indices here). */
static void collect_all(srt_context *ctx, srt_scheduler *q, srt_finished *got, bool *seen) {
    srt_finished f;
    while (srt_scheduler_collect(q, &f)) {
        CHECK(f.id >= 0 && f.id < NREQ && !seen[f.id], "collected id %lld", (long long)f.id);
        if (f.id < 0 || f.id >= NREQ || seen[f.id]) {
            srt_free(ctx, f.tokens);
            continue;
        }
        seen[f.id] = true;
        got[f.id] = f;
    }
}

/* Every request through a scheduler of SLOTS slots equals itself alone. */
static void check_exact(srt_context *ctx, srt_model *m, const char *name, const Work *w, int vocab) {
    srt_scheduler *q = NULL;
    srt_sampler *smp[NREQ] = {0};
    srt_finished got[NREQ];
    bool seen[NREQ] = {0};
    int before = failures, steps = 0, most = 0, joined_late = 0;
    CHECK(srt_scheduler_create(m, SLOTS, 0, &q) == SRT_OK, "%s: create: %s", name, srt_last_error(ctx));
    if (!q) return;
    for (int i = 0; i < NREQ; i++) CHECK(add(ctx, q, w, i, vocab, smp) == i, "%s: id of request %d", name, i);
    CHECK(srt_scheduler_pending(q) == NREQ, "%s: pending %d", name, srt_scheduler_pending(q));
    for (srt_sched_step info; srt_scheduler_pending(q) > 0 && steps < 200; steps++) {
        srt_status st = srt_scheduler_step(q, &info);
        CHECK(st == SRT_OK, "%s: step %d: %s", name, steps, srt_last_error(ctx));
        if (st != SRT_OK) break;
        CHECK(info.running <= SLOTS && info.prefill_batch + info.decode_batch <= SLOTS, "%s: step %d: %d running",
              name, steps, info.running);
        if (info.running + info.finished > most) most = info.running + info.finished;
        if (steps > 0 && info.joined > 0 && info.decode_batch > 0) joined_late++; /* joined beside decoders */
    }
    collect_all(ctx, q, got, seen);
    CHECK(most == SLOTS && joined_late > 0, "%s: at most %d in slots, %d steps with joins beside decoding", name, most,
          joined_late);
    for (int i = 0; i < NREQ; i++) {
        CHECK(seen[i], "%s: request %d never finished", name, i);
        if (!seen[i]) continue;
        CHECK(got[i].ntokens == w->nalone[i] && got[i].reason == w->why[i] &&
                  (w->nalone[i] == 0 || memcmp(got[i].tokens, w->alone[i], sizeof(int32_t) * (size_t)w->nalone[i]) == 0),
              "%s: request %d (prompt %d, max_new %d, temperature %.1f): %d tokens (reason %d), alone %d (reason %d)",
              name, i, w->len[i], w->max_new[i], w->temp[i], got[i].ntokens, got[i].reason, w->nalone[i], w->why[i]);
        srt_free(ctx, got[i].tokens);
    }
    if (failures == before)
        printf("%s: %d requests on %d slots in %d steps = each alone (greedy and seeded, eos, prompt up to %d)\n", name,
               NREQ, SLOTS, steps, w->len[4]);
    srt_scheduler_destroy(q);
    for (int i = 0; i < NREQ; i++) srt_sampler_destroy(smp[i]);
}

/* Cancelling a running and a queued request mid-stream. */
static void check_cancel(srt_context *ctx, srt_model *m, const char *name, const Work *w, int vocab) {
    srt_scheduler *q = NULL;
    srt_sampler *smp[NREQ] = {0};
    srt_finished got[NREQ];
    bool seen[NREQ] = {0};
    int before = failures;
    CHECK(srt_scheduler_create(m, SLOTS, 0, &q) == SRT_OK, "%s: create: %s", name, srt_last_error(ctx));
    if (!q) return;
    for (int i = 0; i < NREQ; i++) add(ctx, q, w, i, vocab, smp);
    srt_sched_step info;
    /* request 2 (max_new 6) is running after 2 steps; request 6 still queued */
    CHECK(srt_scheduler_step(q, &info) == SRT_OK && srt_scheduler_step(q, &info) == SRT_OK, "%s: steps: %s", name,
          srt_last_error(ctx));
    CHECK(srt_scheduler_cancel(q, 2) == SRT_OK && srt_scheduler_cancel(q, 6) == SRT_OK, "%s: cancel: %s", name,
          srt_last_error(ctx));
    srt_status st = srt_scheduler_cancel(q, 2);
    CHECK(st == SRT_ERR_INVALID && strstr(srt_last_error(ctx), "no request 2 is queued or running"),
          "%s: cancelling twice: %d %s", name, st, srt_last_error(ctx));
    st = srt_scheduler_cancel(q, 99);
    CHECK(st == SRT_ERR_INVALID && strstr(srt_last_error(ctx), "no request 99"), "%s: cancelling 99: %d %s", name, st,
          srt_last_error(ctx));
    for (int n = 0; srt_scheduler_pending(q) > 0 && n < 200; n++)
        if (srt_scheduler_step(q, &info) != SRT_OK) break;
    CHECK(srt_scheduler_pending(q) == 0, "%s: after cancelling: %s", name, srt_last_error(ctx));
    collect_all(ctx, q, got, seen);
    for (int i = 0; i < NREQ; i++) {
        CHECK(seen[i], "%s: request %d not collected", name, i);
        if (!seen[i]) continue;
        bool cancelled = i == 2 || i == 6;
        bool prefix = got[i].ntokens <= w->nalone[i] &&
                      (got[i].ntokens == 0 || memcmp(got[i].tokens, w->alone[i], sizeof(int32_t) * (size_t)got[i].ntokens) == 0);
        if (cancelled)
            CHECK(got[i].reason == SRT_FINISH_CANCELLED && prefix && (i == 6 ? got[i].ntokens == 0 : got[i].ntokens < 6),
                  "%s: cancelled request %d: reason %d, %d tokens", name, i, got[i].reason, got[i].ntokens);
        else
            CHECK(got[i].reason == w->why[i] && prefix && got[i].ntokens == w->nalone[i],
                  "%s: request %d beside the cancelled ones differs from alone", name, i);
        srt_free(ctx, got[i].tokens);
    }
    if (failures == before) printf("%s: a running and a queued request cancelled; the others = alone\n", name);
    srt_scheduler_destroy(q);
    for (int i = 0; i < NREQ; i++) srt_sampler_destroy(smp[i]);
}

/* A refused add: its status and message, and nothing queued. */
static void expect_refused(srt_context *ctx, srt_scheduler *q, const srt_request *r, srt_status want, const char *msg) {
    int before = srt_scheduler_pending(q);
    int64_t id = -7;
    srt_status st = srt_scheduler_add(q, r, &id);
    CHECK(st == want && strstr(srt_last_error(ctx), msg) && srt_scheduler_pending(q) == before && id == -7,
          "refused add: %d '%s', expected %d with '%s'", st, srt_last_error(ctx), want, msg);
}

static void check_errors(srt_context *ctx, srt_model *m, const srt_model_info *mi, int max_pos) {
    srt_scheduler *q = NULL;
    int before = failures;
    CHECK(srt_scheduler_create(m, 0, 0, &q) == SRT_ERR_INVALID && !q && strstr(srt_last_error(ctx), "batch 0"),
          "max_batch 0: %s", srt_last_error(ctx));
    CHECK(srt_scheduler_create(m, 257, 0, &q) == SRT_ERR_INVALID && !q, "max_batch 257: %s", srt_last_error(ctx));
    CHECK(srt_scheduler_create(m, 2, -1, &q) == SRT_ERR_INVALID && !q, "max_queue -1: %s", srt_last_error(ctx));
    CHECK(srt_scheduler_create(m, 2, 2, &q) == SRT_OK, "create: %s", srt_last_error(ctx));
    if (!q) return;
    srt_sampler *a = make_sampler(ctx, 0, 0, mi->vocab), *b = make_sampler(ctx, 0, 1, mi->vocab),
                *c = make_sampler(ctx, 0, 2, mi->vocab), *small = make_sampler(ctx, 0, 3, mi->vocab - 1);
    int32_t good[2] = {1, 2}, bad[2] = {1, (int32_t)mi->vocab};
    int64_t id;
    srt_request r = {bad, 2, a, 3, -1};
    expect_refused(ctx, q, &r, SRT_ERR_INVALID, "prompt token 1 is");
    r = (srt_request){good, 2, small, 3, -1};
    expect_refused(ctx, q, &r, SRT_ERR_INVALID, "a sampler for");
    r = (srt_request){good, 0, a, 3, -1};
    expect_refused(ctx, q, &r, SRT_ERR_INVALID, "at least 1 token");
    if (max_pos > 0) {
        r = (srt_request){good, 2, a, max_pos, -1};
        expect_refused(ctx, q, &r, SRT_ERR_UNSUPPORTED, "past the");
    }
    r = (srt_request){good, 2, a, 3, -1};
    CHECK(srt_scheduler_add(q, &r, &id) == SRT_OK && id == 0, "add: %s", srt_last_error(ctx));
    expect_refused(ctx, q, &r, SRT_ERR_INVALID, "the sampler is request 0's");
    r.sampler = b;
    CHECK(srt_scheduler_add(q, &r, &id) == SRT_OK && id == 1, "add: %s", srt_last_error(ctx));
    r.sampler = c;
    expect_refused(ctx, q, &r, SRT_ERR_INVALID, "the scheduler is full (2 requests queued or running, max_queue 2)");
    CHECK(srt_scheduler_cancel(q, 0) == SRT_OK && srt_scheduler_add(q, &r, &id) == SRT_OK && id == 2,
          "add after a cancel: %s", srt_last_error(ctx));
    srt_session *slots = srt_scheduler_session(q);
    CHECK(srt_session_batch(slots) == 2 && srt_session_reset_sequence(slots, 1) == SRT_OK &&
              srt_session_reset_sequence(slots, 2) == SRT_ERR_INVALID &&
              strstr(srt_last_error(ctx), "srt_session_reset_sequence: sequence 2 of a session of 2"),
          "reset_sequence: %s", srt_last_error(ctx));
    if (failures == before) printf("errors: bad ids, samplers, lengths, a full scheduler refused with their messages\n");
    srt_scheduler_destroy(q); /* destroys queued requests and uncollected results */
    srt_sampler_destroy(a), srt_sampler_destroy(b), srt_sampler_destroy(c), srt_sampler_destroy(small);
}

/* The decode pass's device calls at 1 and at 3 requests (sim, graphs off). */
static void check_counts(srt_context *ctx) {
    srt_options opt;
    srt_options_init(&opt);
    opt.backend = SRT_BACKEND_SIM;
    srt_model *m = NULL;
    srt_model_info mi;
    setenv("SHORTC_NO_GRAPHS", "1", 1);
    bool ok = srt_model_open(ctx, SHORTC_SOURCE_DIR "/models/gpt2_tiny.arch", &opt, &m) == SRT_OK &&
              srt_model_random_weights(m, 3) == SRT_OK && srt_model_get_info(m, &mi) == SRT_OK;
    unsetenv("SHORTC_NO_GRAPHS");
    CHECK(ok, "counts: %s", srt_last_error(ctx));
    srt_call_counts pass[2] = {{0}};
    int batch[2] = {0};
    for (int k = 0; ok && k < 2; k++) {
        int n = k ? 3 : 1;
        srt_scheduler *q = NULL;
        srt_sampler *smp[3] = {0};
        int32_t p[3] = {4, 5, 6};
        ok = srt_scheduler_create(m, 4, 0, &q) == SRT_OK;
        for (int i = 0; ok && i < n; i++) {
            srt_request r = {p, 3, smp[i] = make_sampler(ctx, 0, i, mi.vocab), 4, -1};
            int64_t id;
            ok = srt_scheduler_add(q, &r, &id) == SRT_OK;
        }
        srt_sched_step info;
        ok = ok && srt_scheduler_step(q, &info) == SRT_OK && info.prefill_batch == n && info.decode_batch == 0 &&
             srt_scheduler_step(q, &info) == SRT_OK && info.prefill_batch == 0;
        pass[k] = info.decode_calls, batch[k] = info.decode_batch;
        CHECK(ok && batch[k] == n, "counts at %d: %s", n, srt_last_error(ctx));
        srt_scheduler_destroy(q);
        for (int i = 0; i < 3; i++) srt_sampler_destroy(smp[i]);
    }
    if (ok) {
        CHECK(pass[1].gemms == pass[0].gemms && pass[1].launches - 3 == pass[0].launches - 1 && pass[0].gemms > 0,
              "decode pass: %lld launches, %lld GEMMs at 3; %lld, %lld at 1", pass[1].launches, pass[1].gemms,
              pass[0].launches, pass[0].gemms);
        printf("gpt2_tiny on sim, a decode pass (graphs off): batch 1: %lld launches, %lld GEMMs, %lld syncs; batch 3: "
               "%lld, %lld, %lld (a sample launch per row)\n", pass[0].launches, pass[0].gemms, pass[0].syncs,
               pass[1].launches, pass[1].gemms, pass[1].syncs);
    }
    srt_model_close(m);
}

/* The session's logits buffer (T x vocab floats) into out, after the forward (sim: the driver's copy). */
static bool read_logits(srt_session *s, int T, float *out) {
    srt_model *m = s->m;
    CUdeviceptr at = s->arena + (CUdeviceptr)m->plan.logits.offset;
    return m->plan.logits.kind == RT_REF_ARENA && m->drv.ctxSetCurrent(m->cuctx) == CUDA_SUCCESS &&
           m->drv.memcpyDtoH(out, at, sizeof(float) * (size_t)T * (size_t)m->plan.vocab) == CUDA_SUCCESS;
}

/* Sets the session's logits buffer to the byte 0x7f in every row (a sentinel no GEMM writes). */
static bool clear_logits(srt_session *s, int T) {
    srt_model *m = s->m;
    return m->drv.memsetD8(s->arena + (CUdeviceptr)m->plan.logits.offset, 0x7f,
                           sizeof(float) * (size_t)T * (size_t)m->plan.vocab) == CUDA_SUCCESS;
}

/* Whether each of rows 0..n-1 of buf (vocab floats each) differs from that row of the full forward's logits: not
 * computed (the buffer's sentinel, or activations the plan keeps there earlier in the program). */
static bool rows_not_logits(const float *buf, const float *all, int n, int vocab) {
    for (int r = 0; r < n; r++)
        if (memcmp(buf + (size_t)r * (size_t)vocab, all + (size_t)r * (size_t)vocab, sizeof(float) * (size_t)vocab) == 0)
            return false;
    return true;
}

static void check_logits_rows(srt_context *ctx, const char *model, bool graphs) {
    enum { T = 7 };
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.arch", SHORTC_SOURCE_DIR, model);
    srt_options opt;
    srt_options_init(&opt);
    opt.backend = SRT_BACKEND_SIM;
    srt_model *m = NULL;
    srt_session *s = NULL;
    srt_model_info mi;
    if (!graphs) setenv("SHORTC_NO_GRAPHS", "1", 1);
    bool ok = srt_model_open(ctx, path, &opt, &m) == SRT_OK && srt_model_random_weights(m, 4) == SRT_OK &&
              srt_model_get_info(m, &mi) == SRT_OK && srt_session_create(m, 1, &s) == SRT_OK;
    unsetenv("SHORTC_NO_GRAPHS");
    CHECK(ok, "%s: rows: %s", model, srt_last_error(ctx));
    size_t V = ok ? (size_t)mi.vocab : 1;
    float *all = malloc(sizeof(float) * T * V), *buf = malloc(sizeof(float) * T * V), last[1024 > V ? 1024 : 1];
    int32_t tok[T], targets[T];
    float nll[T];
    for (int t = 0; t < T; t++) tok[t] = (int32_t)((t * 13 + 2) % (int)V), targets[t] = (int32_t)((t * 5 + 1) % (int)V);
    ok = ok && all && buf && V <= 1024;
    int before = failures;
    for (int round = 0; ok && round < 3; round++) { /* the third round replays graphs */
        ok = srt_session_reset(s) == SRT_OK && srt_forward(s, tok, T, all) == SRT_OK;
        /* the last row alone: the other rows are not computed */
        ok = ok && srt_session_reset(s) == SRT_OK && clear_logits(s, T) &&
             srt_forward_rows(s, tok, T, T - 1, last) == SRT_OK && read_logits(s, T, buf);
        CHECK(ok && rows_not_logits(buf, all, T - 1, (int)V) && memcmp(last, all + (T - 1) * V, sizeof(float) * V) == 0 &&
                  memcmp(buf + (T - 1) * V, last, sizeof(float) * V) == 0,
              "%s (graphs %s) round %d: srt_forward_rows of the last row computed other rows or differs (%s)", model,
              graphs ? "on" : "off", round, ok ? "rows" : srt_last_error(ctx));
        /* a draw reads the last row alone as well */
        srt_sampler *smp = NULL;
        srt_sampling cfg;
        srt_sampling_init(&cfg);
        int32_t drawn = -1;
        ok = ok && srt_sampler_create(ctx, &cfg, (int)V, &smp) == SRT_OK && srt_session_reset(s) == SRT_OK &&
             clear_logits(s, T) && srt_forward_sample(s, tok, T, smp, &drawn) == SRT_OK && read_logits(s, T, buf);
        int argmax = 0;
        for (size_t v = 1; v < V; v++)
            if (last[v] > last[argmax]) argmax = (int)v;
        CHECK(ok && rows_not_logits(buf, all, T - 1, (int)V) && drawn == argmax, "%s round %d: srt_forward_sample: drew %d "
              "(argmax %d), other rows %s", model, round, drawn, argmax, ok && rows_not_logits(buf, all, T - 1, (int)V) ? "kept" : "computed");
        srt_sampler_destroy(smp);
        /* the fused loss reads every row: all of them computed */
        ok = ok && srt_session_reset(s) == SRT_OK && clear_logits(s, T) &&
             srt_forward_nll(s, tok, T, 0, targets, nll) == SRT_OK && read_logits(s, T, buf);
        CHECK(ok && memcmp(buf, all, sizeof(float) * T * V) == 0, "%s round %d: the loss forward's logits differ (%s)",
              model, round, ok ? "rows" : srt_last_error(ctx));
    }
    if (ok && failures == before)
        printf("%s on sim (graphs %s): a forward of %d tokens handing back its last row computes that row alone "
               "(the others not logits), bitwise the full forward's; the loss forward computes all %d\n",
               model, graphs ? "on" : "off", T, T);
    free(all);
    free(buf);
    srt_model_close(m);
}

static void check_model(srt_context *ctx, const char *model, srt_backend backend, bool errors) {
    char path[1024], name[256];
    snprintf(path, sizeof path, "%s/%s.arch", SHORTC_SOURCE_DIR, model);
    snprintf(name, sizeof name, "%s on %s", model, srt_backend_name(backend));
    srt_options opt;
    srt_options_init(&opt);
    opt.backend = backend;
    srt_model *m = NULL;
    srt_model_info mi;
    static Work w;
    bool ok = srt_model_open(ctx, path, &opt, &m) == SRT_OK && srt_model_random_weights(m, 5) == SRT_OK &&
              srt_model_get_info(m, &mi) == SRT_OK;
    ok = ok && make_work(ctx, m, &mi, mi.max_positions, &w);
    CHECK(ok, "%s: %s", name, srt_last_error(ctx));
    if (ok) check_exact(ctx, m, name, &w, mi.vocab);
    if (ok) check_cancel(ctx, m, name, &w, mi.vocab);
    if (ok && errors) check_errors(ctx, m, &mi, mi.max_positions);
    srt_model_close(m);
}

/* The context's allocator: counts the blocks outstanding, so that every path (cancelled, queued and uncollected
 * requests destroyed with the scheduler, refused adds) is seen to free what it took. */
static long outstanding;
static void *count_alloc(void *ud, void *ptr, size_t old_size, size_t new_size) {
    (void)ud, (void)old_size;
    if (new_size == 0) {
        if (ptr) outstanding--;
        free(ptr);
        return NULL;
    }
    void *p = realloc(ptr, new_size);
    if (p && !ptr) outstanding++;
    return p;
}

int main(int argc, char **argv) {
    static const char *const bundled[] = {"models/gpt2_tiny", "models/mixed_tiny", "models/shortformer_tiny",
                                          "models/txl_tiny"};
    const char *const *models = argc > 1 ? (const char *const *)argv + 1 : bundled;
    size_t n = argc > 1 ? (size_t)argc - 1 : sizeof bundled / sizeof *bundled;
    srt_context *ctx = NULL;
    if (srt_context_create(&ctx, count_alloc, NULL) != SRT_OK) return 1;
    for (size_t i = 0; i < n; i++) {
        check_model(ctx, models[i], SRT_BACKEND_REF, i == 0);
        CHECK(outstanding == 1, "%s on ref: %ld blocks of the context's allocator outstanding once the model is closed "
              "(1: the context)", models[i], outstanding);
        check_model(ctx, models[i], SRT_BACKEND_SIM, false);
    }
    if (argc <= 1) {
        check_counts(ctx);
        check_logits_rows(ctx, "models/gpt2_tiny", false);
        check_logits_rows(ctx, "models/gpt2_tiny", true);
        check_logits_rows(ctx, "models/gpt2_tiny_half", true);
    }
    srt_context_destroy(ctx);
    if (failures) printf("test_sched: %d check(s) failed\n", failures);
    else printf("test_sched: all checks passed\n");
    return failures ? 1 : 0;
}
