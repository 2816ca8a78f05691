/*
 * emit.c — CUDA emission: one self-contained .cu per model (docs/emission.md).
 *
 *   1. Walk the live nodes in program order. A GEMM (matmul, logits) becomes a
 *      cuBLAS step (in fp32 on staged copies when cuBLAS cannot combine its
 *      dtypes, see size_staging); every other node, and a matmul's fused
 *      epilogue, becomes a kernel launch. Each launch is described by a
 *      kernel spec: a template, its placeholder values and the launch shape.
 *   2. Specs with the same template and values are one kernel, whatever the
 *      dedup pass numbered them (a matmul's epilogue does not depend on the
 *      GEMM's inner dimension, so two dedup ids may share one kernel).
 *      Kernel names say what the kernel is; should two different specs get
 *      the same name, the later one gets a numeric suffix.
 *   3. Instantiate each distinct kernel once, with a comment naming the .arch
 *      lines its launches came from.
 *   4. plan.c turns the steps into the JSON plan; the .cu is the plan comment,
 *      a header comment, the prelude and the kernels.
 *
 * Output depends only on the graph (no time stamps, no pointers, no hash
 * order), so the same input gives byte-identical output.
 */
#include "emit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Small helpers                                                       */
/* ------------------------------------------------------------------ */

static const char *cuda_type(DType t) {
    switch (t) {
    case DT_F32: return "float";
    case DT_F16: return "__half";
    case DT_BF16: return "__nv_bfloat16";
    case DT_I32: return "int";
    case DT_COUNT: break;
    }
    return "float";
}

static int round_up(int x, int m) { return (x + m - 1) / m * m; }
static int imin(int a, int b) { return a < b ? a : b; }
static int imax(int a, int b) { return a > b ? a : b; }

/* Threads for a one-dimensional loop over n elements: a multiple of 32, at most 256. */
static int threads_for(int n) { return imin(256, round_up(n > 0 ? n : 1, 32)); }

/*
 * Elements per vector access (the templates' VEC) for rows of n elements whose
 * pointers have the given dtypes: enough that the narrowest dtype fills one
 * 16-byte (128-bit) access, halved until it divides n, so every row start
 * stays aligned (values and weights start 256-byte aligned); 1 is scalar.
 */
static int vec_width(int n, int ndt, const DType *dts) {
    int narrowest = 16;
    for (int i = 0; i < ndt; i++)
        if (dtype_size(dts[i]) < narrowest) narrowest = dtype_size(dts[i]);
    int vec = 16 / (narrowest > 0 ? narrowest : 1);
    while (vec > 1 && n % vec != 0) vec /= 2;
    return vec;
}

/* A float literal that C++ accepts: 1e-05f, 0.125f, 1.0f. */
static const char *float_literal(Arena *a, double x) {
    char buf[64];
    snprintf(buf, sizeof buf, "%.9g", x);
    if (!strpbrk(buf, ".eEn")) strcat(buf, ".0");
    strcat(buf, "f");
    return arena_strdup(a, buf);
}

/* ------------------------------------------------------------------ */
/* Kernel specs                                                        */
/* ------------------------------------------------------------------ */

/* What one launch needs: the kernel (template + values) and how it is launched. */
typedef struct KSpec {
    const char *tmpl;       /* template file */
    const char *name;       /* kernel name (before collision suffixes) */
    TmplArgs args;          /* placeholder values, KERNEL_NAME and COMMENT excluded */
    SymDim grid[3];         /* grid of this launch (unset axes: 1) */
    int block;              /* threads per block (x only) */
    int smem;               /* dynamic shared memory bytes (0: the templates use static shared memory) */
    const char *geometry;   /* launch shape in words, for the kernel comment */
    bool residue_choice;    /* a residue kind on the tensor-core path: choice says which calls run the plain loop */
    AttnResidueChoice choice; /* with residue_choice: the cost model's plain-loop runs (the plan's residue_plain) */
    StepArg sargs[STEP_MAX_ARGS]; /* arguments in parameter order */
    int nsargs;             /* entries in sargs */
} KSpec;

/* Per distinct kernel: the spec it was made from and the .arch lines using it. */
typedef struct KernelInfo {
    KSpec spec;             /* the spec of its first launch (values identical for all) */
    int locs[8];            /* first node of each distinct (file, line), up to 8 */
    int nlocs;
    int more_locs;          /* distinct lines beyond the 8 kept */
} KernelInfo;

/* The emitter's working state. */
typedef struct Emit {
    EmitState st;           /* what plan.c reads */
    KernelInfo *info;       /* parallel to st.kernels */
    int cap_kernels;        /* allocated entries of st.kernels and info */
    int cap_steps;          /* allocated entries of st.steps */
    bool decode;            /* emitting the "decode" program (T = 1): attention uses attn_decode.cuh */
    bool decode_unbatched;  /* a decode-program step cannot run rows of different sequences (emit_batchable) */
} Emit;

