/*
 * train.c — training on the reference backend (srt_trainer_*, docs/training.md).
 *
 * A step runs the interpreter's reverse mode (rt_ref_grad, backend_ref.c) over each sequence of the batch,
 * adding the gradient of the mean next-token cross-entropy into one double array per plan weight, then
 * clips by the global norm and applies AdamW or SGD with torch's semantics to fp32 master copies of the
 * trainable tensors; the weights the model's forwards read are the masters rounded to their stored dtype.
 * The learning rate follows the schedule of srt_train_lr.
 *
 * Dynamic loss scaling (o.loss_scale > 0) follows torch.cuda.amp.GradScaler: the gradient is that of the
 * scaled loss; an element that would overflow its weight's dtype (what an fp16 gradient buffer on a device
 * holds) or is not finite skips the step and multiplies the scale by the backoff, and scale_interval
 * successful updates in a row multiply it by the growth. A skipped step changes no weight, no optimizer
 * state and no update count (the schedule and AdamW's bias correction count updates, as fairseq's
 * num_updates does).
 *
 * A tensor of the weight file may be stored under two plan entries in different layouts (an adaptive
 * model's tied projection: once [in, out], once transposed). The trainer works per tensor, in the file's
 * layout: the first plan entry of a name owns the master, the optimizer state and the summed gradient,
 * each entry's gradient is added in after its transposition, and each entry gets the master back in its
 * own stored order.
 */
#include "rt_internal.h"

#include <float.h>
#include <fnmatch.h>
#include <math.h>
#include <string.h>

struct srt_trainer {
    srt_model *m;             /* the model whose weights it updates (not owned) */
    srt_train_options o;      /* the options (freeze points at patterns below) */
    char **patterns;          /* copies of the freeze patterns (owned) */
    int step;                 /* updates applied (skipped steps not counted) */
    double scale;             /* loss scaling: the current scale (0: off) */
    int good_steps;           /* loss scaling: successful updates since the scale last changed (GradScaler's
                                 growth tracker) */
    int nw;                   /* plan weights */
    int *owner;               /* per plan weight: the first plan weight of its name, which holds the tensor's
                                 state below (itself for most) */
    bool *trainable;          /* per owner: updated (not frozen) */
    float **master;           /* per trainable owner: fp32 master copy (file layout); NULL otherwise */
    float **m1;               /* per trainable owner: AdamW first moment, SGD momentum buffer (NULL: none) */
    float **m2;               /* per trainable owner: AdamW second moment (NULL otherwise) */
    double **grad;            /* per plan weight: its gradient from the reverse mode (stored order) */
    double **gfile;           /* per owner: the tensor's gradient, every entry's summed (file layout) */
    float *tmp;               /* one tensor's floats (the largest), for layout conversions */
};

void srt_train_options_default(srt_train_options *o) {
    if (!o) return;
    memset(o, 0, sizeof *o);
    o->optimizer = SRT_OPT_ADAMW;
    o->lr = 1e-3;
    o->beta1 = 0.9;
    o->beta2 = 0.999;
    o->eps = 1e-8;
    o->schedule = SRT_SCHEDULE_CONSTANT;
    o->steps = 1;
    o->scale_growth = 2.0;
    o->scale_backoff = 0.5;
    o->scale_interval = 2000;
}

double srt_train_lr(const srt_train_options *o, int k) {
    if (!o) return 0;
    if (o->schedule == SRT_SCHEDULE_FAIRSEQ) { /* fairseq's InverseSquareRootSchedule.step_update(num_updates = k) */
        int w = o->warmup > 0 ? o->warmup : 1;
        if (k < w) return o->warmup_init_lr + k * (o->lr - o->warmup_init_lr) / w;
        return o->lr * sqrt((double)w) / sqrt((double)k);
    }
    if (k < o->warmup) return o->lr * (double)(k + 1) / o->warmup;
    switch (o->schedule) {
    case SRT_SCHEDULE_COSINE: {
        int span = o->steps - o->warmup;
        double progress = span > 0 ? (double)(k - o->warmup) / span : 1.0;
        if (progress > 1) progress = 1;
        return o->lr * 0.5 * (1.0 + cos(3.14159265358979323846 * progress));
    }
    case SRT_SCHEDULE_INVERSE_SQRT: return o->lr * sqrt((double)(o->warmup > 1 ? o->warmup : 1) / (k + 1));
    case SRT_SCHEDULE_CONSTANT:
    case SRT_SCHEDULE_FAIRSEQ: break;
    }
    return o->lr;
}

