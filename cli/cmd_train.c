/*
 * cmd_train.c — `shortc train` (optimizer steps over a token file, the weights saved as safetensors) and
 * `shortc grad` (the gradient of the mean next-token cross-entropy of a token file under every weight's
 * name), both through the runtime's trainer (srt_trainer_*, docs/training.md). Only the reference backend
 * differentiates for now; the others are refused with a message saying so.
 */
#include "cmd_train.h"

#include "cmd_eval.h"

#include "modelpath.h"
#include "run_common.h"
#include "json_out.h"
#include "usage.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_FREEZE = 64, MAX_STAGES = 32 }; /* most --freeze patterns, most --stages entries */

/* One stage of Shortformer's staged training: steps at one sequence length. */
typedef struct TrainStage {
    int seq;                    /* sequence length L */
    int steps;                  /* steps at that length */
} TrainStage;

/* The flags of train and grad. */
typedef struct TrainArgs {
    RunArgs ra;                 /* model, backend, weights (--init / --weights or --seed), tokens (--data / --tokens) */
    int seq;                    /* --seq L (0: grad's whole file as one sequence) */
    int batch;                  /* --batch B */
    int steps;                  /* --steps N */
    const char *save;           /* train --save OUT / grad --out OUT */
    srt_train_options o;        /* the optimizer's options */
    const char *freeze[MAX_FREEZE]; /* --freeze GLOB, each */
    TrainStage stages[MAX_STAGES]; /* --stages L1:N1,...; or the one stage --seq L --steps N */
    int nstages;                /* entries of stages given by --stages (0: none) */
    const char *valid;          /* --valid TOKENS: validation token file (NULL: none) */
    int valid_every;            /* --valid-every K: validate after every K-th step (0: after the last only) */
} TrainArgs;

/* Flag values: a whole number in [lo, hi], a finite number >= 0; print the error and return false. */
static bool int_flag(const char *flag, const char *s, long lo, long hi, int *out) {
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) {
        fprintf(stderr, "shortc: error: %s '%s': expected a whole number from %ld to %ld\n", flag, s, lo, hi);
        return false;
    }
    *out = (int)v;
    return true;
}
static bool real_flag(const char *flag, const char *s, double *out) {
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v) || v < 0) {
        fprintf(stderr, "shortc: error: %s '%s': expected a finite number >= 0\n", flag, s);
        return false;
    }
    *out = v;
    return true;
}

static bool parse_optimizer(const char *s, srt_optimizer *o) {
    if (strcmp(s, "adamw") == 0) *o = SRT_OPT_ADAMW;
    else if (strcmp(s, "sgd") == 0) *o = SRT_OPT_SGD;
    else {
        fprintf(stderr, "shortc: error: --optimizer '%s': expected adamw or sgd\n", s);
        return false;
    }
    return true;
}

static bool parse_schedule(const char *s, srt_schedule *o) {
    if (strcmp(s, "constant") == 0) *o = SRT_SCHEDULE_CONSTANT;
    else if (strcmp(s, "cosine") == 0) *o = SRT_SCHEDULE_COSINE;
    else if (strcmp(s, "inverse-sqrt") == 0) *o = SRT_SCHEDULE_INVERSE_SQRT;
    else if (strcmp(s, "fairseq") == 0) *o = SRT_SCHEDULE_FAIRSEQ;
    else {
        fprintf(stderr, "shortc: error: --schedule '%s': expected constant, cosine, inverse-sqrt or fairseq\n", s);
        return false;
    }
    return true;
}

