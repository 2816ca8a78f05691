/*
 * main.c — the `shortc` command-line driver.
 *
 *   shortc FILE.arch [-o OUT.cu] [options]   compile (the default command)
 *   shortc run MODEL [options]               run a model on a backend (libshortrt)
 *   shortc generate MODEL [options]          greedy or sampled generation of one prompt or a batch (cmd_generate.c)
 *   shortc eval MODEL [options]              NLL and perplexity under an inference mode (cmd_eval.c)
 *   shortc tokenize --tokenizer T ...        GPT-2 BPE text <-> ids (cmd_tokenize.c)
 *   shortc cmp A.npy B.npy [--atol X] [--rtol Y]
 *   shortc demo [MODEL.arch]                  the README's main job
 *   shortc sim FILE.cu --kernel NAME ...      one kernel on the simulator (cmd_sim.c)
 *   shortc compare A.arch B.arch ... / report  the cost model side by side (cmd_compare.c)
 *   shortc mask MODEL.arch --tokens N ...     the attention masks of a model (cmd_mask.c)
 *   shortc --check FILE.cu                    libclang check of an emitted file
 *   shortc --version                          the version (also `shortc version`)
 *
 * The driver only parses flags and calls the library stages in order; it
 * owns no compiler logic. Every file is read and written through fileio.h:
 * inputs must be regular files (a FIFO or device is refused, never waited
 * on); outputs that are regular files are written to a temporary name and
 * renamed into place, so an error never leaves a half-written file, and
 * /dev/null or a FIFO is never replaced; a symbolic link is refused
 * (--force replaces the link itself, never writing its target).
 */
#define _POSIX_C_SOURCE 200809L
#include "cmd_compare.h"
#include "cmd_convert.h"
#include "cmd_eval.h"
#include "cmd_generate.h"
#include "cmd_train.h"
#include "cmd_mask.h"
#include "cmd_sim.h"
#include "cmd_tokenize.h"
#include "datadir.h"
#include "fileio.h"
#include "modelpath.h"
#include "run_common.h"
#include "shortc.h"
#include "shortrt.h"
#include "usage.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static bool ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* Parses the integer value of a flag: decimal, lo..hi. Prints the error. */
bool parse_flag_int(const char *flag, const char *s, long long lo, long long hi, long long *out) {
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (end == s || *end || errno || v < lo || v > hi) {
        fprintf(stderr, "shortc: error: %s needs an integer between %lld and %lld, found '%s'\n", flag, lo, hi, s);
        return false;
    }
    *out = v;
    return true;
}

/* false (message printed) when an output names the same file as an input (writing it would replace
 * what is being read) or as another output (fio_first_clash; NULL entries and "-" are skipped). */
static bool outputs_apart(const char *const *outs, int nouts, const char *const *ins, int nins) {
    const char *clash = NULL;
    int o = fio_first_clash(outs, nouts, ins, nins, &clash);
    if (o < 0) return true;
    bool input = false;
    for (int i = 0; i < nins; i++) input |= clash == ins[i];
    fprintf(stderr, "shortc: error: output '%s' is the same file as %s '%s'; nothing written\n", outs[o],
            input ? "input" : "output", clash);
    return false;
}

/* outputs_apart against every file a compile read (the model and its imports, d's source table). */
static bool outputs_apart_from_sources(const char *const *outs, int nouts, const Diag *d) {
    for (int i = 0; i < d->nsources; i++)
        if (!outputs_apart(outs, nouts, &d->sources[i]->path, 1)) return false;
    return true;
}

/* outputs_apart against a .arch model's files (itself and its imports), found by a front-end pass
 * whose diagnostics are dropped: the real load reports them. Other models (.cu) are one file. */
static bool outputs_apart_from_model(const char *const *outs, int nouts, const char *path, const char *model) {
    if (!ends_with(path, ".arch")) return outputs_apart(outs, nouts, &path, 1);
    Arena a;
    arena_init(&a);
    char *text = NULL;
    size_t len = 0;
    FILE *sink = open_memstream(&text, &len);
    Diag d;
    diag_init(&d, &a, sink);
    CompileOptions co = {.path = path, .model = model, .stop = COMPILE_STOP_AFTER_SEMA};
    CompileResult cr;
    shortc_compile(&a, &d, &co, &cr);
    compile_result_free(&cr);
    bool ok = outputs_apart_from_sources(outs, nouts, &d); /* a model that cannot be read fails its load */
    if (sink) fclose(sink);
    free(text);
    arena_free(&a);
    return ok;
}

/* Writes up to two output files (fileio.h: atomically when they are regular files or absent, through
 * when they are /dev/null or a FIFO): nothing is renamed into place unless both were written. A NULL
 * path is skipped, "-" is stdout. */
static bool write_outputs(const char *const path[2], const char *const data[2], const size_t len[2]) {
    FioOut out[2];
    bool open[2] = {false, false}, ok = true;
    const char *why = NULL;
    for (int i = 0; i < 2 && ok; i++) {
        if (!path[i] || strcmp(path[i], "-") == 0) continue;
        if (!(open[i] = fio_out_open(&out[i], path[i], &why))) {
            fprintf(stderr, "shortc: error: cannot write '%s': %s\n", path[i], why);
            ok = false;
            break;
        }
        fio_out_write(&out[i], data[i], len[i]);
        if (out[i].err) {
            fprintf(stderr, "shortc: error: cannot write '%s': %s\n", path[i], strerror(out[i].err));
            ok = false;
        }
    }
    for (int i = 0; i < 2; i++) {
        if (!open[i]) continue;
        if (!ok) fio_out_abort(&out[i]);
        else if (!fio_out_commit(&out[i], &why)) {
            fprintf(stderr, "shortc: error: cannot write '%s': %s\n", path[i], why);
            ok = false;
        }
    }
    for (int i = 0; i < 2 && ok; i++)
        if (path[i] && strcmp(path[i], "-") == 0) ok = fwrite(data[i], 1, len[i], stdout) == len[i];
    return ok;
}

/* ------------------------------------------------------------------ */
/* compile                                                             */
/* ------------------------------------------------------------------ */

typedef struct CompileArgs {
    const char *input;     /* .arch file (or .cu with --check), the argument resolved (modelpath.h) */
    const char *input_arg; /* the argument as given */
    const char *output;    /* -o */
    const char *model;     /* --model */
    const char *plan_out;  /* --plan-out */
    const char *dump_ir;   /* --dump-ir[=PASS] */
    bool dump_spec;        /* --dump-spec */
    bool no_fuse;          /* --no-fuse */
    bool check;            /* --check */
    bool time;             /* --time: per-stage milliseconds on stderr */
} CompileArgs;

/* Checks an existing emitted .cu with libclang. */
static int check_existing_cu(const char *path) {
    Arena a;
    arena_init(&a);
    Diag d;
    diag_init(&d, &a, stderr);
    int rc = 1;
    Source *src = diag_load_file(&d, path);
    if (src) rc = check_cuda_source(&d, src->text, src->len, path) > 0 || d.errors ? 1 : 0;
    if (rc) cli_bad_input(); /* the file is missing or does not check */
    if (rc == 0) fprintf(stderr, "%s: check passed\n", path);
    arena_free(&a);
    return rc;
}