static void internal(Emit *e, const Node *n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void internal(Emit *e, const Node *n, const char *fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (n) diag_plain_error(e->st.d, "internal error: emit: node %d (%s): %s", n->id, op_name(n->op), msg);
    else diag_plain_error(e->st.d, "internal error: emit: %s", msg);
}

static const Value *val(const Emit *e, int id) { return e->st.g->values[id]; }

static StepArg arg_value(int id) { return (StepArg){.kind = ARG_VALUE, .value = id}; }
static StepArg arg_tokens(void) { return (StepArg){.kind = ARG_INT, .dim = SYMDIM_T}; }
/* P, the position of the call's first token. */
static StepArg arg_position(void) { return (StepArg){.kind = ARG_INT, .dim = {.p = 1, .div = 1}}; }
/* The rows a key/value state holds: its capacity, the stride between its heads (or parts). */
static StepArg arg_kv_rows(const Value *kv) { return (StepArg){.kind = ARG_INT, .dim = SYMDIM_CONST(kv->capacity)}; }
/* A batched decode step's sequence table (positions, then sequence indices: EmitState.seq_table). */
static StepArg arg_seq_table(const Emit *e) { return (StepArg){.kind = ARG_ARENA, .offset = e->st.seq_table}; }
/* B, the sequences of a batched decode step (one row each); 0 in every other call. */
static StepArg arg_nseq(void) { return (StepArg){.kind = ARG_INT, .dim = {.b = 1, .div = 1}}; }
/* Elements from one sequence's copy of a state to the next (a batch session's states lie end to end). */
static StepArg arg_seq_stride(const Value *st) {
    return (StepArg){.kind = ARG_INT, .dim = SYMDIM_CONST((long)ir_state_numel(st))};
}

/* [T, c] activation width, 0 if the value is not of that form. */
static int act_width(const Value *v) {
    return v->rank == 2 && symdim_eq(v->dims[0], SYMDIM_T) ? ir_dim(v, 1) : 0;
}

/* Appends `<tag><dtype>` to a kernel name suffix: _inf16, _wbf16. */
static void append_dtype(char *buf, size_t n, const char *tag, DType t) {
    size_t k = strlen(buf);
    if (k < n) snprintf(buf + k, n - k, "%s%s", tag, dtype_plan_name(t));
}

/* Name suffix for the dtypes: the activation dtype, then w<dtype> / kv<dtype> where they differ. */
static void dtype_suffix(char *buf, size_t n, DType act, int nw, const DType *w, int has_kv, DType kv) {
    buf[0] = '\0';
    append_dtype(buf, n, "_", act);
    DType wd = act;
    for (int i = 0; i < nw; i++)
        if (w[i] != act) wd = w[i];
    if (wd != act) append_dtype(buf, n, "_w", wd);
    if (has_kv && kv != act) append_dtype(buf, n, "_kv", kv);
}

static void set_dtype(KSpec *ks, const char *key, DType t) { tmpl_set(&ks->args, key, cuda_type(t)); }

static void set_int(Emit *e, KSpec *ks, const char *key, long v) { tmpl_setf(e->st.arena, &ks->args, key, "%ld", v); }
static void set_flag(KSpec *ks, const char *key, bool on) { tmpl_set(&ks->args, key, on ? "1" : "0"); }

/* One block of `threads` per token; arguments: the node's inputs, its output, T. */
static void per_token_launch(Emit *e, const Node *n, KSpec *ks, int threads) {
    ks->grid[0] = SYMDIM_T;
    ks->block = threads;
    ks->geometry = arena_printf(e->st.arena, "grid (T, 1, 1), block %d", threads);
    for (int i = 0; i < n->nin; i++) ks->sargs[ks->nsargs++] = arg_value(n->in[i]);
    ks->sargs[ks->nsargs++] = arg_value(n->out);
    ks->sargs[ks->nsargs++] = arg_tokens();
}

/*
 * What an embed.cuh launch shares whether its rows come from the token table
 * (embed) or from an activation (pos_add, FROM_X): the row width D, the rows'
 * and the learned positions' dtypes dts[0..1], the positions, the launch
 * (one block per token; arguments: the node's inputs, its output, T, P).
 */
static void spec_embed_rows(Emit *e, const Node *n, KSpec *ks, int D, const DType dts[2]) {
    bool learned = n->pos == POS_LEARNED;
    DType out = val(e, n->out)->dtype;
    DType all[3] = {dts[0], dts[1], out};
    int vec = vec_width(D, 3, all);
    int threads = threads_for(D / vec);
    ks->tmpl = "embed.cuh";
    set_int(e, ks, "D", D);
    set_int(e, ks, "VEC", vec);
    set_int(e, ks, "THREADS", threads);
    if (learned) set_dtype(ks, "T_WPE", dts[1]);
    set_dtype(ks, "T_OUT", out);
    set_flag(ks, "POS_LEARNED", learned);
    set_flag(ks, "POS_SINUSOIDAL", n->pos == POS_SINUSOIDAL);
    set_flag(ks, "FAIRSEQ", n->pia_style == PIA_FAIRSEQ);
    set_flag(ks, "POS_RESTART", n->pos_mod > 0);
    set_int(e, ks, "POS_MOD", n->pos_mod);
    if (n->pos_mod > 0) ks->name = arena_printf(e->st.arena, "%s_restart%d", ks->name, n->pos_mod);
    set_flag(ks, "SEQ_ROWS", e->decode); /* the decode program's rows may be sequences of their own */
    if (e->decode) ks->name = arena_printf(e->st.arena, "%s_seq", ks->name);
    per_token_launch(e, n, ks, threads);
    ks->sargs[ks->nsargs++] = arg_position(); /* token t is at position P + t */
    if (e->decode) {
        ks->sargs[ks->nsargs++] = arg_seq_table(e);
        ks->sargs[ks->nsargs++] = arg_nseq();
    }
}

/* The positions part of an embed / pos_add kernel name: the kind, `_fairseq` after a fairseq-style sinusoid. */
static const char *embed_pos_label(const Node *n) {
    return n->pia_style == PIA_FAIRSEQ ? "sinusoidal_fairseq" : pos_kind_name(n->pos);
}

static bool spec_embed(Emit *e, const Node *n, KSpec *ks) {
    bool learned = n->pos == POS_LEARNED;
    if (n->nin != (learned ? 3 : 2)) {
        internal(e, n, "embed with positions '%s' has %d inputs", learned ? "learned" : "computed", n->nin);
        return false;
    }
    const Value *tok = val(e, n->in[0]), *wte = val(e, n->in[1]), *x = val(e, n->out);
    int D = act_width(x);
    if (!D || wte->rank != 2 || ir_dim(wte, 1) != D || tok->dtype != DT_I32) {
        internal(e, n, "unexpected embed shapes");
        return false;
    }
    DType wd[2] = {wte->dtype, learned ? val(e, n->in[2])->dtype : wte->dtype};
    char sfx[64];
    dtype_suffix(sfx, sizeof sfx, x->dtype, 2, wd, 0, DT_F32);
    ks->name = arena_printf(e->st.arena, "shortc_embed_%s_d%d%s", embed_pos_label(n), D, sfx);
    set_int(e, ks, "VOCAB", ir_dim(wte, 0));
    set_dtype(ks, "T_WTE", wte->dtype);
    set_flag(ks, "FROM_X", false);
    spec_embed_rows(e, n, ks, D, wd);
    return true;
}

/*
 * LayerNorm / RMSNorm of x (input 0) with gamma (and beta). A norm with an
 * add fused in (norm_add) also takes the add's operands a and b (the last two
 * inputs) and writes x = a + b itself before normalizing it.
 */
static bool spec_norm(Emit *e, const Node *n, KSpec *ks) {
    bool ln = n->norm == NORM_LAYERNORM;
    int nparams = ln ? 2 : 1;
    if (n->nin != 1 + nparams + (n->norm_add ? 2 : 0)) {
        internal(e, n, "%s with %d inputs", norm_kind_name(n->norm), n->nin);
        return false;
    }
    const Value *x = val(e, n->in[0]), *gamma = val(e, n->in[1]), *y = val(e, n->out);
    const Value *a = n->norm_add ? val(e, n->in[n->nin - 2]) : x, *b = n->norm_add ? val(e, n->in[n->nin - 1]) : x;
    int D = act_width(x);
    if (!D || act_width(y) != D || act_width(a) != D || act_width(b) != D) {
        internal(e, n, "unexpected norm shapes");
        return false;
    }
    DType wd[2] = {gamma->dtype, ln ? val(e, n->in[2])->dtype : gamma->dtype};
    char sfx[64];
    dtype_suffix(sfx, sizeof sfx, y->dtype, 2, wd, 0, DT_F32);
    if (x->dtype != y->dtype) append_dtype(sfx, sizeof sfx, "_in", x->dtype);
    if (a->dtype != x->dtype || b->dtype != x->dtype) {
        append_dtype(sfx, sizeof sfx, "_a", a->dtype);
        append_dtype(sfx, sizeof sfx, "_b", b->dtype);
    }
    ks->tmpl = "norm.cuh";
    ks->name = arena_printf(e->st.arena, "shortc_norm_%s%s_d%d%s", norm_kind_name(n->norm),
                            !n->norm_add ? "" : n->sum_unused ? "_addonly" : "_add", D, sfx);
    DType dts[6] = {x->dtype, wd[0], wd[1], y->dtype, a->dtype, b->dtype};
    int vec = vec_width(D, 6, dts);
    int threads = threads_for(D / vec);
    set_int(e, ks, "D", D);
    set_int(e, ks, "VEC", vec);
    set_int(e, ks, "THREADS", threads);
    tmpl_set(&ks->args, "EPS", float_literal(e->st.arena, n->eps));
    set_dtype(ks, "T_IN", x->dtype);
    set_dtype(ks, "T_GAMMA", gamma->dtype);
    if (ln) set_dtype(ks, "T_BETA", wd[1]);
    set_dtype(ks, "T_OUT", y->dtype);
    if (n->norm_add) {
        set_dtype(ks, "T_A", a->dtype);
        set_dtype(ks, "T_B", b->dtype);
    }
    set_flag(ks, "LAYERNORM", ln);
    set_flag(ks, "ADD", n->norm_add);
    set_flag(ks, "STORE_SUM", n->norm_add && !n->sum_unused);
    per_token_launch(e, n, ks, threads);
    return true;
}

/*
 * An elementwise pass over a [rows, N] tensor: y = act(x + bias) + residual,
 * from templates/epilogue.cuh. Used for fused matmul epilogues (x = y, in
 * place, or x = the fp32 staging copy of a mixed-type GEMM's result), the
 * unfused bias / act / add nodes, and with no parts at all as a dtype
 * conversion. The row count is the kernel's int argument (T for activations).
 */
typedef struct EpiSpec {
    StepArg x, y;          /* input and output pointers */
    DType xdt, ydt;        /* their dtypes */
    int n;                 /* row width N */
    SymDim rows;           /* row count: T, or a constant for a weight */
    int bias;              /* bias value id, -1 for none */
    Activation act;        /* activation after the bias */
    int gate;              /* gate value id (a gated FFN's gate GEMM result), -1 for none */
    Activation gate_act;   /* the gate's activation: the value is multiplied by gate_act(gate) */
    int residual;          /* residual value id, -1 for none */
} EpiSpec;

static bool spec_epilogue(Emit *e, const Node *n, KSpec *ks, const EpiSpec *ep) {
    int N = ep->n;
    if (N <= 0 || (ep->bias >= 0 && (val(e, ep->bias)->rank != 1 || ir_dim(val(e, ep->bias), 0) != N)) ||
        (ep->residual >= 0 && act_width(val(e, ep->residual)) != N) ||
        (ep->gate >= 0 && (act_width(val(e, ep->gate)) != N || ep->gate_act == ACT_NONE))) {
        internal(e, n, "unexpected epilogue shapes");
        return false;
    }
    bool convert = ep->bias < 0 && ep->act == ACT_NONE && ep->residual < 0 && ep->gate < 0;
    char parts[96] = "";
    size_t k = 0;
    if (ep->bias >= 0) k += (size_t)snprintf(parts + k, sizeof parts - k, "_bias");
    if (ep->act != ACT_NONE) k += (size_t)snprintf(parts + k, sizeof parts - k, "_%s", activation_name(ep->act));
    if (ep->gate >= 0) k += (size_t)snprintf(parts + k, sizeof parts - k, "_gate_%s", activation_name(ep->gate_act));
    if (ep->residual >= 0) snprintf(parts + k, sizeof parts - k, "_residual");
    char sfx[64];
    if (convert) {
        snprintf(sfx, sizeof sfx, "_%s_to_%s", dtype_plan_name(ep->xdt), dtype_plan_name(ep->ydt));
    } else {
        DType wd[1] = {ep->bias >= 0 ? val(e, ep->bias)->dtype : ep->ydt};
        dtype_suffix(sfx, sizeof sfx, ep->ydt, 1, wd, 0, DT_F32);
        DType rdt = ep->residual >= 0 ? val(e, ep->residual)->dtype : ep->ydt;
        if (ep->xdt != ep->ydt) append_dtype(sfx, sizeof sfx, "_in", ep->xdt);
        if (rdt != ep->ydt) append_dtype(sfx, sizeof sfx, "_res", rdt);
        DType gdt = ep->gate >= 0 ? val(e, ep->gate)->dtype : ep->ydt;
        if (gdt != ep->ydt) append_dtype(sfx, sizeof sfx, "_gate", gdt);
    }
    ks->tmpl = "epilogue.cuh";
    ks->name = convert ? arena_printf(e->st.arena, "shortc_convert_n%d%s", N, sfx)
                       : arena_printf(e->st.arena, "shortc_epilogue%s_n%d%s", parts, N, sfx);
    DType dts[5] = {ep->xdt, ep->ydt, ep->bias >= 0 ? val(e, ep->bias)->dtype : ep->ydt,
                    ep->residual >= 0 ? val(e, ep->residual)->dtype : ep->ydt,
                    ep->gate >= 0 ? val(e, ep->gate)->dtype : ep->ydt};
    int vec = vec_width(N, 5, dts);
    int threads = threads_for(N / vec);
    set_int(e, ks, "N", N);
    set_int(e, ks, "VEC", vec);
    set_int(e, ks, "THREADS", threads);
    set_dtype(ks, "T_X", ep->xdt);
    set_dtype(ks, "T_Y", ep->ydt);
    if (ep->bias >= 0) set_dtype(ks, "T_BIAS", val(e, ep->bias)->dtype);
    if (ep->residual >= 0) set_dtype(ks, "T_RES", val(e, ep->residual)->dtype);
    if (ep->gate >= 0) set_dtype(ks, "T_GATE", val(e, ep->gate)->dtype);
    set_flag(ks, "HAS_BIAS", ep->bias >= 0);
    set_flag(ks, "HAS_RESIDUAL", ep->residual >= 0);
    set_flag(ks, "ACT_RELU", ep->act == ACT_RELU);
    set_flag(ks, "ACT_GELU", ep->act == ACT_GELU);
    set_flag(ks, "ACT_GELU_TANH", ep->act == ACT_GELU_TANH);
    set_flag(ks, "ACT_SILU", ep->act == ACT_SILU);
    set_flag(ks, "HAS_GATE", ep->gate >= 0);
    set_flag(ks, "GATE_SILU", ep->gate >= 0 && ep->gate_act == ACT_SILU);
    set_flag(ks, "GATE_GELU", ep->gate >= 0 && ep->gate_act == ACT_GELU);
    int bx = (N / vec + threads - 1) / threads;
    ks->grid[0] = SYMDIM_CONST(bx);
    ks->grid[1] = ep->rows;
    ks->block = threads;
    ks->geometry = arena_printf(e->st.arena, "grid (%d, %s, 1), block %d", bx, convert ? "rows" : "T", threads);
    ks->sargs[ks->nsargs++] = ep->x;
    ks->sargs[ks->nsargs++] = ep->y;
    if (ep->bias >= 0) ks->sargs[ks->nsargs++] = arg_value(ep->bias);
    if (ep->gate >= 0) ks->sargs[ks->nsargs++] = arg_value(ep->gate);
    if (ep->residual >= 0) ks->sargs[ks->nsargs++] = arg_value(ep->residual);
    ks->sargs[ks->nsargs++] = (StepArg){.kind = ARG_INT, .dim = ep->rows};
    return true;
}

/* EpiSpec for an activation-to-activation pass over [T, N] values x -> node output. */
static bool epi_values(Emit *e, const Node *n, EpiSpec *ep, int x, int bias, Activation act, int residual) {
    const Value *xv = val(e, x), *y = val(e, n->out);
    int N = act_width(y);
    if (!N || act_width(xv) != N) {
        internal(e, n, "unexpected epilogue shapes");
        return false;
    }
    *ep = (EpiSpec){.x = arg_value(x), .y = arg_value(n->out), .xdt = xv->dtype, .ydt = y->dtype, .n = N,
                    .rows = SYMDIM_T, .bias = bias, .act = act, .gate = -1, .residual = residual};
    return true;
}

/* Heads and head width of an attention-family node, checked against qkv. */
static bool attn_dims(Emit *e, const Node *n, int *H, int *hd) {
    const Value *qkv = val(e, n->in[0]);
    *H = n->heads;
    *hd = n->head_dim;
    int G = node_kv_heads(n);
    if (*H <= 0 || *hd <= 0 || G <= 0 || *H % G || act_width(qkv) != (*H + 2 * G) * *hd) {
        internal(e, n, "qkv width %d does not match (%d + 2 x %d) heads x %d", act_width(qkv), *H, G, *hd);
        return false;
    }
    return true;
}

static bool kv_value_ok(Emit *e, const Node *n, const Value *kv, int H, int hd) {
    H = node_kv_heads(n); /* the state holds the K/V heads */
    bool htd = kv->order == ORD_HEADS_TOKENS_DIM;
    if (kv->cls != VC_KV || kv->rank != 4 || ir_dim(kv, 0) != 2 || ir_dim(kv, 3) != hd ||
        (htd ? (ir_dim(kv, 1) != H || ir_token_axis(kv) != 2) : (kv->order != ORD_TOKENS_HEADS_DIM || ir_token_axis(kv) != 1 || ir_dim(kv, 2) != H))) {
        internal(e, n, "unexpected key/value state %s", kv->name);
        return false;
    }
    return true;
}

/* "_kvG" for grouped K/V heads (G < H), else "": kernels of different G differ in their indexing. */
static const char *kv_heads_suffix(Emit *e, const Node *n) {
    int G = node_kv_heads(n);
    return G == n->heads ? "" : arena_printf(e->st.arena, "_kv%d", G);
}

/* kv_write.cuh's rotary values (ROPE, HALF, INTERLEAVED, INV_FREQ, MSCALE, DYNAMIC, FACTOR, ORIG_MAX): the
 * frequencies of compiler/rope.c at the plan's fixed scaling, computed here once (dynamic scaling: the base
 * frequencies, which the kernel scales per call); false when out of memory. */
static bool rope_args(Emit *e, const Node *n, KSpec *ks) {
    const RopeSpec *r = n->rope;
    set_flag(ks, "ROPE", r != NULL);
    if (!r) return true;
    int half = r->dims / 2;
    double *inv = malloc(sizeof *inv * (size_t)(half + 1)), mscale = 1.0;
    if (!inv) {
        internal(e, n, "out of memory");
        return false;
    }
    rope_inv_freq(r, 0, inv, &mscale); /* seq_len 0: dynamic scaling's base frequencies */
    StrBuf b = {0};
    for (int i = 0; i < half; i++) sb_printf(&b, "%s%.9ef", i ? ", " : "{", inv[i]);
    sb_puts(&b, "}");
    free(inv);
    char *text = sb_take(&b, NULL);
    if (!text) {
        internal(e, n, "out of memory");
        return false;
    }
    tmpl_set(&ks->args, "INV_FREQ", arena_strdup(e->st.arena, text));
    free(text);
    set_int(e, ks, "HALF", half);
    set_flag(ks, "INTERLEAVED", r->interleaved);
    tmpl_set(&ks->args, "MSCALE", float_literal(e->st.arena, mscale));
    set_flag(ks, "DYNAMIC", r->scaling == ROPE_SCALE_DYNAMIC);
    tmpl_set(&ks->args, "FACTOR", float_literal(e->st.arena, r->factor));
    set_int(e, ks, "ORIG_MAX", r->original_max > 0 ? r->original_max : 1);
    return true;
}

/* "_rope" and the scaling for a rotary kv_write (its frequencies are in its text), else "". */
static const char *rope_suffix(Emit *e, const Node *n) {
    if (!n->rope) return "";
    return arena_printf(e->st.arena, "_rope%d%s%s", n->rope->dims, n->rope->interleaved ? "i" : "",
                        n->rope->scaling == ROPE_SCALE_NONE ? "" : arena_printf(e->st.arena, "_%s", rope_scaling_name(n->rope->scaling)));
}

static bool spec_kv_write(Emit *e, const Node *n, KSpec *ks) {
    int H, hd;
    if (n->nin != 1 || !attn_dims(e, n, &H, &hd)) return false;
    const Value *qkv = val(e, n->in[0]), *kv = val(e, n->out);
    if (!kv_value_ok(e, n, kv, H, hd)) return false;
    bool htd = kv->order == ORD_HEADS_TOKENS_DIM;
    char sfx[64];
    dtype_suffix(sfx, sizeof sfx, qkv->dtype, 0, NULL, 1, kv->dtype);
    ks->tmpl = "kv_write.cuh";
    int G = node_kv_heads(n);
    ks->name = arena_printf(e->st.arena, "shortc_kv_write_h%d%s_hd%d%s%s%s%s", H, kv_heads_suffix(e, n), hd, sfx,
                            htd ? "" : "_thd", rope_suffix(e, n), e->decode ? "_seq" : "");
    int threads = threads_for(G * hd);
    set_int(e, ks, "H", H);
    set_int(e, ks, "KVH", G);
    set_int(e, ks, "HD", hd);
    set_int(e, ks, "THREADS", threads);
    set_dtype(ks, "T_QKV", qkv->dtype);
    set_dtype(ks, "T_KV", kv->dtype);
    set_flag(ks, "KV_HTD", htd);
    set_flag(ks, "SEQ_ROWS", e->decode); /* the decode program's rows may be sequences of their own */
    if (!rope_args(e, n, ks)) return false;
    ks->grid[0] = SYMDIM_T;
    ks->grid[1] = SYMDIM_CONST(2);
    ks->block = threads;
    ks->geometry = arena_printf(e->st.arena, "grid (T, 2, 1), block %d: rows P..P+T-1 of the state", threads);
    ks->sargs[ks->nsargs++] = arg_value(n->in[0]);
    ks->sargs[ks->nsargs++] = arg_value(n->out);
    ks->sargs[ks->nsargs++] = arg_tokens();
    ks->sargs[ks->nsargs++] = arg_position();
    ks->sargs[ks->nsargs++] = arg_kv_rows(kv);
    if (e->decode) {
        ks->sargs[ks->nsargs++] = arg_seq_table(e);
        ks->sargs[ks->nsargs++] = arg_nseq();
        ks->sargs[ks->nsargs++] = arg_seq_stride(kv);
    }
    return true;
}

enum { SMEM_STATIC_LIMIT = SHORTC_SMEM_DEFAULT_LIMIT };

/* The name suffix and the template values every attention kernel of node n shares (attn_engine.cuh,
 * attn_decode.cuh): H, HD, SCALE, the qkv/KV/output types and the KV layout. */
static void attn_common(Emit *e, const Node *n, KSpec *k, int H, int hd, char *sfx, size_t sfxlen) {
    const Value *qkv = val(e, n->in[0]), *kv = val(e, n->in[1]), *y = val(e, n->out);
    dtype_suffix(sfx, sfxlen, y->dtype, 0, NULL, 1, kv->dtype);
    if (qkv->dtype != y->dtype) append_dtype(sfx, sfxlen, "_in", qkv->dtype);
    if (node_kv_heads(n) != H) { /* grouped K/V heads: in every attention kernel's name */
        size_t len = strlen(sfx);
        snprintf(sfx + len, sfxlen - len, "_kv%d", node_kv_heads(n));
    }
    set_int(e, k, "H", H);
    set_int(e, k, "KVH", node_kv_heads(n));
    set_int(e, k, "HD", hd);
    tmpl_set(&k->args, "SCALE", float_literal(e->st.arena, 1.0 / sqrt((double)hd)));
    set_dtype(k, "T_QKV", qkv->dtype);
    set_dtype(k, "T_KV", kv->dtype);
    set_dtype(k, "T_OUT", y->dtype);
    set_flag(k, "KV_HTD", kv->order == ORD_HEADS_TOKENS_DIM);
}

static bool add_launch(Emit *e, const Node *n, const KSpec *ks);

/* Keys per chunk of decode attention (attn_decode.cuh): one per thread of a block. */
enum { DECODE_KPS = 64 };
/* Most sequences a batched decode step runs (capped by the segment: the arena holds a segment of rows). */
enum { DECODE_BATCH_MAX = 64 };
/* Chunks of decode attention over a key/value state: its capacity in chunks of DECODE_KPS keys. */
static int decode_chunks(const Value *kv) { return (kv->capacity + DECODE_KPS - 1) / DECODE_KPS; }

/* Whether decode attention reads K and V in 16-byte pieces (attn_decode.cuh VEC_KV): 2-byte elements,
 * rows of whole pieces, no more pieces per row than threads. */
static bool decode_vec_kv(DType kv, int hd) {
    return (kv == DT_F16 || kv == DT_BF16) && hd % 8 == 0 && hd / 8 <= DECODE_KPS;
}

/* Node n's attention pattern over ntok positions into *pat; false after an error (reported at n). */
static bool build_pattern(Emit *e, const Node *n, int ntok, AttnPattern *pat) {
    char err[256];
    if (attn_pattern_build(pat, &n->attn, n->layer, n->heads, ntok, err, sizeof err)) {
        pat->alibi = n->alibi; /* the score term the kernels' _extra adds */
        return true;
    }
    diag_error(e->st.d, n->src, "%s", err);
    return false;
}

/* Sets kernel k's HOOKS to the heap text hooks (freed here); false when it is NULL (out of memory). */
static bool set_hooks(Emit *e, const Node *n, KSpec *k, char *hooks) {
    if (!hooks) {
        internal(e, n, "out of memory writing the attention hooks");
        return false;
    }
    size_t len = strlen(hooks);
    while (len && hooks[len - 1] == '\n') hooks[--len] = '\0'; /* the kernel template ends the HOOKS line */
    tmpl_set(&k->args, "HOOKS", arena_strdup(e->st.arena, hooks));
    free(hooks);
    return true;
}

/* A sparse kind's HOOKS for decode kernel k (its pattern at the state's capacity); false after an error. */
static bool decode_hooks(Emit *e, const Node *n, KSpec *k, int ntok) {
    AttnPattern pat;
    if (!build_pattern(e, n, ntok, &pat)) return false;
    char *hooks = attn_visible_hooks(&pat, k->name);
    attn_pattern_free(&pat);
    return set_hooks(e, n, k, hooks);
}

/*
 * Decode attention (the "decode" program, T = 1): a partial kernel over chunks of DECODE_KPS keys
 * (grid ceil((P+1)/KPS) x H, so the launch covers exactly the keys the query sees) into the arena's
 * decode area, launched here, and the combine kernel (grid H) left in ks for the caller. A sparse kind
 * tests each key with its visibility hook (VISIBLE); its combine kernel is shared by every sparse kind.
 */
static bool spec_attention_decode(Emit *e, const Node *n, KSpec *ks, int H, int hd) {
    const Value *kv = val(e, n->in[1]);
    bool htd = kv->order == ORD_HEADS_TOKENS_DIM, sparse = attn_decode_kind(&n->attn);
    char sfx[64];
    int maxs = decode_chunks(kv);
    const char *kind = sparse ? arena_printf(e->st.arena, "_%s%s", attn_kind_name(n->attn.kind),
                                             attn_kernel_suffix(e->st.arena, &n->attn, n->layer))
                              : "";
    StepArg part = {.kind = ARG_ARENA, .offset = e->st.decode_offset};
    KSpec pk;
    memset(&pk, 0, sizeof pk);
    for (int combine = 0; combine < 2; combine++) {
        KSpec *k = combine ? ks : &pk;
        attn_common(e, n, k, H, hd, sfx, sizeof sfx);
        k->tmpl = "attn_decode.cuh";
        k->name = arena_printf(e->st.arena, "shortc_attn_decode_%s%s_h%d_hd%d%s%s%s", combine ? "combine" : "partial",
                               !sparse ? "" : combine ? "_sparse" : kind, H, hd, sfx, htd ? "" : "_thd",
                               n->alibi && !combine ? "_alibi" : "");
        set_int(e, k, "KPS", DECODE_KPS);
        set_int(e, k, "MAXS", maxs);
        set_int(e, k, "THREADS", DECODE_KPS);
        set_flag(k, "COMBINE", combine);
        set_flag(k, "VEC_KV", decode_vec_kv(kv->dtype, hd));
        set_flag(k, "VISIBLE", sparse);
        set_flag(k, "ALIBI", n->alibi && !combine); /* the score's -slope_h (P - k) */
        if (n->alibi && !combine) tmpl_set(&k->args, "SLOPES", attn_alibi_slopes(e->st.arena, H));
        if (sparse && !combine && !decode_hooks(e, n, k, kv->capacity)) return false;
        k->block = DECODE_KPS;
    }
    /* a batched decode step's rows are q rows of 3*H*hd (kv_write.cuh's layout); another layout runs one sequence */
    if (act_width(val(e, n->in[0])) != (H + 2 * node_kv_heads(n)) * hd) e->decode_unbatched = true;
    pk.grid[0] = (SymDim){.p = 1, .c = 1, .div = DECODE_KPS}; /* ceil((P + 1) / KPS) chunks (P: the furthest) */
    pk.grid[1] = SYMDIM_CONST(H);
    pk.grid[2] = SYMDIM_T; /* a row per sequence of a batched decode step */
    pk.geometry = arena_printf(e->st.arena,
                               "grid (ceil((P+1)/%d), %d, T), block %d: one query per row (T = 1, or a batched decode "
                               "step's sequences), a chunk of %d keys of one head per block; partial softmaxes to the "
                               "arena",
                               DECODE_KPS, H, DECODE_KPS, DECODE_KPS);
    pk.sargs[pk.nsargs++] = arg_value(n->in[0]);
    pk.sargs[pk.nsargs++] = arg_value(n->in[1]);
    pk.sargs[pk.nsargs++] = part;
    pk.sargs[pk.nsargs++] = arg_tokens();
    pk.sargs[pk.nsargs++] = arg_position();
    pk.sargs[pk.nsargs++] = arg_kv_rows(kv);
    pk.sargs[pk.nsargs++] = arg_seq_table(e);
    pk.sargs[pk.nsargs++] = arg_nseq();
    pk.sargs[pk.nsargs++] = arg_seq_stride(kv);
    if (!add_launch(e, n, &pk)) return false;
    ks->grid[0] = SYMDIM_CONST(H);
    ks->grid[1] = SYMDIM_T;
    ks->geometry = arena_printf(e->st.arena, "grid (%d, T, 1), block %d: combines the chunks of one head of one row "
                                "per block", H, DECODE_KPS);
    ks->sargs[ks->nsargs++] = part;
    ks->sargs[ks->nsargs++] = arg_value(n->out);
    ks->sargs[ks->nsargs++] = arg_tokens();
    ks->sargs[ks->nsargs++] = arg_position();
    ks->sargs[ks->nsargs++] = arg_seq_table(e);
    ks->sargs[ks->nsargs++] = arg_nseq();
    return true;
}

/* Tile sizes of the engine's CUDA-core path: the largest that fit the static shared memory limit; false if none. */
bool attn_tiles(int hd, int warps, int *kt, int *qpw, int *smem) {
    static const int kts[] = {32, 16, 8}, qpws[] = {4, 2, 1};
    *kt = 0;
    for (int a = 0; a < 3 && !*kt; a++)
        for (int b = 0; b < 3 && !*kt; b++) {
            long long bytes = 4LL * (warps * qpws[b] * (long long)hd + kts[a] * (hd + 1LL) + kts[a] * (long long)hd) +
                              4LL * kts[a];
            if (bytes <= SMEM_STATIC_LIMIT) {
                *kt = kts[a];
                *qpw = qpws[b];
                *smem = (int)bytes;
            }
        }
    return *kt != 0;
}

/* Warps per block of the attention engine's CUDA-core path (attn_engine.cuh) and of its tensor-core path
 * (attn_mma.cuh: ATTN_MMA_WARP_ROWS query rows each), and the largest head_dim of the tensor-core path. */
enum { ENGINE_WARPS = 4, MMA_WARPS = ATTN_MMA_QT / ATTN_MMA_WARP_ROWS, MMA_MAX_HD = 128 };

/* Causal attention, or a sparse kind through its visibility hook, of a plain layer (no extra key, no
 * positional cache: the memory family has its own keys and score terms) in a model that keeps a KV cache
 * between calls (a recurrent model runs whole windows only: no decode program). */
bool attn_decode_kernel(const Graph *g, const Node *n) {
    return n->op == OP_ATTENTION && n->nin == 2 && !n->infused && !n->rec_key && !ir_recurrent(g) &&
           (attn_kind_row(n->attn.kind)->engines & ATTN_ENGINE_DECODE);
}

/*
 * Transformer-XL's relative attention on the tensor-core path (attn_mma.cuh REL): qkv, the relative keys and
 * the output (the type of the memory's projected keys) all of one type, since the kernel copies qkv's and
 * the table's rows into the MMA's tiles as they are; key tiles of 32, or 16 where 32 does not fit (head_dim
 * 128: attn_mma_rel_smem). Not 64 at head_dim 64: its 87 KB of shared memory leave sm_80 one block per SM,
 * and ptxas spills its registers (the band's products and the scores of 32 rows x 64 keys).
 */
static bool rel_mma_tiles(const Graph *g, const Node *n, int *kt, int *smem) {
    DType q = g->values[n->in[0]]->dtype, r = g->values[n->in[1]]->dtype, y = g->values[n->out]->dtype;
    if (q != r || q != y) return false;
    for (*kt = 32; *kt >= 16; *kt /= 2)
        if ((*smem = attn_mma_rel_smem(n->head_dim, *kt)) <= SHORTC_SMEM_OPTIN_LIMIT) return true;
    return false;
}

/* The element size of node n's tensor-core MMAs: 2 for fp16/bf16 queries and keys (mma.m16n8k16), 4 for fp32
 * queries, keys and output under `math tf32` (TF32 MMAs, mma.m16n8k8), 0 when neither (the CUDA-core path). */
static int mma_esize(const Graph *g, const Node *n) {
    DType q = g->values[n->in[0]]->dtype, k = g->values[n->in[1]]->dtype, y = g->values[n->out]->dtype;
    if ((q == DT_F16 || q == DT_BF16) && (k == DT_F16 || k == DT_BF16)) return 2;
    return g->spec && g->spec->tf32 && q == DT_F32 && k == DT_F32 && y == DT_F32 ? 4 : 0;
}

/*
 * Whether node n's attention runs on the tensor-core path (templates/attn_mma.cuh) and, if so, its
 * keys per tile and shared memory: queries and keys/values fp16 or bf16 (the MMA's element type is the
 * key/value type), or all fp32 under `math tf32` (TF32 MMAs: mma_esize), rows of whole 16-byte pieces
 * (head_dim a multiple of 8, of 4 in fp32; padded to 16 in shared memory), head_dim at most MMA_MAX_HD (the
 * output accumulators stay in registers), a kind whose hooks the template knows (attn_mma_kind) and tiles
 * (attn_mma_kt_fit, attn_mma_smem) within the dynamic shared memory the emitter plans for
 * (SHORTC_SMEM_OPTIN_LIMIT). The recurrence's extra key (rec_key) is merged after the key tiles;
 * position-infused attention (causal, its table stored as the keys are: attn_mma_pia_ok) loads a third tile
 * of positional keys (attn_mma_pia_smem). Transformer-XL's relative attention needs 2-byte elements
 * (rel_mma_tiles). Anything else keeps the CUDA-core path (attn_engine.cuh).
 */
bool attn_mma_tiles(const Graph *g, const Node *n, int *kt, int *smem) {
    int hd = n->head_dim, es = mma_esize(g, n);
    if (!es || hd % (16 / es) || hd > MMA_MAX_HD || !attn_mma_kind(&n->attn) || (n->infused && !attn_mma_pia_ok(g, n)))
        return false;
    if (n->op == OP_REL_ATTENTION) return es == 2 && rel_mma_tiles(g, n, kt, smem);
    bool gather = attn_kind_row(n->attn.kind)->keys == ATTN_KEYS_GATHERED;
    *kt = attn_mma_kt_fit(hd, es, gather, n->infused);
    *smem = *kt ? attn_mma_smem(hd, *kt, gather, es) + (n->infused ? attn_mma_pia_smem(hd, *kt, es) : 0) : 0;
    return *kt != 0;
}

/* Position-infused attention on the tensor-core path (attn_mma.cuh PIA): causal (banded keys), and the
 * table's rows in the keys' element type (they are copied beside K into shared memory and multiplied as K). */
bool attn_mma_pia_ok(const Graph *g, const Node *n) {
    return n->attn.kind == ATTN_CAUSAL && n->nin == 3 && g->values[n->in[2]]->dtype == g->values[n->in[1]]->dtype;
}

/* Shared-memory row stride of the tensor-core path in elements of es bytes: head_dim rounded up to 16, plus
 * 16 bytes (attn_mma.cuh LD). */
static int mma_ld(int hd, int es) { return (hd + 15) / 16 * 16 + 16 / es; }

int attn_mma_pia_smem(int hd, int kt, int es) { return kt * mma_ld(hd, es) * es; }

int attn_mma_kt(int hd) { return hd <= 64 ? 64 : 32; }

int attn_mma_kt_fit(int hd, int es, bool gather, bool pia) {
    /* fp32: 64 up to 32 dims, 32 up to 64, else 16 (the fp16 tiles need more than 255 registers at sm_80:
     * the k8 MMAs double the K fragments per tile and V's plain shared loads are hoisted, so causal, window
     * and gaussian spilled at head_dim 64 with 64 keys, at 80 and 128 with 32) */
    int first = es == 4 ? (hd <= 32 ? 64 : hd <= 64 ? 32 : 16) : attn_mma_kt(hd);
    for (int kt = first; kt >= (es == 2 ? first : 16); kt /= 2)
        if (attn_mma_smem(hd, kt, gather, es) + (pia ? attn_mma_pia_smem(hd, kt, es) : 0) <= SHORTC_SMEM_OPTIN_LIMIT)
            return kt;
    return 0;
}

int attn_mma_smem(int hd, int kt, bool gather, int es) {
    return (ATTN_MMA_QT + 2 * kt) * mma_ld(hd, es) * es + (gather ? 2 * kt * 4 : 0);
}

int attn_mma_rel_smem(int hd, int kt) {
    int hdp = (hd + 15) / 16 * 16, ld = hdp + 8;
    return attn_mma_smem(hd, kt, false, 2) + (ATTN_MMA_QT + kt) * ld * 2 + hdp * 8 + MMA_WARPS * 16 * (kt + 24) * 4;
}

/* Queries P..P+T-1 touch tiles P/QT..(P+T-1)/QT: at most ceil((T - 1)/QT) + 1. With dilation D, residue
 * indices a0..a1 of span D*QT, a1 - a0 <= ceil((T - 1)/(D*QT)), D tiles each: at most ceil((T - 1)/QT) + 2D - 1. */
int attn_mma_grid_pad(int max_dil) { return (max_dil > 1 ? 2 * max_dil - 1 : 1) * ATTN_MMA_QT - 1; }

/* The kind's hooks and key lists (HOOKS) for kernel ks->name (mma: the tensor-core path, where a residue kind also
 * gets the cost model's per-call choice of tile loop, ks->choice); false after an error. residue: for a residue kind
 * (attn_pattern_residue: its query tiles group queries by residue) the largest dilation of any head, else 0. */
static bool attn_engine_hooks(Emit *e, const Node *n, KSpec *ks, int qt, int kt, int ntok, bool mma, bool *gather, bool *heads,
                              bool *banded, int *residue) {
    AttnPattern pat;
    if (!build_pattern(e, n, ntok, &pat)) return false;
    enum { MAX_LIST = 1 << 23 };
    int dil, reach, globals;
    double bound = attn_list_bound(&pat, qt, kt, (ntok + qt - 1) / qt);
    if (bound > MAX_LIST) {
        diag_error(e->st.d, n->src, "attention '%s': the key lists for %d positions could hold %.0f entries (at most %d); use a shorter segment",
                   attn_kind_name(n->attn.kind), ntok, bound, MAX_LIST);
        attn_pattern_free(&pat);
        return false;
    }
    /* residue kinds on the tensor-core path: the calls the cost model runs as the plain tile loop */
    ks->residue_choice = mma && attn_pattern_residue(&pat, 0, &dil, &reach, &globals);
    if (ks->residue_choice && !attn_residue_choice(&pat, kt, (ntok + qt - 1) / qt * qt, &ks->choice)) {
        internal(e, n, "attention '%s': key tiles of %d for its tile loops", attn_kind_name(n->attn.kind), kt);
        attn_pattern_free(&pat);
        return false;
    }
    char *hooks = attn_hooks(&pat, ks->name, qt, kt, (ntok + qt - 1) / qt, &ks->choice);
    *gather = attn_pattern_gathered(&pat);
    *heads = attn_pattern_head_dependent(&pat);
    *banded = attn_pattern_band(&pat) != 0;
    *residue = 0;
    for (int h = 0; h < pat.heads && attn_pattern_residue(&pat, h, &dil, &reach, &globals); h++)
        if (dil > *residue) *residue = dil;
    attn_pattern_free(&pat);
    return set_hooks(e, n, ks, hooks);
}

static bool pia_hooks(Emit *e, const Node *n, KSpec *ks, int H, int hd, bool hooks);
static bool add_pia_slide(Emit *e, const Node *n, const Value *kv, int H, int hd);
static bool emit_slides(Emit *e);

static bool spec_attention(Emit *e, const Node *n, KSpec *ks) {
    int H, hd;
    if (n->nin != 2 + (n->rec_key || n->infused) || !attn_dims(e, n, &H, &hd)) return false;
    const Value *kv = val(e, n->in[1]), *y = val(e, n->out);
    if (!kv_value_ok(e, n, kv, H, hd)) return false;
    if (act_width(y) != H * hd) {
        internal(e, n, "output width %d is not %d heads x %d", act_width(y), H, hd);
        return false;
    }
    /* the decode program (T = 1): flash-decoding for causal and the sparse kinds; the memory family runs the
     * engine with T = 1 */
    if (e->decode && attn_decode_kernel(e->st.g, n)) return spec_attention_decode(e, n, ks, H, hd);
    int kt = 0, qpw = 0, smem = 0;
    bool mma = attn_mma_tiles(e->st.g, n, &kt, &smem);
    const int warps = mma ? MMA_WARPS : ENGINE_WARPS;
    if (mma) qpw = ATTN_MMA_WARP_ROWS; /* attn_mma.cuh: 32 query rows per warp, QT = 128 */
    else if (!attn_tiles(hd, warps, &kt, &qpw, &smem)) {
        diag_error(e->st.d, n->src, "head_dim %d is too large for the attention kernel (its tiles exceed %d bytes of shared memory)",
                   hd, SMEM_STATIC_LIMIT);
        return false;
    }
    bool htd = kv->order == ORD_HEADS_TOKENS_DIM;
    char sfx[64];
    attn_common(e, n, ks, H, hd, sfx, sizeof sfx);
    ks->tmpl = mma ? "attn_mma.cuh" : "attn_engine.cuh";
    ks->name = arena_printf(e->st.arena, "shortc_attn_%s%s_h%d_hd%d%s%s%s%s%s%s", attn_kind_name(n->attn.kind),
                            attn_kernel_suffix(e->st.arena, &n->attn, n->layer), H, hd, sfx, htd ? "" : "_thd",
                            n->rec_key ? "_rec" : "", n->infused ? "_pia" : "", n->alibi ? "_alibi" : "",
                            mma ? "_tc" : "");
    set_flag(ks, "REC_KEY", n->rec_key); /* recurrence: one extra key/value (h_prev) every query sees */
    if (n->rec_key) set_dtype(ks, "T_XKV", val(e, n->in[2])->dtype);
    int qt = warps * qpw, ntok = kv->capacity;
    bool gather = false, head_tables = false, banded = false;
    int residue = 0; /* residue kinds: the largest dilation */
    if (!attn_engine_hooks(e, n, ks, qt, kt, ntok, mma, &gather, &head_tables, &banded, &residue)) return false;
    if (mma) /* dynamic: above 48 KB by cuFuncSetAttribute (smem: attn_mma_tiles, gather as it decided) */
        ks->smem = smem;
    if (n->infused && !pia_hooks(e, n, ks, H, hd, !mma)) return false;
    set_flag(ks, "PIA", n->infused);
    set_flag(ks, "REL", false); /* Transformer-XL's hooks: spec_rel_attention */
    set_int(e, ks, "WARPS", warps);
    if (mma) set_int(e, ks, "HDP", (hd + 15) / 16 * 16);
    else set_int(e, ks, "QPW", qpw);
    set_int(e, ks, "KT", kt);
    set_int(e, ks, "NQT", (ntok + qt - 1) / qt);
    set_int(e, ks, "HEAD_TABLES", head_tables);
    set_flag(ks, "GATHER", gather);
    set_flag(ks, "BANDED", banded);
    set_flag(ks, "RESIDUE", residue > 0);
    set_flag(ks, "COUNT_TILES", false); /* instrumented builds only (tests/bench/bench_attn.c) */
    /* CUDA-core engine: ceil(T / qt) (the SymDim division rounds up): exact when P is a multiple of qt;
     * otherwise the call's queries span one more absolute tile, which a block takes in turn (blocks stride
     * over the tiles). A residue kind of dilation d spreads the call's queries over up to about
     * ceil(T / qt) + d - 1 tiles of one residue each; the blocks stride over them too. The tensor-core
     * path takes one query tile per block (attn_mma.cuh: no loop counter live across its key loop), so
     * its grid covers every tile a call touches at any P (attn_mma_grid_pad). */
    int extra = attn_mma_grid_pad(residue);
    ks->grid[0] = mma ? (SymDim){.t = 1, .c = extra, .div = qt} : (SymDim){.t = 1, .div = qt};
    ks->grid[1] = SYMDIM_CONST(H);
    ks->block = warps * 32;
    ks->geometry = arena_printf(e->st.arena,
                                "grid (ceil(%s/%d), %d, 1), block %d: %d queries of one head%s per block, key tiles "
                                "of %d, %d bytes of shared memory%s",
                                mma ? arena_printf(e->st.arena, "(T+%d)", extra) : "T", qt, H, warps * 32, qt, residue ? " and residue (i mod dilation)" : "", kt, smem,
                                !mma ? "" : mma_esize(e->st.g, n) == 4 ? " (dynamic); TF32 tensor cores (mma.m16n8k8), K and V tiles pipelined by cp.async"
                                                                       : " (dynamic); tensor cores (mma.m16n8k16), K and V tiles pipelined by cp.async");
    ks->sargs[ks->nsargs++] = arg_value(n->in[0]);
    ks->sargs[ks->nsargs++] = arg_value(n->in[1]);
    ks->sargs[ks->nsargs++] = arg_value(n->out);
    ks->sargs[ks->nsargs++] = arg_tokens();
    ks->sargs[ks->nsargs++] = arg_position();
    ks->sargs[ks->nsargs++] = arg_kv_rows(kv);
    if (n->rec_key || n->infused) ks->sargs[ks->nsargs++] = arg_value(n->in[2]);
    return true;
}

/* ------------------------------------------------------------------ */
/* The recurrence module (templates/recurrence_*.cuh; docs/attention/recurrence.md) */
/* ------------------------------------------------------------------ */

/* Layer l_ins's extra key/value row from h_prev: one block; arguments [gamma, beta,] w, b, the state, y. */
static bool spec_rec_kv(Emit *e, const Node *n, KSpec *ks) {
    int nn = n->nin - 2, A = n->heads * n->head_dim, D = e->st.g->spec->d_model;
    const Value *w = val(e, n->in[nn]), *b = val(e, n->in[nn + 1]), *h = val(e, n->rec_state), *y = val(e, n->out);
    if (nn < 0 || nn > 2 || h->role != STATE_RECURRENT) {
        internal(e, n, "malformed rec_kv");
        return false;
    }
    if (4L * D + 8 > SMEM_STATIC_LIMIT) { /* x_s[D] and the norm's statistics */
        diag_error(e->st.d, n->src, "recurrence: d_model %d is too wide for the extra key's kernel (%ld bytes of shared "
                   "memory, at most %d)", D, 4L * D + 8, SMEM_STATIC_LIMIT);
        return false;
    }
    DType wd[2] = {w->dtype, b->dtype};
    char sfx[64];
    dtype_suffix(sfx, sizeof sfx, y->dtype, 2, wd, 1, h->dtype);
    bool ln = nn == 2;
    ks->tmpl = "recurrence_kv.cuh";
    ks->name = arena_printf(e->st.arena, "shortc_rec_kv_%s_d%d_a%d%s%s", nn ? norm_kind_name(n->norm) : "nonorm", D, A,
                            sfx, n->trans_w ? "_oi" : "");
    int threads = threads_for(2 * A);
    set_int(e, ks, "D", D);
    set_int(e, ks, "A", A);
    set_int(e, ks, "THREADS", threads);
    set_flag(ks, "NORM", nn > 0);
    set_flag(ks, "LAYERNORM", ln);
    set_flag(ks, "W_OUT_IN", n->trans_w);
    if (nn > 0) {
        tmpl_set(&ks->args, "EPS", float_literal(e->st.arena, n->eps));
        set_dtype(ks, "T_GAMMA", val(e, n->in[0])->dtype);
    }
    if (ln) set_dtype(ks, "T_BETA", val(e, n->in[1])->dtype);
    set_dtype(ks, "T_W", w->dtype);
    set_dtype(ks, "T_B", b->dtype);
    set_dtype(ks, "T_STATE", h->dtype);
    set_dtype(ks, "T_OUT", y->dtype);
    ks->grid[0] = SYMDIM_CONST(1);
    ks->block = threads;
    ks->geometry = arena_printf(e->st.arena, "grid (1, 1, 1), block %d: one row of %d keys and values", threads, 2 * A);
    for (int i = 0; i < n->nin; i++) ks->sargs[ks->nsargs++] = arg_value(n->in[i]);
    ks->sargs[ks->nsargs++] = arg_value(n->rec_state);
    ks->sargs[ks->nsargs++] = arg_value(n->out);
    return true;
}

/* The device expression of activation a applied to the float `s`. */
static const char *act_expr(Activation a) {
    switch (a) {
    case ACT_RELU: return "fmaxf(s, 0.0f)";
    case ACT_GELU: return "0.5f * s * (1.0f + erff(s * 0.70710678118654752f))";
    case ACT_GELU_TANH: return "0.5f * s * (1.0f + tanhf(0.79788456080286536f * (s + 0.044715f * s * s * s)))";
    case ACT_SILU: return "s / (1.0f + expf(-s))";
    case ACT_NONE: break;
    }
    return "s";
}

/* The FFN layers of a rec_update kernel: layer j reads one shared buffer and writes the other (the last: the state). */
static bool rec_ffn_code(Emit *e, const Node *n, StrBuf *params, StrBuf *code, int *widest) {
    int np = n->rec_pooled, width = e->st.g->spec->d_model;
    *widest = width;
    for (int j = 0; j < n->rec_layers; j++) {
        const Value *w = val(e, n->in[np + 1 + 2 * j]), *b = val(e, n->in[np + 2 + 2 * j]);
        bool oi = w->order == ORD_OUT_IN;
        int out = oi ? ir_dim(w, 0) : ir_dim(w, 1);
        if (out > *widest) *widest = out;
        bool last = j == n->rec_layers - 1;
        const char *src = j % 2 ? "b_s" : "a_s", *dst = j % 2 ? "a_s" : "b_s";
        sb_printf(params, "    const %s *__restrict__ w%d,  // rec.ffn.%d.weight\n", cuda_type(w->dtype), j, j);
        sb_printf(params, "    const %s *__restrict__ b%d,  // rec.ffn.%d.bias\n", cuda_type(b->dtype), j, j);
        sb_printf(code, "    for (int j = threadIdx.x; j < %d; j += THREADS) {  // FFN layer %d: %d -> %d\n", out, j, width, out);
        sb_printf(code, "        float s = shortc_ld(b%d + j);\n", j);
        sb_printf(code, "        for (int i = 0; i < %d; i++) s += %s[i] * shortc_ld(w%d + %s);\n", width, src, j,
                  oi ? arena_printf(e->st.arena, "(size_t)j * %d + i", width) : arena_printf(e->st.arena, "(size_t)i * %d + j", out));
        if (last) sb_puts(code, "        shortc_st(h + j, s);\n");
        else sb_printf(code, "        %s[j] = %s;\n", dst, act_expr(n->act));
        sb_puts(code, last ? "    }\n" : "    }\n    __syncthreads();\n");
        width = out;
    }
    return !params->oom && !code->oom;
}

/* The update: pooling and FFN in one block; arguments x_1..x_n, alpha, (w_k, b_k)*, the state, T. */
static bool spec_rec_update(Emit *e, const Node *n, KSpec *ks) {
    int np = n->rec_pooled, D = e->st.g->spec->d_model;
    const Value *alpha = val(e, n->in[np]), *h = val(e, n->out);
    if (np < 1 || n->nin != np + 1 + 2 * n->rec_layers || n->nin + 2 > STEP_MAX_ARGS) {
        internal(e, n, "malformed rec_update with %d inputs", n->nin);
        return false;
    }
    StrBuf params = {0}, pool = {0}, layers = {0};
    for (int l = 0; l < np; l++) {
        const Value *x = val(e, n->in[l]);
        sb_printf(&params, "    const %s *__restrict__ x%d,  // [T, D]: pooled hidden state %d\n", cuda_type(x->dtype), l, l);
        sb_printf(&pool, "        part = 0.0f;\n        for (int t = 0; t < T; t++) part += shortc_ld(x%d + (size_t)t * D + c);\n"
                         "        z += w_s[%d] * part;\n", l, l);
    }
    sb_printf(&params, "    const %s *__restrict__ alpha,  // rec.alpha [NP]\n", cuda_type(alpha->dtype));
    int widest = D;
    bool ok = rec_ffn_code(e, n, &params, &layers, &widest) && !pool.oom;
    char *pt = sb_take(&params, NULL), *po = sb_take(&pool, NULL), *la = sb_take(&layers, NULL);
    if (ok && pt && po && la) {
        for (char *t = pt; t; t = t == pt ? po : t == po ? la : NULL) { /* the template's lines end them */
            size_t k = strlen(t);
            if (k) t[k - 1] = '\0';
        }
        tmpl_set(&ks->args, "PARAMS", arena_strdup(e->st.arena, pt));
        tmpl_set(&ks->args, "POOL", arena_strdup(e->st.arena, po));
        tmpl_set(&ks->args, "LAYERS", arena_strdup(e->st.arena, la));
    } else ok = false;
    free(pt), free(po), free(la);
    if (!ok) {
        internal(e, n, "out of memory writing the recurrence update");
        return false;
    }
    long smem = 4L * (2L * widest + np); /* a_s, b_s, w_s */
    if (smem > SMEM_STATIC_LIMIT) {
        diag_error(e->st.d, n->src, "recurrence: an FFN layer of %d units needs %ld bytes of shared memory in the update "
                   "kernel, at most %d", widest, smem, SMEM_STATIC_LIMIT);
        return false;
    }
    char sfx[64];
    dtype_suffix(sfx, sizeof sfx, val(e, n->in[0])->dtype, 1, &alpha->dtype, 1, h->dtype);
    int threads = threads_for(widest);
    ks->tmpl = "recurrence_update.cuh";
    ks->name = arena_printf(e->st.arena, "shortc_rec_update_d%d_np%d_l%d_%s_%s%s", D, np, n->rec_layers,
                            n->rec_mean ? "mean" : "sum", activation_name(n->act), sfx);
    set_int(e, ks, "D", D);
    set_int(e, ks, "NP", np);
    set_int(e, ks, "WMAX", widest);
    set_int(e, ks, "THREADS", threads);
    set_dtype(ks, "T_STATE", h->dtype);
    set_flag(ks, "MEAN", n->rec_mean);
    ks->grid[0] = SYMDIM_CONST(1);
    ks->block = threads;
    ks->geometry = arena_printf(e->st.arena, "grid (1, 1, 1), block %d: the whole window's pooling and the FFN", threads);
    for (int i = 0; i < n->nin; i++) ks->sargs[ks->nsargs++] = arg_value(n->in[i]);
    ks->sargs[ks->nsargs++] = arg_value(n->out);
    ks->sargs[ks->nsargs++] = arg_tokens();
    return true;
}

bool emit_rec_kv(Emit *e, const Node *n, KSpec *ks, bool *launch) { return (*launch = spec_rec_kv(e, n, ks)); }
bool emit_rec_update(Emit *e, const Node *n, KSpec *ks, bool *launch) { return (*launch = spec_rec_update(e, n, ks)); }

/* ------------------------------------------------------------------ */
/* Steps                                                               */
/* ------------------------------------------------------------------ */

static Step *new_step(Emit *e, const Node *n, StepKind kind) {
    EmitState *st = &e->st;
    if (st->nsteps == e->cap_steps) {
        int cap = e->cap_steps ? e->cap_steps * 2 : 64;
        Step *s = arena_alloc(st->arena, sizeof *s * (size_t)cap);
        if (!s) return NULL;
        if (st->nsteps) memcpy(s, st->steps, sizeof *s * (size_t)st->nsteps);
        st->steps = s;
        e->cap_steps = cap;
    }
    Step *s = &st->steps[st->nsteps++];
    memset(s, 0, sizeof *s);
    s->kind = kind;
    s->node = n->id;
    s->layer = n->layer;
    s->kernel = -1;
    s->batch = SYMDIM_CONST(1);
    if (n->src.file >= 0) {
        int col;
        diag_linecol(st->d, n->src, &s->line, &col);
    }
    return s;
}

/* Whether an argument is passed as a device pointer (a value, the arena's staging or decode area, a constant). */
static bool arg_is_pointer(ArgKind k) { return k == ARG_VALUE || k == ARG_ARENA || k == ARG_CONST; }

static bool same_args(const TmplArgs *a, const TmplArgs *b) {
    if (a->n != b->n) return false;
    for (int i = 0; i < a->n; i++)
        if (strcmp(a->kv[i].key, b->kv[i].key) != 0 || strcmp(a->kv[i].val, b->kv[i].val) != 0) return false;
    return true;
}

/* Finds or creates the kernel for a spec; records the node's location. Returns its index or -1. */
static int intern_kernel(Emit *e, const Node *n, const KSpec *ks) {
    EmitState *st = &e->st;
    int found = -1;
    for (int i = 0; i < st->nkernels && found < 0; i++)
        if (strcmp(e->info[i].spec.tmpl, ks->tmpl) == 0 && same_args(&e->info[i].spec.args, &ks->args) &&
            strcmp(e->info[i].spec.name, ks->name) == 0)
            found = i;
    if (found >= 0) {
        /* The block size is part of the kernel (its THREADS); the grid may differ per launch. */
        if (e->info[found].spec.block != ks->block) {
            internal(e, n, "kernel %s launched with two block sizes", ks->name);
            return -1;
        }
        /* The parameter kinds are the kernel's signature (the plan lists them once per kernel). */
        const KSpec *first = &e->info[found].spec;
        bool same = first->nsargs == ks->nsargs;
        for (int i = 0; same && i < ks->nsargs; i++) {
            ArgKind a = first->sargs[i].kind, b = ks->sargs[i].kind;
            same = a == b || (arg_is_pointer(a) && arg_is_pointer(b));
        }
        if (!same) {
            internal(e, n, "kernel %s launched with two different parameter lists", ks->name);
            return -1;
        }
    } else {
        if (st->nkernels == e->cap_kernels) {
            int cap = e->cap_kernels ? e->cap_kernels * 2 : 16;
            Kernel *k = arena_alloc(st->arena, sizeof *k * (size_t)cap);
            KernelInfo *ki = arena_alloc(st->arena, sizeof *ki * (size_t)cap);
            if (!k || !ki) return -1;
            if (st->nkernels) {
                memcpy(k, st->kernels, sizeof *k * (size_t)st->nkernels);
                memcpy(ki, e->info, sizeof *ki * (size_t)st->nkernels);
            }
            st->kernels = k;
            e->info = ki;
            e->cap_kernels = cap;
        }
        /* A name already taken by a different kernel gets a suffix. */
        const char *name = ks->name;
        for (int suffix = 2;; suffix++) {
            bool taken = false;
            for (int i = 0; i < st->nkernels && !taken; i++) taken = strcmp(st->kernels[i].name, name) == 0;
            if (!taken) break;
            name = arena_printf(st->arena, "%s_%d", ks->name, suffix);
        }
        found = st->nkernels++;
        KernelInfo *ki = &e->info[found];
        memset(ki, 0, sizeof *ki);
        ki->spec = *ks;
        Kernel *k = &st->kernels[found];
        memset(k, 0, sizeof *k);
        k->name = name;
        k->first_node = n->id;
        k->residue_choice = ks->residue_choice;
        k->choice = ks->choice;
    }
    KernelInfo *ki = &e->info[found];
    Kernel *k = &st->kernels[found];
    k->uses++;
    /* Distinct source lines, in order of first use. */
    if (n->src.file >= 0) {
        int line, col;
        diag_linecol(st->d, n->src, &line, &col);
        bool seen = false;
        for (int i = 0; i < ki->nlocs && !seen; i++) {
            const Node *m = st->g->nodes[ki->locs[i]];
            int l2, c2;
            diag_linecol(st->d, m->src, &l2, &c2);
            seen = m->src.file == n->src.file && l2 == line;
        }
        if (!seen) {
            if (ki->nlocs < (int)(sizeof ki->locs / sizeof *ki->locs)) ki->locs[ki->nlocs++] = n->id;
            else ki->more_locs++;
        }
    }
    return found;
}

static bool add_launch(Emit *e, const Node *n, const KSpec *ks) {
    int k = intern_kernel(e, n, ks);
    if (k < 0) return false;
    Step *s = new_step(e, n, STEP_LAUNCH);
    if (!s) return false;
    s->kernel = k;
    memcpy(s->grid, ks->grid, sizeof s->grid);
    for (int i = 0; i < 3; i++)
        if (s->grid[i].div == 0) s->grid[i] = SYMDIM_CONST(1);
    s->block[0] = ks->block;
    s->block[1] = s->block[2] = 1;
    s->smem = ks->smem;
    s->args = ks->nsargs > 0 ? arena_alloc(e->st.arena, sizeof *s->args * (size_t)ks->nsargs) : NULL;
    if (ks->nsargs > 0 && !s->args) return false;
    if (ks->nsargs > 0) memcpy(s->args, ks->sargs, sizeof *s->args * (size_t)ks->nsargs);
    s->nargs = ks->nsargs;
    e->st.nlaunches++;
    return true;
}

/* cublasGemmEx with compute f32 takes A and B of one type and C of that type or f32. */
static bool cublas_types_ok(DType a, DType b, DType c) { return a == b && (c == a || c == DT_F32); }

enum { STAGE_ALIGN = 256 };
static size_t align_up(size_t x) { return (x + STAGE_ALIGN - 1) / STAGE_ALIGN * STAGE_ALIGN; }

/* Shapes of a GEMM node: y[T,N] = x[T,K] . W; false (reported) if they do not fit. */
static bool gemm_shapes(Emit *e, const Node *n, int *K, int *N) {
    const Value *x = val(e, n->in[0]), *w = val(e, n->in[1]), *y = val(e, n->out);
    *K = act_width(x);
    *N = act_width(y);
    if (!*K || !*N || w->rank != 2) {
        internal(e, n, "unexpected GEMM shapes");
        return false;
    }
    /* stored weight: [N, K] when trans_w ([out,in]), else [K, N] */
    bool t = n->trans_w;
    if ((t && (ir_dim(w, 0) != *N || ir_dim(w, 1) != *K)) || (!t && (ir_dim(w, 0) != *K || ir_dim(w, 1) != *N))) {
        internal(e, n, "weight %s is [%d, %d], which does not fit [T,%d] -> [T,%d]%s", w->name, ir_dim(w, 0), ir_dim(w, 1),
                 *K, *N, t ? " used transposed" : "");
        return false;
    }
    return true;
}

/*
 * Sizes the GEMM staging area: a GEMM whose types cuBLAS cannot combine
 * (f16 weights with f32 activations, say) runs in fp32 on copies: A and/or B
 * are converted into the area first, and a non-f32 C is produced there and
 * converted (with the epilogue) into the output. Conversions to fp32 are
 * exact. The area follows the graph's arena; copies are short-lived, so one
 * area serves every GEMM.
 */
static bool size_staging(Emit *e) {
    EmitState *st = &e->st;
    Graph *g = st->g;
    size_t seg = g->spec && g->spec->segment > 0 ? (size_t)g->spec->segment : 1;
    for (int i = 0; i < g->nnodes; i++) {
        const Node *n = g->nodes[i];
        if (n->dead || !op_is_gemm(n->op) || n->nin < 2) continue;
        int K, N;
        if (!gemm_shapes(e, n, &K, &N)) return false;
        DType a = val(e, n->in[1])->dtype, b = val(e, n->in[0])->dtype, c = val(e, n->out)->dtype;
        if (cublas_types_ok(a, b, c)) continue;
        size_t need[3] = {a != DT_F32 ? (size_t)K * (size_t)N * 4 : 0, b != DT_F32 ? seg * (size_t)K * 4 : 0,
                          c != DT_F32 ? seg * (size_t)N * 4 : 0};
        for (int p = 0; p < 3; p++)
            if (align_up(need[p]) > st->staging_bytes[p]) st->staging_bytes[p] = align_up(need[p]);
    }
    st->staging_offset = align_up(g->arena_bytes);
    size_t total = st->staging_bytes[0] + st->staging_bytes[1] + st->staging_bytes[2];
    st->arena_bytes = total ? st->staging_offset + total : g->arena_bytes;
    /* decode attention's partials: H x MAXS chunks x (HD + 2) floats for the widest attention */
    for (int i = 0; i < g->nnodes; i++) {
        const Node *n = g->nodes[i];
        if (n->dead || !attn_decode_kernel(g, n)) continue;
        size_t need = (size_t)n->heads * (size_t)decode_chunks(val(e, n->in[1])) * ((size_t)n->head_dim + 2) * 4;
        if (align_up(need) > st->decode_bytes) st->decode_bytes = align_up(need);
    }
    st->decode_offset = align_up(st->arena_bytes);
    if (st->decode_bytes) { /* a row's partials per sequence of a batched decode step, then its sequence table */
        st->decode_batch = (int)(seg < DECODE_BATCH_MAX ? seg : DECODE_BATCH_MAX);
        st->seq_table = st->decode_offset + st->decode_bytes * (size_t)st->decode_batch;
        st->arena_bytes = st->seq_table + align_up(2 * sizeof(int32_t) * (size_t)st->decode_batch);
    }
    return true;
}

/*
 * Whether the decode program can run a batched decode step (rows of different sequences, each at its own
 * position over its own state): every launch that reads a state, the position or the state's fill takes the
 * sequence table (SEQ_ROWS, or decode attention), and no GEMM touches a state. Otherwise (the memory family's
 * engine at T = 1, Transformer-XL's memory GEMMs, the recurrence) decode_batch becomes 0 and the runtime runs
 * the sequences one after another.
 */
static void emit_batchable(Emit *e) {
    EmitState *st = &e->st;
    bool ok = !e->decode_unbatched && st->decode_batch > 0;
    for (int i = st->nforward; ok && i < st->nsteps; i++) {
        const Step *s = &st->steps[i];
        bool reads = false, state = false;
        if (s->kind == STEP_GEMM) {
            const StepArg *ops[3] = {&s->a, &s->b, &s->c};
            for (int k = 0; k < 3; k++) state = state || (ops[k]->kind == ARG_VALUE && st->state_index[ops[k]->value] >= 0);
            ok = !state;
            continue;
        }
        const KSpec *k = &e->info[s->kernel].spec;
        const char *seq = tmpl_get(&k->args, "SEQ_ROWS");
        if ((seq && strcmp(seq, "1") == 0) || strcmp(k->tmpl, "attn_decode.cuh") == 0) continue;
        for (int a = 0; a < 3; a++) reads = reads || s->grid[a].p || s->grid[a].fill;
        for (int a = 0; a < s->nargs; a++) {
            const StepArg *x = &s->args[a];
            reads = reads || (x->kind == ARG_INT && (x->dim.p || x->dim.fill));
            state = state || (x->kind == ARG_VALUE && st->state_index[x->value] >= 0);
        }
        ok = !reads && !state;
    }
    if (!ok) st->decode_batch = 0;
}

static StepArg staging_arg(const Emit *e, int part) {
    size_t off = e->st.staging_offset;
    for (int p = 0; p < part; p++) off += e->st.staging_bytes[p];
    return (StepArg){.kind = ARG_ARENA, .offset = off};
}

/* Adds a conversion launch src -> dst over [rows, n] elements. */
static bool add_convert(Emit *e, const Node *n, StepArg src, DType sdt, StepArg dst, DType ddt, int width, SymDim rows) {
    EpiSpec ep = {.x = src, .y = dst, .xdt = sdt, .ydt = ddt, .n = width, .rows = rows, .bias = -1, .act = ACT_NONE,
                  .gate = -1, .residual = -1};
    KSpec ks;
    memset(&ks, 0, sizeof ks);
    return spec_epilogue(e, n, &ks, &ep) && add_launch(e, n, &ks);
}

/* Arena byte ranges of two values overlap (both in the arena). */
static bool overlaps(const Emit *e, int a, int b) {
    const Value *x = val(e, a), *y = val(e, b);
    if (!ir_value_placed(x) || !ir_value_placed(y)) return false;
    return x->offset < y->offset + y->bytes && y->offset < x->offset + x->bytes;
}

/*
 * y[T,N] = x[T,K] . W as a cuBLAS column-major GEMM (docs/plan.md): with
 * row-major operands, Y^T = op(W)^T X^T, so A is the weight, B the
 * activation, m = N, n = T, k = K. A weight stored [K,N] is A with transa N,
 * lda N; stored [N,K] ([out,in]) it is transa T, lda K. *c_out is where the
 * GEMM result is (the output value, or the staging area).
 */
static bool add_gemm(Emit *e, const Node *n, StepArg *c_out, DType *c_type) {
    int K, N;
    if (!gemm_shapes(e, n, &K, &N)) return false;
    const Value *x = val(e, n->in[0]), *w = val(e, n->in[1]), *y = val(e, n->out);
    for (int i = 0; i < n->nin; i++)
        if (n->in[i] != n->out && overlaps(e, n->in[i], n->out)) {
            internal(e, n, "output %s overlaps input %s in the arena", y->name, val(e, n->in[i])->name);
            return false;
        }
    bool t = n->trans_w;
    StepArg a = arg_value(n->in[1]), b = arg_value(n->in[0]), c = arg_value(n->out);
    DType at = w->dtype, bt = x->dtype, ct = y->dtype;
    if (!cublas_types_ok(at, bt, ct)) {
        if (at != DT_F32) {
            a = staging_arg(e, 0);
            if (!add_convert(e, n, arg_value(n->in[1]), at, a, DT_F32, ir_dim(w, 1), w->dims[0])) return false;
            at = DT_F32;
        }
        if (bt != DT_F32) {
            b = staging_arg(e, 1);
            if (!add_convert(e, n, arg_value(n->in[0]), bt, b, DT_F32, K, SYMDIM_T)) return false;
            bt = DT_F32;
        }
        if (ct != DT_F32) {
            c = staging_arg(e, 2);
            ct = DT_F32;
        }
    }
    Step *s = new_step(e, n, STEP_GEMM);
    if (!s) return false;
    s->transa = t ? 'T' : 'N';
    s->transb = 'N';
    s->m = SYMDIM_CONST(N);
    s->n = SYMDIM_T;
    s->k = SYMDIM_CONST(K);
    s->a = a;
    s->lda = SYMDIM_CONST(t ? K : N);
    s->b = b;
    s->ldb = SYMDIM_CONST(K);
    s->c = c;
    s->ldc = SYMDIM_CONST(N);
    s->atype = at;
    s->btype = bt;
    s->ctype = ct;
    s->tf32 = e->st.g->spec && e->st.g->spec->tf32 && at == DT_F32 && bt == DT_F32;
    e->st.ngemms++;
    *c_out = c;
    *c_type = ct;
    return true;
}

/* The op table's emit hooks: a generated kernel (ks filled, *launch set), or steps added directly. */
bool emit_embed(Emit *e, const Node *n, KSpec *ks, bool *launch) { return (*launch = spec_embed(e, n, ks)); }
bool emit_norm(Emit *e, const Node *n, KSpec *ks, bool *launch) { return (*launch = spec_norm(e, n, ks)); }

bool emit_kv_write(Emit *e, const Node *n, KSpec *ks, bool *launch) {
    return (*launch = spec_kv_write(e, n, ks));
}
bool emit_attention(Emit *e, const Node *n, KSpec *ks, bool *launch) {
    return (*launch = spec_attention(e, n, ks)); /* a PIA cache's slide is program "slide" (emit_slides) */
}

bool emit_bias(Emit *e, const Node *n, KSpec *ks, bool *launch) {
    EpiSpec ep;
    return (*launch = n->nin == 2 && epi_values(e, n, &ep, n->in[0], n->in[1], ACT_NONE, -1) &&
                      spec_epilogue(e, n, ks, &ep));
}

bool emit_act(Emit *e, const Node *n, KSpec *ks, bool *launch) {
    EpiSpec ep;
    return (*launch = n->nin == 1 && epi_values(e, n, &ep, n->in[0], -1, n->act, -1) && spec_epilogue(e, n, ks, &ep));
}

bool emit_add(Emit *e, const Node *n, KSpec *ks, bool *launch) {
    EpiSpec ep;
    if (n->by_norm) { /* the norm after it writes its sum */
        *launch = false;
        return true;
    }
    return (*launch = n->nin == 2 && epi_values(e, n, &ep, n->in[0], -1, ACT_NONE, n->in[1]) &&
                      spec_epilogue(e, n, ks, &ep));
}

/* An unfused gate node (--no-fuse): the epilogue kernel multiplying up by act(gate). */
bool emit_gate(Emit *e, const Node *n, KSpec *ks, bool *launch) {
    EpiSpec ep;
    if (!(*launch = n->nin == 2 && epi_values(e, n, &ep, n->in[0], -1, ACT_NONE, -1))) return false;
    ep.gate = n->in[1];
    ep.gate_act = n->act;
    return spec_epilogue(e, n, ks, &ep);
}

/* The plan epilogue for a matmul epilogue the fuse pass put in the GEMM. */
static PlanEpilogue plan_epilogue(const Epilogue *epi) {
    switch (epi->act) {
    case ACT_RELU: return epi->bias ? PLAN_EPI_BIAS_RELU : PLAN_EPI_RELU;
    case ACT_GELU_TANH: return epi->bias ? PLAN_EPI_BIAS_GELU_TANH : PLAN_EPI_GELU_TANH;
    default: return epi->bias ? PLAN_EPI_BIAS : PLAN_EPI_NONE;
    }
}

/*
 * matmul and logits: the cuBLAS GEMM step, its epilogue applied by cuBLASLt
 * (in_gemm), or then (when the node has an epilogue, or its result was staged
 * in fp32) a launch of the epilogue or conversion kernel from ks.
 */
bool emit_gemm(Emit *e, const Node *n, KSpec *ks, bool *launch) {
    const Epilogue *epi = &n->epi;
    bool logits = n->op == OP_LOGITS;
    int want = logits ? 2 + n->out_bias : 2 + epi->bias + (epi->gate != ACT_NONE) + epi->residual;
    if (n->nin != want || (logits && n->out != e->st.g->logits)) {
        internal(e, n, "%d inputs, expected %d%s", n->nin, want, logits ? " and the graph's logits output" : "");
        return false;
    }
    StepArg c;
    DType ct;
    if (!add_gemm(e, n, &c, &ct)) return false;
    bool needs_kernel = ir_node_needs_kernel(n);
    bool staged = c.kind == ARG_ARENA;
    if (!logits && epi->in_gemm) {
        Step *s = &e->st.steps[e->st.nsteps - 1];
        if (staged) {
            internal(e, n, "an epilogue in the GEMM, but the GEMM is staged");
            return false;
        }
        s->epi = plan_epilogue(epi);
        if (epi->bias) s->bias = arg_value(n->in[2]);
    }
    *launch = needs_kernel || staged;
    if (!*launch) return true;
    /* the epilogue (in place, or from the staged fp32 result), or just the conversion back */
    EpiSpec ep;
    bool bias = logits ? n->out_bias : needs_kernel && epi->bias; /* logits: the output bias (Transformer-XL) */
    bool ok = epi_values(e, n, &ep, n->out, bias ? n->in[2] : -1,
                         needs_kernel ? epi->act : ACT_NONE, needs_kernel && epi->residual ? n->in[n->nin - 1] : -1);
    if (ok && needs_kernel && epi->gate != ACT_NONE) { /* after the bias: x, w, [bias], gate, [residual] */
        ep.gate = n->in[2 + epi->bias];
        ep.gate_act = epi->gate;
    }
    if (ok && staged) {
        ep.x = c;
        ep.xdt = ct;
    }
    return ok && spec_epilogue(e, n, ks, &ep);
}

/* ------------------------------------------------------------------ */
/* Adaptive input and adaptive softmax (docs/emission.md, "Adaptive")  */
/* ------------------------------------------------------------------ */

/* embed_band: one band's table rows, zeros for tokens of other bands (templates/embed_band.cuh). */
static bool spec_embed_band(Emit *e, const Node *n, KSpec *ks) {
    const Value *tok = val(e, n->in[0]), *tab = val(e, n->in[1]), *y = val(e, n->out);
    int W = act_width(y);
    if (n->nin != 2 || !W || tab->rank != 2 || ir_dim(tab, 1) != W || ir_dim(tab, 0) != n->band_hi - n->band_lo ||
        tok->dtype != DT_I32) {
        internal(e, n, "unexpected embed_band shapes");
        return false;
    }
    char sfx[64];
    dtype_suffix(sfx, sizeof sfx, y->dtype, 1, &tab->dtype, 0, DT_F32);
    ks->tmpl = "embed_band.cuh";
    ks->name = arena_printf(e->st.arena, "shortc_embed_band_%d_%d_w%d%s", n->band_lo, n->band_hi, W, sfx);
    DType dts[2] = {tab->dtype, y->dtype};
    int vec = vec_width(W, 2, dts);
    int threads = threads_for(W / vec);
    set_int(e, ks, "W", W);
    set_int(e, ks, "VEC", vec);
    set_int(e, ks, "LO", n->band_lo);
    set_int(e, ks, "HI", n->band_hi);
    set_int(e, ks, "THREADS", threads);
    set_dtype(ks, "T_TAB", tab->dtype);
    set_dtype(ks, "T_OUT", y->dtype);
    per_token_launch(e, n, ks, threads);
    return true;
}

/* pos_add: x * scale plus the position code of P + t (templates/embed.cuh with FROM_X). */
static bool spec_pos_add(Emit *e, const Node *n, KSpec *ks) {
    bool learned = n->pos == POS_LEARNED;
    const Value *x = val(e, n->in[0]), *y = val(e, n->out);
    int D = act_width(y);
    if (n->nin != (learned ? 2 : 1) || !D || act_width(x) != D) {
        internal(e, n, "unexpected pos_add inputs or shapes");
        return false;
    }
    DType wd[2] = {x->dtype, learned ? val(e, n->in[1])->dtype : x->dtype};
    char sfx[64];
    dtype_suffix(sfx, sizeof sfx, y->dtype, 1, &wd[1], 0, DT_F32);
    if (x->dtype != y->dtype) append_dtype(sfx, sizeof sfx, "_in", x->dtype);
    ks->name = arena_printf(e->st.arena, "shortc_pos_add_%s_d%d%s", embed_pos_label(n), D, sfx);
    tmpl_set(&ks->args, "SCALE", float_literal(e->st.arena, n->scale));
    set_dtype(ks, "T_IN", x->dtype);
    set_flag(ks, "FROM_X", true);
    spec_embed_rows(e, n, ks, D, wd);
    return true;
}

/*
 * One segment of adaptive_logprob (templates/adaptive_logprob.cuh): seg 0 is
 * the head's shortlist, seg i >= 1 tail i, written at column off of each row.
 */
static bool spec_logprob_segment(Emit *e, const Node *n, KSpec *ks, int seg, int off) {
    const Value *head = val(e, n->in[0]), *cl = val(e, n->in[1]), *y = val(e, n->out);
    const Value *part = val(e, n->in[seg ? 1 + seg : 0]);
    int C0 = act_width(head), W = act_width(part), V = act_width(y), nt = n->ntails;
    char sfx[64] = "";
    append_dtype(sfx, sizeof sfx, "_", y->dtype); /* then the inputs' dtypes where they differ from it */
    if (head->dtype != y->dtype) append_dtype(sfx, sizeof sfx, "_in", head->dtype);
    if (cl->dtype != head->dtype) append_dtype(sfx, sizeof sfx, "_cl", cl->dtype);
    if (part->dtype != head->dtype) append_dtype(sfx, sizeof sfx, "_seg", part->dtype);
    int threads = threads_for(imax(C0 + nt, W));
    ks->tmpl = "adaptive_logprob.cuh";
    set_int(e, ks, "C0", C0);
    set_int(e, ks, "NT", nt);
    set_int(e, ks, "V", V);
    set_int(e, ks, "THREADS", threads);
    set_dtype(ks, "T_HEAD", head->dtype);
    set_dtype(ks, "T_CL", cl->dtype);
    set_dtype(ks, "T_OUT", y->dtype);
    set_flag(ks, "HEAD", seg == 0);
    if (seg == 0) {
        ks->name = arena_printf(e->st.arena, "shortc_adaptive_logprob_head_c%d_nt%d_v%d%s", C0, nt, V, sfx);
    } else {
        int cluster = n->reversed ? nt - seg : seg - 1;
        ks->name = arena_printf(e->st.arena, "shortc_adaptive_logprob_tail%d_c%d_nt%d_w%d_at%d_v%d%s", cluster, C0, nt, W,
                                off, V, sfx);
        set_int(e, ks, "W", W);
        set_int(e, ks, "OFF", off);
        set_int(e, ks, "CLUSTER", cluster);
        set_dtype(ks, "T_SEG", part->dtype);
    }
    ks->grid[0] = SYMDIM_T;
    ks->block = threads;
    ks->geometry = arena_printf(e->st.arena, "grid (T, 1, 1), block %d", threads);
    ks->sargs[ks->nsargs++] = arg_value(n->in[0]);
    ks->sargs[ks->nsargs++] = arg_value(n->in[1]);
    if (seg) ks->sargs[ks->nsargs++] = arg_value(n->in[1 + seg]);
    ks->sargs[ks->nsargs++] = arg_value(n->out);
    ks->sargs[ks->nsargs++] = arg_tokens();
    return true;
}

/*
 * adaptive_logprob: one launch per segment (the shortlist, then each tail),
 * all but the last added here, the last left in ks for the caller.
 */
static bool spec_adaptive_logprob(Emit *e, const Node *n, KSpec *ks) {
    int nt = n->ntails, off = 0;
    if (nt < 1 || n->nin != 2 + nt || act_width(val(e, n->in[1])) != nt) {
        internal(e, n, "%d inputs for %d tails", n->nin, nt);
        return false;
    }
    for (int seg = 0; seg <= nt; seg++) {
        int w = act_width(val(e, n->in[seg ? 1 + seg : 0]));
        if (!w) {
            internal(e, n, "segment %d is not [T, width]", seg);
            return false;
        }
        KSpec part;
        memset(&part, 0, sizeof part);
        KSpec *k = seg == nt ? ks : &part;
        if (!spec_logprob_segment(e, n, k, seg, off) || (k == &part && !add_launch(e, n, &part))) return false;
        off += w;
    }
    return true;
}

bool emit_embed_band(Emit *e, const Node *n, KSpec *ks, bool *launch) { return (*launch = spec_embed_band(e, n, ks)); }
bool emit_pos_add(Emit *e, const Node *n, KSpec *ks, bool *launch) { return (*launch = spec_pos_add(e, n, ks)); }
bool emit_adaptive_logprob(Emit *e, const Node *n, KSpec *ks, bool *launch) {
    return (*launch = spec_adaptive_logprob(e, n, ks));
}

/* The node computing the logits and their width V; NULL (reported) when they are not fp32 [T, V] from a node. */
static const Node *logits_producer(Emit *e, int *V) {
    const Graph *g = e->st.g;
    const Node *producer = NULL;
    for (int i = 0; i < g->nnodes; i++)
        if (!g->nodes[i]->dead && g->nodes[i]->out == g->logits) producer = g->nodes[i];
    const Value *lg = val(e, g->logits);
    *V = act_width(lg);
    if (!producer || !*V || lg->dtype != DT_F32) {
        internal(e, producer, "the logits are not fp32 [T, vocab] computed by a node");
        return NULL;
    }
    return producer;
}

/*
 * The "loss" program (templates/loss.cuh, docs/plan.md): one launch over the
 * logits, reading the targets from and writing the losses to the arena's
 * loss area (segment int32 targets, then segment fp32 losses) after
 * everything else. Rows of an adaptive softmax are log-probabilities
 * already (LOGPROB). The step stands for no IR node (node -1).
 */
static bool emit_loss(Emit *e) {
    EmitState *st = &e->st;
    const Graph *g = st->g;
    int V;
    const Node *producer = logits_producer(e, &V);
    if (!producer) return false;
    size_t seg = g->spec && g->spec->segment > 0 ? (size_t)g->spec->segment : 1;
    st->loss_targets = align_up(st->arena_bytes);
    st->loss_nll = st->loss_targets + align_up(seg * 4);
    st->arena_bytes = st->loss_nll + align_up(seg * 4);
    bool logprob = producer->op == OP_ADAPTIVE_LOGPROB;
    DType f32 = DT_F32;
    int vec = vec_width(V, 1, &f32), threads = logprob ? 32 : threads_for(V / vec);
    KSpec ks;
    memset(&ks, 0, sizeof ks);
    ks.tmpl = "loss.cuh";
    ks.name = arena_printf(st->arena, "shortc_loss%s_v%d", logprob ? "_logprob" : "", V);
    set_int(e, &ks, "V", V);
    set_int(e, &ks, "VEC", vec);
    set_int(e, &ks, "THREADS", threads);
    set_flag(&ks, "LOGPROB", logprob);
    ks.grid[0] = SYMDIM_T;
    ks.block = threads;
    ks.geometry = arena_printf(st->arena, "grid (T, 1, 1), block %d: one logits row per block", threads);
    ks.sargs[ks.nsargs++] = arg_value(g->logits);
    ks.sargs[ks.nsargs++] = (StepArg){.kind = ARG_ARENA, .offset = st->loss_targets};
    ks.sargs[ks.nsargs++] = (StepArg){.kind = ARG_ARENA, .offset = st->loss_nll};
    ks.sargs[ks.nsargs++] = arg_tokens();
    st->nloss_first = st->nsteps;
    if (!add_launch(e, producer, &ks)) return false;
    st->steps[st->nsteps - 1].node = -1;
    return true;
}

/*
 * The "sample" program (templates/sample.cuh, docs/plan.md): one block draws
 * the next token from the last logits row. Its arena area holds the
 * parameter block the runtime writes (RtSampleParams: 32 bytes), then the
 * sort keys and the radix passes' other buffer (2 V uint64) and the weights
 * (V doubles). Node -1, like loss.
 */
enum { SAMPLE_THREADS = 256, SAMPLE_PARAM_BYTES = 32 };
static bool emit_sample(Emit *e) {
    EmitState *st = &e->st;
    int V;
    const Node *producer = logits_producer(e, &V);
    if (!producer) return false;
    int id_passes = 0; /* 4-bit digits of the largest id, V - 1 */
    while (id_passes < 8 && ((unsigned)(V - 1) >> (4 * id_passes)) != 0) id_passes++;
    st->sample_params = align_up(st->arena_bytes);
    size_t keys = st->sample_params + align_up(SAMPLE_PARAM_BYTES), prob = keys + align_up((size_t)V * 16);
    st->arena_bytes = prob + align_up((size_t)V * 8);
    KSpec ks;
    memset(&ks, 0, sizeof ks);
    ks.tmpl = "sample.cuh";
    ks.name = arena_printf(st->arena, "shortc_sample_v%d", V);
    set_int(e, &ks, "V", V);
    set_int(e, &ks, "ID_PASSES", id_passes);
    set_int(e, &ks, "THREADS", SAMPLE_THREADS);
    ks.grid[0] = SYMDIM_CONST(1);
    ks.block = SAMPLE_THREADS;
    ks.geometry = arena_printf(st->arena, "grid (1, 1, 1), block %d: the last logits row", SAMPLE_THREADS);
    ks.sargs[ks.nsargs++] = arg_value(st->g->logits);
    ks.sargs[ks.nsargs++] = (StepArg){.kind = ARG_ARENA, .offset = st->sample_params};
    ks.sargs[ks.nsargs++] = (StepArg){.kind = ARG_ARENA, .offset = keys};
    ks.sargs[ks.nsargs++] = (StepArg){.kind = ARG_ARENA, .offset = prob};
    ks.sargs[ks.nsargs++] = arg_tokens();
    st->nsample_first = st->nsteps;
    if (!add_launch(e, producer, &ks)) return false;
    st->steps[st->nsteps - 1].node = -1;
    return true;
}

/* ------------------------------------------------------------------ */
/* Transformer-XL relative attention (docs/attention/relative.md)       */
/* ------------------------------------------------------------------ */

/* The memory write: the last min(T, m) rows of the attention input into the ring (templates/txl_mem_write.cuh). */
static bool spec_mem_write(Emit *e, const Node *n, KSpec *ks) {
    const Value *x = val(e, n->in[0]), *mem = val(e, n->out);
    int D = act_width(x), threads = threads_for(D);
    char sfx[32];
    dtype_suffix(sfx, sizeof sfx, mem->dtype, 0, NULL, 1, x->dtype);
    ks->tmpl = "txl_mem_write.cuh";
    ks->name = arena_printf(e->st.arena, "shortc_txl_mem_write_m%d_d%d%s", n->memory, D, sfx);
    set_int(e, ks, "M", n->memory);
    set_int(e, ks, "D", D);
    set_int(e, ks, "THREADS", threads);
    set_dtype(ks, "T_X", x->dtype);
    set_dtype(ks, "T_MEM", mem->dtype);
    ks->grid[0] = SYMDIM_T;
    ks->block = threads;
    ks->geometry = arena_printf(e->st.arena, "grid (T, 1, 1), block %d: one row of the call per block", threads);
    ks->sargs[ks->nsargs++] = arg_value(n->in[0]);
    ks->sargs[ks->nsargs++] = arg_value(n->out);
    ks->sargs[ks->nsargs++] = arg_tokens();
    ks->sargs[ks->nsargs++] = arg_position();
    return true;
}

/* `bytes` more of the arena, after the node's scratch: where a Transformer-XL memory projection stages an
 * operand in fp32 when cuBLAS cannot combine the three types. */
static StepArg txl_stage(Emit *e, size_t bytes) {
    size_t off = align_up(e->st.arena_bytes);
    e->st.arena_bytes = off + align_up(bytes);
    return (StepArg){.kind = ARG_ARENA, .offset = off};
}

/*
 * The memory's keys and values of one call into the scratch area kv [2, M, W] of type sdt: qkv_net's key
 * and value column blocks times the ring, one strided-batched cuBLAS GEMM (batch 2: keys, then values) over
 * all M ring rows. Rows no call has written yet (r >= P) are zero (the runtime clears the state at session
 * creation) or a reset session's earlier rows; the attention never reads their keys. Column-major, as in
 * add_gemm: C_b [W x M] = op(A_b) [W x D] . ring^T [D x M], A_b the columns W (b + 1) ..: a weight stored
 * [D, 3W] is transa N at element W (b + 1), lda 3W; stored [3W, D] ([out, in]) transa T at row W (b + 1),
 * lda D. Types cuBLAS cannot combine run in fp32 on copies, as add_gemm's. None without memory.
 */
static bool add_txl_prep(Emit *e, const Node *n, size_t kv_off, DType sdt) {
    if (n->memory == 0) return true;
    const Value *wqkv = val(e, n->in[4]), *mem = val(e, n->in[5]);
    int D = e->st.g->spec->d_model, W = n->heads * n->head_dim, M = n->memory;
    bool oi = wqkv->order == ORD_OUT_IN;
    StepArg a = arg_value(n->in[4]), b = arg_value(n->in[5]), c = {.kind = ARG_ARENA, .offset = kv_off};
    DType at = wqkv->dtype, bt = mem->dtype, ct = sdt;
    if (!cublas_types_ok(at, bt, ct)) {
        if (at != DT_F32) { /* the whole weight: its rows are the GEMM's columns or its k */
            a = txl_stage(e, (size_t)ir_dim(wqkv, 0) * ir_dim(wqkv, 1) * 4);
            if (!add_convert(e, n, arg_value(n->in[4]), at, a, DT_F32, ir_dim(wqkv, 1), wqkv->dims[0])) return false;
            at = DT_F32;
        }
        if (bt != DT_F32) {
            b = txl_stage(e, (size_t)M * D * 4);
            if (!add_convert(e, n, arg_value(n->in[5]), bt, b, DT_F32, D, SYMDIM_CONST(M))) return false;
            bt = DT_F32;
        }
        if (ct != DT_F32) {
            c = txl_stage(e, (size_t)2 * M * W * 4);
            ct = DT_F32;
        }
    }
    a.offset += (size_t)W * (oi ? D : 1) * dtype_size(at); /* the key columns */
    Step *s = new_step(e, n, STEP_GEMM);
    if (!s) return false;
    s->transa = oi ? 'T' : 'N';
    s->transb = 'N';
    s->m = SYMDIM_CONST(W);
    s->n = SYMDIM_CONST(M);
    s->k = SYMDIM_CONST(D);
    s->a = a;
    s->lda = SYMDIM_CONST(oi ? D : 3 * W);
    s->b = b;
    s->ldb = SYMDIM_CONST(D);
    s->c = c;
    s->ldc = SYMDIM_CONST(W);
    s->atype = at;
    s->btype = bt;
    s->ctype = ct;
    s->tf32 = e->st.g->spec->tf32 && at == DT_F32 && bt == DT_F32;
    s->batch = SYMDIM_CONST(2);
    s->stride_a = SYMDIM_CONST((long)W * (oi ? D : 1));
    s->stride_c = SYMDIM_CONST((long)M * W);
    e->st.ngemms++;
    if (ct == sdt) return true;
    return add_convert(e, n, c, ct, (StepArg){.kind = ARG_ARENA, .offset = kv_off}, sdt, W, SYMDIM_CONST(2 * M));
}

/* Transformer-XL's relative keys W_r R_d, every distance of the table, in the load program
 * (templates/txl_rel_keys.cuh). */
bool emit_rel_keys(Emit *e, const Node *n, KSpec *ks, bool *launch) {
    *launch = false;
    const Value *wr = val(e, n->in[0]), *rel = val(e, n->out);
    int D = e->st.g->spec->d_model, W = n->heads * n->head_dim, threads = threads_for(W);
    if ((long)D * 4 > SMEM_STATIC_LIMIT) {
        diag_error(e->st.d, n->src, "d_model %d is too large for the relative-key kernel", D);
        return false;
    }
    char sfx[32];
    dtype_suffix(sfx, sizeof sfx, rel->dtype, 1, &wr->dtype, 0, rel->dtype);
    ks->tmpl = "txl_rel_keys.cuh";
    ks->name = arena_printf(e->st.arena, "shortc_txl_rel_keys_d%d_w%d%s%s", D, W, sfx, wr->order == ORD_OUT_IN ? "_roi" : "");
    set_int(e, ks, "D", D);
    set_int(e, ks, "W", W);
    set_int(e, ks, "THREADS", threads);
    set_dtype(ks, "T_W", wr->dtype);
    set_dtype(ks, "T_REL", rel->dtype);
    set_flag(ks, "R_OUT_IN", wr->order == ORD_OUT_IN);
    ks->grid[0] = SYMDIM_CONST(rel->capacity);
    ks->block = threads;
    ks->geometry = arena_printf(e->st.arena, "grid (%d, 1, 1), block %d: one distance per block, once per weights load",
                                rel->capacity, threads);
    ks->sargs[ks->nsargs++] = arg_value(n->in[0]);
    ks->sargs[ks->nsargs++] = arg_value(n->out);
    ks->sargs[ks->nsargs++] = arg_kv_rows(rel);
    return (*launch = true);
}

/* The position rules as the engine's hooks (templates/attn_txl_hooks.cuh): visibility (reads the kernel's P) and
 * the positional score term; false after an internal error. */
static bool txl_hooks(Emit *e, const Node *n, KSpec *ks, int qt, DType bdt, bool mma) {
    int m = n->memory, hd = n->head_dim;
    int rows = val(e, n->in[1])->capacity; /* the relative keys' distances: m + segment, or clamp + 1 */
    TmplArgs t = {0};
    tmpl_set(&t, "KERNEL_NAME", ks->name);
    tmpl_setf(e->st.arena, &t, "MEMORY", "%d", m);
    tmpl_setf(e->st.arena, &t, "CLAMP", "%d", n->attn.prm.clamp);
    tmpl_setf(e->st.arena, &t, "SAME_LENGTH", "%d", n->attn.prm.same_length);
    tmpl_setf(e->st.arena, &t, "REACH", "%d", m + qt);
    tmpl_set(&t, "T_REL", tmpl_get(&ks->args, "T_REL"));
    tmpl_set(&t, "T_B", cuda_type(bdt));
    tmpl_setf(e->st.arena, &t, "LAST_ROW", "%d", rows - 1);
    tmpl_setf(e->st.arena, &t, "HD", "%d", hd);
    tmpl_setf(e->st.arena, &t, "W", "%d", n->heads * hd);
    tmpl_setf(e->st.arena, &t, "MMA", "%d", mma); /* attn_mma.cuh: the position term is its own MMA */
    StrBuf b = {0};
    if (!template_render(e->st.d, "attn_txl_hooks.cuh", t.kv, t.n, &b)) {
        free(sb_take(&b, NULL));
        return false;
    }
    return set_hooks(e, n, ks, sb_take(&b, NULL));
}

/* Relative attention on the engine: the tensor-core path (attn_mma.cuh REL: the position term a second MMA
 * against the tile's band of relative keys) when attn_mma_tiles takes it, else the CUDA-core path; the
 * memory's keys and values first (one cuBLAS GEMM, add_txl_prep). */
static bool spec_rel_attention(Emit *e, const Node *n, KSpec *ks) {
    int H = n->heads, hd = n->head_dim, W = H * hd, warps = ENGINE_WARPS, kt, qpw, smem;
    const Value *qkv = val(e, n->in[0]), *y = val(e, n->out), *ub = val(e, n->in[2]);
    bool mma = attn_mma_tiles(e->st.g, n, &kt, &smem);
    if (mma) {
        warps = MMA_WARPS;
        qpw = ATTN_MMA_WARP_ROWS;
    } else if (!attn_tiles(hd, warps, &kt, &qpw, &smem)) {
        diag_error(e->st.d, n->src, "head_dim %d is too large for the attention kernel", hd);
        return false;
    }
    if (ub->dtype != val(e, n->in[3])->dtype) {
        internal(e, n, "r_w_bias and r_r_bias have different types");
        return false;
    }
    int qt = warps * qpw;
    const Value *rel = val(e, n->in[1]);
    size_t kv_off = align_up(e->st.arena_bytes);
    e->st.arena_bytes = kv_off + align_up((size_t)2 * n->memory * W * 4);
    DType sdt = y->dtype; /* the scratch rows are rounded like the interpreter's */
    if (!add_txl_prep(e, n, kv_off, sdt)) return false;
    char sfx[64];
    dtype_suffix(sfx, sizeof sfx, y->dtype, 1, &ub->dtype, 1, sdt);
    if (qkv->dtype != y->dtype) append_dtype(sfx, sizeof sfx, "_in", qkv->dtype);
    if (rel->dtype != sdt) append_dtype(sfx, sizeof sfx, "_rel", rel->dtype);
    ks->tmpl = mma ? "attn_mma.cuh" : "attn_engine.cuh";
    ks->name = arena_printf(e->st.arena, "shortc_attn_relative_m%d_c%d_s%d_h%d_hd%d%s%s", n->memory,
                            n->attn.prm.clamp, n->attn.prm.same_length, H, hd, sfx, mma ? "_tc" : "");
    set_int(e, ks, "H", H);
    set_int(e, ks, "KVH", H); /* relative attention: H K/V heads (sema) */
    set_int(e, ks, "HD", hd);
    tmpl_set(&ks->args, "SCALE", float_literal(e->st.arena, 1.0 / sqrt((double)hd)));
    set_dtype(ks, "T_QKV", qkv->dtype);
    set_dtype(ks, "T_KV", sdt);
    set_dtype(ks, "T_OUT", y->dtype);
    set_dtype(ks, "T_B", ub->dtype);
    set_dtype(ks, "T_REL", rel->dtype);
    set_flag(ks, "KV_HTD", false);
    set_flag(ks, "REC_KEY", false); /* the memory family's other key sources: never with REL */
    set_flag(ks, "PIA", false);
    set_flag(ks, "REL", true);
    if (!txl_hooks(e, n, ks, qt, ub->dtype, mma)) return false;
    set_int(e, ks, "WARPS", warps);
    if (mma) set_int(e, ks, "HDP", (hd + 15) / 16 * 16);
    else set_int(e, ks, "QPW", qpw);
    set_int(e, ks, "KT", kt);
    set_int(e, ks, "NQT", 0);
    set_int(e, ks, "HEAD_TABLES", 0);
    set_flag(ks, "GATHER", false);
    set_flag(ks, "BANDED", true);
    set_flag(ks, "RESIDUE", false);
    set_flag(ks, "COUNT_TILES", false);
    if (mma) ks->smem = smem; /* dynamic: above 48 KB by cuFuncSetAttribute */
    /* the tensor-core path takes one query tile per block: its grid covers every tile a call touches */
    int extra = mma ? attn_mma_grid_pad(0) : 0;
    ks->grid[0] = (SymDim){.t = 1, .c = extra, .div = qt};
    ks->grid[1] = SYMDIM_CONST(H);
    ks->block = warps * 32;
    ks->geometry = arena_printf(e->st.arena,
                                "grid (ceil(%s/%d), %d, 1), block %d: %d queries of one head per block, key tiles of %d "
                                "(memory, then this call), %d bytes of shared memory%s",
                                mma ? arena_printf(e->st.arena, "(T+%d)", extra) : "T", qt, H, warps * 32, qt, kt, smem,
                                mma ? " (dynamic); tensor cores (mma.m16n8k16): the position term a second MMA against "
                                      "the tile's band of relative keys" : "");
    ks->sargs[ks->nsargs++] = arg_value(n->in[0]);
    ks->sargs[ks->nsargs++] = (StepArg){.kind = ARG_ARENA, .offset = kv_off};
    ks->sargs[ks->nsargs++] = arg_value(n->out);
    ks->sargs[ks->nsargs++] = arg_tokens();
    ks->sargs[ks->nsargs++] = arg_position();
    ks->sargs[ks->nsargs++] = (StepArg){.kind = ARG_INT, .dim = SYMDIM_CONST(n->memory)};
    ks->sargs[ks->nsargs++] = arg_value(n->in[1]);
    ks->sargs[ks->nsargs++] = arg_value(n->in[2]);
    ks->sargs[ks->nsargs++] = arg_value(n->in[3]);
    return true;
}

/* Transformer-XL: relative attention (two launches) and the memory write (docs/attention/relative.md). */
bool emit_txl(Emit *e, const Node *n, KSpec *ks, bool *launch) {
    return (*launch = n->op == OP_MEM_WRITE ? spec_mem_write(e, n, ks) : spec_rel_attention(e, n, ks));
}

/* Emits one node through its op's hook, checking its kernel id against what it needs. */
static bool emit_node(Emit *e, const Node *n) {
    KSpec ks;
    memset(&ks, 0, sizeof ks);
    const OpInfo *oi = op_info(n->op);
    if (!oi || !oi->emit) {
        internal(e, n, "no emission for this op");
        return false;
    }
    bool launch = false;
    if (!oi->emit(e, n, &ks, &launch)) {
        if (!e->st.d->errors) internal(e, n, "malformed node");
        return false;
    }
    bool needs_kernel = ir_node_needs_kernel(n);
    if (needs_kernel != (n->kernel >= 0)) {
        internal(e, n, "kernel id %d but %s", n->kernel, needs_kernel ? "the node needs a kernel" : "no kernel is needed");
        return false;
    }
    if (needs_kernel && n->kernel >= e->st.g->nkernels) {
        internal(e, n, "kernel id %d out of range (%d kernels)", n->kernel, e->st.g->nkernels);
        return false;
    }
    return !launch || add_launch(e, n, &ks);
}

/* ------------------------------------------------------------------ */
/* Kernel source                                                        */
/* ------------------------------------------------------------------ */

/* The statement text at a location on one line: `norm layernorm pre eps=1e-5`. */
static void statement_text(const Diag *d, Loc loc, char *buf, size_t n) {
    buf[0] = '\0';
    if (loc.file < 0 || loc.file >= d->nsources) return;
    const Source *src = d->sources[loc.file];
    if (loc.begin < 0 || (size_t)loc.end > src->len || loc.end <= loc.begin) return;
    size_t k = 0;
    bool space = false, comment = false;
    for (int i = loc.begin; i < loc.end && k + 4 < n; i++) {
        char c = src->text[i];
        if (c == '\n') comment = false;
        if (comment) continue;
        if (c == '#') {
            comment = true;
            continue;
        }
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
            space = k > 0;
            continue;
        }
        if ((unsigned char)c < 0x20) continue;
        if (space) buf[k++] = ' ';
        space = false;
        buf[k++] = c;
    }
    buf[k] = '\0';
    while (k > 0 && buf[k - 1] == ';') buf[--k] = '\0';
    while (k > 0 && buf[k - 1] == ' ') buf[--k] = '\0';
    if (k + 4 >= n) strcpy(buf + n - 4, "...");
}

