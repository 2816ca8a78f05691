/*
 * cmd_eval.c — `shortc eval`: the total negative log-likelihood (nats) of a
 * token file's N - 1 next-token predictions under an inference mode,
 * perplexity, tokens scored and tokens/s, as text or one JSON object. The
 * losses come from the runtime (srt_eval_nll); the CLI only sums them. A
 * progress bar with an ETA goes to stderr when stderr is a terminal.
 */
#define _POSIX_C_SOURCE 200809L
#include "cmd_eval.h"

#include "json_out.h"
#include "usage.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

bool args_name_mode(const RunArgs *ra) { return ra->mode || ra->stride || ra->overlap >= 0; }

bool eval_options_from_args(const RunArgs *ra, srt_eval_options *o) {
    srt_eval_options_init(o);
    if (ra->mode && srt_mode_from_name(ra->mode, &o->mode) != SRT_OK) {
        fprintf(stderr, "shortc: error: unknown mode '%s' (expected nonoverlapping, sliding, windows, tokenwise or "
                        "cached)\n", ra->mode);
        return false;
    }
    if (!ra->mode && ra->stride) o->mode = SRT_MODE_SLIDING;
    if (!ra->mode && ra->overlap >= 0) o->mode = SRT_MODE_WINDOWS;
    if (ra->stride && ra->overlap >= 0) {
        fprintf(stderr, "shortc: error: --stride (sliding) and --overlap (windows) are exclusive\n");
        return false;
    }
    o->stride = ra->stride;
    o->overlap = ra->overlap > 0 ? ra->overlap : 0;
    if (ra->overlap >= 0 && o->mode != SRT_MODE_WINDOWS) {
        fprintf(stderr, "shortc: error: --overlap applies to --mode windows only, not '%s'\n", srt_mode_name(o->mode));
        return false;
    }
    return true;
}

void model_mode_defaults(const RunArgs *ra, const srt_model_info *mi, srt_eval_options *o) {
    if (!args_name_mode(ra) && mi->carries_state && !mi->recurrent) o->mode = SRT_MODE_CACHED;
    if (!mi->recurrent || ra->overlap >= 0 || ra->stride) return;
    if (!ra->mode) o->mode = SRT_MODE_WINDOWS;
    if (o->mode == SRT_MODE_WINDOWS) o->overlap = mi->overlap;
}

/* Seconds between two progress lines when stderr is not a terminal. */
#define PROGRESS_LINE_S 2.0

/* --progress without a terminal: a line every PROGRESS_LINE_S seconds and at the end. */
static void progress_lines(void *ud, int64_t done, int64_t total) {
    Progress *p = ud;
    double now = now_ms(), el = (now - p->t0) / 1e3;
    if (done != total && now - p->last < PROGRESS_LINE_S * 1e3) return;
    p->last = now;
    double eta = done ? el * (double)(total - done) / (double)done : 0;
    fprintf(stderr, "shortc: %s: %lld/%lld tokens (%d%%), %.0f s elapsed, ETA %.0f s\n", p->what, (long long)done,
            (long long)total, (int)(100 * done / (total ? total : 1)), el, eta);
}

/* The bar on a terminal, redrawn in place. */
static void show_progress(void *ud, int64_t done, int64_t total) {
    const Progress *p = ud;
    double el = (now_ms() - p->t0) / 1e3;
    int width = 30, fill = (int)(width * done / (total ? total : 1));
    double eta = done ? el * (double)(total - done) / (double)done : 0;
    fprintf(stderr, "\r[%.*s%*s] %3d%% %lld/%lld tokens, ETA %.0f s ", fill, "##############################",
            width - fill, "", (int)(100 * done / (total ? total : 1)), (long long)done, (long long)total, eta);
    if (done == total) fputc('\n', stderr);
}

void progress_attach(const RunArgs *ra, const char *what, Progress *p, srt_progress_fn *fn, void **ud) {
    *p = (Progress){.t0 = now_ms(), .last = now_ms(), .what = what};
    *fn = NULL;
    *ud = p;
    if (!ra->quiet && isatty(STDERR_FILENO)) *fn = show_progress;
    else if (ra->progress) *fn = progress_lines;
}