static int compile_main(const CompileArgs *ca) {
    if (ca->check && ends_with(ca->input, ".cu")) return check_existing_cu(ca->input);
    const char *const outs[] = {ca->output, ca->plan_out};
    Arena a;
    arena_init(&a);
    Diag d;
    diag_init(&d, &a, stderr);
    int rc = 1;
    bool want_cuda = ca->output || ca->plan_out || ca->check || (!ca->dump_ir && !ca->dump_spec);
    CompileOptions co = {.path = ca->input, .model = ca->model, .no_fuse = ca->no_fuse,
                         .dump_spec_to = ca->dump_spec ? stdout : NULL, .dump_ir = ca->dump_ir, .dump_to = stdout,
                         .stop = want_cuda ? COMPILE_STOP_AFTER_EMIT
                                 : ca->dump_ir ? COMPILE_STOP_AFTER_PASSES : COMPILE_STOP_AFTER_SEMA};
    CompileResult cr;
    if (!shortc_compile(&a, &d, &co, &cr)) {
        cli_bad_input(); /* the model's diagnostics are printed */
        goto done;
    }
    if (!want_cuda) { rc = 0; goto done; }
    if (!outputs_apart_from_sources(outs, 2, &d)) { rc = SHORTC_EXIT_USAGE; goto done; } /* the model and its imports */
    const EmitResult *er = &cr.emit;
    if (ca->check && check_cuda_source(&d, er->cu, er->cu_len, ca->output ? ca->output : "<emitted>") > 0) {
        cli_bad_input(); /* mapped to the .arch's lines */
        goto done;
    }
    const char *paths[2] = {ca->output, ca->plan_out}, *datas[2] = {er->cu, er->plan_json};
    const size_t lens[2] = {er->cu_len, er->plan_json ? strlen(er->plan_json) : 0};
    if (!write_outputs(paths, datas, lens)) goto done;
    if (!ca->output && !ca->plan_out && !ca->check)
        fprintf(stderr, "shortc: %s: %d kernels, %d launches, %d GEMMs per forward (use -o FILE to write the CUDA)\n",
                cr.spec->name, er->nkernels, er->nlaunches, er->ngemms);
    if (ca->time)
        fprintf(stderr, "shortc: parse+sema %.2f ms, lower %.2f ms, passes %.2f ms, emit %.2f ms, total %.2f ms\n",
                cr.ms_load, cr.ms_lower, cr.ms_passes, cr.ms_emit, cr.ms_load + cr.ms_lower + cr.ms_passes + cr.ms_emit);
    rc = 0;
done:
    compile_result_free(&cr);
    arena_free(&a);
    return rc;
}

static int parse_compile_args(int argc, char **argv, CompileArgs *ca) {
    memset(ca, 0, sizeof *ca);
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        bool has_next = i + 1 < argc;
        if (strcmp(s, "-o") == 0 && has_next) ca->output = argv[++i];
        else if (strcmp(s, "--model") == 0 && has_next) ca->model = argv[++i];
        else if (strcmp(s, "--plan-out") == 0 && has_next) ca->plan_out = argv[++i];
        else if (strcmp(s, "--dump-spec") == 0) ca->dump_spec = true;
        else if (strcmp(s, "--dump-ir") == 0) ca->dump_ir = "all";
        else if (strncmp(s, "--dump-ir=", 10) == 0) ca->dump_ir = s + 10;
        else if (strcmp(s, "--no-fuse") == 0) ca->no_fuse = true;
        else if (strcmp(s, "--check") == 0) ca->check = true;
        else if (strcmp(s, "--time") == 0) ca->time = true;
        else if (strcmp(s, "--force") == 0) fio_set_force(true);
        else if (s[0] == '-' && s[1] != '\0') {
            cli_unknown_option("compile", s);
            return -1;
        } else if (!ca->input) ca->input = resolve_model_name(ca->input_arg = s);
        else {
            fprintf(stderr, "shortc: error: more than one input file ('%s' and '%s')\n", ca->input, s);
            return -1;
        }
    }
    if (!ca->input) {
        fprintf(stderr, "shortc: error: no input file; see 'shortc --help'\n");
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* run                                                                 */
/* ------------------------------------------------------------------ */

/* RunArgs, OpenModel and the functions shared with cmd_eval.c: run_common.h */

/* "The quick brown fox jumps over the lazy dog." in GPT-2 token ids: the
 * prompt of `run` and `demo` without --tokens (ids are taken modulo the
 * model's vocabulary so that it fits any model). */
static const int32_t default_prompt[] = {464, 2068, 7586, 21831, 18045, 625, 262, 16931, 3290, 13};

/* A malloc'd copy of default_prompt; returns its length or -1. */
static int default_tokens(int32_t **out) {
    *out = malloc(sizeof default_prompt);
    if (!*out) return -1;
    memcpy(*out, default_prompt, sizeof default_prompt);
    return (int)(sizeof default_prompt / sizeof default_prompt[0]);
}

/* Largest token file read (whitespace-separated ids). */
#define TOKENS_FILE_MAX ((size_t)64 << 20)

/* The rest of a stream (a pipe, a FIFO, a terminal) read to its end, at most max bytes: malloc'd and
 * NUL-terminated, or NULL with *why set (fio_too_large past max). The buffer grows with what arrives and
 * never past max + 1 bytes. */
static char *read_stream_fd(int fd, size_t max, size_t *len, const char **why) {
    size_t cap = 0, n = 0;
    char *buf = NULL;
    for (;;) {
        if (n == cap) { /* full: grow, up to one byte past max (which tells a stream over max) */
            size_t want = cap ? 2 * cap : (size_t)1 << 16;
            if (want > max + 1) want = max + 1;
            if (n == want) return free(buf), *why = fio_too_large, NULL;
            char *nb = realloc(buf, want + 1);
            if (!nb) return free(buf), *why = "out of memory", NULL;
            buf = nb, cap = want;
        }
        ssize_t got = read(fd, buf + n, cap - n);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) return free(buf), *why = strerror(errno), NULL;
        if (got == 0) break;
        n += (size_t)got;
    }
    if (n > max) return free(buf), *why = fio_too_large, NULL;
    buf[n] = 0;
    if (len) *len = n;
    return buf;
}

/* A FIFO named as a streamed input: opened for reading (waiting for its writer, as a user naming a FIFO
 * expects) and read to its end. NULL with *why when it cannot be. */
static char *read_fifo(const char *path, size_t max, size_t *len, const char **why) {
    int fd = open(path, O_RDONLY | O_NOCTTY | O_CLOEXEC); /* /dev/fd/N of a shell's <(...) is a link */
    if (fd < 0) return *why = strerror(errno), NULL;
    struct stat st;
    char *text = fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode) ? read_stream_fd(fd, max, len, why)
                                                              : (*why = "not a regular file or FIFO", NULL);
    close(fd);
    return text;
}