/* Input text (a path, a name, .arch text) as it may appear in a comment of the .cu: escaped. */
static const char *comment_text(Arena *a, const char *text, bool keep_space) {
    size_t n = shortc_escape_comment(text, keep_space, NULL, 0);
    char *out = arena_alloc(a, n + 1);
    if (!out) return "?";
    shortc_escape_comment(text, keep_space, out, n + 1);
    return out;
}

static const char *source_path(Arena *a, const Diag *d, int file) {
    return comment_text(a, file >= 0 && file < d->nsources ? d->sources[file]->path : "?", false);
}

/* The first comment lines of a kernel: the .arch statements it came from (first use first) and its launch shape. */
static const char *kernel_comment(Emit *e, int k) {
    const KernelInfo *ki = &e->info[k];
    const Kernel *kn = &e->st.kernels[k];
    int file[8], line[8], node[8], nl = 0;
    for (int i = 0; i < ki->nlocs; i++) {
        const Node *n = e->st.g->nodes[ki->locs[i]];
        int ln, col;
        diag_linecol(e->st.d, n->src, &ln, &col);
        /* the first use stays first (the plan's `line`); the rest sorted by file and line */
        int j = nl++;
        while (j > 1 && (file[j - 1] > n->src.file || (file[j - 1] == n->src.file && line[j - 1] > ln))) {
            file[j] = file[j - 1];
            line[j] = line[j - 1];
            node[j] = node[j - 1];
            j--;
        }
        file[j] = n->src.file;
        line[j] = ln;
        node[j] = n->id;
    }
    StrBuf b = {0};
    sb_puts(&b, "// from ");
    if (nl == 0) sb_puts(&b, "no .arch statement");
    for (int i = 0; i < nl; i++) {
        char text[96];
        statement_text(e->st.d, e->st.g->nodes[node[i]]->src, text, sizeof text);
        if (i > 0 && file[i] == file[i - 1]) sb_printf(&b, ", :%d", line[i]);
        else sb_printf(&b, "%s%s:%d", i ? ", " : "", source_path(e->st.arena, e->st.d, file[i]), line[i]);
        if (text[0]) sb_printf(&b, " (%s)", comment_text(e->st.arena, text, true));
    }
    if (ki->more_locs) sb_printf(&b, " and %d more line%s", ki->more_locs, ki->more_locs == 1 ? "" : "s");
    sb_printf(&b, ", used by %d launch%s\n", kn->uses, kn->uses == 1 ? "" : "es");
    sb_printf(&b, "// %s", ki->spec.geometry);
    size_t len;
    char *s = sb_take(&b, &len);
    if (!s) return NULL;
    const char *r = arena_strdup(e->st.arena, s);
    free(s);
    return r;
}

