/*
 * modes.c — inference modes over a long token sequence and per-token losses
 * (srt_eval_*, srt_forward_nll in shortrt.h), on top of srt_forward_rows and
 * the session's state only, so that they run on every backend.
 *
 * A mode is a sequence of windows [start, end) of at most L tokens (the
 * window length, by default the model's segment). Each window is run from a
 * reset session and scores the rows after the previous window's end, so that
 * every token is scored exactly once:
 *
 *   nonoverlapping  start = nL, end = min(start + L, N)            (the last window may be short)
 *   windows (K)     start = n(L - K), end = min(start + L, N)      (Yoshida et al. §4.2; K = 0 is nonoverlapping)
 *   sliding (S)     end = min(L + nS, N), start = max(0, end - L)  (the last window end-aligned; S = L and
 *                                                                   N a multiple of L is nonoverlapping)
 *   tokenwise       nonoverlapping windows fed one token per call through the session's state
 *   cached          nonoverlapping windows through one session that carries its state from window to
 *                   window (srt_model_info.carries_state: a PIA cache); refused for other models
 *
 * On a model that carries its state, tokenwise also runs every window through one session (each
 * token then sees the cache's window of earlier tokens, as in the seeds' token-by-token generation);
 * the other modes reset the session before each window on every model.
 *
 * A recurrent model (docs/attention/recurrence.md) runs windows or nonoverlapping only: the session is
 * reset once, and each window reads the h_prev the one before it left in the session's state.
 *
 * srt_eval_logits_stream hands each window's scored rows to a callback (one L x vocab buffer, never
 * n x vocab); srt_eval_logits is that callback copying them into the caller's n x vocab array.
 *
 * The loss of row i is -log softmax(row i)[tokens[i + 1]] (natural log),
 * computed by the backend where the logits are (RtBackend.forward_nll): on
 * sim and cuda by the plan's "loss" program (templates/loss.cuh), so that
 * only the T losses of a window are copied to the host, never its T x vocab
 * logits; on the ref backend in-process (rt_row_nll).
 */
#include "rt_internal.h"

#include <math.h>
#include <string.h>

/* The names of srt_mode, in its order. */
static const char *const mode_names[] = {"nonoverlapping", "sliding", "windows", "tokenwise", "cached"};
#define NMODES ((int)(sizeof mode_names / sizeof mode_names[0]))

const char *srt_mode_name(srt_mode m) { return (int)m >= 0 && (int)m < NMODES ? mode_names[m] : "unknown"; }

srt_status srt_mode_from_name(const char *name, srt_mode *out) {
    for (int i = 0; name && out && i < NMODES; i++)
        if (strcmp(name, mode_names[i]) == 0) {
            *out = (srt_mode)i;
            return SRT_OK;
        }
    return SRT_ERR_INVALID;
}

void srt_eval_options_init(srt_eval_options *o) {
    memset(o, 0, sizeof *o);
    o->mode = SRT_MODE_NONOVERLAPPING;
}

/* ------------------------------------------------------------------ */
/* Windows                                                             */
/* ------------------------------------------------------------------ */

/* Where the windows of one evaluation are. */
typedef struct WindowPlan {
    srt_mode mode;      /* the mode */
    bool carry;         /* cached, or tokenwise on a model that carries its state: no reset between windows */
    int64_t n;          /* tokens */
    int64_t len;        /* L: tokens per window */
    int64_t step;       /* sliding: S; the others: L - K (K = 0 but for windows) */
    int64_t index;      /* the next window's number */
    int64_t prev_end;   /* the previous window's end (0 before the first) */
} WindowPlan;

/* One window: tokens [start, end), rows [score, end) scored. */
typedef struct Window {
    int64_t start;  /* first token fed */
    int64_t end;    /* one past the last token fed */
    int64_t score;  /* first row scored (the previous window's end) */
} Window;

/* The next window, or false after the last. */
static bool next_window(WindowPlan *p, Window *w) {
    if (p->prev_end >= p->n) return false;
    if (p->mode == SRT_MODE_SLIDING) {
        w->end = p->len + p->index * p->step < p->n ? p->len + p->index * p->step : p->n;
        w->start = w->end > p->len ? w->end - p->len : 0;
    } else {
        w->start = p->index * p->step;
        w->end = w->start + p->len < p->n ? w->start + p->len : p->n;
    }
    w->score = p->prev_end;
    p->prev_end = w->end;
    p->index++;
    return true;
}