char *read_text_file(const char *path, const char *what, size_t *len) {
    const char *why;
    struct stat st;
    char *text;
    if (strcmp(path, "-") == 0) text = read_stream_fd(STDIN_FILENO, TOKENS_FILE_MAX, len, &why);
    else if (stat(path, &st) == 0 && S_ISFIFO(st.st_mode)) text = read_fifo(path, TOKENS_FILE_MAX, len, &why);
    else text = fio_read_file(path, TOKENS_FILE_MAX, len, &why);
    if (!text) {
        fprintf(stderr, "shortc: error: cannot read %s '%s': %s\n", what, strcmp(path, "-") ? path : "(standard input)",
                why == fio_too_large ? "larger than 64 MiB" : why);
        cli_bad_input();
    }
    return text;
}

/* Token ids from a .npy of int32 or uint32 (any shape, read in C order). Returns count or -1 (message
 * printed). */
static int read_tokens_npy(const char *path, int32_t **out) {
    srt_context *ctx = NULL;
    if (srt_context_create(&ctx, NULL, NULL) != SRT_OK) {
        fprintf(stderr, "shortc: error: out of memory\n");
        return -1;
    }
    srt_dtype dt = (srt_dtype)-1;
    void *data = NULL;
    int64_t shape[8];
    int rank = 8, n = -1;
    srt_status st = srt_npy_read(ctx, path, &dt, &data, shape, &rank);
    int64_t count = 1;
    for (int i = 0; st == SRT_OK && i < rank; i++) count *= shape[i];
    if (st != SRT_OK) {
        print_lib_error(st, srt_last_error(ctx));
        if (strstr(srt_last_error(ctx), "'<i8'"))
            fprintf(stderr, "shortc: note: token ids are read as int32 or uint32: numpy's default int64 array "
                            "can be saved with .astype(numpy.int32)\n");
    } else if (dt == SRT_DTYPE_F32)
        fprintf(stderr, "shortc: error: %s: token ids must be integers (int32 or uint32), found float32\n", path);
    else if (count < 1 || count > INT_MAX)
        fprintf(stderr, "shortc: error: %s: %lld token ids (1 to %d are read)\n", path, (long long)count, INT_MAX);
    else if (!(*out = malloc(sizeof **out * (size_t)count))) fprintf(stderr, "shortc: error: out of memory\n");
    else {
        n = (int)count;
        for (int i = 0; i < n && n > 0; i++) {
            int64_t v = dt == SRT_DTYPE_I32 ? ((const int32_t *)data)[i] : (int64_t)((const uint32_t *)data)[i];
            if (v < 0 || v > INT32_MAX) {
                fprintf(stderr, "shortc: error: %s: token %d (%lld) is not a token id\n", path, i + 1, (long long)v);
                free(*out);
                n = -1;
            } else (*out)[i] = (int32_t)v;
        }
    }
    if (n < 0) cli_bad_input();
    srt_free(ctx, data);
    srt_context_destroy(ctx);
    return n;
}

/* Reads token ids: whitespace-separated text ('-': stdin, a FIFO: read as it comes), or a .npy. Returns
 * count or -1 (message printed). */
static int read_tokens(const char *path, int32_t **out) {
    if (ends_with(path, ".npy")) return read_tokens_npy(path, out);
    size_t len = 0;
    char *text = read_text_file(path, "tokens", &len);
    if (!text) return -1;
    int n = parse_tokens(strcmp(path, "-") ? path : "(standard input)", text, len, out);
    if (n < 0) cli_bad_input();
    free(text);
    return n;
}

/* The inputs of ra that name standard input ('-'): at most one may (refused otherwise), and never a
 * file that is read by seeking (weights, tokenizer, model). */
static bool stdin_once(const RunArgs *ra) {
    const char *const streams[] = {ra->tokens, ra->text, ra->prompts_file};
    int n = 0;
    for (int i = 0; i < 3; i++) n += streams[i] && strcmp(streams[i], "-") == 0;
    return n <= 1;
}


static int parse_backend(const char *s, srt_backend *b) {
    if (!s || strcmp(s, "auto") == 0) *b = SRT_BACKEND_AUTO;
    else if (strcmp(s, "ref") == 0) *b = SRT_BACKEND_REF;
    else if (strcmp(s, "sim") == 0) *b = SRT_BACKEND_SIM;
    else if (strcmp(s, "cuda") == 0) *b = SRT_BACKEND_CUDA;
    else {
        fprintf(stderr, "shortc: error: unknown backend '%s' (expected ref, sim, cuda or auto)\n", s);
        return -1;
    }
    return 0;
}

/* Prints the K most likely next tokens after the last position. */
static void print_top(const float *row, int vocab, int k) {
    if (k > vocab) k = vocab;
    int *best = malloc(sizeof *best * (size_t)k);
    if (!best) return;
    for (int j = 0; j < k; j++) best[j] = -1;
    for (int v = 0; v < vocab; v++) {
        for (int j = 0; j < k; j++) {
            if (best[j] < 0 || row[v] > row[best[j]]) {
                memmove(best + j + 1, best + j, sizeof *best * (size_t)(k - j - 1));
                best[j] = v;
                break;
            }
        }
    }
    printf("top %d next tokens:", k);
    for (int j = 0; j < k; j++) printf(" %d (%.4f)", best[j], row[best[j]]);
    printf("\n");
    free(best);
}

/* The state a session of m keeps, one line per tensor (srt_model_state_get). */
static void print_state(const srt_model *m) {
    int n = srt_model_state_count(m);
    for (int i = 0; i < n; i++) {
        srt_state_info si;
        if (srt_model_state_get(m, i, &si) != SRT_OK) continue;
        printf("    state %-8s %-10s %-4s %6d rows %10zu bytes%s\n", si.name, si.role, si.dtype, si.capacity, si.bytes,
               si.keep >= 0 ? " (sliding)" : "");
    }
}

static void print_report(const srt_model *m, const srt_model_info *mi, int ntokens, double fwd_ms) {
    printf("model %s on backend %s\n", mi->name, srt_backend_name(mi->backend));
    printf("  kernels %d (launches %d, GEMMs %d per forward)\n", mi->nkernels, mi->nlaunches, mi->ngemms);
    printf("  weights %.2f MiB, activations %.2f MiB, state %.2f MiB\n", (double)mi->weight_bytes / 1048576.0,
           (double)mi->activation_bytes / 1048576.0, (double)mi->state_bytes / 1048576.0);
    print_state(m);
    if (mi->derived_bytes > 0) /* the load program's tables: once per model, not per session */
        printf("  derived %.2f MiB (computed once per weights load, shared by every session; computed %d time%s)\n",
               (double)mi->derived_bytes / 1048576.0, mi->load_runs, mi->load_runs == 1 ? "" : "s");
    if (mi->backend != SRT_BACKEND_REF)
        printf("  kernel compile %.1f ms%s\n", mi->compile_ms, mi->cache_hit ? " (cache hit)" : "");
    printf("  forward over %d tokens: %.1f ms\n", ntokens, fwd_ms);
    if (mi->recurrent) /* docs/attention/recurrence.md */
        printf("  continuing calls: one window each (positions restart), h_prev of %d values carried; windows "
               "overlap %d\n", mi->d_model, mi->overlap);
    else if (mi->memories) /* Transformer-XL: bounded memories, positions accumulate */
        printf("  continuing calls: per-layer memories of earlier layer inputs (any length, up to %d positions)\n",
               mi->max_positions);
    else if (mi->carries_state) /* a PIA cache: max_positions is the cache and one segment */
        printf("  continuing calls: KV cache keeping the last %d tokens (any length)\n", mi->max_positions - mi->segment);
    else
        printf("  continuing calls: %s (up to %d positions)\n",
               mi->kv_cache ? "KV cache" : "re-run the sequence so far", mi->max_positions);
}

