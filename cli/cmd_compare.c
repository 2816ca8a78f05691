/*
 * cmd_compare.c — `shortc compare` and `shortc report`: the compiler's cost
 * model (compiler/cost.c, docs/cost-model.md) for one or more models, side
 * by side.
 *
 *   shortc compare A.arch B.arch ... [--variants FILE.arch] [options]
 *   shortc report MODEL.arch [--model NAME] [options]
 *
 *   options: --device NAME  --window W  --stride S  --overlap K
 *            --kernels sm_XX  --json | --csv  --svg OUT.svg
 *
 * A positional file stands for its last model; --variants adds every model
 * defined in one file. The terminal table (or the JSON / CSV) is built in
 * memory and printed only when every model compiled; the SVG is written
 * through fileio (never half-written). Times are roofline estimates.
 * --kernels also emits each model's CUDA and compiles it with NVRTC for the
 * arch (cli/nvrtc_facts.c) to list registers, spills, shared memory,
 * barriers, the PTX instruction mix and an occupancy estimate per kernel;
 * the facts are kept in the kernel cache (cli/facts_cache.c).
 */
#define _POSIX_C_SOURCE 200809L
#include "cmd_compare.h"
#include "modelpath.h"
#include "usage.h"

#include "fileio.h"
#include "facts_cache.h"
#include "shortc.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Output format of the figures. */
typedef enum OutFormat {
    FMT_TABLE,   /* aligned terminal table */
    FMT_JSON,    /* one JSON document */
    FMT_CSV,     /* one header line and one line per model */
} OutFormat;

/* One model to cost: where it comes from. */
typedef struct ModelRef {
    const char *path;        /* .arch file */
    const char *model;       /* model name in it (NULL: its last model) */
} ModelRef;

/* Parsed command line. */
typedef struct CmpArgs {
    bool report;             /* `report` (one model, per-kernel detail) instead of `compare` */
    ModelRef *refs;          /* models in order */
    int nrefs;               /* count */
    const char *variants;    /* --variants FILE */
    const char *model;       /* report: --model NAME */
    const char *device;      /* --device NAME */
    const char *svg;         /* --svg OUT */
    OutFormat format;        /* --json / --csv / table */
    CostOptions copt;        /* --window, --stride, --overlap */
    int kernels_arch;        /* --kernels sm_XX: XX; 0: no kernel facts */
} CmpArgs;

/* Static facts of one kernel and how the plan launches it. */
typedef struct KernelRow {
    KernelFacts f;           /* ptxas and PTX facts */
    int block;               /* threads per block (largest launch) */
    int dyn_smem;            /* dynamic shared memory per block, bytes (largest launch) */
    int blocks_per_sm;       /* resident blocks per SM on the device */
    double occupancy;        /* resident warps / the device's warps per SM */
} KernelRow;

/* A costed model. */
typedef struct Costed {
    const char *path;        /* file it came from */
    ModelCost *cost;         /* its cost model (in the shared arena) */
    KernelRow *kernels;      /* --kernels: one row per kernel (malloc'd), else NULL */
    int nkernels;            /* rows */
    bool facts_cached;       /* --kernels: the facts came from the kernel cache (cli/facts_cache.c) */
} Costed;

/* ------------------------------------------------------------------ */
/* Arguments                                                            */
/* ------------------------------------------------------------------ */

static bool flag_int(const char *flag, const char *s, int lo, int *out) {
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || *end || errno || v < lo || v > INT_MAX) {
        fprintf(stderr, "shortc: error: %s needs an integer of at least %d, found '%s'\n", flag, lo, s);
        return false;
    }
    *out = (int)v;
    return true;
}

/* "sm_80" -> 80 (sm_50 .. sm_120). */
static bool parse_arch(const char *s, int *arch) {
    char *end;
    long v = strncmp(s, "sm_", 3) == 0 ? strtol(s + 3, &end, 10) : 0;
    if (v < 50 || v > 120 || *end || !isdigit((unsigned char)s[3])) {
        fprintf(stderr, "shortc: error: --kernels needs an architecture sm_50 .. sm_120 such as sm_80, found '%s'\n", s);
        return false;
    }
    *arch = (int)v;
    return true;
}

static bool set_format(CmpArgs *a, OutFormat f, const char *flag) {
    if (a->format != FMT_TABLE && a->format != f) {
        fprintf(stderr, "shortc: error: %s: --json and --csv are exclusive\n", flag);
        return false;
    }
    a->format = f;
    return true;
}