/* Checks the options against the model and fills the plan; errors name the option. */
static srt_status make_plan(srt_session *s, const srt_eval_options *o, int64_t n, WindowPlan *p) {
    srt_model *m = s->m;
    srt_context *ctx = m->ctx;
    srt_model_info mi;
    srt_status st = srt_model_get_info(m, &mi);
    if (st != SRT_OK) return st;
    if ((int)o->mode < 0 || (int)o->mode >= NMODES) return rt_error(ctx, SRT_ERR_INVALID, "unknown mode %d", (int)o->mode);
    if (n < 1) return rt_error(ctx, SRT_ERR_INVALID, "%s: no tokens", srt_mode_name(o->mode));
    if (o->window < 0 || o->window > mi.segment)
        return rt_error(ctx, SRT_ERR_INVALID, "window of %d tokens; model '%s' takes 1 to %d per forward", o->window,
                        mi.name, mi.segment);
    int64_t L = o->window ? o->window : mi.segment;
    if (m->plan.recurrent && o->mode != SRT_MODE_WINDOWS && o->mode != SRT_MODE_NONOVERLAPPING)
        return rt_error(ctx, SRT_ERR_UNSUPPORTED,
                        "model '%s' is recurrent (each window passes h_prev to the next), so mode '%s' cannot run it; "
                        "use windows (--overlap K, the model's own: %d) or nonoverlapping", mi.name,
                        srt_mode_name(o->mode), m->plan.overlap);
    if (o->mode == SRT_MODE_CACHED && !mi.carries_state)
        return rt_error(ctx, SRT_ERR_UNSUPPORTED,
                        "model '%s' keeps no state across segments (a PIA cache or memories), so mode 'cached' cannot "
                        "run it; use nonoverlapping, sliding, windows or tokenwise", mi.name);
    if (o->stride && o->mode != SRT_MODE_SLIDING)
        return rt_error(ctx, SRT_ERR_INVALID, "a stride applies to mode 'sliding' only, not '%s'", srt_mode_name(o->mode));
    if (o->overlap && o->mode != SRT_MODE_WINDOWS)
        return rt_error(ctx, SRT_ERR_INVALID, "an overlap applies to mode 'windows' only, not '%s'",
                        srt_mode_name(o->mode));
    if (o->stride < 0 || o->stride > L)
        return rt_error(ctx, SRT_ERR_INVALID, "stride %d of model '%s': expected 1 to its window of %lld tokens",
                        o->stride, mi.name, (long long)L);
    if (o->overlap < 0 || o->overlap >= L)
        return rt_error(ctx, SRT_ERR_INVALID, "overlap %d of model '%s': expected 0 to %lld (less than its window)",
                        o->overlap, mi.name, (long long)L - 1);
    *p = (WindowPlan){.mode = o->mode, .n = n, .len = L,
                      .carry = o->mode == SRT_MODE_CACHED || (o->mode == SRT_MODE_TOKENWISE && mi.carries_state) ||
                               m->plan.recurrent, /* h_prev passes from window to window */
                      .step = o->mode == SRT_MODE_SLIDING ? (o->stride ? o->stride : L) : L - o->overlap};
    return SRT_OK;
}

/* ------------------------------------------------------------------ */
/* Losses                                                              */
/* ------------------------------------------------------------------ */

float rt_row_nll(const float *row, int vocab, int32_t target) {
    float mx = row[0];
    for (int v = 1; v < vocab; v++) mx = row[v] > mx ? row[v] : mx;
    double sum = 0;
    for (int v = 0; v < vocab; v++) sum += exp((double)row[v] - mx);
    return (float)(log(sum) + mx - row[target]);
}

srt_status rt_forward_nll_on_host(srt_session *s, const int32_t *tokens, int ntokens, int first_row,
                                  const int32_t *targets, float *nll) {
    srt_context *ctx = s->m->ctx;
    int vocab = s->m->plan.vocab, nrows = ntokens - first_row;
    float *rows = rt_alloc(ctx, sizeof *rows * (size_t)nrows * (size_t)vocab);
    if (!rows) return rt_error(ctx, SRT_ERR_NOMEM, "out of memory");
    srt_status st = s->m->ops->forward(s, tokens, ntokens, first_row, rows);
    for (int i = 0; st == SRT_OK && i < nrows; i++)
        nll[i] = targets[i] < 0 ? 0.0f : rt_row_nll(rows + (size_t)i * (size_t)vocab, vocab, targets[i]);
    rt_free(ctx, rows);
    return st;
}