/* Whether a plan weight's name matches a freeze pattern. */
static bool frozen(const srt_train_options *o, const char *name) {
    for (int i = 0; i < o->nfreeze; i++)
        if (fnmatch(o->freeze[i], name, 0) == 0) return true;
    return false;
}

/* The options' values that make no sense, as an SRT_ERR_INVALID naming the field. */
static srt_status check_options(srt_context *ctx, const srt_train_options *o) {
    if (o->optimizer != SRT_OPT_ADAMW && o->optimizer != SRT_OPT_SGD)
        return rt_error(ctx, SRT_ERR_INVALID, "srt_trainer_create: unknown optimizer %d", (int)o->optimizer);
    if ((unsigned)o->schedule > SRT_SCHEDULE_FAIRSEQ)
        return rt_error(ctx, SRT_ERR_INVALID, "srt_trainer_create: unknown schedule %d", (int)o->schedule);
    if (!(o->lr >= 0) || !isfinite(o->lr)) return rt_error(ctx, SRT_ERR_INVALID, "learning rate %g: must be >= 0", o->lr);
    if (!(o->weight_decay >= 0) || !isfinite(o->weight_decay))
        return rt_error(ctx, SRT_ERR_INVALID, "weight decay %g: must be >= 0", o->weight_decay);
    if (!(o->clip >= 0) || !isfinite(o->clip)) return rt_error(ctx, SRT_ERR_INVALID, "clip %g: must be >= 0 (0: none)", o->clip);
    if (!(o->beta1 >= 0 && o->beta1 < 1) || !(o->beta2 >= 0 && o->beta2 < 1))
        return rt_error(ctx, SRT_ERR_INVALID, "AdamW betas %g, %g: each must be in [0, 1)", o->beta1, o->beta2);
    if (!(o->eps > 0)) return rt_error(ctx, SRT_ERR_INVALID, "AdamW eps %g: must be > 0", o->eps);
    if (!(o->momentum >= 0 && o->momentum < 1)) return rt_error(ctx, SRT_ERR_INVALID, "momentum %g: must be in [0, 1)", o->momentum);
    if (o->warmup < 0) return rt_error(ctx, SRT_ERR_INVALID, "warm-up %d: must be >= 0", o->warmup);
    if (o->schedule == SRT_SCHEDULE_FAIRSEQ && o->warmup < 1)
        return rt_error(ctx, SRT_ERR_INVALID, "the fairseq schedule needs a warm-up of at least 1 update");
    if (!(o->warmup_init_lr >= 0) || !isfinite(o->warmup_init_lr))
        return rt_error(ctx, SRT_ERR_INVALID, "warm-up initial learning rate %g: must be >= 0", o->warmup_init_lr);
    if (!(o->loss_scale >= 0) || !isfinite(o->loss_scale))
        return rt_error(ctx, SRT_ERR_INVALID, "loss scale %g: must be >= 0 (0: off)", o->loss_scale);
    if (o->loss_scale > 0 && (!(o->scale_growth >= 1) || !isfinite(o->scale_growth) || !(o->scale_backoff > 0 && o->scale_backoff < 1) ||
                              o->scale_interval < 1))
        return rt_error(ctx, SRT_ERR_INVALID, "loss scaling: growth %g must be >= 1, backoff %g in (0, 1), interval %d >= 1",
                        o->scale_growth, o->scale_backoff, o->scale_interval);
    if (o->steps < 1) return rt_error(ctx, SRT_ERR_INVALID, "steps %d: must be >= 1", o->steps);
    if (o->nfreeze < 0 || (o->nfreeze > 0 && !o->freeze))
        return rt_error(ctx, SRT_ERR_INVALID, "srt_trainer_create: %d freeze patterns but no array", o->nfreeze);
    for (int i = 0; i < o->nfreeze; i++)
        if (!o->freeze[i]) return rt_error(ctx, SRT_ERR_INVALID, "srt_trainer_create: freeze pattern %d is NULL", i);
    return SRT_OK;
}