/* --stages L1:N1,L2:N2,...: each length 2 or more, each count 1 or more; prints the error and returns false. */
static bool parse_stages(TrainArgs *a, const char *s) {
    const char *p = s;
    a->nstages = 0;
    while (*p) {
        char *end;
        errno = 0;
        long len = strtol(p, &end, 10), steps = 0;
        bool ok = !errno && end != p && *end == ':' && len >= 2 && len <= (1 << 20);
        if (ok) {
            p = end + 1;
            steps = strtol(p, &end, 10);
            ok = !errno && end != p && (*end == ',' || !*end) && steps >= 1 && steps <= (1 << 30) && !(*end == ',' && !end[1]);
        }
        if (!ok || a->nstages == MAX_STAGES) {
            fprintf(stderr, "shortc: error: --stages '%s': expected L1:N1,L2:N2,... (at most %d stages; lengths >= 2, "
                            "steps >= 1)\n", s, MAX_STAGES);
            return false;
        }
        a->stages[a->nstages++] = (TrainStage){(int)len, (int)steps};
        p = *end ? end + 1 : end;
    }
    if (a->nstages == 0) return fprintf(stderr, "shortc: error: --stages needs at least one L:N\n"), false;
    return true;
}

/* One flag with a value (argv[*i + 1]) of train (grad: false) at argv[*i]: 1 parsed, 0 not one, -1 bad. */
static int value_flag(TrainArgs *a, bool train, const char *f, const char *v) {
    RunArgs *ra = &a->ra;
    long long seed;
    bool ok = true;
    if (strcmp(f, "--backend") == 0) ra->backend = v;
    else if (strcmp(f, "--model") == 0) ra->model_name = v;
    else if (strcmp(f, "--seq") == 0) ok = int_flag(f, v, 2, 1 << 20, &a->seq);
    else if (strcmp(f, "--seed") == 0 || strcmp(f, "--random-weights") == 0) {
        char *end;
        errno = 0;
        seed = strtoll(v, &end, 10);
        if ((ok = !errno && end != v && !*end && seed >= 0)) ra->seed = seed;
        else fprintf(stderr, "shortc: error: %s '%s': expected a whole number >= 0\n", f, v);
    } else if (train && strcmp(f, "--data") == 0) ra->tokens = v;
    else if (train && strcmp(f, "--init") == 0) ra->weights = v;
    else if (train && strcmp(f, "--save") == 0) a->save = v;
    else if (train && strcmp(f, "--batch") == 0) ok = int_flag(f, v, 1, 1 << 16, &a->batch);
    else if (train && strcmp(f, "--steps") == 0) ok = int_flag(f, v, 1, 1 << 30, &a->steps);
    else if (train && strcmp(f, "--warmup") == 0) ok = int_flag(f, v, 0, 1 << 30, &a->o.warmup);
    else if (train && strcmp(f, "--lr") == 0) ok = real_flag(f, v, &a->o.lr);
    else if (train && strcmp(f, "--weight-decay") == 0) ok = real_flag(f, v, &a->o.weight_decay);
    else if (train && strcmp(f, "--momentum") == 0) ok = real_flag(f, v, &a->o.momentum);
    else if (train && strcmp(f, "--clip") == 0) ok = real_flag(f, v, &a->o.clip);
    else if (train && strcmp(f, "--optimizer") == 0) ok = parse_optimizer(v, &a->o.optimizer);
    else if (train && strcmp(f, "--schedule") == 0) ok = parse_schedule(v, &a->o.schedule);
    else if (train && strcmp(f, "--warmup-init-lr") == 0) ok = real_flag(f, v, &a->o.warmup_init_lr);
    else if (train && strcmp(f, "--stages") == 0) ok = parse_stages(a, v);
    else if (train && strcmp(f, "--valid") == 0) a->valid = v;
    else if (train && strcmp(f, "--valid-every") == 0) ok = int_flag(f, v, 1, 1 << 30, &a->valid_every);
    else if (train && strcmp(f, "--mode") == 0) ra->mode = v;
    else if (train && strcmp(f, "--loss-scale") == 0) ok = real_flag(f, v, &a->o.loss_scale);
    else if (train && strcmp(f, "--scale-growth") == 0) ok = real_flag(f, v, &a->o.scale_growth);
    else if (train && strcmp(f, "--scale-backoff") == 0) ok = real_flag(f, v, &a->o.scale_backoff);
    else if (train && strcmp(f, "--scale-interval") == 0) ok = int_flag(f, v, 1, 1 << 30, &a->o.scale_interval);
    else if (train && strcmp(f, "--freeze") == 0) {
        if ((ok = a->o.nfreeze < MAX_FREEZE)) a->freeze[a->o.nfreeze++] = v;
        else fprintf(stderr, "shortc: error: at most %d --freeze patterns\n", MAX_FREEZE);
    } else if (!train && strcmp(f, "--weights") == 0) ra->weights = v;
    else if (!train && strcmp(f, "--tokens") == 0) ra->tokens = v;
    else if (!train && strcmp(f, "--out") == 0) a->save = v;
    else return 0;
    return ok ? 1 : -1;
}