/* srt_forward_nll after its NULL checks: the backend's forward_nll, so that on sim and cuda only the losses
 * leave the device. */
static srt_status forward_nll(srt_session *s, const int32_t *tokens, int ntokens, int first_row,
                              const int32_t *targets, float *nll) {
    srt_status st = rt_check_forward(s, tokens, ntokens, first_row);
    int vocab = s->m->plan.vocab;
    for (int i = 0; st == SRT_OK && i < ntokens - first_row; i++)
        if (targets[i] >= vocab)
            return rt_error(s->m->ctx, SRT_ERR_INVALID, "target %d (row %d) is outside the vocabulary [0, %d)",
                            (int)targets[i], first_row + i, vocab);
    return st != SRT_OK ? st : s->m->ops->forward_nll(s, tokens, ntokens, first_row, targets, nll);
}

srt_status srt_forward_nll(srt_session *s, const int32_t *tokens, int ntokens, int first_row, const int32_t *targets,
                           float *nll) {
    if (!s) return SRT_ERR_INVALID;
    if (!tokens || !targets || !nll) return rt_error(s->m->ctx, SRT_ERR_INVALID, "srt_forward_nll: NULL argument");
    return forward_nll(s, tokens, ntokens, first_row, targets, nll);
}

/* ------------------------------------------------------------------ */
/* Evaluation                                                          */
/* ------------------------------------------------------------------ */

/* What one evaluation hands out: logits rows to a callback, or per-token losses. */
typedef struct EvalOut {
    srt_rows_fn rows;   /* logits: called with each window's scored rows, or NULL */
    void *ud;           /* its first argument */
    float *nll;         /* n - 1 losses, or NULL */
    float *win;         /* logits: a window's scored rows (L x vocab; tokenwise's unscored rows land in row 0) */
    float *win_nll;     /* nll: a window's losses (L) */
    int32_t *targets;   /* nll: a window's targets (L) */
    int vocab;          /* logits width */
} EvalOut;

/* Hands the rows [w.score, w.end) in out->win to the callback; its failure stops the evaluation. */
static srt_status emit_rows(srt_session *s, Window w, EvalOut *out) {
    srt_status st = out->rows(out->ud, w.score, (int)(w.end - w.score), out->win);
    if (st == SRT_OK) return SRT_OK;
    return rt_error(s->m->ctx, st, "the rows callback stopped the evaluation at row %lld (%s)", (long long)w.score,
                    srt_status_name(st));
}

/* Runs the rows [score, end) of window w (tokens [start, end)) into out, from a reset session unless carry. */
static srt_status run_window(srt_session *s, const int32_t *tokens, int64_t n, Window w, bool tokenwise, bool carry,
                             EvalOut *out) {
    srt_status st = carry ? SRT_OK : srt_session_reset(s);
    int len = (int)(w.end - w.start), first = (int)(w.score - w.start), nrows = len - first;
    if (out->nll)
        for (int i = 0; i < nrows; i++) out->targets[i] = w.score + i + 1 < n ? tokens[w.score + i + 1] : -1;
    const int32_t *t = tokens + w.start;
    if (!tokenwise) {
        if (st == SRT_OK && out->rows) st = srt_forward_rows(s, t, len, first, out->win);
        if (st == SRT_OK && out->nll)
            st = forward_nll(s, t, len, first, out->targets, out->win_nll);
    }
    for (int i = 0; tokenwise && st == SRT_OK && i < len; i++) { /* one query per call through the state */
        int r = i - first;
        if (out->nll) { /* an unscored row (r < 0) gets target -1: one loss, not a logits row, comes back */
            int32_t none = -1;
            float unused;
            st = forward_nll(s, t + i, 1, 0, r >= 0 ? out->targets + r : &none, r >= 0 ? out->win_nll + r : &unused);
        } else /* unscored rows (r < 0) come first and land in row 0, which the first scored row replaces */
            st = srt_forward_rows(s, t + i, 1, 0, out->win + (size_t)(r > 0 ? r : 0) * (size_t)out->vocab);
    }
    int64_t last = w.end < n ? w.end : n - 1; /* row n - 1 predicts nothing */
    if (st == SRT_OK && out->nll && last > w.score)
        memcpy(out->nll + w.score, out->win_nll, sizeof *out->nll * (size_t)(last - w.score));
    if (st == SRT_OK && out->rows) st = emit_rows(s, w, out);
    return st;
}

