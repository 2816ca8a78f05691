/*
 * cmd_train.c — `shortc train` (optimizer steps over a token file, the weights saved as safetensors) and
 * `shortc grad` (the gradient of the mean next-token cross-entropy of a token file under every weight's
 * name), both through the runtime's trainer (srt_trainer_*, docs/training.md). Only the reference backend
 * differentiates for now; the others are refused with a message saying so.
 */
#include "cmd_train.h"

#include "modelpath.h"
#include "run_common.h"
#include "json_out.h"
#include "usage.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_FREEZE = 64 }; /* most --freeze patterns */

/* The flags of train and grad. */
typedef struct TrainArgs {
    RunArgs ra;                 /* model, backend, weights (--init / --weights or --seed), tokens (--data / --tokens) */
    int seq;                    /* --seq L (0: grad's whole file as one sequence) */
    int batch;                  /* --batch B */
    int steps;                  /* --steps N */
    const char *save;           /* train --save OUT / grad --out OUT */
    srt_train_options o;        /* the optimizer's options */
    const char *freeze[MAX_FREEZE]; /* --freeze GLOB, each */
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
    else {
        fprintf(stderr, "shortc: error: --schedule '%s': expected constant, cosine or inverse-sqrt\n", s);
        return false;
    }
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
    if (train && (!a->seq || !a->batch || !a->steps))
        return fprintf(stderr, "shortc: error: train needs --seq L, --batch B and --steps N\n"), false;
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
    const char *ins[] = {ra->tokens, ra->weights, ra->model_path};
    for (int i = 0; i < 3; i++)
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
    a->o.steps = a->steps > 0 ? a->steps : 1;
    if (!check_args(a, train)) return false;
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

/* One step's line: text or a JSON object. */
static void print_step(const TrainArgs *a, const srt_train_stats *s, double ms) {
    double tps = ms > 0 ? (double)s->tokens / (ms / 1e3) : 0;
    if (a->ra.json) {
        printf("{\"step\": %d, \"loss\": ", s->step);
        json_write_double(stdout, s->loss);
        printf(", \"lr\": ");
        json_write_double(stdout, s->lr);
        printf(", \"grad_norm\": ");
        json_write_double(stdout, s->grad_norm);
        printf(", \"tokens\": %lld, \"tokens_per_s\": ", (long long)s->tokens);
        json_write_double(stdout, tps);
        printf("}\n");
    } else {
        printf("step %d/%d  loss %.6f  lr %.3e  grad-norm %.4f  %.0f tokens/s\n", s->step, a->steps, s->loss, s->lr,
               s->grad_norm, tps);
    }
    fflush(stdout);
}

/* The steps over the token stream cut into sequences of L (step k: sequences kB .. kB+B-1, wrapping). */
static int train_loop(TrainArgs *a, OpenModel *om, srt_trainer *t, const int32_t *tokens, int n) {
    int L = a->seq, B = a->batch, nseq = n / L;
    int32_t *batch = malloc(sizeof *batch * (size_t)L * B);
    if (!batch) return fprintf(stderr, "shortc: error: out of memory\n"), 1;
    for (int k = 0; k < a->steps; k++) {
        for (int b = 0; b < B; b++)
            memcpy(batch + (size_t)b * L, tokens + (size_t)(((long long)k * B + b) % nseq) * L, sizeof *batch * L);
        srt_train_stats s;
        double t0 = now_ms();
        srt_status st = srt_trainer_step(t, batch, B, L, &s);
        if (st != SRT_OK) {
            print_lib_error(st, srt_last_error(om->ctx));
            free(batch);
            return 1;
        }
        print_step(a, &s, now_ms() - t0);
    }
    free(batch);
    srt_status st = srt_trainer_save(t, a->save);
    if (st != SRT_OK) return print_lib_error(st, srt_last_error(om->ctx)), 1;
    if (!a->ra.quiet) fprintf(stderr, "shortc: wrote %s after %d steps\n", a->save, a->steps);
    return 0;
}

int train_main(int argc, char **argv) {
    TrainArgs a;
    if (!parse_train_args(argc, argv, true, &a)) return cli_usage_failure();
    int32_t *tokens = NULL;
    int n = load_run_tokens(&a.ra, &tokens);
    if (n < 0) return 1;
    if (n < a.seq) {
        fprintf(stderr, "shortc: error: --data holds %d tokens, fewer than one sequence of --seq %d\n", n, a.seq);
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
    int rc = tokens_in_vocab(&a.ra, tokens, n, &om.mi) ? train_loop(&a, &om, t, tokens, n) : 1;
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
