/*
 * cmd_sim.c — `shortc sim`: runs one kernel of any CUDA file on the CPU
 * SIMT simulator, its buffers read from and written to .npy files
 * (docs/simulator.md):
 *
 *   shortc sim FILE.cu --kernel NAME --grid X[,Y,Z] --block X[,Y,Z]
 *              [--smem BYTES] [--unchecked] [--sim-threads N] [-I DIR]...
 *              --arg buf:IN.npy[:OUT.npy] --arg i32:7 --arg u32:7 --arg f32:0.5 ...
 *
 * One --arg per kernel parameter, in order. Exit status 0 when the launch
 * completed (outputs written), 1 on any error or simulator fault (report on
 * stderr, no output written). Every output is opened before the launch and
 * renamed into place only once all of them are written (fileio.h), so an
 * output that cannot be written means that none is. The work is srt_sim_run's; this file parses
 * flags and moves files.
 */
#define _POSIX_C_SOURCE 200809L
#include "cmd_sim.h"
#include "usage.h"
#include "fileio.h"
#include "shortrt.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SIM_MAX_ARGS 256

/* Most -I directories (srt_sim_launch takes 15). */
#define SIM_MAX_INCLUDES 15

/* A buffer argument's files. */
typedef struct SimBufFiles {
    const char *in;   /* .npy it is initialised from */
    const char *out;  /* .npy it is written to after the launch, or NULL */
    srt_dtype dtype;  /* the input's dtype (the output gets the same) */
    int64_t count;    /* its elements */
    FioOut fo;        /* the output, open from before the launch until commit or abort */
    bool fo_open;     /* fo is open */
} SimBufFiles;

/* Everything the command line says. */
typedef struct SimCli {
    const char *file;                 /* the .cu */
    const char *kernel;               /* --kernel (NULL: not given) */
    unsigned grid[3];                 /* --grid */
    unsigned block[3];                /* --block */
    bool have_grid, have_block;       /* given */
    long long smem;                   /* --smem */
    int checked;                      /* 1 unless --unchecked (--checked, the default, is accepted) */
    int threads;                      /* --sim-threads */
    srt_sim_arg args[SIM_MAX_ARGS];   /* --arg, in order */
    SimBufFiles files[SIM_MAX_ARGS];  /* files of the buffer arguments */
    int nargs;                        /* --arg count */
    const char *includes[SIM_MAX_INCLUDES]; /* -I directories, in order */
    int nincludes;                    /* their count */
    char cache_note[1536];            /* why the kernel cache was not used (srt_sim_launch.cache_note) */
} SimCli;

