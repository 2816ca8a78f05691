/*
 * cmd_generate.c — `shortc generate`: continues one prompt or a batch of
 * prompts of different lengths, each sequence with its own state (a session
 * of one sequence per prompt, srt_session_create) and its own sampler on the
 * same settings and seed, and prints one line per prompt (ids, or text with
 * --tokenizer), in order. The loop is the library's srt_generate (runtime/src/generate.c), whose every step
 * runs through srt_forward_batch_sample:
 * on sim and cuda the next token is drawn on the device and only its id
 * comes back. A sequence stops at --max-new tokens or at --eos (not
 * printed); the others go on. stdout has the generated sequences only; one
 * summary line with tokens/s goes to stderr unless --quiet, and --report
 * adds the bytes copied from the device and, per step (srt_generate's
 * callback), what the step asked of the device (srt_session_call_counts:
 * launches, GEMM calls, graph launches, host waits, copies and bytes), also
 * as --json's "steps".
 */
#define _POSIX_C_SOURCE 200809L
#include "cmd_generate.h"

#include "cmd_tokenize.h"
#include "json_out.h"
#include "run_common.h"
#include "usage.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The prompts of one generate call. */
typedef struct Prompts {
    int32_t **ids;   /* per prompt, its token ids (malloc'd) */
    int *len;        /* per prompt, its length (>= 1) */
    int n;           /* prompts */
} Prompts;

static void prompts_free(Prompts *p) {
    for (int i = 0; i < p->n; i++) free(p->ids[i]);
    free(p->ids);
    free(p->len);
    memset(p, 0, sizeof *p);
}

/* Appends a prompt (takes ids); false when out of room or memory (message printed). */
static bool prompts_add(Prompts *p, int32_t *ids, int len) {
    if (p->n == GEN_MAX_PROMPTS) {
        fprintf(stderr, "shortc: error: generate takes at most %d prompts\n", GEN_MAX_PROMPTS);
        free(ids);
        return false;
    }
    int32_t **ni = realloc(p->ids, sizeof *ni * (size_t)(p->n + 1));
    if (ni) p->ids = ni;
    int *nl = ni ? realloc(p->len, sizeof *nl * (size_t)(p->n + 1)) : NULL;
    if (nl) p->len = nl;
    if (!ni || !nl) {
        fprintf(stderr, "shortc: error: out of memory\n");
        free(ids);
        return false;
    }
    p->ids[p->n] = ids;
    p->len[p->n++] = len;
    return true;
}

/* Each non-empty line of --prompts: token ids, or UTF-8 text with --tokenizer. */
static bool load_prompt_lines(const RunArgs *ra, Prompts *p) {
    size_t len = 0;
    char *text = read_text_file(ra->prompts_file, "prompts", &len);
    if (!text) return false;
    bool ok = true;
    for (size_t at = 0, line = 1; ok && at < len; line++) {
        size_t end = at;
        while (end < len && text[end] != '\n') end++;
        size_t e = end;
        while (e > at && (text[e - 1] == '\r' || text[e - 1] == ' ' || text[e - 1] == '\t')) e--;
        if (e > at) {
            char what[64];
            snprintf(what, sizeof what, "%s line %zu", ra->prompts_file, line);
            int32_t *ids = NULL;
            int n = ra->tokenizer ? cli_encode(ra->tokenizer, ra->special_as_text ? SRT_ENCODE_SPECIAL_AS_TEXT : 0, what, text + at, e - at, &ids)
                                  : parse_tokens(what, text + at, e - at, &ids);
            if (n == 0) {
                fprintf(stderr, "shortc: error: %s: the prompt encodes to no tokens\n", what);
                free(ids);
            }
            if (n <= 0) cli_bad_input();
            ok = n > 0 && prompts_add(p, ids, n);
        }
        at = end + 1;
    }
    free(text);
    if (ok && p->n == 0) {
        fprintf(stderr, "shortc: error: %s: no prompts (every line is empty)\n", ra->prompts_file);
        cli_bad_input();
    }
    return ok && p->n > 0;
}