/* One option at argv[*i] (its value consumed); false with the error printed. */
static bool parse_option(int argc, char **argv, int *i, CmpArgs *a) {
    const char *s = argv[*i];
    bool has_next = *i + 1 < argc;
    const char *v = has_next ? argv[*i + 1] : NULL;
    bool takes_value = strcmp(s, "--device") == 0 || strcmp(s, "--window") == 0 || strcmp(s, "--stride") == 0 ||
                       strcmp(s, "--overlap") == 0 || strcmp(s, "--svg") == 0 || strcmp(s, "--variants") == 0 ||
                       strcmp(s, "--kernels") == 0 ||
                       (a->report && strcmp(s, "--model") == 0);
    if (takes_value && !has_next) {
        fprintf(stderr, "shortc: error: %s needs a value; see 'shortc help %s'\n", s, a->report ? "report" : "compare");
        return false;
    }
    if (takes_value) (*i)++;
    if (strcmp(s, "--json") == 0) return set_format(a, FMT_JSON, s);
    if (strcmp(s, "--csv") == 0) return set_format(a, FMT_CSV, s);
    if (strcmp(s, "--force") == 0) return fio_set_force(true), true;
    if (strcmp(s, "--device") == 0) a->device = v;
    else if (strcmp(s, "--svg") == 0) a->svg = v;
    else if (strcmp(s, "--model") == 0 && a->report) a->model = v;
    else if (strcmp(s, "--variants") == 0 && !a->report) a->variants = v;
    else if (strcmp(s, "--kernels") == 0) return parse_arch(v, &a->kernels_arch);
    else if (strcmp(s, "--window") == 0) return flag_int(s, v, 1, &a->copt.window);
    else if (strcmp(s, "--stride") == 0) return flag_int(s, v, 1, &a->copt.stride);
    else if (strcmp(s, "--overlap") == 0) {
        a->copt.overlap_given = true;
        return flag_int(s, v, 0, &a->copt.overlap);
    } else {
        cli_unknown_option(a->report ? "report" : "compare", s);
        return false;
    }
    return true;
}

static bool parse_args(int argc, char **argv, CmpArgs *a) {
    a->refs = calloc((size_t)argc, sizeof *a->refs);
    if (!a->refs) {
        fprintf(stderr, "shortc: error: out of memory\n");
        return false;
    }
    a->device = "h100-sxm";
    for (int i = 2; i < argc; i++) {
        if (argv[i][0] == '-' && argv[i][1]) {
            if (!parse_option(argc, argv, &i, a)) return false;
        } else a->refs[a->nrefs++] = (ModelRef){.path = resolve_model_name(argv[i])};
    }
    if (a->report && a->nrefs != 1) {
        fprintf(stderr, "shortc: error: report takes exactly one .arch file; see 'shortc help report'\n");
        return false;
    }
    if (!a->report && a->nrefs == 0 && !a->variants) {
        fprintf(stderr, "shortc: error: compare needs .arch files or --variants FILE.arch; see 'shortc help compare'\n");
        return false;
    }
    if (a->svg && strcmp(a->svg, "-") == 0) {
        fprintf(stderr, "shortc: error: --svg needs a file name (standard output holds the %s)\n",
                a->format == FMT_TABLE ? "table" : "figures");
        return false;
    }
    if (a->report) a->refs[0].model = a->model;
    return true;
}

/* The roofline device; NULL with the error (and the known names) printed. */
static const DeviceSpec *pick_device(const char *name) {
    const DeviceSpec *dev = device_find(name);
    if (dev) return dev;
    fprintf(stderr, "shortc: error: unknown device '%s'; known:", name);
    for (int i = 0; i < ndevices; i++) fprintf(stderr, " %s", device_table[i].name);
    fputc('\n', stderr);
    return NULL;
}

/* ------------------------------------------------------------------ */
/* Costing                                                              */
/* ------------------------------------------------------------------ */

/* Most functions one NVRTC compile of a model reports. */
enum { MAX_KERNEL_FACTS = 512 };

/* The largest block and dynamic shared memory of the plan's launches of kernel `name`. */
static void launch_shape(const cJSON *steps, const char *name, int *block, int *dyn_smem) {
    const cJSON *st;
    cJSON_ArrayForEach(st, steps) {
        const cJSON *k = cJSON_GetObjectItemCaseSensitive(st, "kernel");
        if (!cJSON_IsString(k) || strcmp(k->valuestring, name) != 0) continue;
        const cJSON *b = cJSON_GetObjectItemCaseSensitive(st, "block"), *sm = cJSON_GetObjectItemCaseSensitive(st, "smem");
        int threads = 1;
        const cJSON *x;
        cJSON_ArrayForEach(x, b) threads *= cJSON_IsNumber(x) ? x->valueint : 1;
        if (threads > *block) *block = threads;
        if (cJSON_IsNumber(sm) && sm->valueint > *dyn_smem) *dyn_smem = sm->valueint;
    }
}