/* The flags that make no sense together or are missing; prints the first and returns false. */
static bool check_args(const TrainArgs *a, bool train) {
    const char *cmd = train ? "train" : "grad";
    const RunArgs *ra = &a->ra;
    if (!ra->model_arg) return fprintf(stderr, "shortc: error: %s needs a MODEL.arch\n", cmd), false;
    if (!ra->tokens) return fprintf(stderr, "shortc: error: %s needs %s\n", cmd, train ? "--data TOKENS" : "--tokens FILE"), false;
    if (!a->save) return fprintf(stderr, "shortc: error: %s needs %s\n", cmd, train ? "--save OUT.safetensors" : "--out G.safetensors"), false;
    if (ra->weights && ra->seed >= 0)
        return fprintf(stderr, "shortc: error: %s: give either %s or --seed, not both\n", cmd, train ? "--init" : "--weights"), false;
    if (!train && !ra->weights && ra->seed < 0)
        return fprintf(stderr, "shortc: error: grad needs --weights FILE.safetensors or --random-weights SEED\n"), false;
    if (train && a->nstages && (a->seq || a->steps))
        return fprintf(stderr, "shortc: error: --stages gives the lengths and steps: drop --seq and --steps\n"), false;
    if (train && (!a->batch || (!a->nstages && (!a->seq || !a->steps))))
        return fprintf(stderr, "shortc: error: train needs --seq L, --batch B and --steps N (or --stages L1:N1,...)\n"), false;
    if (train && !a->valid && (a->valid_every || ra->mode))
        return fprintf(stderr, "shortc: error: --valid-every and --mode need --valid TOKENS\n"), false;
    if (train && a->o.schedule == SRT_SCHEDULE_FAIRSEQ && a->o.warmup < 1)
        return fprintf(stderr, "shortc: error: --schedule fairseq needs --warmup of at least 1\n"), false;
    if (train && a->o.loss_scale > 0 && (a->o.scale_growth < 1 || !(a->o.scale_backoff > 0 && a->o.scale_backoff < 1)))
        return fprintf(stderr, "shortc: error: --scale-growth must be >= 1 and --scale-backoff in (0, 1)\n"), false;
    if (ra->backend && strcmp(ra->backend, "ref") != 0) {
        if (strcmp(ra->backend, "sim") && strcmp(ra->backend, "cuda") && strcmp(ra->backend, "auto"))
            return fprintf(stderr, "shortc: error: unknown backend '%s' (expected ref, sim, cuda or auto)\n", ra->backend), false;
        return fprintf(stderr, "shortc: error: %s runs on --backend ref for now; backward kernels for sim and cuda come "
                               "later (docs/training.md)\n", cmd), false;
    }
    if (train && a->o.momentum >= 1)
        return fprintf(stderr, "shortc: error: --momentum %g: must be below 1\n", a->o.momentum), false;
    if (train && a->o.momentum > 0 && a->o.optimizer != SRT_OPT_SGD)
        return fprintf(stderr, "shortc: error: --momentum applies to --optimizer sgd only\n"), false;
    const char *ins[] = {ra->tokens, ra->weights, ra->model_path, a->valid};
    for (int i = 0; i < 4; i++)
        if (ins[i] && strcmp(ins[i], a->save) == 0)
            return fprintf(stderr, "shortc: error: the output '%s' is also an input\n", a->save), false;
    return true;
}