/* The prompts: --prompts' lines, each --prompt, or the one of --tokens / --text. */
static bool load_prompts(const RunArgs *ra, Prompts *p) {
    memset(p, 0, sizeof *p);
    if (ra->prompts_file) return load_prompt_lines(ra, p);
    for (int i = 0; i < ra->nprompts; i++) {
        char what[32];
        snprintf(what, sizeof what, "prompt %d", i + 1);
        int32_t *ids = NULL;
        int n = cli_encode(ra->tokenizer, ra->special_as_text ? SRT_ENCODE_SPECIAL_AS_TEXT : 0, what, ra->prompts[i], strlen(ra->prompts[i]), &ids);
        if (n == 0) {
            fprintf(stderr, "shortc: error: %s encodes to no tokens\n", what);
            free(ids);
        }
        if (n <= 0) cli_bad_input();
        if (n <= 0 || !prompts_add(p, ids, n)) return false;
    }
    if (ra->nprompts) return true;
    int32_t *ids = NULL;
    int n = load_run_tokens(ra, &ids);
    return n > 0 && prompts_add(p, ids, n);
}

/*
 * The text of ids[n] through tokenizer t (vocabulary tv ids) into a malloc'd buffer: runs of ids the tokenizer
 * knows are decoded together, an id past its vocabulary (a model with a larger one) is written "<|id:N|>", so
 * no output is lost. NULL with the error printed.
 */
static char *decode_ids(srt_context *ctx, srt_tokenizer *t, int tv, const int32_t *ids, int n, size_t *len) {
    char *out = NULL;
    FILE *f = open_memstream(&out, len);
    if (!f) {
        fprintf(stderr, "shortc: error: out of memory\n");
        return NULL;
    }
    bool ok = true;
    for (int i = 0; ok && i < n;) {
        int j = i;
        while (j < n && ids[j] >= 0 && ids[j] < tv) j++;
        if (j > i) {
            char *text = NULL;
            size_t tl = 0;
            srt_status st = srt_tokenizer_decode(t, ids + i, (size_t)(j - i), &text, &tl);
            if (st != SRT_OK) print_lib_error(st, srt_last_error(ctx)), ok = false;
            else fwrite(text, 1, tl, f);
            srt_free(ctx, text);
        }
        if (ok && j < n) fprintf(f, "<|id:%d|>", (int)ids[j++]);
        i = j;
    }
    if (fclose(f) != 0) ok = false;
    if (!ok) free(out);
    return ok ? out : NULL;
}

/* Writes the generated ids[n] as one line: their text through the tokenizer t, else the ids space-separated. */
static bool print_generated(srt_context *ctx, srt_tokenizer *t, int tv, const int32_t *ids, int n) {
    if (!t) {
        for (int i = 0; i < n; i++) printf("%s%d", i ? " " : "", (int)ids[i]);
        printf("\n");
        return true;
    }
    size_t len = 0;
    char *text = decode_ids(ctx, t, tv, ids, n, &len);
    if (text) printf("%.*s\n", (int)len, text);
    free(text);
    return text != NULL;
}

/* A sampler of generate's --temperature, --top-k, --top-p and --seed; prints the error. */
static srt_sampler *make_sampler(const RunArgs *ra, const OpenModel *om) {
    srt_sampling cfg;
    srt_sampling_init(&cfg);
    cfg.temperature = ra->temperature, cfg.top_k = ra->top_k, cfg.top_p = ra->top_p;
    cfg.seed = (uint64_t)ra->sample_seed;
    srt_sampler *sm = NULL;
    srt_status st = srt_sampler_create(om->ctx, &cfg, om->mi.vocab, &sm);
    if (st != SRT_OK) print_lib_error(st, srt_last_error(om->ctx));
    return sm;
}

/* The checks before any forward: the ids, --eos and the positions each prompt needs. Prints the error. */
static bool prompts_fit(const RunArgs *ra, const Prompts *p, const srt_model_info *mi) {
    if (ra->eos >= mi->vocab) {
        fprintf(stderr, "shortc: error: --eos %lld is outside the vocabulary [0, %d) of model '%s'\n", (long long)ra->eos,
                mi->vocab, mi->name);
        cli_bad_input();
        return false;
    }
    for (int b = 0; b < p->n; b++) {
        if (!tokens_in_vocab(ra, p->ids[b], p->len[b], mi)) return false;
        if (!mi->carries_state && (long long)p->len[b] + ra->max_new - 1 > mi->max_positions) { /* a PIA cache: any length */
            char which[32] = "";
            if (p->n > 1) snprintf(which, sizeof which, "prompt %d: ", b + 1);
            fprintf(stderr, "shortc: error: %sa %d-token prompt and %d new tokens go past the %d positions model '%s' "
                    "can address\n", which, p->len[b], ra->max_new, mi->max_positions, mi->name);
            return false;
        }
    }
    return true;
}