/* Kernel facts of an emitted model: NVRTC for arch (or the kernel cache), launches from the plan, occupancy on dev. */
static bool kernel_rows(const EmitResult *em, int arch, const DeviceSpec *dev, Costed *out, const char *name) {
    KernelFacts *f = calloc(MAX_KERNEL_FACTS, sizeof *f);
    cJSON *plan = cJSON_Parse(em->plan_json);
    char err[2048], note[2048];
    int n = f && plan ? cached_kernel_facts(em->cu, arch, f, MAX_KERNEL_FACTS, err, sizeof err, note, sizeof note,
                                            &out->facts_cached)
                      : -1;
    if (n < 0) fprintf(stderr, "shortc: error: %s: %s\n", name, f && plan ? err : "out of memory");
    else if (note[0]) fprintf(stderr, "shortc: note: %s: %s\n", name, note);
    out->kernels = n >= 0 ? calloc((size_t)n + 1, sizeof *out->kernels) : NULL;
    const cJSON *programs = plan ? cJSON_GetObjectItemCaseSensitive(plan, "programs") : NULL, *pg;
    for (int i = 0; out->kernels && i < n; i++) {
        if (!f[i].entry) continue;
        KernelRow *k = &out->kernels[out->nkernels++];
        k->f = f[i];
        cJSON_ArrayForEach(pg, programs) /* a kernel may be launched by one program only (decode) */
            launch_shape(cJSON_GetObjectItemCaseSensitive(pg, "steps"), f[i].name, &k->block, &k->dyn_smem);
        k->blocks_per_sm = occupancy_blocks(dev, k->f.regs, k->f.smem + k->dyn_smem, k->block);
        k->occupancy = (double)k->blocks_per_sm * ((k->block + 31) / 32) / dev->sm_warps;
    }
    bool ok = out->kernels != NULL;
    if (n >= 0 && !ok) fprintf(stderr, "shortc: error: out of memory\n");
    cJSON_Delete(plan);
    free(f);
    return ok;
}

/* Compiles one model (through the passes, or emitted with --kernels) and costs it; false with the error printed. */
static bool cost_one(Arena *ar, Diag *d, const ModelRef *r, const CmpArgs *a, Costed *out) {
    CompileOptions co = {.path = r->path, .model = r->model,
                         .stop = a->kernels_arch ? COMPILE_STOP_AFTER_EMIT : COMPILE_STOP_AFTER_PASSES};
    CompileResult cr;
    bool ok = shortc_compile(ar, d, &co, &cr);
    Graph *g = cr.graph;
    char why[256];
    out->path = r->path;
    if (ok && g && !(out->cost = cost_model(g, &a->copt, why, sizeof why)))
        fprintf(stderr, "shortc: error: %s (%s): %s\n", g->spec->name, r->path, why);
    ok = ok && g && out->cost;
    if (ok && a->kernels_arch) ok = kernel_rows(&cr.emit, a->kernels_arch, a->copt.device, out, g->spec->name);
    compile_result_free(&cr);
    return ok;
}

/* The exit code of a cost_one that failed: a cost model refused (a --window, --stride or --overlap the model
 * cannot take) is a usage error; a model with diagnostics is bad input (usage.h). */
static int cost_failure(const Diag *d, const Costed *c) {
    if (d->errors) return cli_bad_input(), SHORTC_EXIT_FAILURE;
    return c->path && !c->cost ? SHORTC_EXIT_USAGE : SHORTC_EXIT_FAILURE;
}

/* The models of --variants appended to the refs. */
static bool add_variants(Arena *ar, Diag *d, CmpArgs *a, int argc) {
    const char **names;
    int n = shortc_list_models(ar, d, a->variants, &names);
    if (n < 0) return false;
    if (n == 0) {
        fprintf(stderr, "shortc: error: %s defines no model\n", a->variants);
        cli_bad_input();
        return false;
    }
    ModelRef *refs = realloc(a->refs, sizeof *refs * (size_t)(argc + n));
    if (!refs) {
        fprintf(stderr, "shortc: error: out of memory\n");
        return false;
    }
    a->refs = refs;
    for (int i = 0; i < n; i++) a->refs[a->nrefs++] = (ModelRef){.path = a->variants, .model = names[i]};
    return true;
}

/* ------------------------------------------------------------------ */
/* Number formatting                                                    */
/* ------------------------------------------------------------------ */

/* v with an SI prefix and unit: "175.4 M", "497.8 MB", "2.1 ms". */
static const char *si(char *buf, size_t len, double v, const char *unit) {
    static const char *const up[] = {"", "k", "M", "G", "T", "P", "E"};
    static const char *const down[] = {"", "m", "u", "n", "p"};
    int k = 0;
    double a = fabs(v);
    if (a == 0) {
        snprintf(buf, len, "0 %s", unit);
        return buf;
    }
    if (a >= 1) {
        while (a >= 1000 && k < 6) { a /= 1000; v /= 1000; k++; }
        snprintf(buf, len, "%.4g %s%s", v, up[k], unit);
    } else {
        while (a < 1 && k < 4) { a *= 1000; v *= 1000; k++; }
        snprintf(buf, len, "%.4g %s%s", v, down[k], unit);
    }
    return buf;
}