/* false (message printed, nothing written) when a logit is NaN or infinite: finite weights gave
 * an overflow, which a user asking for logits would otherwise only find downstream. */
bool logits_finite(const float *logits, int64_t first_row, int nrows, int vocab) {
    for (size_t i = 0; i < (size_t)nrows * (size_t)vocab; i++)
        if (!isfinite(logits[i])) {
            fprintf(stderr,
                    "shortc: error: the logits hold %s at token %lld, index %zu (an overflow in the forward pass); "
                    "nothing written (--allow-nonfinite-weights accepts it)\n",
                    isnan(logits[i]) ? "NaN" : logits[i] > 0 ? "+Inf" : "-Inf",
                    (long long)first_row + (long long)(i / (size_t)vocab), i % (size_t)vocab);
            return false;
        }
    return true;
}

/* Prints a runtime error. A compile error of an .arch already has the compiler's own
 * "file:line:col: error:" lines, which stay first (no "shortc: error:" in front). */
void print_lib_error(srt_status st, const char *msg) {
    if (st == SRT_ERR_INVALID || st == SRT_ERR_IO || st == SRT_ERR_FORMAT || st == SRT_ERR_WEIGHTS) cli_bad_input();
    const char *nl = strchr(msg, '\n');
    size_t first = nl ? (size_t)(nl - msg) : strlen(msg);
    const char *tag = strstr(msg, ": error: ");
    size_t len = strlen(msg);
    if (st == SRT_ERR_FORMAT && tag && (size_t)(tag - msg) < first)
        fprintf(stderr, "%s%s", msg, len && msg[len - 1] == '\n' ? "" : "\n");
    else fprintf(stderr, "shortc: error: %s\n", msg);
}

void close_model(OpenModel *om) {
    srt_session_destroy(om->s);
    srt_model_close(om->m);
    srt_context_destroy(om->ctx);
    memset(om, 0, sizeof *om);
}

/* run, eval: whether --tokenizer's ids fit the model's vocabulary (checked before anything runs, as
 * generate's output tokenizer is); prints the error. */
static bool tokenizer_fits_model(const RunArgs *ra, const OpenModel *om) {
    srt_tokenizer *t = cli_tokenizer_open(om->ctx, ra->tokenizer);
    int tv = t ? srt_tokenizer_vocab_size(t) : 0;
    srt_tokenizer_close(t);
    if (t && tv > om->mi.vocab)
        fprintf(stderr, "shortc: error: tokenizer '%s' has %d ids, more than the vocabulary of %d of model '%s': "
                        "its ids would not fit the model\n", ra->tokenizer, tv, om->mi.vocab, om->mi.name);
    if (!t || tv > om->mi.vocab) cli_bad_input();
    return t && tv <= om->mi.vocab;
}

/* Opens ra's model on its backend with its weights and a session; prints the error and returns false
 * (with nothing left open) on failure. */
bool open_model(const RunArgs *ra, OpenModel *om) {
    memset(om, 0, sizeof *om);
    srt_options opt;
    srt_options_init(&opt);
    if (parse_backend(ra->backend, &opt.backend) < 0) return false;
    opt.model_name = ra->model_name;
    opt.sim_threads = ra->sim_threads;
    opt.allow_nonfinite_weights = ra->allow_nonfinite;
    opt.allow_unused_weights = ra->allow_unused;
    srt_status st = srt_context_create(&om->ctx, NULL, NULL);
    if (st != SRT_OK) {
        fprintf(stderr, "shortc: error: cannot create runtime context (%s)\n", srt_status_name(st));
        return false;
    }
    if ((st = srt_model_open(om->ctx, ra->model_path, &opt, &om->m)) == SRT_OK &&
        (st = ra->weights ? srt_model_load_weights(om->m, ra->weights)
                          : srt_model_random_weights(om->m, (uint64_t)ra->seed)) == SRT_OK &&
        (st = srt_model_get_info(om->m, &om->mi)) == SRT_OK &&
        (st = srt_session_create(om->m, 1, &om->s)) == SRT_OK && ra->mem_zeros)
        st = srt_session_set_mem_init(om->s, SRT_MEM_INIT_ZEROS);
    if (st != SRT_OK) {
        print_lib_error(st, srt_last_error(om->ctx));
        close_model(om);
        return false;
    }
    if (ra->save_weights && (st = srt_model_save_random_weights(om->m, (uint64_t)ra->seed, ra->save_weights)) != SRT_OK) {
        print_lib_error(st, srt_last_error(om->ctx));
        close_model(om);
        return false;
    }
    if (ra->tokenizer && ra->max_new < 0 && !tokenizer_fits_model(ra, om)) { /* generate: open_output_tokenizer */
        close_model(om);
        return false;
    }
    if (om->mi.cache_note && *om->mi.cache_note) fprintf(stderr, "shortc: warning: %s\n", om->mi.cache_note);
    if (om->mi.recurrent && ra->max_new >= 0) { /* generate: each one-token forward would be a window of its own */
        fprintf(stderr, "shortc: error: model '%s' is recurrent (windows passing h_prev): generate cannot run it yet\n",
                om->mi.name);
        close_model(om);
        return false;
    }
    return true;
}

/*
 * Where `run` puts its logits as the segments are computed, so that it holds O(segment x vocab) floats,
 * never n x vocab: each batch of rows is checked to be finite (unless --allow-nonfinite-weights) and
 * appended to the --logits file, whose .npy header with the final shape [n, vocab] went first; the
 * file is a temporary one renamed into place only when every row was written (fileio.h). --top keeps
 * the last row.
 */
typedef struct LogitsSink {
    FioOut out;         /* the --logits file being written (open: path != NULL and not stdout) */
    bool to_stdout;     /* --logits -: the rows go to stdout as they come */
    const char *path;   /* --logits, or NULL: no file at all */
    int vocab;          /* row width */
    bool check;         /* refuse non-finite rows */
    bool failed;        /* a row batch was refused or not written (message printed) */
    float *last;        /* the last row so far (vocab floats) for --top, or NULL */
    double ms;          /* milliseconds spent checking and writing (not the forward's) */
} LogitsSink;

/* Opens the sink of run_model: the header of [n, vocab] written to ra->logits, a row for --top. Prints
 * the error and returns false (no file open; k->last is freed by the caller either way). */