/* Parses train's (or grad's) command line; prints the error and returns false. */
static bool parse_train_args(int argc, char **argv, bool train, TrainArgs *a) {
    const char *cmd = train ? "train" : "grad";
    RunArgs init = RUN_ARGS_INIT;
    memset(a, 0, sizeof *a);
    a->ra = init;
    a->ra.backend = "ref";
    srt_train_options_default(&a->o);
    for (int i = 2; i < argc; i++) {
        const char *s = argv[i];
        if (strcmp(s, "--json") == 0) {
            a->ra.json = true;
            continue;
        }
        if (strcmp(s, "--quiet") == 0) {
            a->ra.quiet = true;
            continue;
        }
        if (strcmp(s, "--allow-unused") == 0) { /* a checkpoint holding tensors the model does not use */
            a->ra.allow_unused = true;
            continue;
        }
        if (s[0] != '-') {
            if (a->ra.model_arg) return fprintf(stderr, "shortc: error: %s: unexpected argument '%s'\n", cmd, s), false;
            a->ra.model_arg = s;
            a->ra.model_path = resolve_model_name(s);
            continue;
        }
        if (i + 1 >= argc) {
            int r = value_flag(a, train, s, "");
            if (r == 0) cli_unknown_option(cmd, s);
            else fprintf(stderr, "shortc: error: %s needs a value\n", s);
            return false;
        }
        int r = value_flag(a, train, s, argv[i + 1]);
        if (r == 0) {
            cli_unknown_option(cmd, s);
            return false;
        }
        if (r < 0) return false;
        i++;
    }
    a->o.freeze = a->freeze;
    if (!check_args(a, train)) return false;
    srt_eval_options eo;
    if (train && a->valid && !eval_options_from_args(&a->ra, &eo)) return false; /* --mode spelled right */
    if (train && !a->nstages) a->stages[a->nstages++] = (TrainStage){a->seq, a->steps};
    long long total = 0;
    for (int s = 0; train && s < a->nstages; s++) total += a->stages[s].steps;
    if (total > (1 << 30)) return fprintf(stderr, "shortc: error: --stages: %lld steps in all, at most %d\n", total, 1 << 30), false;
    if (train) a->steps = (int)total;
    a->o.steps = a->steps > 0 ? a->steps : 1;
    if (!model_found(a->ra.model_path, a->ra.model_arg)) return false;
    if (!a->ra.weights && a->ra.seed < 0) a->ra.seed = 0; /* train without --init: seeded random weights */
    return true;
}

/* The model opened with its weights and a trainer over it; prints the error and returns false. */
static bool open_trainer(TrainArgs *a, OpenModel *om, srt_trainer **t) {
    if (!open_model(&a->ra, om)) return false;
    srt_status st = srt_trainer_create(om->m, &a->o, t);
    if (st != SRT_OK) {
        print_lib_error(st, srt_last_error(om->ctx));
        close_model(om);
        return false;
    }
    return true;
}

/* One step's line: text or a JSON object. k: the step (from 1), counting skipped ones. */
static void print_step(const TrainArgs *a, int k, int seq, const srt_train_stats *s, double ms) {
    double tps = ms > 0 ? (double)s->tokens / (ms / 1e3) : 0;
    if (a->ra.json) {
        printf("{\"step\": %d, \"seq\": %d, \"loss\": ", k, seq);
        json_write_double(stdout, s->loss);
        printf(", \"lr\": ");
        json_write_double(stdout, s->lr);
        printf(", \"grad_norm\": ");
        if (s->skipped) printf("null");
        else json_write_double(stdout, s->grad_norm);
        printf(", \"tokens\": %lld, \"tokens_per_s\": ", (long long)s->tokens);
        json_write_double(stdout, tps);
        if (a->o.loss_scale > 0) {
            printf(", \"loss_scale\": ");
            json_write_double(stdout, s->loss_scale);
            printf(", \"skipped\": %s, \"updates\": %d", s->skipped ? "true" : "false", s->step);
        }
        printf("}\n");
    } else {
        printf("step %d/%d  seq %d  loss %.6f  lr %.3e  ", k, a->steps, seq, s->loss, s->lr);
        if (s->skipped) printf("skipped (gradient overflow at loss scale %g)", s->loss_scale);
        else printf("grad-norm %.4f  %.0f tokens/s", s->grad_norm, tps);
        if (a->o.loss_scale > 0 && !s->skipped) printf("  loss scale %g", s->loss_scale);
        printf("\n");
    }
    fflush(stdout);
}