/* Seconds between two --progress lines. */
#define GEN_PROGRESS_S 2.0

/* --report: what one step (a call for every sequence not done) asked of the device. */
typedef struct StepCount {
    int batch;              /* sequences the step advanced */
    bool prefill;           /* some sequence was fed prompt tokens */
    srt_call_counts calls;  /* the session's counts over the step */
} StepCount;

/* srt_generate's callback state: --progress's clock, --report's steps. */
typedef struct GenWatch {
    const RunArgs *ra;       /* --progress, --report */
    const srt_session *s;    /* the session generating */
    double t0, last;         /* start, last progress line (ms) */
    int64_t made, total;     /* tokens so far, at most (the last step's) */
    srt_call_counts before;  /* the session's counts after the previous step */
    StepCount *step;         /* --report: per step */
    int nsteps, cap;         /* steps, room */
    bool nomem;              /* a step could not be logged */
} GenWatch;

/* --progress: a line with the tokens generated so far (final: regardless of the clock). */
static void gen_progress_line(GenWatch *g, bool final) {
    double now = now_ms();
    if (!final && now - g->last < GEN_PROGRESS_S * 1e3) return;
    g->last = now;
    fprintf(stderr, "shortc: generate: %lld of at most %lld tokens, %.0f s elapsed\n", (long long)g->made,
            (long long)g->total, (now - g->t0) / 1e3);
}

/* --report: appends the step's counts (the session's now minus after the previous step). */
static void log_step(GenWatch *g, const srt_gen_step *info) {
    if (g->nsteps == g->cap) {
        int cap = g->cap ? 2 * g->cap : 64;
        StepCount *p = realloc(g->step, sizeof *p * (size_t)cap);
        if (!p) {
            g->nomem = true;
            return;
        }
        g->step = p, g->cap = cap;
    }
    StepCount *c = &g->step[g->nsteps++];
    srt_call_counts now;
    srt_session_call_counts(g->s, &now);
    c->batch = info->batch;
    c->prefill = info->prefill != 0;
    c->calls = (srt_call_counts){now.launches - g->before.launches, now.gemms - g->before.gemms,
                                 now.graph_launches - g->before.graph_launches, now.syncs - g->before.syncs,
                                 now.copies - g->before.copies, now.bytes - g->before.bytes};
    g->before = now;
}

/* srt_generate's callback. */
static void gen_step(void *ud, const srt_gen_step *info) {
    GenWatch *g = ud;
    g->made = info->made, g->total = info->total;
    if (g->ra->report && !g->nomem) log_step(g, info);
    if (g->ra->progress) gen_progress_line(g, false);
}

/* Runs every sequence to its end (srt_generate); --progress ends with a last line. */
static srt_status generate_all(srt_session *s, srt_gen_seq *seq, int B, const RunArgs *ra, GenWatch *g) {
    *g = (GenWatch){.ra = ra, .s = s, .t0 = now_ms(), .last = now_ms(), .total = (int64_t)ra->max_new * B};
    srt_session_call_counts(s, &g->before);
    srt_status st = srt_generate(s, seq, B, ra->max_new, ra->eos, ra->report || ra->progress ? gen_step : NULL, g);
    if (st == SRT_OK && ra->progress) gen_progress_line(g, true);
    if (st == SRT_OK && g->nomem) st = SRT_ERR_NOMEM;
    return st;
}

/* --report's table on stderr: one line per step. */
static void print_steps(const GenWatch *g) {
    fprintf(stderr, "step  kind     batch  launches  gemms  graphs  syncs  copies      bytes\n");
    for (int i = 0; i < g->nsteps; i++) {
        const StepCount *c = &g->step[i];
        fprintf(stderr, "%4d  %-7s  %5d  %8lld  %5lld  %6lld  %5lld  %6lld  %9lld\n", i, c->prefill ? "prefill" : "decode",
                c->batch, c->calls.launches, c->calls.gemms, c->calls.graph_launches, c->calls.syncs, c->calls.copies,
                c->calls.bytes);
    }
}