/* ------------------------------------------------------------------ */
/* Table                                                                */
/* ------------------------------------------------------------------ */

/* The figure of a row for one model, formatted into buf. */
typedef const char *(*RowFn)(char *buf, size_t len, const ModelCost *m);

#define ROW(fn, expr) \
    static const char *fn(char *buf, size_t len, const ModelCost *m) { expr; }

ROW(r_segment, snprintf(buf, len, "%d", m->segment); return buf)
ROW(r_window, snprintf(buf, len, "%d", m->window); return buf)
ROW(r_layers, snprintf(buf, len, "%d", m->layers); return buf)
ROW(r_params, return si(buf, len, m->params, ""))
ROW(r_weights, return si(buf, len, m->weight_bytes, "B"))
ROW(r_peak, return si(buf, len, m->peak_activation_bytes, "B"))
ROW(r_state, return si(buf, len, m->state_bytes, "B"))
ROW(r_attn_matrix, snprintf(buf, len, "%.0fx%.0f", m->attn[0].queries, m->attn[0].keys); return buf)
ROW(r_density, snprintf(buf, len, "%.3f", m->attn[0].density); return buf)
ROW(r_scores, return si(buf, len, m->forward.attn_scores, ""))
ROW(r_fwd_flops, return si(buf, len, m->forward.flops, "FLOP"))
ROW(r_fwd_gemm, return si(buf, len, m->flops_gemm, "FLOP"))
ROW(r_fwd_attn, return si(buf, len, m->flops_attention, "FLOP"))
ROW(r_fwd_logits, return si(buf, len, m->flops_logits, "FLOP"))
ROW(r_fwd_other, return si(buf, len, m->forward.other_ops, "op"))
ROW(r_fwd_bytes, return si(buf, len, op_cost_bytes(&m->forward), "B"))
ROW(r_fwd_ai, snprintf(buf, len, "%.1f", op_cost_intensity(&m->forward)); return buf)
ROW(r_fwd_time, return si(buf, len, m->forward_seconds, "s"))
/* "12 of 12, bf16": the layers whose q.k and p.v run on tensor cores (in a forward, or in a one-token call
 * of the cached mode), with their peak; "0 of 12" when every layer runs on CUDA cores (fp32 peak). */
static const char *tensor_core_layers(char *buf, size_t len, const ModelCost *m, bool one_token) {
    int on = 0;
    CostPeak peak = PEAK_FP32;
    for (int l = 0; l < m->layers; l++) {
        CostPeak p = one_token ? m->attn[l].decode_peak : m->attn[l].peak;
        if (p != PEAK_FP32) on++, peak = p;
    }
    if (on) snprintf(buf, len, "%d of %d, %s", on, m->layers, cost_peak_name(peak));
    else snprintf(buf, len, "0 of %d", m->layers);
    return buf;
}
ROW(r_tc_forward, return tensor_core_layers(buf, len, m, false))
ROW(r_tc_token, return tensor_core_layers(buf, len, m, true))
ROW(r_modes, snprintf(buf, len, "%d / %d", m->modes[MODE_SLIDING].param, m->modes[MODE_OVERLAP].param); return buf)

/* Which per-token figure of a mode a row shows. */
typedef enum ModeField {
    MF_NONE,      /* not a mode row */
    MF_FLOPS,     /* FLOPs per token */
    MF_BYTES,     /* bytes per token */
    MF_SECONDS,   /* estimated seconds per token */
} ModeField;

/* The figure `field` of mode k of m, formatted into buf. */
static const char *mode_cell(char *buf, size_t len, const ModelCost *m, CostMode k, ModeField field) {
    const ModeCost *mc = &m->modes[k];
    if (isnan(mc->flops)) return "n/a"; /* a mode the model has not (cached tokens of a recurrent model) */
    if (field == MF_FLOPS) return si(buf, len, mc->flops, "FLOP");
    if (field == MF_BYTES) return si(buf, len, mc->bytes, "B");
    return si(buf, len, mc->seconds, "s");
}

/* One table row: its label and figure. */
typedef struct Row {
    const char *label;   /* left column */
    RowFn fn;            /* the figure; NULL for a section heading or a mode row */
    ModeField field;     /* a mode row: which figure (MF_NONE otherwise) */
    CostMode mode;       /* a mode row: which mode */
} Row;

/* The five mode rows of one figure. */
#define MODE_ROWS(f) \
    {.label = "  nonoverlap", .field = f, .mode = MODE_NONOVERLAP},           \
    {.label = "  sliding S", .field = f, .mode = MODE_SLIDING},               \
    {.label = "  overlap K", .field = f, .mode = MODE_OVERLAP},               \
    {.label = "  token by token, no cache", .field = f, .mode = MODE_TOKEN},  \
    {.label = "  token by token, cached", .field = f, .mode = MODE_CACHED_TOKEN}