static bool uses_barriers(const char *src) {
    static const char *const marks[] = {"__syncthreads", "_sync(", "shortc_block_", "shortc_warp_", "shortc_mma_",
                                        "shortc_ldmatrix_"};
    for (size_t i = 0; i < sizeof marks / sizeof *marks; i++)
        if (strstr(src, marks[i])) return true;
    return false;
}

/* Pastes templates/attn_kinds.cuh (once, after the prelude) when a kernel's hooks call an attention kind's
 * visibility there. */
static bool paste_attn_kinds(Emit *e, StrBuf *b) {
    for (int k = 0; k < e->st.nkernels; k++)
        if (strstr(e->st.kernels[k].source, "attn_visible_")) {
            const ShortcTemplate *kinds = template_find("attn_kinds.cuh");
            if (!kinds) {
                internal(e, NULL, "no templates/attn_kinds.cuh");
                return false;
            }
            sb_puts(b, "\n");
            sb_put(b, kinds->text, kinds->len);
            return true;
        }
    return true;
}

/* Pastes templates/mma_frag.cuh (once, after the prelude) when a kernel uses the tensor-core attention path. */
static bool paste_mma_frag(Emit *e, StrBuf *b) {
    for (int k = 0; k < e->st.nkernels; k++)
        if (!strcmp(e->info[k].spec.tmpl, "attn_mma.cuh")) {
            const ShortcTemplate *frag = template_find("mma_frag.cuh");
            if (!frag) {
                internal(e, NULL, "no templates/mma_frag.cuh");
                return false;
            }
            sb_puts(b, "\n");
            sb_put(b, frag->text, frag->len);
            return true;
        }
    return true;
}