/* --json --report: the "steps" array (docs/usage.md, "JSON outputs"). */
static void print_steps_json(const GenWatch *g) {
    printf(", \"steps\": [");
    for (int i = 0; i < g->nsteps; i++) {
        const StepCount *c = &g->step[i];
        printf("%s{\"step\": %d, \"prefill\": %s, \"batch\": %d, \"launches\": %lld, \"gemms\": %lld, "
               "\"graph_launches\": %lld, \"syncs\": %lld, \"copies\": %lld, \"bytes\": %lld}",
               i ? ", " : "", i, c->prefill ? "true" : "false", c->batch, c->calls.launches, c->calls.gemms,
               c->calls.graph_launches, c->calls.syncs, c->calls.copies, c->calls.bytes);
    }
    printf("]");
}

/* Prints one line per sequence, in prompt order. */
static bool print_all(const OpenModel *om, srt_tokenizer *t, int tv, const srt_gen_seq *seq, int B) {
    bool ok = true;
    for (int b = 0; ok && b < B; b++) ok = print_generated(om->ctx, t, tv, seq[b].out, seq[b].ngen);
    return ok && fflush(stdout) == 0;
}

/* generate --json: one object of schema shortc.generate/1 (docs/usage.md, "JSON outputs"). */
static bool print_json(const RunArgs *ra, const OpenModel *om, srt_tokenizer *t, int tv, const srt_gen_seq *seq, int B,
                       double seconds, const GenWatch *g) {
    long long total = 0;
    for (int b = 0; b < B; b++) total += seq[b].ngen;
    printf("{\"schema\": \"shortc.generate/1\", \"model\": ");
    json_write_string(stdout, om->mi.name, strlen(om->mi.name));
    printf(", \"backend\": \"%s\", \"max_new\": %d", srt_backend_name(om->mi.backend), ra->max_new);
    if (ra->temperature > 0)
    {
        printf(", \"temperature\": "), json_write_double(stdout, ra->temperature);
        printf(", \"top_k\": %d, \"top_p\": ", ra->top_k), json_write_double(stdout, ra->top_p);
        printf(", \"seed\": %lld", ra->sample_seed);
    }
    if (ra->eos >= 0) printf(", \"eos\": %lld", ra->eos);
    printf(", \"sequences\": [");
    bool ok = true;
    for (int b = 0; ok && b < B; b++) {
        printf("%s{\"prompt_tokens\": %d, \"stop\": \"%s\", \"ids\": [", b ? ", " : "", seq[b].nprompt,
               seq[b].eos ? "eos" : "max_new");
        for (int i = 0; i < seq[b].ngen; i++) printf("%s%d", i ? ", " : "", (int)seq[b].out[i]);
        printf("]");
        if (t) {
            size_t len = 0;
            char *text = decode_ids(om->ctx, t, tv, seq[b].out, seq[b].ngen, &len);
            if (text) printf(", \"text\": "), json_write_string(stdout, text, len);
            ok = text != NULL;
            free(text);
        }
        printf("}");
    }
    printf("], \"tokens_generated\": %lld, \"seconds\": ", total), json_write_double(stdout, seconds);
    printf(", \"tokens_per_s\": "), json_write_double(stdout, seconds > 0 ? (double)total / seconds : 0.0);
    if (ra->report) print_steps_json(g);
    printf("}\n");
    return ok && fflush(stdout) == 0;
}

/* The tokenizer of --tokenizer for the output (NULL without one) and its vocabulary size in *tv, checked against
 * the model's before anything runs: a larger one is refused (its ids would not fit the model), a smaller one
 * warned about (ids past it print as <|id:N|>). false with the error printed. */
static bool open_output_tokenizer(const RunArgs *ra, const OpenModel *om, srt_tokenizer **t, int *tv) {
    *t = NULL;
    *tv = 0;
    if (!ra->tokenizer) return true;
    if (!(*t = cli_tokenizer_open(om->ctx, ra->tokenizer))) {
        cli_bad_input();
        return false;
    }
    *tv = srt_tokenizer_vocab_size(*t);
    if (*tv > om->mi.vocab) {
        fprintf(stderr, "shortc: error: tokenizer '%s' has %d ids, more than the vocabulary of %d of model '%s': "
                        "its ids would not fit the model\n", ra->tokenizer, *tv, om->mi.vocab, om->mi.name);
        cli_bad_input();
        return false;
    }
    if (*tv < om->mi.vocab)
        fprintf(stderr, "shortc: warning: tokenizer '%s' has %d ids, model '%s' %d: a generated id past the "
                        "tokenizer's prints as <|id:N|>\n", ra->tokenizer, *tv, om->mi.name, om->mi.vocab);
    return true;
}