/* Runs every window of o's mode over tokens[n] into out. */
static srt_status evaluate(srt_session *s, const srt_eval_options *o, const int32_t *tokens, int64_t n, EvalOut *out) {
    WindowPlan p = {0};
    srt_status st = make_plan(s, o, n, &p);
    if (st != SRT_OK) return st;
    srt_context *ctx = s->m->ctx;
    if (out->nll) {
        out->win_nll = rt_alloc(ctx, sizeof *out->win_nll * (size_t)p.len);
        out->targets = rt_alloc(ctx, sizeof *out->targets * (size_t)p.len);
    } else out->win = rt_alloc(ctx, sizeof *out->win * (size_t)p.len * (size_t)out->vocab);
    if (out->nll ? !out->win_nll || !out->targets : !out->win) st = rt_error(ctx, SRT_ERR_NOMEM, "out of memory");
    Window w;
    if (st == SRT_OK && p.carry) st = srt_session_reset(s); /* one sequence through the whole text */
    while (st == SRT_OK && next_window(&p, &w)) {
        st = run_window(s, tokens, n, w, o->mode == SRT_MODE_TOKENWISE, p.carry, out);
        if (st == SRT_OK && o->progress) o->progress(o->progress_ud, w.end, n);
    }
    rt_free(ctx, out->win);
    rt_free(ctx, out->win_nll);
    rt_free(ctx, out->targets);
    srt_status rs = srt_session_reset(s);
    return st != SRT_OK ? st : rs;
}

/* Common argument checks of srt_eval_logits and srt_eval_nll. */
static srt_status eval_args(srt_session *s, const srt_eval_options *o, const int32_t *tokens, bool out,
                            const char *fn, EvalOut *eo) {
    if (!s) return SRT_ERR_INVALID;
    if (!o || !tokens || !out) return rt_error(s->m->ctx, SRT_ERR_INVALID, "%s: NULL argument", fn);
    srt_model_info mi;
    srt_status st = srt_model_get_info(s->m, &mi);
    memset(eo, 0, sizeof *eo);
    eo->vocab = mi.vocab;
    return st;
}

/* srt_eval_logits' callback: the rows into the caller's n x vocab buffer. */
typedef struct CopyRows {
    float *logits;  /* the caller's buffer */
    int vocab;      /* row width */
} CopyRows;

static srt_status copy_rows(void *ud, int64_t first_row, int nrows, const float *logits) {
    CopyRows *c = ud;
    memcpy(c->logits + (size_t)first_row * (size_t)c->vocab, logits, sizeof *logits * (size_t)nrows * (size_t)c->vocab);
    return SRT_OK;
}

srt_status srt_eval_logits_stream(srt_session *s, const srt_eval_options *o, const int32_t *tokens, int64_t n,
                                  srt_rows_fn rows, void *ud) {
    EvalOut eo;
    srt_status st = eval_args(s, o, tokens, rows != NULL, "srt_eval_logits_stream", &eo);
    if (st != SRT_OK) return st;
    eo.rows = rows;
    eo.ud = ud;
    return evaluate(s, o, tokens, n, &eo);
}

srt_status srt_eval_logits(srt_session *s, const srt_eval_options *o, const int32_t *tokens, int64_t n, float *logits) {
    EvalOut eo;
    srt_status st = eval_args(s, o, tokens, logits != NULL, "srt_eval_logits", &eo);
    if (st != SRT_OK) return st;
    CopyRows c = {.logits = logits, .vocab = eo.vocab};
    return srt_eval_logits_stream(s, o, tokens, n, copy_rows, &c);
}

srt_status srt_eval_nll(srt_session *s, const srt_eval_options *o, const int32_t *tokens, int64_t n, float *nll) {
    EvalOut eo;
    srt_status st = eval_args(s, o, tokens, nll != NULL, "srt_eval_nll", &eo);
    if (st != SRT_OK) return st;
    if (n < 2) return rt_error(s->m->ctx, SRT_ERR_INVALID, "srt_eval_nll: %lld tokens (a loss needs at least 2)", (long long)n);
    eo.nll = nll;
    return evaluate(s, o, tokens, n, &eo);
}