static bool render_kernels(Emit *e) {
    for (int k = 0; k < e->st.nkernels; k++) {
        KernelInfo *ki = &e->info[k];
        Kernel *kn = &e->st.kernels[k];
        TmplArgs args = ki->spec.args;
        const char *comment = kernel_comment(e, k);
        if (!comment) return false;
        tmpl_set(&args, "KERNEL_NAME", kn->name);
        tmpl_set(&args, "COMMENT", comment);
        if (args.n > TMPL_MAX_KV) {
            internal(e, NULL, "too many placeholder values for %s", kn->name);
            return false;
        }
        StrBuf b = {0};
        if (!template_render(e->st.d, ki->spec.tmpl, args.kv, args.n, &b)) {
            free(b.p);
            return false;
        }
        size_t len;
        char *s = sb_take(&b, &len);
        if (!s) {
            diag_plain_error(e->st.d, "emit: out of memory");
            return false;
        }
        kn->source = arena_strndup(e->st.arena, s, len);
        free(s);
        kn->barriers = uses_barriers(kn->source);
    }
    return true;
}

/* ------------------------------------------------------------------ */
/* Entry point                                                         */
/* ------------------------------------------------------------------ */

static bool index_values(Emit *e) {
    EmitState *st = &e->st;
    Graph *g = st->g;
    st->weight_index = arena_alloc(st->arena, sizeof(int) * (size_t)(g->nvalues + 1));
    st->state_index = arena_alloc(st->arena, sizeof(int) * (size_t)(g->nvalues + 1));
    st->derived_index = arena_alloc(st->arena, sizeof(int) * (size_t)(g->nvalues + 1));
    if (!st->weight_index || !st->state_index || !st->derived_index) return false;
    for (int i = 0; i < g->nvalues; i++) {
        const Value *v = g->values[i];
        st->weight_index[i] = st->state_index[i] = st->derived_index[i] = -1;
        bool made = v->def >= 0 && !g->nodes[v->def]->dead;
        if (v->cls == VC_WEIGHT) st->weight_index[i] = st->nweights++;
        else if (made && ir_value_derived(v)) st->derived_index[i] = st->nderived++;
        else if (v->cls == VC_KV && !ir_value_placed(v) && made)
            st->state_index[i] = st->nstate++;
    }
    return true;
}