static const Row rows[] = {
    {.label = "model", .fn = NULL},
    {.label = "segment L", .fn = r_segment},
    {.label = "window W (tokens/forward)", .fn = r_window},
    {.label = "layers", .fn = r_layers},
    {.label = "parameters", .fn = r_params},
    {.label = "weight bytes", .fn = r_weights},
    {.label = "peak activations (buffer plan)", .fn = r_peak},
    {.label = "state bytes (at capacity)", .fn = r_state},
    {.label = "attention, layer 0 (q x k)", .fn = r_attn_matrix},
    {.label = "  pattern density", .fn = r_density},
    {.label = "  scores/forward, all layers", .fn = r_scores},
    {.label = "  on tensor cores: forward", .fn = r_tc_forward},
    {.label = "    one-token calls", .fn = r_tc_token},
    {.label = "forward of W tokens", .fn = NULL},
    {.label = "  FLOPs", .fn = r_fwd_flops},
    {.label = "    weight GEMMs", .fn = r_fwd_gemm},
    {.label = "    attention q.k + p.v", .fn = r_fwd_attn},
    {.label = "    logits", .fn = r_fwd_logits},
    {.label = "  elementwise ops", .fn = r_fwd_other},
    {.label = "  bytes (compulsory)", .fn = r_fwd_bytes},
    {.label = "  intensity (ops/byte)", .fn = r_fwd_ai},
    {.label = "  time [estimate]", .fn = r_fwd_time},
    {.label = "modes: stride S / overlap K", .fn = r_modes},
    {.label = "FLOPs per token", .fn = NULL},
    MODE_ROWS(MF_FLOPS),
    {.label = "bytes per token", .fn = NULL},
    MODE_ROWS(MF_BYTES),
    {.label = "time per token [estimate]", .fn = NULL},
    MODE_ROWS(MF_SECONDS),
};

enum { LABEL_W = 32, COL_W = 16 };

static void print_table(FILE *f, const Costed *c, int n, const DeviceSpec *dev) {
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        fprintf(f, "%-*s", LABEL_W, rows[r].label);
        for (int i = 0; i < n; i++) {
            char buf[64];
            const Row *row = &rows[r];
            const char *cell = row->fn                ? row->fn(buf, sizeof buf, c[i].cost)
                               : row->field != MF_NONE ? mode_cell(buf, sizeof buf, c[i].cost, row->mode, row->field)
                               : r == 0                ? c[i].cost->name
                                                       : "";
            fprintf(f, " %*s", COL_W, cell);
        }
        fputc('\n', f);
    }
    fprintf(f, "\nFigures: docs/cost-model.md. [estimate]: roofline on %s (%s), not a measurement.\n", dev->name,
            dev->title);
}

/* report: one line per distinct kernel or GEMM shape. */
static void print_groups(FILE *f, const ModelCost *m, const DeviceSpec *dev) {
    fprintf(f, "\nsteps of one forward (W = %d), each distinct kernel or GEMM once:\n", m->window);
    fprintf(f, "%4s  %-58s %12s %12s %8s %5s %12s\n", "uses", "step", "FLOPs", "bytes", "ops/B", "peak", "time [est]");
    for (int i = 0; i < m->ngroups; i++) {
        const CostGroup *g = &m->groups[i];
        char a[32], b[32], t[32];
        fprintf(f, "%4d  %-58.58s %12s %12s %8.1f %5s %12s\n", g->uses, g->label, si(a, sizeof a, g->per_use.flops, ""),
                si(b, sizeof b, op_cost_bytes(&g->per_use), "B"), op_cost_intensity(&g->per_use), cost_peak_name(g->peak),
                si(t, sizeof t, roofline_seconds_at(dev, &g->per_use, g->peak), "s"));
    }
}

/* --kernels: the SASS instruction mix of each kernel of one model (when cuobjdump was found). */
static void print_sass(FILE *f, const Costed *c, int arch) {
    bool any = false;
    for (int k = 0; k < c->nkernels; k++) any |= c->kernels[k].f.has_sass;
    if (!any) return;
    fprintf(f, "\nSASS instruction mix of %s, sm_%d (static counts in the cubin; ldl/stl: local memory):\n",
            c->cost->name, arch);
    fprintf(f, "%-44s %5s %5s %5s %5s %5s %5s %6s %6s %5s %5s %5s %5s %5s %5s %5s\n", "kernel", "mma", "ffma", "hfma",
            "ldg16", "ldg32", "ldg64", "ldg128", "ldgsts", "lds", "ldsm", "sts", "shfl", "bar", "ldl", "stl");
    for (int k = 0; k < c->nkernels; k++) {
        const KernelRow *r = &c->kernels[k];
        const SassMix *m = &r->f.sass;
        if (!r->f.has_sass) continue;
        fprintf(f, "%-44.44s %5d %5d %5d %5d %5d %5d %6d %6d %5d %5d %5d %5d %5d %5d %5d\n", r->f.name, m->mma, m->ffma,
                m->hfma, m->ld_global_16, m->ld_global_32, m->ld_global_64, m->ld_global_128, m->cp_async, m->ld_shared,
                m->ldsm, m->st_shared, m->shfl, m->bar, m->ld_local, m->st_local);
    }
}