/* Validation data and the eval options it is scored under (--valid, --mode). */
typedef struct Validation {
    int32_t *tokens;            /* the --valid token file (NULL: no validation) */
    int n;                      /* its tokens */
    float *nll;                 /* n - 1 losses, scratch */
    srt_eval_options o;         /* the mode, as `shortc eval` picks it for the model */
} Validation;

/* Reads --valid and resolves the eval mode; prints the error and returns false. */
static bool open_validation(const TrainArgs *a, const OpenModel *om, Validation *v) {
    memset(v, 0, sizeof *v);
    if (!a->valid) return true;
    RunArgs ra = a->ra;
    ra.tokens = a->valid;
    if (!eval_options_from_args(&ra, &v->o)) return false; /* checked by parse_train_args already */
    model_mode_defaults(&ra, &om->mi, &v->o);
    v->n = load_run_tokens(&ra, &v->tokens);
    if (v->n < 0) return false;
    if (v->n < 2) {
        fprintf(stderr, "shortc: error: --valid holds %d tokens: validation needs at least 2\n", v->n);
        cli_bad_input();
        return false;
    }
    if (!tokens_in_vocab(&ra, v->tokens, v->n, &om->mi)) return false;
    if (!(v->nll = malloc(sizeof *v->nll * (size_t)(v->n - 1)))) return fprintf(stderr, "shortc: error: out of memory\n"), false;
    return true;
}

static void close_validation(Validation *v) {
    free(v->tokens);
    free(v->nll);
}

/* Scores the validation tokens with the current weights (srt_eval_nll, as `shortc eval`) after step k. */
static bool validate(const TrainArgs *a, OpenModel *om, Validation *v, int k) {
    srt_status st = srt_eval_nll(om->s, &v->o, v->tokens, v->n, v->nll);
    if (st != SRT_OK) return print_lib_error(st, srt_last_error(om->ctx)), false;
    double total = 0;
    for (int i = 0; i < v->n - 1; i++) total += v->nll[i];
    double mean = total / (v->n - 1);
    if (a->ra.json) {
        printf("{\"valid\": %d, \"mode\": \"%s\", \"nll\": ", k, srt_mode_name(v->o.mode));
        json_write_double(stdout, total);
        printf(", \"tokens\": %d, \"loss\": ", v->n - 1);
        json_write_double(stdout, mean);
        printf(", \"ppl\": ");
        json_write_double(stdout, exp(mean));
        printf("}\n");
    } else {
        printf("valid after step %d (mode %s): nll %.6f nats over %d tokens, loss %.6f, ppl %.4f\n", k,
               srt_mode_name(v->o.mode), total, v->n - 1, mean, exp(mean));
    }
    fflush(stdout);
    return true;
}

/* The steps over the token stream, stage after stage: each step takes B consecutive sequences of the stage's
 * length from a cursor that moves on through the stream and wraps to its start when fewer than L tokens
 * remain (with one stage, step k takes sequences kB .. kB+B-1 modulo their count). */
static int train_loop(TrainArgs *a, OpenModel *om, srt_trainer *t, const int32_t *tokens, int n, Validation *v) {
    int B = a->batch, most = 0;
    for (int s = 0; s < a->nstages; s++)
        if (a->stages[s].seq > most) most = a->stages[s].seq;
    int32_t *batch = malloc(sizeof *batch * (size_t)most * B);
    if (!batch) return fprintf(stderr, "shortc: error: out of memory\n"), 1;
    long long cursor = 0;
    int k = 0;
    for (int s = 0; s < a->nstages; s++) {
        int L = a->stages[s].seq;
        for (int j = 0; j < a->stages[s].steps; j++) {
            for (int b = 0; b < B; b++) {
                if (cursor + L > n) cursor = 0;
                memcpy(batch + (size_t)b * L, tokens + cursor, sizeof *batch * L);
                cursor += L;
            }
            srt_train_stats st_;
            double t0 = now_ms();
            srt_status st = srt_trainer_step(t, batch, B, L, &st_);
            if (st != SRT_OK) {
                print_lib_error(st, srt_last_error(om->ctx));
                free(batch);
                return 1;
            }
            print_step(a, ++k, L, &st_, now_ms() - t0);
            bool due = v->tokens && ((a->valid_every && k % a->valid_every == 0) || k == a->steps);
            if (due && !validate(a, om, v, k)) {
                free(batch);
                return 1;
            }
        }
    }
    free(batch);
    srt_status st = srt_trainer_save(t, a->save);
    if (st != SRT_OK) return print_lib_error(st, srt_last_error(om->ctx)), 1;
    if (!a->ra.quiet) fprintf(stderr, "shortc: wrote %s after %d steps\n", a->save, a->steps);
    return 0;
}