/* Every pointer an emitted step passes must have a home. */
static bool check_refs(Emit *e) {
    const EmitState *st = &e->st;
    for (int i = 0; i < st->nsteps; i++) {
        const Step *s = &st->steps[i];
        StepArg refs[STEP_MAX_ARGS + 3];
        int n = 0;
        if (s->kind == STEP_GEMM) {
            refs[n++] = s->a;
            refs[n++] = s->b;
            refs[n++] = s->c;
            if (plan_epilogue_has_bias(s->epi)) refs[n++] = s->bias;
        } else {
            for (int k = 0; k < s->nargs; k++) refs[n++] = s->args[k];
        }
        for (int k = 0; k < n; k++) {
            if (refs[k].kind != ARG_VALUE) continue;
            const Value *v = val(e, refs[k].value);
            if (st->weight_index[v->id] < 0 && st->state_index[v->id] < 0 && st->derived_index[v->id] < 0 &&
                !ir_value_placed(v)) {
                internal(e, st->g->nodes[s->node], "value %s has no place in the arena", v->name);
                return false;
            }
        }
    }
    return true;
}

/* Emits the live nodes of one program: those whose output is derived (the load program) or the others. */
static bool emit_nodes(Emit *e, bool derived) {
    const Graph *g = e->st.g;
    for (int i = 0; i < g->nnodes; i++) {
        const Node *n = g->nodes[i];
        if (!n->dead && ir_value_derived(g->values[n->out]) == derived && !emit_node(e, n)) return false;
    }
    return true;
}