/* --kernels: one line per kernel of each model. */
static void print_kernels(FILE *f, const Costed *c, int n, int arch, const DeviceSpec *dev) {
    for (int i = 0; i < n; i++) {
        fprintf(f, "\nkernels of %s, NVRTC sm_%d (static; PTX instruction counts, occupancy on %s):\n", c[i].cost->name,
                arch, dev->name);
        fprintf(f, "%-44s %4s %6s %6s %5s %4s %5s %6s %5s %5s %5s %5s %5s %5s %5s\n", "kernel", "regs", "smem",
                "dsmem", "spill", "bars", "block", "occup", "mma", "ffma", "hfma", "ld32", "ld64", "ld128", "lds");
        for (int k = 0; k < c[i].nkernels; k++) {
            const KernelRow *r = &c[i].kernels[k];
            const PtxMix *m = &r->f.mix;
            fprintf(f, "%-44.44s %4d %6d %6d %5d %4d %5d %5.0f%% %5d %5d %5d %5d %5d %5d %5d\n", r->f.name, r->f.regs,
                    r->f.smem, r->dyn_smem, r->f.spill_st + r->f.spill_ld, r->f.barriers, r->block, 100 * r->occupancy,
                    m->mma, m->ffma, m->hfma, m->ld_global_32, m->ld_global_64, m->ld_global_128, m->ld_shared);
        }
        print_sass(f, &c[i], arch);
    }
}

/* ------------------------------------------------------------------ */
/* JSON and CSV                                                         */
/* ------------------------------------------------------------------ */

/* A kernel's SASS mix (static counts in the cubin). */
static cJSON *sass_json(const SassMix *m) {
    cJSON *o = cJSON_CreateObject();
    const struct { const char *key; int v; } f[] = {
        {"instructions", m->total}, {"mma", m->mma},          {"ffma", m->ffma},
        {"hfma", m->hfma},          {"ld_global_16", m->ld_global_16}, {"ld_global_32", m->ld_global_32},
        {"ld_global_64", m->ld_global_64}, {"ld_global_128", m->ld_global_128}, {"cp_async", m->cp_async},
        {"ld_shared", m->ld_shared}, {"ldmatrix", m->ldsm},   {"st_shared", m->st_shared},
        {"shfl", m->shfl},          {"bar", m->bar},          {"ld_local", m->ld_local},
        {"st_local", m->st_local},
    };
    for (size_t i = 0; i < sizeof f / sizeof *f; i++) cJSON_AddNumberToObject(o, f[i].key, f[i].v);
    return o;
}

static cJSON *kernels_json(const Costed *c, int arch) {
    cJSON *o = cJSON_CreateObject();
    char archs[16];
    snprintf(archs, sizeof archs, "sm_%d", arch);
    cJSON_AddStringToObject(o, "arch", archs);
    cJSON_AddStringToObject(o, "mix", "static PTX instruction counts");
    cJSON *list = cJSON_AddArrayToObject(o, "list");
    for (int k = 0; k < c->nkernels; k++) {
        const KernelRow *r = &c->kernels[k];
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "name", r->f.name);
        cJSON_AddNumberToObject(e, "regs", r->f.regs);
        cJSON_AddNumberToObject(e, "smem", r->f.smem);
        cJSON_AddNumberToObject(e, "dynamic_smem", r->dyn_smem);
        cJSON_AddNumberToObject(e, "spill_stores", r->f.spill_st);
        cJSON_AddNumberToObject(e, "spill_loads", r->f.spill_ld);
        cJSON_AddNumberToObject(e, "stack", r->f.stack);
        cJSON_AddNumberToObject(e, "barriers", r->f.barriers);
        cJSON_AddNumberToObject(e, "block", r->block);
        cJSON_AddNumberToObject(e, "blocks_per_sm", r->blocks_per_sm);
        cJSON_AddNumberToObject(e, "occupancy", r->occupancy);
        cJSON *m = cJSON_AddObjectToObject(e, "mix");
        cJSON_AddNumberToObject(m, "mma", r->f.mix.mma);
        cJSON_AddNumberToObject(m, "ffma", r->f.mix.ffma);
        cJSON_AddNumberToObject(m, "hfma", r->f.mix.hfma);
        cJSON_AddNumberToObject(m, "ld_global_32", r->f.mix.ld_global_32);
        cJSON_AddNumberToObject(m, "ld_global_64", r->f.mix.ld_global_64);
        cJSON_AddNumberToObject(m, "ld_global_128", r->f.mix.ld_global_128);
        cJSON_AddNumberToObject(m, "st_global_128", r->f.mix.st_global_128);
        cJSON_AddNumberToObject(m, "ld_shared", r->f.mix.ld_shared);
        cJSON_AddNumberToObject(m, "bar_sync", r->f.mix.bar);
        if (r->f.has_sass) cJSON_AddItemToObject(e, "sass", sass_json(&r->f.sass));
        cJSON_AddItemToArray(list, e);
    }
    return o;
}