void srt_trainer_free(srt_trainer *t) {
    if (!t) return;
    srt_context *ctx = t->m->ctx;
    for (int i = 0; i < t->nw; i++) {
        if (t->master) rt_free(ctx, t->master[i]);
        if (t->m1) rt_free(ctx, t->m1[i]);
        if (t->m2) rt_free(ctx, t->m2[i]);
        if (t->grad) rt_free(ctx, t->grad[i]);
        if (t->gfile) rt_free(ctx, t->gfile[i]);
    }
    rt_free(ctx, t->owner);
    rt_free(ctx, t->gfile);
    rt_free(ctx, t->tmp);
    for (int i = 0; t->patterns && i < t->o.nfreeze; i++) rt_free(ctx, t->patterns[i]);
    rt_free(ctx, t->patterns);
    rt_free(ctx, t->trainable);
    rt_free(ctx, t->master);
    rt_free(ctx, t->m1);
    rt_free(ctx, t->m2);
    rt_free(ctx, t->grad);
    rt_free(ctx, t);
}

/* The first plan weight named as weight i. */
static int owner_of(const RtPlan *p, int i) {
    for (int j = 0; j < i; j++)
        if (strcmp(p->weights[i].name, p->weights[j].name) == 0) return j;
    return i;
}

/* The per-weight arrays: gradients for all, masters (the owner's values in file layout) and optimizer state for
 * the trainable owners. */
static bool alloc_state(srt_trainer *t) {
    srt_context *ctx = t->m->ctx;
    const RtPlan *p = &t->m->plan;
    size_t n = (size_t)(t->nw ? t->nw : 1), most = 1;
    if (!(t->owner = rt_alloc(ctx, sizeof *t->owner * n)) || !(t->trainable = rt_alloc(ctx, sizeof *t->trainable * n)) ||
        !(t->master = rt_alloc(ctx, sizeof *t->master * n)) || !(t->m1 = rt_alloc(ctx, sizeof *t->m1 * n)) ||
        !(t->m2 = rt_alloc(ctx, sizeof *t->m2 * n)) || !(t->grad = rt_alloc(ctx, sizeof *t->grad * n)) ||
        !(t->gfile = rt_alloc(ctx, sizeof *t->gfile * n)))
        return false;
    for (int i = 0; i < t->nw; i++) {
        const RtPlanWeight *w = &p->weights[i];
        size_t c = w->count ? w->count : 1;
        if (c > most) most = c;
        t->owner[i] = owner_of(p, i);
        if (!(t->grad[i] = rt_alloc(ctx, sizeof(double) * c))) return false;
        if (t->owner[i] != i) continue;
        t->trainable[i] = !frozen(&t->o, w->name);
        if (!(t->gfile[i] = rt_alloc(ctx, sizeof(double) * c))) return false;
        if (!t->trainable[i]) continue;
        if (!(t->master[i] = rt_alloc(ctx, sizeof(float) * c))) return false;
        rt_weight_to_file(w, rt_ref_weight_values(t->m, i), t->master[i]);
        bool first = t->o.optimizer == SRT_OPT_ADAMW || t->o.momentum > 0, second = t->o.optimizer == SRT_OPT_ADAMW;
        if (first && !(t->m1[i] = rt_alloc(ctx, sizeof(float) * c))) return false; /* zeroed */
        if (second && !(t->m2[i] = rt_alloc(ctx, sizeof(float) * c))) return false;
    }
    return (t->tmp = rt_alloc(ctx, sizeof(float) * most)) != NULL;
}