/* Generation over the prompts: one session of a sequence per prompt; see the file comment. */
static int generate_model(const RunArgs *ra, const Prompts *p) {
    OpenModel om;
    if (!open_model(ra, &om)) return 1;
    const srt_model_info *mi = &om.mi;
    int rc = 1, B = p->n, total = 0, tv = 0;
    srt_session *s = NULL;
    srt_tokenizer *t = NULL;
    srt_gen_seq *seq = calloc((size_t)B, sizeof *seq);
    if (!seq) fprintf(stderr, "shortc: error: out of memory\n");
    if (!seq || !open_output_tokenizer(ra, &om, &t, &tv) || !prompts_fit(ra, p, mi)) goto out;
    for (int b = 0; b < B; b++) {
        seq[b] = (srt_gen_seq){.prompt = p->ids[b], .nprompt = p->len[b]};
        if (!(seq[b].out = malloc(sizeof *seq[b].out * (size_t)(ra->max_new + 1)))) {
            fprintf(stderr, "shortc: error: out of memory\n");
            goto out;
        }
        if (!(seq[b].sampler = make_sampler(ra, &om))) goto out;
    }
    srt_status st = B == 1 ? SRT_OK : srt_session_create(om.m, B, &s);
    if (st == SRT_OK && B > 1 && ra->mem_zeros) st = srt_session_set_mem_init(s, SRT_MEM_INIT_ZEROS);
    double t0 = now_ms();
    GenWatch g = {0};
    if (st == SRT_OK) st = generate_all(B == 1 ? om.s : s, seq, B, ra, &g);
    double t1 = now_ms();
    bool printed = st == SRT_OK && (ra->json ? print_json(ra, &om, t, tv, seq, B, (t1 - t0) / 1e3, &g)
                                             : print_all(&om, t, tv, seq, B));
    if (!printed) {
        if (st != SRT_OK && g.nomem) fprintf(stderr, "shortc: error: out of memory (--report's step table)\n");
        else if (st != SRT_OK) print_lib_error(st, srt_last_error(om.ctx));
        free(g.step);
        goto out;
    }
    for (int b = 0; b < B; b++) total += seq[b].ngen;
    if (!ra->quiet) /* stdout stays the output alone */
        fprintf(stderr, "%d prompt%s on backend %s: %d tokens generated in %.1f ms, %.1f tokens/s\n", B, B == 1 ? "" : "s",
            srt_backend_name(mi->backend), total, t1 - t0, t1 > t0 ? total / ((t1 - t0) / 1e3) : 0.0);
    if (ra->report) {
        fprintf(stderr, "model %s (%s): %zu bytes copied from the device, %d tokens generated, %.1f tokens/s\n",
                mi->name, mi->kv_cache ? "KV cache" : "re-running the sequence",
                srt_session_bytes_to_host(B == 1 ? om.s : s), total, t1 > t0 ? total / ((t1 - t0) / 1e3) : 0.0);
        if (!ra->json) print_steps(&g);
    }
    free(g.step);
    rc = 0;
out:
    for (int b = 0; seq && b < B; b++) {
        free(seq[b].out);
        srt_sampler_destroy(seq[b].sampler);
    }
    free(seq);
    srt_tokenizer_close(t);
    srt_session_destroy(s);
    close_model(&om);
    return rc;
}

int generate_main(int argc, char **argv) {
    RunArgs ra = RUN_ARGS_INIT;
    if (!parse_run_args(argc, argv, RUN_CMD_GENERATE, &ra)) return cli_usage_failure();
    const char *const outs[] = {ra.save_weights};
    if (!run_outputs_apart(&ra, outs, 1)) return SHORTC_EXIT_USAGE;
    Prompts p;
    if (!load_prompts(&ra, &p)) {
        prompts_free(&p);
        return 1;
    }
    int rc = generate_model(&ra, &p);
    prompts_free(&p);
    return rc;
}