/* Prints the result as text or JSON. */
static void print_result(const RunArgs *ra, const OpenModel *om, const srt_eval_options *o, double nll,
                         int64_t scored, double seconds) {
    double ppl = exp(nll / (double)scored), tps = seconds > 0 ? (double)scored / seconds : 0;
    if (ra->json) { /* docs/usage.md, "JSON outputs": shortc.eval/1 */
        printf("{\"schema\": \"shortc.eval/1\", \"model\": ");
        json_write_string(stdout, om->mi.name, strlen(om->mi.name));
        printf(", \"backend\": \"%s\", \"mode\": \"%s\"", srt_backend_name(om->mi.backend), srt_mode_name(o->mode));
        if (o->mode == SRT_MODE_SLIDING) printf(", \"stride\": %d", o->stride ? o->stride : om->mi.segment);
        if (o->mode == SRT_MODE_WINDOWS) printf(", \"overlap\": %d", o->overlap);
        printf(", \"nll\": "), json_write_double(stdout, nll);
        printf(", \"tokens\": %lld, \"ppl\": ", (long long)scored), json_write_double(stdout, ppl);
        printf(", \"seconds\": "), json_write_double(stdout, seconds);
        printf(", \"tokens_per_s\": "), json_write_double(stdout, tps);
        printf("}\n");
        return;
    }
    printf("%s on %s, mode %s", om->mi.name, srt_backend_name(om->mi.backend), srt_mode_name(o->mode));
    if (o->mode == SRT_MODE_SLIDING) printf(" (stride %d)", o->stride ? o->stride : om->mi.segment);
    if (o->mode == SRT_MODE_WINDOWS) printf(" (overlap %d)", o->overlap);
    printf(": nll %.6f nats over %lld tokens, ppl %.4f, %.1f tokens/s\n", nll, (long long)scored, ppl, tps);
}

int eval_main(int argc, char **argv) {
    RunArgs ra = RUN_ARGS_INIT;
    srt_eval_options o;
    if (!parse_run_args(argc, argv, RUN_CMD_EVAL, &ra) || !eval_options_from_args(&ra, &o)) return cli_usage_failure();
    const char *const outs[] = {ra.save_weights};
    if (!run_outputs_apart(&ra, outs, 1)) return SHORTC_EXIT_USAGE;
    int32_t *tokens = NULL;
    int n = load_run_tokens(&ra, &tokens);
    if (n < 0) return 1;
    if (n < 2) {
        fprintf(stderr, "shortc: error: eval needs at least 2 tokens (one prediction), found %d\n", n);
        free(tokens);
        return SHORTC_EXIT_INPUT;
    }
    OpenModel om;
    float *nll = malloc(sizeof *nll * (size_t)(n - 1));
    if (!nll || !open_model(&ra, &om)) {
        if (!nll) fprintf(stderr, "shortc: error: out of memory\n");
        free(nll);
        free(tokens);
        return 1;
    }
    model_mode_defaults(&ra, &om.mi, &o);
    Progress pr;
    progress_attach(&ra, "eval", &pr, &o.progress, &o.progress_ud);
    bool in_vocab = tokens_in_vocab(&ra, tokens, n, &om.mi);
    srt_status st = in_vocab ? srt_eval_nll(om.s, &o, tokens, n, nll) : SRT_ERR_INVALID;
    double seconds = (now_ms() - pr.t0) / 1e3;
    int rc = 1;
    if (!in_vocab) {
        /* tokens_in_vocab said why */
    } else if (st != SRT_OK) print_lib_error(st, srt_last_error(om.ctx));
    else {
        double total = 0;
        for (int i = 0; i < n - 1; i++) total += nll[i];
        if (!isfinite(total) && !ra.allow_nonfinite)
            fprintf(stderr, "shortc: error: the loss is not finite (an overflow in the forward pass)\n");
        else {
            print_result(&ra, &om, &o, total, n - 1, seconds);
            rc = fflush(stdout) == 0 ? 0 : 1;
        }
    }
    close_model(&om);
    free(nll);
    free(tokens);
    return rc;
}