static bool sink_open(LogitsSink *k, const RunArgs *ra, srt_context *ctx, int n, int vocab) {
    *k = (LogitsSink){.vocab = vocab, .check = !ra->allow_nonfinite};
    if (ra->top > 0 && !(k->last = malloc(sizeof *k->last * (size_t)vocab))) {
        fprintf(stderr, "shortc: error: out of memory\n");
        return false;
    }
    if (!ra->logits) return true;
    int64_t shape[2] = {n, vocab};
    void *header = NULL;
    size_t len = 0;
    const char *why = NULL;
    srt_status st = srt_npy_encode_header(ctx, SRT_DTYPE_F32, shape, 2, &header, &len);
    k->to_stdout = strcmp(ra->logits, "-") == 0;
    if (st != SRT_OK) print_lib_error(st, srt_last_error(ctx));
    else if (k->to_stdout) {
        k->path = "(standard output)";
        if (fwrite(header, 1, len, stdout) != len) k->failed = true;
    } else if (!fio_out_open(&k->out, ra->logits, &why))
        fprintf(stderr, "shortc: error: cannot write '%s': %s\n", ra->logits, why);
    else {
        k->path = ra->logits;
        fio_out_write(&k->out, header, len);
    }
    srt_free(ctx, header);
    return k->path != NULL;
}

/* srt_rows_fn of the sink: rows first_row.. checked, written, the last one kept. */
static srt_status sink_rows(void *ud, int64_t first_row, int nrows, const float *logits) {
    LogitsSink *k = ud;
    double t0 = now_ms();
    if (k->check && !logits_finite(logits, first_row, nrows, k->vocab)) k->failed = true;
    else if (k->path && k->to_stdout) {
        size_t count = (size_t)nrows * (size_t)k->vocab;
        if (fwrite(logits, sizeof *logits, count, stdout) != count) {
            fprintf(stderr, "shortc: error: cannot write the logits to standard output: %s\n", strerror(errno));
            k->failed = true;
        }
    } else if (k->path) {
        fio_out_write(&k->out, logits, sizeof *logits * (size_t)nrows * (size_t)k->vocab);
        if (k->out.err) {
            fprintf(stderr, "shortc: error: cannot write '%s': %s\n", k->path, strerror(k->out.err));
            k->failed = true;
        }
    }
    if (!k->failed && k->last && nrows > 0)
        memcpy(k->last, logits + (size_t)(nrows - 1) * (size_t)k->vocab, sizeof *k->last * (size_t)k->vocab);
    k->ms += now_ms() - t0;
    return k->failed ? SRT_ERR_INVALID : SRT_OK;
}

/* Finishes the sink's file: renamed into place when ok, else removed (the target untouched). Prints
 * the error and returns false when it cannot be finished. The last row stays (free it). */
static bool sink_close(LogitsSink *k, bool ok) {
    const char *why = NULL;
    if (k->path && k->to_stdout) { /* what was written stays written: a reader sees a short file */
        if (fflush(stdout) != 0 && ok) {
            fprintf(stderr, "shortc: error: cannot write the logits to standard output: %s\n", strerror(errno));
            ok = false;
        }
    } else if (k->path && !ok) fio_out_abort(&k->out);
    else if (k->path && !fio_out_commit(&k->out, &why)) {
        fprintf(stderr, "shortc: error: cannot write '%s': %s\n", k->path, why);
        ok = false;
    }
    k->path = NULL;
    return ok;
}

/*
 * The logits of tokens[n] (rows n x vocab) into the sink, a segment at a time: consecutive segments
 * of L tokens (the model's segment), the session reset before each (nonoverlapping evaluation) unless
 * the model carries its state across segments (a PIA cache, memories: reset once, as mode cached);
 * within a segment, calls of `chunk` tokens through the state (0: the whole segment in one call).
 * Prints the error and returns false.
 */
static bool forward_segments(OpenModel *om, const int32_t *tokens, int n, int chunk, LogitsSink *sink,
                             srt_progress_fn progress, void *progress_ud) {
    int L = om->mi.segment, V = om->mi.vocab;
    float *rows = malloc(sizeof *rows * (size_t)L * (size_t)V);
    if (!rows) {
        fprintf(stderr, "shortc: error: out of memory\n");
        return false;
    }
    srt_status st = SRT_OK;
    for (int seg = 0; seg < n && st == SRT_OK; seg += L) {
        int len = n - seg < L ? n - seg : L;
        if (seg == 0 || !om->mi.carries_state) st = srt_session_reset(om->s);
        for (int at = 0; at < len && st == SRT_OK;) {
            int k = chunk > 0 && chunk < len - at ? chunk : len - at;
            st = srt_forward(om->s, tokens + seg + at, k, rows + (size_t)at * (size_t)V);
            at += k;
        }
        if (st == SRT_OK) st = sink_rows(sink, seg, len, rows);
        if (st == SRT_OK && progress) progress(progress_ud, seg + len, n);
    }
    if (st != SRT_OK && !sink->failed) print_lib_error(st, srt_last_error(om->ctx));
    free(rows);
    return st == SRT_OK;
}

/*
 * Every input token is an id of the model's vocabulary; an error names the
 * token's index in the whole input (a file spans several windows or
 * segments, whose calls would count from their own start).
 */
bool tokens_in_vocab(const RunArgs *ra, const int32_t *tokens, int ntokens, const srt_model_info *mi) {
    const char *src = ra->tokens ? ra->tokens : ra->text ? ra->text : "the prompt";
    for (int i = 0; i < ntokens; i++)
        if (tokens[i] < 0 || tokens[i] >= mi->vocab) {
            fprintf(stderr, "shortc: error: %s: token %d at index %d is outside the vocabulary [0, %d) of model '%s'\n",
                    src, (int)tokens[i], i, mi->vocab, mi->name);
            cli_bad_input();
            return false;
        }
    return true;
}

static int run_model(const RunArgs *ra, int32_t *tokens, int ntokens) {
    OpenModel om;
    if (!open_model(ra, &om)) return 1;
    const srt_model_info *mi = &om.mi;
    LogitsSink sink = {.path = NULL};
    int rc = 1;
    if (ra->fold_tokens)
        for (int i = 0; i < ntokens; i++) tokens[i] %= mi->vocab;
    if (!tokens_in_vocab(ra, tokens, ntokens, mi)) goto out;
    srt_eval_options eo;
    if (mi->recurrent && ra->chunk) {
        fprintf(stderr, "shortc: error: --chunk cannot split the windows of recurrent model '%s' (each call is a "
                        "window)\n", mi->name);
        goto out;
    }
    bool by_mode = args_name_mode(ra) || mi->recurrent || (mi->carries_state && !ra->chunk);
    if (by_mode && !eval_options_from_args(ra, &eo)) goto out;
    if (!sink_open(&sink, ra, om.ctx, ntokens, mi->vocab)) goto out;
    Progress pr;
    srt_progress_fn progress;
    void *progress_ud;
    progress_attach(ra, "run", &pr, &progress, &progress_ud);
    double t0 = now_ms();
    /* a named mode, or the model's own (cached, windows): its rows through the runtime (srt_eval_logits_stream) */
    if (by_mode) {
        model_mode_defaults(ra, mi, &eo);
        eo.progress = progress, eo.progress_ud = progress_ud;
        srt_status st = srt_eval_logits_stream(om.s, &eo, tokens, ntokens, sink_rows, &sink);
        if (st != SRT_OK) {
            if (!sink.failed) print_lib_error(st, srt_last_error(om.ctx));
            goto out;
        }
    } else if (!forward_segments(&om, tokens, ntokens, ra->chunk, &sink, progress, progress_ud)) goto out;
    double fwd_ms = now_ms() - t0 - sink.ms;
    if (!sink_close(&sink, true)) goto out;
    if (ra->report) print_report(om.m, mi, ntokens, fwd_ms);
    if (ra->top > 0) print_top(sink.last, mi->vocab, ra->top);
    rc = 0;
out:
    sink_close(&sink, false); /* after an error: the temporary file removed */
    free(sink.last);
    close_model(&om);
    return rc;
}