/* Every stage's length within the model's segment unless the trainer takes longer sequences segment after
 * segment (else a usage error), and within the data (else a bad input);
 * prints the error and returns the exit status, 0 when all fit. */
static int stage_lengths_fit(const TrainArgs *a, const OpenModel *om, const srt_trainer *t, int n) {
    int most = srt_trainer_max_seq(t); /* 0: segment after segment, any length */
    for (int s = 0; s < a->nstages; s++) {
        int L = a->stages[s].seq;
        if (most > 0 && L > most) {
            fprintf(stderr, "shortc: error: sequence length %d is longer than the model's segment (%d)\n", L, om->mi.segment);
            return cli_usage_failure();
        }
        if (n < L) {
            fprintf(stderr, "shortc: error: --data holds %d tokens, fewer than one sequence of --seq %d\n", n, L);
            cli_bad_input();
            return 1;
        }
    }
    return 0;
}

int train_main(int argc, char **argv) {
    TrainArgs a;
    if (!parse_train_args(argc, argv, true, &a)) return cli_usage_failure();
    int32_t *tokens = NULL;
    int n = load_run_tokens(&a.ra, &tokens);
    if (n < 0) return 1;
    OpenModel om;
    srt_trainer *t = NULL;
    if (!open_trainer(&a, &om, &t)) {
        free(tokens);
        return 1;
    }
    Validation v = {0};
    int rc = stage_lengths_fit(&a, &om, t, n);
    if (rc == 0 && open_validation(&a, &om, &v) && tokens_in_vocab(&a.ra, tokens, n, &om.mi)) rc = train_loop(&a, &om, t, tokens, n, &v);
    else if (rc == 0) rc = 1;
    close_validation(&v);
    srt_trainer_free(t);
    close_model(&om);
    free(tokens);
    return rc;
}

int grad_main(int argc, char **argv) {
    TrainArgs a;
    if (!parse_train_args(argc, argv, false, &a)) return cli_usage_failure();
    int32_t *tokens = NULL;
    int n = load_run_tokens(&a.ra, &tokens);
    if (n < 0) return 1;
    int L = a.seq ? a.seq : n;
    if (n < 2 || n < L) {
        fprintf(stderr, "shortc: error: --tokens holds %d tokens: grad needs at least %d\n", n, L < 2 ? 2 : L);
        cli_bad_input();
        free(tokens);
        return 1;
    }
    OpenModel om;
    srt_trainer *t = NULL;
    if (!open_trainer(&a, &om, &t)) {
        free(tokens);
        return 1;
    }
    double loss = 0;
    int rc = 1;
    if (tokens_in_vocab(&a.ra, tokens, n, &om.mi)) {
        srt_status st = srt_trainer_save_grads(t, tokens, n / L, L, a.save, &loss);
        if (st != SRT_OK) print_lib_error(st, srt_last_error(om.ctx));
        else {
            if (a.ra.json) {
                printf("{\"loss\": ");
                json_write_double(stdout, loss);
                printf(", \"sequences\": %d, \"seq\": %d}\n", n / L, L);
            } else printf("loss %.9f over %d sequence(s) of %d tokens; gradients in %s\n", loss, n / L, L, a.save);
            rc = fflush(stdout) == 0 ? 0 : 1;
        }
    }
    srt_trainer_free(t);
    close_model(&om);
    free(tokens);
    return rc;
}