srt_status srt_trainer_create(srt_model *m, const srt_train_options *o, srt_trainer **out) {
    if (out) *out = NULL;
    if (!m || !o || !out) return m ? rt_error(m->ctx, SRT_ERR_INVALID, "srt_trainer_create: NULL argument") : SRT_ERR_INVALID;
    srt_context *ctx = m->ctx;
    if (m->backend != SRT_BACKEND_REF || !m->ref)
        return rt_error(ctx, SRT_ERR_UNSUPPORTED, "training runs on the reference backend (--backend ref) for now; "
                        "the %s backend's backward kernels come later (docs/training.md)", srt_backend_name(m->backend));
    if (!m->weights_loaded) return rt_error(ctx, SRT_ERR_INVALID, "srt_trainer_create: load or draw the weights first");
    srt_status st = check_options(ctx, o);
    if (st == SRT_OK) st = rt_ref_grad_check(m);
    if (st != SRT_OK) return st;
    srt_trainer *t = rt_alloc(ctx, sizeof *t);
    if (!t) return rt_error(ctx, SRT_ERR_NOMEM, "out of memory");
    t->m = m;
    t->o = *o;
    t->scale = o->loss_scale;
    t->nw = m->plan.nweights;
    t->patterns = rt_alloc(ctx, sizeof *t->patterns * (size_t)(o->nfreeze + 1));
    bool ok = t->patterns != NULL;
    int copied = 0; /* srt_trainer_free frees patterns[0 .. nfreeze-1]: the ones copied before any failure */
    while (ok && copied < o->nfreeze) {
        ok = (t->patterns[copied] = rt_strdup(ctx, o->freeze[copied])) != NULL;
        copied += ok;
    }
    t->o.freeze = (const char *const *)t->patterns;
    t->o.nfreeze = copied;
    if (!ok || !alloc_state(t)) {
        srt_trainer_free(t);
        return rt_error(ctx, SRT_ERR_NOMEM, "out of memory for the trainer's state");
    }
    *out = t;
    return SRT_OK;
}

/* The batch's shape against the model, and every token id inside the vocabulary. */
static srt_status check_batch(srt_trainer *t, const int32_t *tokens, int batch, int seq) {
    srt_context *ctx = t->m->ctx;
    srt_model_info info;
    srt_status st = srt_model_get_info(t->m, &info);
    if (st != SRT_OK) return st;
    if (!tokens) return rt_error(ctx, SRT_ERR_INVALID, "training step: tokens is NULL");
    if (batch < 1) return rt_error(ctx, SRT_ERR_INVALID, "training step: batch %d: must be >= 1", batch);
    if (seq < 2 || (seq > info.segment && !rt_ref_grad_segments(t->m)))
        return rt_error(ctx, SRT_ERR_INVALID, "training step: sequence length %d: must be 2 to %d (the model's segment)", seq,
                        info.segment);
    for (int64_t i = 0; i < (int64_t)batch * seq; i++)
        if (tokens[i] < 0 || tokens[i] >= info.vocab)
            return rt_error(ctx, SRT_ERR_INVALID, "training step: token %d at index %lld is outside the vocabulary [0, %d)",
                            (int)tokens[i], (long long)i, info.vocab);
    return SRT_OK;
}

/* Adds plan weight i's gradient (stored order) into its owner's, in file layout. */
static void gather_grad(srt_trainer *t, int i) {
    const RtPlanWeight *w = &t->m->plan.weights[i];
    double *dst = t->gfile[t->owner[i]];
    const double *g = t->grad[i];
    if (!w->transpose) {
        for (size_t k = 0; k < w->count; k++) dst[k] += g[k];
        return;
    }
    size_t a = (size_t)w->file_shape[0], b = (size_t)w->file_shape[1];
    for (size_t r = 0; r < a; r++)
        for (size_t c = 0; c < b; c++) dst[r * b + c] += g[c * a + r];
}

/* The batch's gradient per tensor (t->gfile, file layout) of its mean loss times gain (the loss scale, else 1),
 * and that mean loss (unscaled) into *loss. */