/* Parses a number flag value lo..hi (decimal). Prints the error. */
static bool parse_flag_double(const char *flag, const char *s, double lo, double hi, double *out) {
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end || errno || !(v >= lo && v <= hi)) {
        fprintf(stderr, "shortc: error: %s needs a number between %g and %g, found '%s'\n", flag, lo, hi, s);
        return false;
    }
    *out = v;
    return true;
}

/* Another --prompt of generate (each one a sequence of the batch); prints the error past the most. */
static bool add_prompt(RunArgs *ra, const char *text) {
    if (ra->nprompts == GEN_MAX_PROMPTS) {
        fprintf(stderr, "shortc: error: generate takes at most %d prompts\n", GEN_MAX_PROMPTS);
        return false;
    }
    if (!ra->prompt) ra->prompt = text;
    ra->prompts[ra->nprompts++] = text;
    return true;
}

/* --mem-init empty|zeros (Transformer-XL memories: none, or HF TransfoXL's zero rows). Prints the error. */
static bool parse_mem_init(const char *val, bool *zeros) {
    if (strcmp(val, "empty") != 0 && strcmp(val, "zeros") != 0) {
        fprintf(stderr, "shortc: error: --mem-init takes 'empty' (the default) or 'zeros' (HF TransfoXL), found '%s'\n",
                val);
        return false;
    }
    *zeros = strcmp(val, "zeros") == 0;
    return true;
}

/* One flag of run, generate or eval with its value at argv[*i + 1] when it takes one: 1 parsed, 0 not
 * this command's flag, -1 a bad value (message printed). */
static int parse_run_flag(char **argv, int argc, int *i, RunCmd cmd, RunArgs *ra) {
    const char *s = argv[*i];
    if (*i + 1 >= argc) return 0;
    const char *val = argv[*i + 1];
    bool run = cmd == RUN_CMD_RUN, gen = cmd == RUN_CMD_GENERATE, modes = cmd != RUN_CMD_GENERATE;
    long long v;
    bool ok = true;
    if (strcmp(s, "--backend") == 0) ra->backend = val;
    else if (strcmp(s, "--model") == 0) ra->model_name = val;
    else if (strcmp(s, "--weights") == 0) ra->weights = val;
    else if (strcmp(s, "--random-weights") == 0) ok = parse_flag_int(s, val, 0, LLONG_MAX, &ra->seed);
    else if (strcmp(s, "--tokens") == 0) ra->tokens = val;
    else if (strcmp(s, "--text") == 0) ra->text = val;
    else if (strcmp(s, "--tokenizer") == 0) ra->tokenizer = val;
    else if (gen && strcmp(s, "--prompt") == 0) ok = add_prompt(ra, val);
    else if (gen && strcmp(s, "--prompts") == 0) ra->prompts_file = val;
    else if (run && strcmp(s, "--logits") == 0) ra->logits = val;
    else if (modes && strcmp(s, "--mode") == 0) ra->mode = val;
    else if (modes && strcmp(s, "--stride") == 0 && (ok = parse_flag_int(s, val, 1, INT_MAX, &v))) ra->stride = (int)v;
    else if (modes && strcmp(s, "--overlap") == 0 && (ok = parse_flag_int(s, val, 0, INT_MAX, &v))) ra->overlap = (int)v;
    else if (run && strcmp(s, "--top") == 0 && (ok = parse_flag_int(s, val, 0, INT_MAX, &v))) ra->top = (int)v;
    else if (run && strcmp(s, "--chunk") == 0 && (ok = parse_flag_int(s, val, 1, INT_MAX, &v))) ra->chunk = (int)v;
    else if (gen && strcmp(s, "--max-new") == 0 && (ok = parse_flag_int(s, val, 0, INT_MAX, &v))) ra->max_new = (int)v;
    else if (gen && strcmp(s, "--temperature") == 0) ok = parse_flag_double(s, val, 0, 1e6, &ra->temperature);
    else if (gen && strcmp(s, "--top-k") == 0 && (ok = parse_flag_int(s, val, 0, INT_MAX, &v))) ra->top_k = (int)v;
    else if (gen && strcmp(s, "--top-p") == 0) ok = parse_flag_double(s, val, 1e-9, 1, &ra->top_p);
    else if (gen && strcmp(s, "--seed") == 0) ok = parse_flag_int(s, val, 0, LLONG_MAX, &ra->sample_seed);
    else if (gen && strcmp(s, "--eos") == 0) ok = parse_flag_int(s, val, 0, INT32_MAX, &ra->eos);
    else if (strcmp(s, "--sim-threads") == 0 && (ok = parse_flag_int(s, val, 0, 4096, &v))) ra->sim_threads = (int)v;
    else if (strcmp(s, "--mem-init") == 0) ok = parse_mem_init(val, &ra->mem_zeros);
    else if (strcmp(s, "--save-weights") == 0) ra->save_weights = val;
    else if (ok) return 0;
    if (!ok) return -1;
    (*i)++;
    return 1;
}

/* The checks across flags of parse_run_args; prints the error and returns false. */
static bool run_args_consistent(RunCmd cmd, RunArgs *ra) {
    const char *name = cmd == RUN_CMD_GENERATE ? "generate" : cmd == RUN_CMD_EVAL ? "eval" : "run";
    const char *err = NULL;
    int inputs = !!ra->tokens + !!ra->text + !!ra->prompt + !!ra->prompts_file;
    if (!ra->model_path) {
        fprintf(stderr, "shortc: error: %s needs a model (.arch or .cu); see 'shortc help %s'\n", name, name);
        return false;
    }
    if (!model_found(ra->model_path, ra->model_arg)) {
        cli_bad_input();
        return false;
    }
    if (ra->weights && ra->seed >= 0) {
        fprintf(stderr, "shortc: error: --weights and --random-weights are exclusive\n");
        return false;
    }
    if (!ra->weights && ra->seed < 0) err = "needs --weights FILE or --random-weights SEED";
    else if (ra->save_weights && ra->seed < 0) err = "takes --save-weights only with --random-weights SEED";
    else if (ra->quiet && ra->progress) err = "takes --quiet or --progress, not both";
    else if (!stdin_once(ra)) err = "reads standard input ('-') for one input only";
    else if (ra->weights && strcmp(ra->weights, "-") == 0)
        err = "cannot read --weights from standard input: the reader needs a regular file (it seeks)";
    else if (ra->tokenizer && strcmp(ra->tokenizer, "-") == 0)
        err = "cannot read --tokenizer from standard input: it needs a regular file or directory";
    else if (strcmp(ra->model_path, "-") == 0)
        err = "cannot read the model from standard input: it needs a regular file (imports are found beside it)";
    else if (ra->logits && strcmp(ra->logits, "-") == 0 && (ra->top || ra->report))
        err = "writes the logits to stdout with --logits -, so takes no --top or --report (they print there too)";
    else if (inputs > 1)
        err = cmd == RUN_CMD_GENERATE ? "takes one of --tokens, --text, --prompt (repeated for a batch) and --prompts"
                                      : "takes --tokens or --text, not both";
    else if ((ra->text || ra->prompt) && !ra->tokenizer) err = "needs --tokenizer with --text or --prompt";
    else if (cmd == RUN_CMD_GENERATE && (!inputs || ra->max_new < 0)) err = "needs --tokens PROMPT and --max-new N";
    else if (cmd == RUN_CMD_EVAL && !inputs) err = "needs --tokens FILE or --text FILE";
    else if (ra->chunk && (ra->mode || ra->stride || ra->overlap >= 0)) err = "takes --chunk only without --mode";
    if (err) {
        fprintf(stderr, "shortc: error: %s %s\n", name, err);
        return false;
    }
    return true;
}