static cJSON *model_json(const Costed *c, const DeviceSpec *dev, int arch) {
    cJSON *o = cost_model_json(c->cost, c->path, dev);
    if (arch) cJSON_AddItemToObject(o, "kernels", kernels_json(c, arch));
    if (arch) cJSON_AddBoolToObject(o, "facts_cached", c->facts_cached);
    return o;
}

/* The JSON document (malloc'd), or NULL when out of memory. */
static char *render_json(const Costed *c, int n, const DeviceSpec *dev, int arch) {
    cJSON *root = cost_compare_json(dev);
    cJSON *models = cJSON_GetObjectItemCaseSensitive(root, "models");
    for (int i = 0; i < n; i++) cJSON_AddItemToArray(models, model_json(&c[i], dev, arch));
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    return text;
}

/* A CSV field, quoted (RFC 4180) when it holds a comma, quote or line break. */
static void csv_field(FILE *f, const char *s) {
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

/* The CSV's attention-path fields: layers on tensor cores in a forward, their peak (fp32: none), and the
 * FLOPs their tiles execute per forward; then the line's end. */
static void print_csv_attn(FILE *f, const ModelCost *m) {
    int on = 0;
    CostPeak peak = PEAK_FP32;
    double mma = 0;
    for (int l = 0; l < m->layers; l++)
        if (m->attn[l].peak != PEAK_FP32) on++, peak = m->attn[l].peak, mma += m->attn[l].mma_flops;
    fprintf(f, ",%d,%s,%.17g\n", on, cost_peak_name(peak), mma);
}

static void print_csv(FILE *f, const Costed *c, int n) {
    fputs("model,path,segment,window,layers,params,weight_bytes,peak_activation_bytes,state_bytes,"
          "forward_flops,forward_bytes,attn_scores,forward_seconds_estimate",
          f);
    for (int k = 0; k < MODE_COUNT; k++)
        fprintf(f, ",%s_flops_per_token,%s_bytes_per_token,%s_seconds_per_token_estimate", cost_mode_name((CostMode)k),
                cost_mode_name((CostMode)k), cost_mode_name((CostMode)k));
    fputs(",attn_tensor_core_layers,attn_peak,attn_mma_flops\n", f);
    for (int i = 0; i < n; i++) {
        const ModelCost *m = c[i].cost;
        csv_field(f, m->name);
        fputc(',', f);
        csv_field(f, c[i].path);
        fprintf(f, ",%d,%d,%d,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g", m->segment,
                m->window, m->layers, m->params, m->weight_bytes, m->peak_activation_bytes, m->state_bytes,
                m->forward.flops, op_cost_bytes(&m->forward), m->forward.attn_scores, m->forward_seconds);
        for (int k = 0; k < MODE_COUNT; k++)
            if (isnan(m->modes[k].flops)) fputs(",,,", f); /* the model has no such mode */
            else fprintf(f, ",%.17g,%.17g,%.17g", m->modes[k].flops, m->modes[k].bytes, m->modes[k].seconds);
        print_csv_attn(f, m);
    }
}

/* ------------------------------------------------------------------ */
/* SVG                                                                  */
/* ------------------------------------------------------------------ */

/* One panel of the chart: a figure per model. */
typedef struct Panel {
    const char *title;   /* panel heading */
    const char *unit;    /* SI unit of the bar labels */
    double (*value)(const ModelCost *m); /* the figure */
} Panel;

static double p_flops(const ModelCost *m) { return m->modes[MODE_NONOVERLAP].flops; }
static double p_bytes(const ModelCost *m) { return m->modes[MODE_NONOVERLAP].bytes; }
static double p_scores(const ModelCost *m) { return m->forward.attn_scores; }
static double p_time(const ModelCost *m) { return m->forward_seconds; }

static const Panel panels[] = {
    {"FLOPs per token (nonoverlap)", "FLOP", p_flops},
    {"bytes per token (nonoverlap)", "B", p_bytes},
    {"attention scores per forward", "", p_scores},
    {"forward time, roofline estimate", "s", p_time},
};

/* Text with &, <, > escaped (model names are identifiers, but stay safe). */
static void svg_text(FILE *f, const char *s) {
    for (; *s; s++) {
        if (*s == '&') fputs("&amp;", f);
        else if (*s == '<') fputs("&lt;", f);
        else if (*s == '>') fputs("&gt;", f);
        else fputc(*s, f);
    }
}

static void svg_panel(FILE *f, const Panel *p, const Costed *c, int n, int y0) {
    enum { LEFT = 170, WIDTH = 420, BAR = 18 };
    double max = 0;
    for (int i = 0; i < n; i++) max = fmax(max, p->value(c[i].cost));
    fprintf(f, "<text x=\"10\" y=\"%d\" font-weight=\"bold\">", y0 + 14);
    svg_text(f, p->title);
    fputs("</text>\n", f);
    for (int i = 0; i < n; i++) {
        double v = p->value(c[i].cost);
        int y = y0 + 22 + i * (BAR + 4);
        double w = max > 0 ? v / max * WIDTH : 0;
        char lab[48];
        fprintf(f, "<text x=\"10\" y=\"%d\">", y + 13);
        svg_text(f, c[i].cost->name);
        fprintf(f, "</text><rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"#4a7ab5\"/>"
                   "<text x=\"%.1f\" y=\"%d\">%s</text>\n",
                LEFT, y, w, BAR, LEFT + w + 6, y + 13, si(lab, sizeof lab, v, p->unit));
    }
}

/* The chart (malloc'd text), or NULL when out of memory. */
static char *render_svg(const Costed *c, int n, const DeviceSpec *dev, size_t *len) {
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    if (!f) return NULL;
    int panel_h = 30 + n * 22, np = (int)(sizeof panels / sizeof panels[0]);
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"720\" height=\"%d\" font-family=\"sans-serif\" "
               "font-size=\"12\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
            40 + np * panel_h);
    for (int i = 0; i < np; i++) svg_panel(f, &panels[i], c, n, 10 + i * panel_h);
    fprintf(f, "<text x=\"10\" y=\"%d\" font-size=\"10\">shortc cost model (docs/cost-model.md); times are roofline "
               "estimates on %s, not measurements</text>\n</svg>\n",
            30 + np * panel_h, dev->name);
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* ------------------------------------------------------------------ */
/* Driver                                                               */
/* ------------------------------------------------------------------ */

/* The chosen output (table / JSON / CSV) in memory (malloc'd), or NULL when out of memory. */
static char *render(const CmpArgs *a, const Costed *c, int n, const DeviceSpec *dev, size_t *len) {
    if (a->format == FMT_JSON) {
        char *j = render_json(c, n, dev, a->kernels_arch);
        if (j) *len = strlen(j);
        return j;
    }
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    if (!f) return NULL;
    if (a->format == FMT_CSV) print_csv(f, c, n);
    else {
        print_table(f, c, n, dev);
        if (a->report) print_groups(f, c[0].cost, dev);
        if (a->kernels_arch) print_kernels(f, c, n, a->kernels_arch, dev);
    }
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* Writes the SVG (if asked) and then the chosen output to stdout. */
static int emit_outputs(const CmpArgs *a, const Costed *c, int n, const DeviceSpec *dev) {
    size_t len = 0, svg_len = 0;
    char *text = render(a, c, n, dev, &len);
    char *svg = a->svg ? render_svg(c, n, dev, &svg_len) : NULL;
    int rc = 0;
    const char *why;
    if (!text || (a->svg && !svg)) {
        fprintf(stderr, "shortc: error: out of memory\n");
        rc = 1;
    } else if (a->svg && !fio_write_file(a->svg, svg, svg_len, &why)) {
        fprintf(stderr, "shortc: error: cannot write '%s': %s\n", a->svg, why);
        rc = 1;
    } else if (fwrite(text, 1, len, stdout) != len || fflush(stdout) != 0) {
        fprintf(stderr, "shortc: error: cannot write the output: %s\n", strerror(errno));
        rc = 1;
    }
    free(text);
    free(svg);
    return rc;
}

static int run(int argc, char **argv, bool report) {
    CmpArgs a = {.report = report};
    Arena ar;
    arena_init(&ar);
    Diag d;
    diag_init(&d, &ar, stderr);
    int rc = 1;
    Costed *c = NULL;
    const DeviceSpec *dev = NULL;
    if (!parse_args(argc, argv, &a) || !(dev = pick_device(a.device))) {
        rc = SHORTC_EXIT_USAGE;
        goto out;
    }
    a.copt.device = dev;
    if (a.variants && !add_variants(&ar, &d, &a, argc)) {
        if (d.errors) cli_bad_input();
        goto out;
    }
    c = calloc((size_t)a.nrefs, sizeof *c);
    if (!c) {
        fprintf(stderr, "shortc: error: out of memory\n");
        goto out;
    }
    for (int i = 0; i < a.nrefs; i++)
        if (!cost_one(&ar, &d, &a.refs[i], &a, &c[i])) {
            rc = cost_failure(&d, &c[i]);
            goto out;
        }
    rc = emit_outputs(&a, c, a.nrefs, dev);
out:
    for (int i = 0; c && i < a.nrefs; i++) free(c[i].kernels);
    free(c);
    free(a.refs);
    arena_free(&ar);
    return rc;
}

int compare_main(int argc, char **argv) { return run(argc, argv, false); }

int report_main(int argc, char **argv) { return run(argc, argv, true); }