__attribute__((format(printf, 1, 2))) static int fail(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("shortc: sim: error: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return 1;
}

/* One unsigned decimal in [lo, hi], the whole of [s, end). */
static bool parse_uint(const char *s, const char *end, unsigned long long lo, unsigned long long hi,
                       unsigned long long *v) {
    if (s == end || *s < '0' || *s > '9') return false;
    unsigned long long x = 0;
    for (const char *p = s; p < end; p++) {
        if (*p < '0' || *p > '9') return false;
        if (x > (ULLONG_MAX - 9) / 10) return false;
        x = x * 10 + (unsigned)(*p - '0');
    }
    if (x < lo || x > hi) return false;
    *v = x;
    return true;
}

/* X[,Y[,Z]] of positive integers; missing ones are 1. */
static bool parse_dims(const char *flag, const char *s, unsigned d[3]) {
    d[0] = d[1] = d[2] = 1;
    int n = 0;
    for (const char *p = s;; n++) {
        const char *c = strchr(p, ',');
        const char *e = c ? c : p + strlen(p);
        unsigned long long v;
        if (n == 3 || !parse_uint(p, e, 1, UINT_MAX, &v)) {
            fail("%s needs 1 to 3 positive integers separated by commas (X[,Y,Z]), found '%s'", flag, s);
            return false;
        }
        d[n] = (unsigned)v;
        if (!c) break;
        p = c + 1;
    }
    return true;
}

/* A scalar --arg value: i32, u32 or f32. */
static bool parse_scalar(const char *spec, const char *v, srt_sim_arg *a) {
    char *end;
    errno = 0;
    if (strncmp(spec, "i32:", 4) == 0) {
        long long x = strtoll(v, &end, 10);
        if (end == v || *end || errno || x < INT32_MIN || x > INT32_MAX) goto bad;
        a->kind = SRT_SIM_ARG_I32;
        a->i32 = (int32_t)x;
    } else if (strncmp(spec, "u32:", 4) == 0) {
        unsigned long long x;
        if (!parse_uint(v, v + strlen(v), 0, UINT32_MAX, &x)) goto bad;
        a->kind = SRT_SIM_ARG_U32;
        a->u32 = (uint32_t)x;
    } else {
        float x = strtof(v, &end);
        if (end == v || *end || (errno && isinf(x))) goto bad;
        a->kind = SRT_SIM_ARG_F32;
        a->f32 = x;
    }
    return true;
bad:
    fail("--arg %s: '%s' is not a valid %.3s value", spec, v, spec);
    return false;
}

/* One --arg. */
static bool parse_arg(SimCli *c, const char *spec) {
    if (c->nargs == SIM_MAX_ARGS) {
        fail("more than %d --arg", SIM_MAX_ARGS);
        return false;
    }
    srt_sim_arg *a = &c->args[c->nargs];
    SimBufFiles *bf = &c->files[c->nargs];
    memset(a, 0, sizeof *a);
    memset(bf, 0, sizeof *bf);
    if (strncmp(spec, "buf:", 4) == 0) {
        const char *in = spec + 4, *colon = strchr(in, ':');
        if (*in == 0 || colon == in || (colon && (colon[1] == 0 || strchr(colon + 1, ':')))) {
            fail("--arg %s: expected buf:IN.npy or buf:IN.npy:OUT.npy", spec);
            return false;
        }
        a->kind = SRT_SIM_ARG_BUF;
        bf->in = in; /* cut at the colon below (spec is argv, writable) */
        bf->out = colon ? colon + 1 : NULL;
        if (colon) *(char *)colon = 0;
    } else if (strncmp(spec, "i32:", 4) == 0 || strncmp(spec, "u32:", 4) == 0 || strncmp(spec, "f32:", 4) == 0) {
        if (!parse_scalar(spec, spec + 4, a)) return false;
    } else {
        fail("--arg %s: expected buf:IN.npy[:OUT.npy], i32:V, u32:V or f32:V", spec);
        return false;
    }
    c->nargs++;
    return true;
}

static bool parse_cli(int argc, char **argv, SimCli *c) {
    memset(c, 0, sizeof *c);
    c->checked = 1;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        bool has_val = i + 1 < argc;
        if (strcmp(a, "--checked") == 0 || strcmp(a, "--unchecked") == 0) {
            c->checked = strcmp(a, "--checked") == 0;
        } else if (strcmp(a, "--force") == 0) {
            fio_set_force(true);
        } else if (strcmp(a, "--kernel") == 0 || strcmp(a, "--grid") == 0 || strcmp(a, "--block") == 0 ||
                   strcmp(a, "--smem") == 0 || strcmp(a, "--arg") == 0 || strcmp(a, "--sim-threads") == 0) {
            if (!has_val) return fail("%s needs a value", a), false;
            const char *v = argv[++i];
            unsigned long long x;
            if (strcmp(a, "--kernel") == 0) {
                if (c->kernel) return fail("--kernel given twice"), false;
                c->kernel = v;
            } else if (strcmp(a, "--grid") == 0) {
                if (c->have_grid || !parse_dims(a, v, c->grid)) return c->have_grid ? (fail("--grid given twice"), false) : false;
                c->have_grid = true;
            } else if (strcmp(a, "--block") == 0) {
                if (c->have_block || !parse_dims(a, v, c->block)) return c->have_block ? (fail("--block given twice"), false) : false;
                c->have_block = true;
            } else if (strcmp(a, "--smem") == 0) {
                if (!parse_uint(v, v + strlen(v), 0, INT_MAX, &x)) return fail("--smem needs a byte count, found '%s'", v), false;
                c->smem = (long long)x;
            } else if (strcmp(a, "--sim-threads") == 0) {
                if (!parse_uint(v, v + strlen(v), 1, 256, &x)) return fail("--sim-threads needs 1 to 256, found '%s'", v), false;
                c->threads = (int)x;
            } else if (!parse_arg(c, argv[i])) {
                return false;
            }
        } else if (strncmp(a, "-I", 2) == 0) {
            const char *d = a[2] ? a + 2 : has_val ? argv[++i] : NULL;
            if (!d || !*d) return fail("-I needs a directory"), false;
            if (c->nincludes == SIM_MAX_INCLUDES) return fail("more than %d -I directories", SIM_MAX_INCLUDES), false;
            c->includes[c->nincludes++] = d;
        } else if (a[0] == '-' && a[1]) {
            return cli_unknown_option("sim", a), false;
        } else if (c->file) {
            return fail("more than one input file ('%s' and '%s')", c->file, a), false;
        } else {
            c->file = a;
        }
    }
    if (!c->file) return fail("no input .cu file; see 'shortc help sim'"), false;
    if (c->kernel && (!c->have_grid || !c->have_block))
        return fail("--grid and --block are required; see 'shortc help sim'"), false;
    return true;
}

/* Reads the buffer arguments' input files. */
static bool read_buffers(srt_context *ctx, SimCli *c) {
    for (int i = 0; i < c->nargs; i++) {
        if (c->args[i].kind != SRT_SIM_ARG_BUF) continue;
        SimBufFiles *bf = &c->files[i];
        int64_t shape[1];
        int rank = 1;
        bf->dtype = (srt_dtype)-1;
        if (srt_npy_read(ctx, bf->in, &bf->dtype, &c->args[i].data, shape, &rank) != SRT_OK)
            return fail("--arg %d: %s", i + 1, srt_last_error(ctx)), false;
        if (rank != 1 || shape[0] == 0)
            return fail("--arg %d: %s must be a non-empty 1-D array (rank %d)", i + 1, bf->in, rank), false;
        bf->count = shape[0];
        c->args[i].bytes = (size_t)shape[0] * 4;
    }
    return true;
}