static srt_status batch_grad(srt_trainer *t, const int32_t *tokens, int batch, int seq, double gain, double *loss) {
    srt_status st = check_batch(t, tokens, batch, seq);
    if (st != SRT_OK) return st;
    for (int i = 0; i < t->nw; i++) {
        size_t bytes = sizeof(double) * t->m->plan.weights[i].count;
        memset(t->grad[i], 0, bytes);
        if (t->gfile[i]) memset(t->gfile[i], 0, bytes);
    }
    double scale = 1.0 / ((double)batch * (seq - 1)), sum = 0;
    for (int b = 0; b < batch && st == SRT_OK; b++)
        st = rt_ref_grad(t->m, tokens + (size_t)b * seq, seq, scale * gain, &sum, t->grad);
    for (int i = 0; st == SRT_OK && i < t->nw; i++) gather_grad(t, i);
    *loss = sum * scale;
    return st;
}

/* Global L2 norm of the trainable weights' gradients. */
static double grad_norm(const srt_trainer *t) {
    double s = 0;
    for (int i = 0; i < t->nw; i++) {
        if (t->owner[i] != i || !t->trainable[i]) continue;
        for (size_t k = 0; k < t->m->plan.weights[i].count; k++) s += t->gfile[i][k] * t->gfile[i][k];
    }
    return sqrt(s);
}

/* torch.optim.AdamW's update of one weight (step = t->step + 1, gradients already clipped). */
static void adamw_update(const srt_trainer *t, int i, double lr, double clip_coef) {
    const srt_train_options *o = &t->o;
    float *p = t->master[i], *m = t->m1[i], *v = t->m2[i];
    const double *g = t->gfile[i];
    int k = t->step + 1;
    double bc1 = 1.0 - pow(o->beta1, k), bc2_sqrt = sqrt(1.0 - pow(o->beta2, k)), step_size = lr / bc1;
    for (size_t j = 0; j < t->m->plan.weights[i].count; j++) {
        double gj = g[j] * clip_coef;
        double pj = p[j] * (1.0 - lr * o->weight_decay);
        m[j] = (float)(o->beta1 * m[j] + (1.0 - o->beta1) * gj);
        v[j] = (float)(o->beta2 * v[j] + (1.0 - o->beta2) * gj * gj);
        double denom = sqrt((double)v[j]) / bc2_sqrt + o->eps;
        p[j] = (float)(pj - step_size * m[j] / denom);
    }
}

/* torch.optim.SGD's update of one weight (dampening 0, not Nesterov). */
static void sgd_update(const srt_trainer *t, int i, double lr, double clip_coef) {
    const srt_train_options *o = &t->o;
    float *p = t->master[i], *buf = t->m1[i];
    const double *g = t->gfile[i];
    for (size_t j = 0; j < t->m->plan.weights[i].count; j++) {
        double d = g[j] * clip_coef + o->weight_decay * p[j];
        if (buf) d = buf[j] = (float)(t->step == 0 ? d : o->momentum * buf[j] + d);
        p[j] = (float)(p[j] - lr * d);
    }
}

/* Whether a gradient element overflows a buffer of dtype d: fp16 rounds magnitudes from 65520 up to inf, fp32
 * and bf16 (fp32's range) overflow above FLT_MAX; NaN always counts. */
static bool overflows(double g, DType d) {
    double a = fabs(g);
    return d == DT_F16 ? !(a < 65520.0) : !(a <= FLT_MAX);
}

/* Loss scaling: whether a trainable tensor's scaled gradient overflows the dtype of some stored entry of it
 * (the half-precision gradient GradScaler unscales), or is not finite. */
static bool grads_overflow(const srt_trainer *t) {
    for (int i = 0; i < t->nw; i++) {
        int o = t->owner[i];
        if (!t->trainable[o]) continue;
        const RtPlanWeight *w = &t->m->plan.weights[i];
        for (size_t k = 0; k < w->count; k++)
            if (overflows(t->gfile[o][k], w->round)) return true;
    }
    return false;
}

/* Loss scaling after a step: GradScaler's update (torch._amp_update_scale_). */
static void update_scale(srt_trainer *t, bool overflow) {
    if (overflow) {
        t->scale *= t->o.scale_backoff;
        t->good_steps = 0;
    } else if (++t->good_steps == t->o.scale_interval) {
        double grown = t->scale * t->o.scale_growth;
        if (isfinite(grown)) t->scale = grown;
        t->good_steps = 0;
    }
}