static void header_comment(const Emit *e, StrBuf *b) {
    const Graph *g = e->st.g;
    const ModelSpec *s = g->spec;
    const char *path = s && s->path ? s->path : e->st.d->nsources ? e->st.d->sources[0]->path : "?";
    sb_printf(b, "// %s: generated by shortc from %s; do not edit.\n",
              comment_text(g->arena, s && s->name ? s->name : "model", false), comment_text(g->arena, path, false));
    sb_printf(b, "// %d kernel%s, %d launch%s and %d GEMM%s (cuBLAS) per forward; activation arena %zu bytes.\n",
              e->st.nkernels, e->st.nkernels == 1 ? "" : "s", e->st.nlaunches, e->st.nlaunches == 1 ? "" : "es",
              e->st.ngemms, e->st.ngemms == 1 ? "" : "s", e->st.arena_bytes);
    sb_puts(b, "// The plan above lists every step. Each kernel's last argument is its row count: the token\n");
    sb_puts(b, "// count T, or for a weight conversion the weight's rows.\n");
    sb_puts(b, "//\n");
    for (int k = 0; k < e->st.nkernels; k++)
        sb_printf(b, "//   %-56s %3d launch%s\n", e->st.kernels[k].name, e->st.kernels[k].uses,
                  e->st.kernels[k].uses == 1 ? "" : "es");
}