bool parse_run_args(int argc, char **argv, RunCmd cmd, RunArgs *ra) {
    for (int i = 2; i < argc; i++) {
        const char *s = argv[i];
        int r = parse_run_flag(argv, argc, &i, cmd, ra);
        if (r < 0) return false;
        if (r > 0) continue;
        if (strcmp(s, "--report") == 0) ra->report = true;
        else if (strcmp(s, "--allow-nonfinite-weights") == 0) ra->allow_nonfinite = true;
        else if (strcmp(s, "--allow-unused") == 0) ra->allow_unused = true;
        else if (cmd != RUN_CMD_RUN && strcmp(s, "--json") == 0) ra->json = true;
        else if (cmd == RUN_CMD_RUN && strcmp(s, "--force") == 0) fio_set_force(true);
        else if (strcmp(s, "--quiet") == 0) ra->quiet = true;
        else if (strcmp(s, "--special-as-text") == 0) ra->special_as_text = true;
        else if (strcmp(s, "--progress") == 0) ra->progress = true;
        else if (s[0] == '-' && s[1]) {
            cli_unknown_option(cmd == RUN_CMD_GENERATE ? "generate" : cmd == RUN_CMD_EVAL ? "eval" : "run", s);
            return false;
        } else if (!ra->model_path) ra->model_path = resolve_model_name(ra->model_arg = s);
        else {
            fprintf(stderr, "shortc: error: more than one model ('%s' and '%s')\n", ra->model_path, s);
            return false;
        }
    }
    return run_args_consistent(cmd, ra);
}

int load_run_tokens(const RunArgs *ra, int32_t **out) {
    if (ra->tokens) return read_tokens(ra->tokens, out);
    unsigned flags = ra->special_as_text ? SRT_ENCODE_SPECIAL_AS_TEXT : 0;
    const char *what = ra->prompt ? "the prompt" : ra->text;
    int n;
    if (ra->prompt) n = cli_encode(ra->tokenizer, flags, what, ra->prompt, strlen(ra->prompt), out);
    else {
        size_t len = 0;
        char *text = read_text_file(ra->text, "text", &len);
        if (!text) return -1;
        n = cli_encode(ra->tokenizer, flags, what, text, len, out);
        free(text);
    }
    if (n == 0 && !ra->allow_empty) {
        fprintf(stderr, "shortc: error: %s: no tokens (the text is empty)\n", what);
        free(*out);
        *out = NULL;
        return -1;
    }
    return n;
}

bool run_outputs_apart(const RunArgs *ra, const char *const *outs, int nouts) {
    const char *const ins[] = {ra->weights, ra->tokens, ra->text, ra->tokenizer};
    return outputs_apart(outs, nouts, ins, 4) && outputs_apart_from_model(outs, nouts, ra->model_path, ra->model_name);
}

static int run_main(int argc, char **argv) {
    RunArgs ra = RUN_ARGS_INIT;
    if (!parse_run_args(argc, argv, RUN_CMD_RUN, &ra)) return cli_usage_failure();
    const char *const outs[] = {ra.logits, ra.save_weights};
    if (!run_outputs_apart(&ra, outs, 2)) return SHORTC_EXIT_USAGE;
    int32_t *tokens = NULL;
    int n;
    if (ra.tokens || ra.text) {
        n = load_run_tokens(&ra, &tokens);
        if (n < 0) return 1;
    } else {
        if ((n = default_tokens(&tokens)) < 0) return 1;
        ra.fold_tokens = true;
    }
    int rc = run_model(&ra, tokens, n);
    free(tokens);
    return rc;
}

/* ------------------------------------------------------------------ */
/* cmp                                                                 */
/* ------------------------------------------------------------------ */

static int cmp_main(int argc, char **argv) {
    const char *a_path = NULL, *b_path = NULL;
    double atol = 1e-4, rtol = 0.0;
    for (int i = 2; i < argc; i++) {
        if ((strcmp(argv[i], "--atol") == 0 || strcmp(argv[i], "--rtol") == 0) && i + 1 < argc) {
            char *end;
            double v = strtod(argv[i + 1], &end);
            if (end == argv[i + 1] || *end || !(v >= 0) || isinf(v)) {
                fprintf(stderr, "shortc: error: %s needs a non-negative number, found '%s'\n", argv[i], argv[i + 1]);
                return SHORTC_EXIT_USAGE;
            }
            *(argv[i][2] == 'a' ? &atol : &rtol) = v;
            i++;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            cli_unknown_option("cmp", argv[i]);
            return SHORTC_EXIT_USAGE;
        } else if (!a_path) a_path = argv[i];
        else if (!b_path) b_path = argv[i];
        else {
            fprintf(stderr, "shortc: error: cmp takes two .npy files\n");
            return SHORTC_EXIT_USAGE;
        }
    }
    if (!a_path || !b_path) {
        fprintf(stderr, "shortc: error: cmp takes two .npy files; see 'shortc help cmp'\n");
        return SHORTC_EXIT_USAGE;
    }
    srt_context *ctx = NULL;
    if (srt_context_create(&ctx, NULL, NULL) != SRT_OK) return SHORTC_EXIT_FAILURE;
    float *a = NULL, *b = NULL;
    int64_t sa[8], sb[8];
    int ra = 8, rb = 8, rc = SHORTC_EXIT_INPUT;
    if (srt_npy_read_f32(ctx, a_path, &a, sa, &ra) != SRT_OK ||
        srt_npy_read_f32(ctx, b_path, &b, sb, &rb) != SRT_OK) {
        fprintf(stderr, "shortc: error: %s\n", srt_last_error(ctx));
        goto out;
    }
    rc = SHORTC_EXIT_FAILURE; /* from here on: the arrays differ */
    if (ra != rb || memcmp(sa, sb, sizeof *sa * (size_t)ra) != 0) {
        fprintf(stderr, "shortc: error: shapes differ: %s has rank %d, %s has rank %d or other sizes\n", a_path, ra,
                b_path, rb);
        goto out;
    }
    size_t n = 1;
    for (int i = 0; i < ra; i++) n *= (size_t)sa[i];
    double max_abs = 0, max_excess = -INFINITY;
    size_t worst = 0, bad = 0;
    for (size_t i = 0; i < n; i++) {
        double diff = fabs((double)a[i] - (double)b[i]);
        double allowed = atol + rtol * fabs((double)b[i]);
        if (!(diff <= allowed)) bad++;  /* NaN counts as bad */
        if (diff > max_abs || isnan(diff)) max_abs = isnan(diff) ? INFINITY : diff;
        if (diff - allowed > max_excess) { max_excess = diff - allowed; worst = i; }
    }
    printf("%zu elements, max abs diff %.3g, %zu over tolerance (atol %.3g, rtol %.3g)\n", n, max_abs, bad, atol,
           rtol);
    if (bad) printf("worst at flat index %zu: %.9g vs %.9g\n", worst, (double)a[worst], (double)b[worst]);
    rc = bad ? 1 : 0;
out:
    srt_free(ctx, a);
    srt_free(ctx, b);
    srt_context_destroy(ctx);
    return rc;
}