/* Divides every trainable gradient by the loss scale it was computed with (GradScaler.unscale_). */
static void unscale_grads(srt_trainer *t, double scale) {
    for (int i = 0; i < t->nw; i++)
        if (t->owner[i] == i && t->trainable[i])
            for (size_t k = 0; k < t->m->plan.weights[i].count; k++) t->gfile[i][k] /= scale;
}

srt_status srt_trainer_step(srt_trainer *t, const int32_t *tokens, int batch, int seq, srt_train_stats *stats) {
    if (!t) return SRT_ERR_INVALID;
    double loss = 0, used_scale = t->scale;
    bool scaling = t->o.loss_scale > 0;
    if (scaling && !(used_scale > 0)) /* backoffs drove it below the smallest double: not silently unscaled */
        return rt_error(t->m->ctx, SRT_ERR_INVALID, "training step %d: the loss scale fell to 0 after repeated "
                        "overflows (gradients not finite at any scale?)", t->step + 1);
    srt_status st = batch_grad(t, tokens, batch, seq, scaling ? used_scale : 1.0, &loss);
    if (st != SRT_OK) return st;
    double lr = srt_train_lr(&t->o, t->step), coef = 1.0;
    if (stats) *stats = (srt_train_stats){.step = t->step, .loss = loss, .lr = lr, .tokens = (int64_t)batch * seq,
                                          .loss_scale = used_scale};
    if (scaling) {
        bool overflow = !isfinite(loss) || grads_overflow(t);
        if (!overflow) unscale_grads(t, used_scale);
        update_scale(t, overflow); /* GradScaler.update, after the step it scaled */
        if (overflow) {            /* GradScaler.step skips optimizer.step */
            if (stats) stats->skipped = 1, stats->grad_norm = NAN;
            return SRT_OK;
        }
    }
    double norm = grad_norm(t);
    if (!isfinite(loss) || !isfinite(norm))
        return rt_error(t->m->ctx, SRT_ERR_INVALID, "training step %d: the loss (%g) or the gradient norm (%g) is not finite",
                        t->step + 1, loss, norm);
    if (t->o.clip > 0) { /* torch's clip_grad_norm_: max_norm / (norm + 1e-6), at most 1 */
        coef = t->o.clip / (norm + 1e-6);
        if (coef > 1.0) coef = 1.0;
    }
    for (int i = 0; i < t->nw; i++) {
        if (t->owner[i] != i || !t->trainable[i]) continue;
        if (t->o.optimizer == SRT_OPT_ADAMW) adamw_update(t, i, lr, coef);
        else sgd_update(t, i, lr, coef);
    }
    for (int i = 0; i < t->nw; i++) /* every entry of a trained tensor, in its stored order and dtype */
        if (t->trainable[t->owner[i]]) rt_weight_from_file(&t->m->plan.weights[i], t->master[t->owner[i]], rt_ref_weight_values(t->m, i));
    st = rt_ref_rederive(t->m); /* the tables derived from the new weights, for the next forward */
    if (st != SRT_OK) return st;
    t->step++;
    if (stats) stats->step = t->step, stats->grad_norm = norm;
    return SRT_OK;
}

srt_status srt_trainer_grad(srt_trainer *t, const int32_t *tokens, int batch, int seq, float **grads, double *loss) {
    if (!t || !grads || !loss) return t ? rt_error(t->m->ctx, SRT_ERR_INVALID, "srt_trainer_grad: NULL argument") : SRT_ERR_INVALID;
    srt_status st = batch_grad(t, tokens, batch, seq, 1.0, loss);
    for (int i = 0; st == SRT_OK && i < t->nw; i++) { /* the tensor's whole gradient, in this entry's order */
        const RtPlanWeight *w = &t->m->plan.weights[i];
        const double *g = t->gfile[t->owner[i]];
        for (size_t j = 0; j < w->count; j++) t->tmp[j] = (float)g[j];
        if (w->transpose) {
            size_t a = (size_t)w->file_shape[0], b = (size_t)w->file_shape[1];
            for (size_t r = 0; r < a; r++)
                for (size_t c = 0; c < b; c++) grads[i][c * a + r] = t->tmp[r * b + c];
        } else memcpy(grads[i], t->tmp, sizeof(float) * w->count);
    }
    return st;
}