/* Opens every output before the launch: one that cannot be written, or that would replace the .cu,
 * an input or another output, fails the command before any work. */
static bool open_outputs(SimCli *c) {
    const char *outs[SIM_MAX_ARGS], *ins[SIM_MAX_ARGS + 1], *clash = NULL;
    int nins = 0;
    ins[nins++] = c->file;
    for (int i = 0; i < c->nargs; i++) {
        bool buf = c->args[i].kind == SRT_SIM_ARG_BUF;
        outs[i] = buf ? c->files[i].out : NULL;
        if (buf) ins[nins++] = c->files[i].in;
    }
    int o = fio_first_clash(outs, c->nargs, ins, nins, &clash);
    if (o >= 0) return fail("output '%s' is the same file as '%s'; nothing written", outs[o], clash), false;
    for (int i = 0; i < c->nargs; i++) {
        SimBufFiles *bf = &c->files[i];
        const char *why;
        if (c->args[i].kind != SRT_SIM_ARG_BUF || !bf->out) continue;
        if (!fio_out_open(&bf->fo, bf->out, &why)) return fail("cannot write '%s': %s", bf->out, why), false;
        bf->fo_open = true;
    }
    return true;
}

/* Gives up every output still open (no file is replaced). */
static void abort_outputs(SimCli *c) {
    for (int i = 0; i < c->nargs; i++)
        if (c->files[i].fo_open) {
            fio_out_abort(&c->files[i].fo);
            c->files[i].fo_open = false;
        }
}

/* Writes every output, then commits them all; on any failure aborts those not yet committed. */
static bool write_outputs(srt_context *ctx, SimCli *c) {
    for (int i = 0; i < c->nargs; i++) {
        SimBufFiles *bf = &c->files[i];
        if (!bf->fo_open) continue;
        void *bytes;
        size_t len;
        if (srt_npy_encode(ctx, bf->dtype, c->args[i].data, &bf->count, 1, &bytes, &len) != SRT_OK)
            return fail("%s", srt_last_error(ctx)), false;
        fio_out_write(&bf->fo, bytes, len);
        srt_free(ctx, bytes);
    }
    for (int i = 0; i < c->nargs; i++) {
        SimBufFiles *bf = &c->files[i];
        const char *why;
        if (!bf->fo_open) continue;
        bf->fo_open = false;
        if (!fio_out_commit(&bf->fo, &why)) return fail("cannot write '%s': %s", bf->out, why), false;
    }
    return true;
}

/* Largest .cu `shortc sim` reads. */
#define SIM_SOURCE_MAX ((size_t)1 << 30)

/* The whole file (NUL-terminated, malloc'd), or NULL with the error printed. */
static char *read_source(const char *path, size_t *len) {
    const char *why;
    char *buf = fio_read_file(path, SIM_SOURCE_MAX, len, &why); /* a FIFO or directory is refused, never waited on */
    if (!buf) return fail("cannot read '%s': %s", path, why), NULL;
    return buf;
}

int sim_main(int argc, char **argv) {
    SimCli *c = calloc(1, sizeof *c);
    srt_context *ctx = NULL;
    if (!c || srt_context_create(&ctx, NULL, NULL) != SRT_OK) {
        free(c);
        return fail("out of memory");
    }
    int rc = 1;
    size_t len = 0;
    char *src = NULL;
    if (!parse_cli(argc, argv, c)) {
        rc = SHORTC_EXIT_USAGE;
        goto out;
    }
    if (!(src = read_source(c->file, &len)) || !read_buffers(ctx, c)) {
        cli_bad_input();
        goto out;
    }
    if (!open_outputs(c)) goto out;
    srt_sim_launch l = {
        .source = src, .len = len, .name = c->file, .kernel = c->kernel, .smem = (unsigned)c->smem,
        .checked = c->checked, .threads = c->threads, .cache_dir = NULL, .args = c->args, .nargs = c->nargs,
        .include_dirs = c->includes, .ninclude_dirs = c->nincludes,
        .cache_note = c->cache_note, .cache_note_len = sizeof c->cache_note,
    };
    memcpy(l.grid, c->grid, sizeof l.grid);
    memcpy(l.block, c->block, sizeof l.block);
    srt_status st = srt_sim_run(ctx, &l);
    if (c->cache_note[0]) fprintf(stderr, "shortc: warning: %s\n", c->cache_note);
    if (st != SRT_OK) {
        fail("%s", srt_last_error(ctx));
        goto out;
    }
    if (write_outputs(ctx, c)) rc = 0;
out:
    abort_outputs(c);
    for (int i = 0; i < c->nargs; i++)
        if (c->args[i].kind == SRT_SIM_ARG_BUF) srt_free(ctx, c->args[i].data);
    free(src);
    free(c);
    srt_context_destroy(ctx);
    return rc;
}