/* ------------------------------------------------------------------ */
/* demo: the README's main job                                          */
/* ------------------------------------------------------------------ */

static int demo_main(int argc, char **argv) {
    /* the installed models (PREFIX/share/shortc/models), else the source tree's from its root */
    char installed[4096];
    const char *model = shortc_data_path("models/gpt2_small.arch", installed, sizeof installed)
                            ? installed
                            : "models/gpt2_small.arch";
    const char *backend = "ref";
    const char *tokens = NULL;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--backend") == 0 && i + 1 < argc) backend = argv[++i];
        else if (strcmp(argv[i], "--tokens") == 0 && i + 1 < argc) tokens = argv[++i];
        else if (argv[i][0] != '-') model = resolve_model_name(argv[i]);
        else {
            cli_unknown_option("demo", argv[i]);
            return SHORTC_EXIT_USAGE;
        }
    }
    /* 1. compile to CUDA */
    Arena a;
    arena_init(&a);
    Diag d;
    diag_init(&d, &a, stderr);
    int rc = 1;
    double t0 = now_ms();
    CompileOptions co = {.path = model};
    CompileResult cr;
    if (!shortc_compile(&a, &d, &co, &cr)) {
        cli_bad_input();
        goto out;
    }
    double t1 = now_ms();
    const ModelSpec *spec = cr.spec;
    const Graph *g = cr.graph;
    const EmitResult er = cr.emit;
    printf("== shortc demo: %s ==\n", model);
    printf("compiled %s to CUDA in %.2f ms: %d kernels (%d launches, %d GEMMs per forward), %zu bytes of source\n",
           spec->name, t1 - t0, er.nkernels, er.nlaunches, er.ngemms, er.cu_len);
    printf("activation arena %.2f MiB (%.2f MiB without buffer reuse); per-session state in the report below\n",
           (double)g->arena_bytes / 1048576.0, (double)g->naive_bytes / 1048576.0);
    /* 2. NVRTC for sm_80 */
    srt_context *ctx = NULL;
    if (srt_context_create(&ctx, NULL, NULL) != SRT_OK) goto out;
    srt_compile_info ci;
    srt_status st = srt_nvrtc_compile(ctx, er.cu, er.cu_len, 80, &ci);
    if (st != SRT_OK) {
        fprintf(stderr, "shortc: error: %s\n", srt_last_error(ctx));
        srt_context_destroy(ctx);
        goto out;
    }
    printf("NVRTC sm_80: %.1f ms%s, cubin %zu bytes\n", ci.compile_ms, ci.cache_hit ? " (kernel cache hit)" : "",
           ci.image_bytes);
    srt_context_destroy(ctx);
    /* 3. run the reference backend with seeded weights */
    printf("running on backend '%s' with --random-weights 1\n", backend);
    fflush(stdout);
    RunArgs ra = RUN_ARGS_INIT;
    ra.model_path = model, ra.seed = 1, ra.backend = backend, ra.top = 5, ra.report = true;
    int32_t *toks = NULL;
    int n;
    if (tokens) {
        n = read_tokens(tokens, &toks);
        if (n < 0) goto out;
    } else {
        if ((n = default_tokens(&toks)) < 0) goto out;
        printf("prompt token ids:");
        for (int i = 0; i < n; i++) printf(" %d", toks[i] %= spec->vocab);
        printf("\n");
    }
    rc = run_model(&ra, toks, n);
    free(toks);
out:
    compile_result_free(&cr);
    arena_free(&a);
    return rc;
}

/* The subcommands and their entry points (the default command, compile, is not among them). */
typedef struct Subcommand {
    const char *name;                   /* argv[1] */
    int (*main)(int argc, char **argv); /* its entry point; returns an exit code (usage.h) */
} Subcommand;

static int compile_cmd_main(int argc, char **argv) {
    CompileArgs ca;
    if (parse_compile_args(argc, argv, &ca) < 0) return SHORTC_EXIT_USAGE;
    if (!model_found(ca.input, ca.input_arg)) return SHORTC_EXIT_INPUT;
    return compile_main(&ca);
}

static const Subcommand subcommands[] = {
    {"run", run_main}, {"generate", generate_main}, {"cmp", cmp_main}, {"demo", demo_main}, {"sim", sim_main},
    {"tokenize", tokenize_main}, {"eval", eval_main}, {"mask", mask_main}, {"compare", compare_main},
    {"report", report_main}, {"help", cli_help_main}, {"convert", convert_main}, {"train", train_main},
    {"grad", grad_main},
};

/* The command of argv[1], or NULL: the default command (compile). */
static const Subcommand *find_subcommand(const char *word) {
    for (size_t i = 0; i < sizeof subcommands / sizeof subcommands[0]; i++)
        if (strcmp(subcommands[i].name, word) == 0) return &subcommands[i];
    return NULL;
}

/* Whether word can only be a mistyped command: no such file, no '.' or '/' (a file name has them). */
static bool looks_like_command(const char *word) {
    return !strchr(word, '.') && !strchr(word, '/') && access(word, F_OK) != 0;
}

int main(int argc, char **argv) {
    cli_setup_model_path();
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        cli_print_usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? SHORTC_EXIT_USAGE : SHORTC_EXIT_OK;
    }
    if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0) {
        printf("shortc %s (libshortrt %s)\n", SHORTRT_VERSION_STRING, srt_version());
        return SHORTC_EXIT_OK;
    }
    const Subcommand *sc = find_subcommand(argv[1]);
    bool converter = sc && sc->main == convert_main; /* its options are the converter's own */
    if (sc && !converter && sc->main != cli_help_main && cli_wants_help(argc, argv)) {
        cli_print_cmd_usage(sc->name, stdout);
        return SHORTC_EXIT_OK;
    }
    if (!sc && argv[1][0] != '-' && looks_like_command(argv[1]) && resolve_model_name(argv[1]) == argv[1] &&
        cli_unknown_command(argv[1]))
        return SHORTC_EXIT_USAGE;
    if (!sc && cli_wants_help(argc, argv) ) {
        cli_print_cmd_usage("compile", stdout);
        return SHORTC_EXIT_OK;
    }
    return shortc_exit_code(sc ? sc->main(argc, argv) : compile_cmd_main(argc, argv));
}