srt_status srt_trainer_save_grads(srt_trainer *t, const int32_t *tokens, int batch, int seq, const char *path,
                                  double *loss) {
    if (!t || !path || !loss) return t ? rt_error(t->m->ctx, SRT_ERR_INVALID, "srt_trainer_save_grads: NULL argument") : SRT_ERR_INVALID;
    srt_context *ctx = t->m->ctx;
    float **g = rt_alloc(ctx, sizeof *g * (size_t)(t->nw + 1));
    bool ok = g != NULL;
    for (int i = 0; ok && i < t->nw; i++) ok = (g[i] = rt_alloc(ctx, sizeof(float) * (t->m->plan.weights[i].count + 1))) != NULL;
    srt_status st = ok ? batch_grad(t, tokens, batch, seq, 1.0, loss) : rt_error(ctx, SRT_ERR_NOMEM, "out of memory");
    for (int i = 0; st == SRT_OK && i < t->nw; i++) /* file layout, as the file holds it */
        for (size_t j = 0; j < t->m->plan.weights[i].count; j++) g[i][j] = (float)t->gfile[t->owner[i]][j];
    if (st == SRT_OK) st = rt_weights_save(ctx, &t->m->plan, (const float *const *)g, "shortc gradients", path);
    for (int i = 0; g && i < t->nw; i++) rt_free(ctx, g[i]);
    rt_free(ctx, g);
    return st;
}

int srt_trainer_max_seq(const srt_trainer *t) {
    srt_model_info info;
    if (!t || srt_model_get_info(t->m, &info) != SRT_OK) return 0;
    return rt_ref_grad_segments(t->m) ? 0 : info.segment;
}

int srt_trainer_weight_count(const srt_trainer *t) { return t ? t->nw : 0; }

srt_status srt_trainer_weight(const srt_trainer *t, int i, const char **name, size_t *count) {
    if (!t || i < 0 || i >= t->nw) return t ? rt_error(t->m->ctx, SRT_ERR_INVALID, "srt_trainer_weight: index %d out of range", i)
                                            : SRT_ERR_INVALID;
    if (name) *name = t->m->plan.weights[i].name;
    if (count) *count = t->m->plan.weights[i].count;
    return SRT_OK;
}

srt_status srt_trainer_save(srt_trainer *t, const char *path) {
    if (!t || !path) return t ? rt_error(t->m->ctx, SRT_ERR_INVALID, "srt_trainer_save: path is NULL") : SRT_ERR_INVALID;
    srt_context *ctx = t->m->ctx;
    const float **vals = rt_alloc(ctx, sizeof *vals * (size_t)(t->nw + 1));
    float **frozen_file = rt_alloc(ctx, sizeof *frozen_file * (size_t)(t->nw + 1)); /* frozen owners' file layout */
    bool ok = vals && frozen_file;
    for (int i = 0; ok && i < t->nw; i++) {
        if (t->owner[i] != i) continue; /* written once, from its owner */
        if (t->trainable[i]) {
            vals[i] = t->master[i];
            continue;
        }
        ok = (frozen_file[i] = rt_alloc(ctx, sizeof(float) * (t->m->plan.weights[i].count + 1))) != NULL;
        if (ok) rt_weight_to_file(&t->m->plan.weights[i], rt_ref_weight_values(t->m, i), frozen_file[i]);
        vals[i] = frozen_file[i];
    }
    char note[64];
    snprintf(note, sizeof note, "shortc train, %d steps", t->step);
    srt_status st = ok ? rt_weights_save(ctx, &t->m->plan, vals, note, path) : rt_error(ctx, SRT_ERR_NOMEM, "out of memory");
    for (int i = 0; frozen_file && i < t->nw; i++) rt_free(ctx, frozen_file[i]);
    rt_free(ctx, frozen_file);
    rt_free(ctx, vals);
    return st;
}