bool emit_cuda(Graph *g, Diag *d, EmitResult *out) {
    memset(out, 0, sizeof *out);
    if (!g || !g->arena) {
        diag_plain_error(d, "internal error: emit: no graph");
        return false;
    }
    if (!g->stage || strcmp(g->stage, "buffers") != 0) {
        diag_plain_error(d, "internal error: emit: the graph must go through every pass first (stage is '%s')",
                         g->stage ? g->stage : "none");
        return false;
    }
    if (g->tokens < 0 || g->tokens >= g->nvalues || g->logits < 0 || g->logits >= g->nvalues) {
        diag_plain_error(d, "internal error: emit: graph without tokens or logits");
        return false;
    }
    Emit e;
    memset(&e, 0, sizeof e);
    e.st.g = g;
    e.st.d = d;
    e.st.arena = g->arena;
    if (!index_values(&e)) {
        diag_plain_error(d, "emit: out of memory");
        return false;
    }
    int errors0 = d->errors;
    for (int i = 0; i < g->nnodes; i++) {
        const Node *n = g->nodes[i];
        if (n->dead) continue;
        for (int k = 0; k < n->nin; k++)
            if (n->in[k] < 0 || n->in[k] >= g->nvalues) {
                internal(&e, n, "input %d is not a value", k);
                return false;
            }
        if (n->out < 0 || n->out >= g->nvalues) {
            internal(&e, n, "no output value");
            return false;
        }
    }
    if (!size_staging(&e)) return false;
    if (!emit_nodes(&e, false)) return false;
    /* the "decode" program: the same steps for T = 1, attention split over key chunks (flash-decoding) */
    e.st.nforward = e.st.nsteps;
    int nlaunches = e.st.nlaunches, ngemms = e.st.ngemms;
    e.decode = e.st.decode_bytes > 0;
    if (e.decode && !emit_nodes(&e, false)) return false;
    if (e.decode) emit_batchable(&e);
    if (!emit_loss(&e) || !emit_sample(&e)) return false;
    /* the "slide" program: run by the runtime when a segment ends (a PIA cache keeps its last rows) */
    e.decode = false;
    e.st.nslide_first = e.st.nsteps;
    if (!emit_slides(&e)) return false;
    /* the "load" program: the derived tensors, computed once per weights load */
    e.decode = false;
    e.st.nload_first = e.st.nsteps;
    if (!emit_nodes(&e, true)) return false;
    e.st.nlaunches = nlaunches; /* per forward of a segment: the forward program's */
    e.st.ngemms = ngemms;
    if (d->errors > errors0 || !check_refs(&e) || !render_kernels(&e)) return false;

    char *plan = plan_build(&e.st);
    if (!plan) return false;
    StrBuf b = {0};
    sb_puts(&b, SHORTC_PLAN_BEGIN "\n");
    sb_puts(&b, plan);
    sb_puts(&b, "\n" SHORTC_PLAN_END "\n");
    header_comment(&e, &b);
    sb_puts(&b, "\n");
    const ShortcTemplate *prelude = template_find("prelude.cuh");
    if (!prelude) {
        free(plan);
        free(b.p);
        diag_plain_error(d, "internal error: emit: no templates/prelude.cuh");
        return false;
    }
    sb_put(&b, prelude->text, prelude->len);
    if (!paste_attn_kinds(&e, &b) || !paste_mma_frag(&e, &b)) {
        free(plan);
        free(b.p);
        return false;
    }
    for (int k = 0; k < e.st.nkernels; k++) {
        sb_puts(&b, "\n");
        sb_puts(&b, e.st.kernels[k].source);
    }
    out->cu = sb_take(&b, &out->cu_len);
    if (!out->cu) {
        free(plan);
        diag_plain_error(d, "emit: out of memory");
        return false;
    }
    out->plan_json = plan;
    out->nkernels = e.st.nkernels;
    out->nlaunches = e.st.nlaunches;
    out->ngemms = e.st.ngemms;
    return true;
}

void emit_result_free(EmitResult *r) {
    if (!r) return;
    free(r->cu);
    free(r->plan_json);
    r->cu = r->plan_json = NULL;
}

/* ------------------------------------------------------------------ */
/* Position-infused attention (docs/attention/pia.md)                   */
/* ------------------------------------------------------------------ */

/* The PIA table's type (T_POS) and, for the CUDA-core engine (hooks), its hooks: slot s's query adds row s's
 * first half of the table, its key the second (the tensor-core path addresses the table itself). */
static bool pia_hooks(Emit *e, const Node *n, KSpec *ks, int H, int hd, bool hooks) {
    const Value *pos = val(e, n->in[2]);
    int W = 2 * H * hd; /* row stride: W_q p_s | W_k p_s */
    if (pos->rank != 2 || ir_dim(pos, 1) != W) {
        internal(e, n, "position table %s is not [slots, %d]", pos->name, W);
        return false;
    }
    set_dtype(ks, "T_POS", pos->dtype);
    if (!hooks) return true;
    const char *text = tmpl_get(&ks->args, "HOOKS"), *name = ks->name, *tp = cuda_type(pos->dtype);
    tmpl_set(&ks->args, "HOOKS",
             arena_printf(e->st.arena,
                          "%s\n// Position-infused attention: slot s adds W_q p_s to its query, W_k p_s to its key.\n"
                          "__device__ __forceinline__ float %s_qpos(const %s *pos, int h, int s, int j) {\n"
                          "    return shortc_ld(pos + (size_t)s * %d + h * %d + j);\n}\n"
                          "__device__ __forceinline__ float %s_kpos(const %s *pos, int h, int s, int j) {\n"
                          "    return shortc_ld(pos + (size_t)s * %d + (%d + h) * %d + j);\n}",
                          text ? text : "", name, tp, W, hd, name, tp, W, H, hd));
    return true;
}

/* After a position-infused call: the cache keeps its last `keep` rows (templates/attn_pia_slide.cuh). */
static bool add_pia_slide(Emit *e, const Node *n, const Value *kv, int H, int hd) {
    KSpec ks;
    memset(&ks, 0, sizeof ks);
    bool htd = kv->order == ORD_HEADS_TOKENS_DIM;
    int threads = threads_for(2 * H * hd);
    char sfx[32];
    dtype_suffix(sfx, sizeof sfx, kv->dtype, 0, NULL, 0, kv->dtype);
    ks.tmpl = "attn_pia_slide.cuh";
    ks.name = arena_printf(e->st.arena, "shortc_pia_slide_h%d_hd%d_keep%d%s%s", H, hd, kv->keep, sfx, htd ? "" : "_thd");
    set_int(e, &ks, "H", H);
    set_int(e, &ks, "HD", hd);
    set_int(e, &ks, "KEEP", kv->keep);
    set_int(e, &ks, "THREADS", threads);
    set_dtype(&ks, "T_KV", kv->dtype);
    set_flag(&ks, "KV_HTD", htd);
    ks.grid[0] = SYMDIM_CONST((2 * H * hd + threads - 1) / threads);
    ks.block = threads;
    ks.geometry = arena_printf(e->st.arena, "grid (%d, 1, 1), block %d: one thread per column of the cache",
                               (2 * H * hd + threads - 1) / threads, threads);
    ks.sargs[ks.nsargs++] = arg_value(n->in[1]);
    ks.sargs[ks.nsargs++] = arg_tokens();
    ks.sargs[ks.nsargs++] = arg_position();
    ks.sargs[ks.nsargs++] = arg_kv_rows(kv);
    return add_launch(e, n, &ks);
}

/* The "slide" program: every live attention whose cache slides (PIA's) keeps its last rows. */
static bool emit_slides(Emit *e) {
    const Graph *g = e->st.g;
    for (int i = 0; i < g->nnodes; i++) {
        const Node *n = g->nodes[i];
        if (!n->dead && n->op == OP_ATTENTION && n->nin > 1 && val(e, n->in[1])->slides &&
            !add_pia_slide(e, n, val(e, n->in[1]), n->heads, n->head_dim))
            return false;
    }
    return true;
}

/* Position-infused attention's table, every slot, in the load program (templates/attn_pia_pos.cuh). */
bool emit_pia_pos(Emit *e, const Node *n, KSpec *ks, bool *launch) {
    *launch = false;
    const Value *w = val(e, n->in[0]), *pos = val(e, n->out);
    int HHD = n->heads * n->head_dim;
    bool out_in = w->order == ORD_OUT_IN;
    int D = out_in ? ir_dim(w, 1) : ir_dim(w, 0);
    if (w->rank != 2 || (out_in ? ir_dim(w, 0) : ir_dim(w, 1)) != 3 * HHD || pos->rank != 2 || ir_dim(pos, 1) != 2 * HHD) {
        internal(e, n, "weight %s or table %s does not match %d heads x %d", w->name, pos->name, n->heads, n->head_dim);
        return false;
    }
    if ((long)D * 4 > SMEM_STATIC_LIMIT) {
        diag_error(e->st.d, n->src, "d_model %d is too large for the position-infused table kernel", D);
        return false;
    }
    int threads = threads_for(2 * HHD);
    char sfx[32];
    dtype_suffix(sfx, sizeof sfx, pos->dtype, 1, &w->dtype, 0, pos->dtype);
    ks->tmpl = "attn_pia_pos.cuh";
    ks->name = arena_printf(e->st.arena, "shortc_pia_pos_%s_d%d_hhd%d%s%s", pia_style_name(n->pia_style), D, HHD, sfx,
                            out_in ? "_oi" : "");
    set_int(e, ks, "D", D);
    set_int(e, ks, "HHD", HHD);
    set_int(e, ks, "THREADS", threads);
    set_dtype(ks, "T_W", w->dtype);
    set_dtype(ks, "T_POS", pos->dtype);
    set_flag(ks, "FAIRSEQ", n->pia_style == PIA_FAIRSEQ);
    set_flag(ks, "W_OUT_IN", out_in);
    ks->grid[0] = SYMDIM_CONST(pos->capacity); /* every slot: the cached and the new tokens of any call */
    ks->block = threads;
    ks->geometry = arena_printf(e->st.arena, "grid (%d, 1, 1), block %d: one slot per block, once per weights load",
                                pos->capacity, threads);
    ks->sargs[ks->nsargs++] = arg_value(n->in[0]);
    ks->sargs[ks->nsargs++] = arg_value(n->out);
    ks->sargs[ks->nsargs++] = arg_kv_rows(pos);
    return (*launch = true);
}
