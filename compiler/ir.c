/*
 * ir.c — the IR's constructors, its text form (ir_print) and the
 * structural verifier (ir_verify). The text form and every check are
 * documented in docs/ir.md.
 */
#include "shortc.h"
#include "plan_schema.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Stages                                                              */
/* ------------------------------------------------------------------ */

enum { STG_LOWER, STG_SHAPES, STG_LAYOUTS, STG_FUSE, STG_DEDUP, STG_BUFFERS };
static const char *const stage_names[] = {"lower", "shapes", "layouts", "fuse", "dedup", "buffers"};

int ir_stage_index(const char *stage) {
    if (!stage) return -1;
    for (int i = 0; i < (int)(sizeof stage_names / sizeof *stage_names); i++)
        if (strcmp(stage, stage_names[i]) == 0) return i;
    return -1;
}

static int stage_of(const Graph *g) {
    int s = ir_stage_index(g->stage);
    return s < 0 ? STG_LOWER : s;
}

/* ------------------------------------------------------------------ */
/* Construction                                                        */
/* ------------------------------------------------------------------ */

Value *ir_new_value(Graph *g, ValueClass cls, const char *name) {
    if (g->nvalues == g->cap_values) {
        int cap = g->cap_values ? g->cap_values * 2 : 64;
        Value **v = arena_alloc(g->arena, sizeof(Value *) * (size_t)cap);
        if (!v) return NULL;
        if (g->nvalues) memcpy(v, g->values, sizeof(Value *) * (size_t)g->nvalues);
        g->values = v;
        g->cap_values = cap;
    }
    Value *v = arena_alloc(g->arena, sizeof *v);
    if (!v) return NULL;
    v->id = g->nvalues;
    v->cls = cls;
    v->name = name ? arena_strdup(g->arena, name) : arena_printf(g->arena, "%%v%d", v->id);
    v->def = -1;
    v->last_use = -1;
    v->buffer = -1;
    v->order = ORD_TOKENS_CHANNELS;
    g->values[g->nvalues++] = v;
    return v;
}

Node *ir_new_node(Graph *g, OpKind op, Loc src, int layer) {
    if (g->nnodes == g->cap_nodes) {
        int cap = g->cap_nodes ? g->cap_nodes * 2 : 64;
        Node **n = arena_alloc(g->arena, sizeof(Node *) * (size_t)cap);
        if (!n) return NULL;
        if (g->nnodes) memcpy(n, g->nodes, sizeof(Node *) * (size_t)g->nnodes);
        g->nodes = n;
        g->cap_nodes = cap;
    }
    Node *n = arena_alloc(g->arena, sizeof *n);
    if (!n) return NULL;
    n->id = g->nnodes;
    n->op = op;
    n->src = src;
    n->layer = layer;
    n->out = -1;
    n->kernel = -1;
    g->nodes[g->nnodes++] = n;
    return n;
}

void ir_add_input(Node *n, int value_id) {
    if (n->nin < (int)(sizeof n->in / sizeof *n->in)) n->in[n->nin++] = value_id;
}

bool ir_value_live(const Graph *g, const Value *v) {
    if (v->cls == VC_WEIGHT || v->cls == VC_INPUT) return true;
    return v->def >= 0 && v->def < g->nnodes && !g->nodes[v->def]->dead && g->nodes[v->def]->out == v->id;
}

size_t ir_numel_env(const Value *v, const SymEnv *env) {
    size_t n = 1;
    for (int i = 0; i < v->rank; i++) {
        long d = symdim_eval(v->dims[i], env);
        n *= (size_t)(d > 0 ? d : 0);
    }
    return n;
}

size_t ir_numel(const Value *v, int T) {
    SymEnv env = {.T = T};
    return ir_numel_env(v, &env);
}

int ir_dim(const Value *v, int k) {
    if (!v || k < 0 || k >= v->rank || !symdim_is_const(v->dims[k])) return 0;
    return (int)symdim_eval(v->dims[k], NULL);
}

int ir_token_axis(const Value *v) {
    for (int k = 0; v && k < v->rank; k++)
        if (v->dims[k].t != 0 || v->dims[k].fill != 0) return k;
    return -1;
}

size_t ir_format_dims(char *buf, size_t n, int rank, const SymDim *dims) {
    size_t k = (size_t)snprintf(buf, n, "[");
    for (int i = 0; i < rank; i++) {
        char d[48];
        k += (size_t)snprintf(buf + (k < n ? k : n), n - (k < n ? k : n), "%s%s", i ? "," : "",
                              symdim_format(dims[i], d, sizeof d));
    }
    k += (size_t)snprintf(buf + (k < n ? k : n), n - (k < n ? k : n), "]");
    return k;
}

const char *ir_shape_text(const Value *v, char *buf, size_t n) {
    if (!v) {
        if (n) buf[0] = '\0';
        return buf;
    }
    ir_format_dims(buf, n, v->rank, v->dims);
    return buf;
}

size_t ir_state_numel(const Value *v) {
    return v->role == STATE_NONE || v->capacity <= 0 ? 0 : ir_numel(v, v->capacity);
}

size_t ir_state_bytes(const Graph *g) {
    size_t bytes = 0;
    for (int i = 0; i < g->nvalues; i++) {
        const Value *v = g->values[i];
        if (v->role != STATE_NONE && !ir_value_derived(v) && ir_value_live(g, v))
            bytes += ir_state_numel(v) * (size_t)dtype_size(v->dtype);
    }
    return bytes;
}

bool ir_value_derived(const Value *v) { return v->role == STATE_TABLE; }

size_t ir_derived_bytes(const Graph *g) {
    size_t bytes = 0;
    for (int i = 0; i < g->nvalues; i++) {
        const Value *v = g->values[i];
        if (ir_value_derived(v) && ir_value_live(g, v)) bytes += ir_state_numel(v) * (size_t)dtype_size(v->dtype);
    }
    return bytes;
}

int ir_position_limit(const ModelSpec *s) {
    if (s->rec.on) return s->segment; /* recurrence: positions restart in every window */
    if (s->infused != PIA_NONE || s->cache > 0) return s->cache + s->segment; /* the cache window and a segment */
    if (txl_model(s)) return TXL_POSITION_LIMIT; /* relative attention addresses no absolute position */
    return s->max_pos > s->segment ? s->max_pos : s->segment; /* one call always fits */
}

int ir_state_keep(const Graph *g) {
    int keep = -1;
    for (int i = 0; i < g->nvalues; i++) {
        const Value *v = g->values[i];
        if (v->slides && ir_value_live(g, v) && (keep < 0 || v->keep < keep)) keep = v->keep;
    }
    return keep;
}

const char *state_role_name(StateRole r) {
    return (unsigned)r < PLAN_NSTATE_ROLES ? plan_state_roles[r] : "?"; /* the plan's names (plan_schema.c) */
}

/* ------------------------------------------------------------------ */
/* Text form                                                           */
/* ------------------------------------------------------------------ */

static void print_dims(FILE *out, int rank, const SymDim *dims) {
    char buf[MAX_RANK * 48 + 4];
    ir_format_dims(buf, sizeof buf, rank, dims);
    fputs(buf, out);
}

static void print_type(FILE *out, const Graph *g, const Value *v) {
    fputs(stage_of(g) >= STG_LAYOUTS ? dtype_plan_name(v->dtype) : "?", out);
    if (v->rank > 0) print_dims(out, v->rank, v->dims);
    else fputs("[?]", out);
}

/* Whether a value's order is worth printing (it is not implied). */
static bool shows_order(const Graph *g, const Value *v) {
    if (v->cls == VC_WEIGHT) return v->rank >= 2;
    return v->cls == VC_KV && stage_of(g) >= STG_LAYOUTS;
}

static void print_loc(FILE *out, const Diag *d, Loc loc) {
    if (!d || loc.file < 0 || loc.file >= d->nsources) return;
    int line = 0, col = 0;
    diag_linecol(d, loc, &line, &col);
    if (loc.file == 0) {
        fprintf(out, ", line %d", line);
    } else {
        const char *p = d->sources[loc.file]->path;
        const char *b = strrchr(p, '/');
        fprintf(out, ", %s:%d", b ? b + 1 : p, line);
    }
}

static void print_node_op(FILE *out, const Node *n) {
    fputs(op_name(n->op), out);
    const OpInfo *oi = op_info(n->op);
    if (oi && oi->print_attrs) oi->print_attrs(out, n);
}

static void print_arena(FILE *out, const Value *v) {
    if (v->buffer >= 0) fprintf(out, ", arena %zu+%zu", v->offset, v->bytes);
}

void ir_print(FILE *out, const Graph *g, const Diag *d) {
    const ModelSpec *s = g->spec;
    int stg = stage_of(g);
    fprintf(out, "; shortc IR: model %s, after %s\n", s ? s->name : "?", g->stage ? g->stage : "lower");
    if (s) {
        fprintf(out, "; vocab=%d d_model=%d heads=%d head_dim=%d ffn=%d act=%s norm=%s/%s eps=%g",
                s->vocab, s->d_model, s->n_heads, s->head_dim, s->d_ff,
                s->gated ? (s->act == ACT_SILU ? "swiglu" : "geglu") : activation_name(s->act),
                norm_kind_name(s->norm), norm_place_name(s->norm_place), s->eps);
        if (s->kv_heads != s->n_heads) fprintf(out, " kv_heads=%d", s->kv_heads);
        fprintf(out, " positions=%s", pos_kind_name(s->pos));
        if (s->pos == POS_LEARNED) fprintf(out, "/%d", s->max_pos);
        if (s->pos == POS_SINUSOIDAL && s->pos_style == PIA_FAIRSEQ) fputs("/fairseq", out);
        if (s->infused != PIA_NONE) fprintf(out, " infused=%s cache=%d", pia_style_name(s->infused), s->cache);
        fprintf(out, " embedding=%s", s->tied ? "tied" : "untied");
        if (s->adaptive.style != ADAPTIVE_NONE) fprintf(out, "/adaptive=%s", adaptive_style_name(s->adaptive.style));
        if (s->no_final_norm) fputs(" final_norm=off", out);
        if (s->no_bias) fputs(" bias=off", out);
        if (s->parallel) fputs(" block=parallel", out);
        fprintf(out, " segment=%d layers=%d\n", s->segment, s->n_layers);
    }
    /* inputs and weights */
    for (int i = 0; i < g->nvalues; i++) {
        const Value *v = g->values[i];
        if (v->cls != VC_INPUT && v->cls != VC_WEIGHT) continue;
        fprintf(out, "%s %s:", v->cls == VC_INPUT ? "input" : "weight", v->name);
        print_type(out, g, v);
        if (v->cls == VC_WEIGHT && v->dtype != DT_COUNT && ir_stage_index(g->stage) >= ir_stage_index("layouts") &&
            v->dtype != ir_weight_layout_dtype(g))
            fprintf(out, " round=%s", dtype_plan_name(ir_weight_layout_dtype(g)));
        if (shows_order(g, v)) fprintf(out, " %s", dim_order_name(v->order));
        if (v->transposed_src && v->rank == 2) {
            SymDim fd[2] = {v->dims[1], v->dims[0]};
            fputs(" file", out);
            print_dims(out, 2, fd);
        }
        if (v->buffer >= 0) {
            fputs("    ; ", out);
            fprintf(out, "arena %zu+%zu", v->offset, v->bytes);
        }
        fputc('\n', out);
    }
    /* nodes */
    for (int i = 0; i < g->nnodes; i++) {
        const Node *n = g->nodes[i];
        if (n->dead) continue;
        const Value *o = n->out >= 0 && n->out < g->nvalues ? g->values[n->out] : NULL;
        if (o) {
            fprintf(out, "%s:", o->name);
            print_type(out, g, o);
            if (shows_order(g, o)) fprintf(out, " %s", dim_order_name(o->order));
            if (o->role != STATE_NONE) fprintf(out, " state=%s capacity=%d", state_role_name(o->role), o->capacity);
            if (o->slides) fprintf(out, " keep=%d", o->keep);
        } else {
            fputs("%?", out);
        }
        fputs(" = ", out);
        print_node_op(out, n);
        for (int k = 0; k < n->nin; k++) {
            int id = n->in[k];
            fprintf(out, "%s%s", k ? ", " : " ", id >= 0 && id < g->nvalues ? g->values[id]->name : "%?");
        }
        fputs("    ;", out);
        if (n->layer >= 0) fprintf(out, " layer %d", n->layer);
        else fputs(n->op == OP_EMBED ? " embedding" : " head", out);
        print_loc(out, d, n->src);
        if (stg >= STG_DEDUP) {
            if (n->kernel >= 0) fprintf(out, ", kernel %d", n->kernel);
            else fputs(n->by_norm ? ", in the next norm's kernel" : ", gemm", out);
        }
        if (o) print_arena(out, o);
        fputc('\n', out);
    }
    if (stg >= STG_DEDUP) fprintf(out, "; kernels %d\n", g->nkernels);
    if (stg >= STG_BUFFERS) fprintf(out, "; arena %zu bytes (without reuse %zu)\n", g->arena_bytes, g->naive_bytes);
}

/* ------------------------------------------------------------------ */
/* Verifier                                                            */
/* ------------------------------------------------------------------ */

typedef struct Ver {
    const Graph *g;
    Diag *d;
    int errors;
} Ver;

static void verr(Ver *V, const Node *n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void verr(Ver *V, const Node *n, const char *fmt, ...) {
    V->errors++;
    if (V->errors > 20) return;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    const char *stage = V->g->stage ? V->g->stage : "lower";
    if (n) {
        const char *oname = n->out >= 0 && n->out < V->g->nvalues ? V->g->values[n->out]->name : "%?";
        char where[32] = "";
        if (n->layer >= 0) snprintf(where, sizeof where, ", layer %d", n->layer);
        diag_plain_error(V->d, "IR verifier after %s: node %d (%s = %s%s): %s", stage, n->id, oname, op_name(n->op), where, msg);
    } else {
        diag_plain_error(V->d, "IR verifier after %s: %s", stage, msg);
    }
}

static bool valid_value(const Graph *g, int id) { return id >= 0 && id < g->nvalues && g->values[id]; }

static void verify_structure(Ver *V) {
    const Graph *g = V->g;
    int stg = stage_of(g);
    if (!valid_value(g, g->tokens) || g->values[g->tokens]->cls != VC_INPUT) verr(V, NULL, "the tokens input is missing");
    if (g->position >= 0 && (!valid_value(g, g->position) || g->values[g->position]->cls != VC_INPUT))
        verr(V, NULL, "the position input is not an input");
    if (!valid_value(g, g->logits) || g->values[g->logits]->cls != VC_OUTPUT) verr(V, NULL, "the logits output is missing");
    else if (!ir_value_live(g, g->values[g->logits])) verr(V, NULL, "the logits are not produced by a live node");
    for (int i = 0; i < g->nvalues; i++) {
        const Value *v = g->values[i];
        if (v->id != i) verr(V, NULL, "value %s has id %d at index %d", v->name, v->id, i);
        if ((v->cls == VC_WEIGHT || v->cls == VC_INPUT) && v->def != -1)
            verr(V, NULL, "%s %s has a producing node", v->cls == VC_WEIGHT ? "weight" : "input", v->name);
        if (v->cls == VC_WEIGHT && !v->weight_name) verr(V, NULL, "weight %s has no file name", v->name);
        if (v->cls != VC_WEIGHT && v->cls != VC_INPUT && (v->def < -1 || v->def >= g->nnodes))
            verr(V, NULL, "value %s has an invalid producer %d", v->name, v->def);
        if ((v->role != STATE_NONE) != (v->cls == VC_KV) || (v->role != STATE_NONE && v->capacity <= 0))
            verr(V, NULL, "value %s has state role %s with capacity %d", v->name, state_role_name(v->role), v->capacity);
    }
    for (int i = 0; i < g->nnodes; i++) {
        const Node *n = g->nodes[i];
        if (n->id != i) { verr(V, n, "id %d at position %d", n->id, i); continue; }
        if (n->dead) continue;
        if ((unsigned)n->op >= OP_COUNT) { verr(V, n, "unknown op %d", (int)n->op); continue; }
        const OpInfo *oi = op_info(n->op);
        int want = op_expected_inputs(n);
        if (n->nin != want) verr(V, n, "has %d inputs, %s takes %d here", n->nin, op_name(n->op), want);
        bool epi = n->epi.bias || n->epi.act != ACT_NONE || n->epi.gate != ACT_NONE || n->epi.residual;
        if (!oi->fusable_epilogue && epi)
            verr(V, n, "has an epilogue but is not a matmul");
        if (oi->fusable_epilogue && stg < STG_FUSE && epi)
            verr(V, n, "has an epilogue before the fuse pass");
        for (int k = 0; k < n->nin; k++) {
            int id = n->in[k];
            if (!valid_value(g, id)) { verr(V, n, "input %d is not a value (%d)", k, id); continue; }
            const Value *v = g->values[id];
            if (v->cls == VC_WEIGHT || v->cls == VC_INPUT) continue;
            if (v->def < 0) { verr(V, n, "input %s has no producer", v->name); continue; }
            if (v->def >= n->id && v->role != STATE_MEMORY) { /* a memory is read before its write: the earlier calls' rows */
                verr(V, n, "input %s is used before it is defined (node %d)", v->name, v->def);
                continue;
            }
            const Node *p = g->nodes[v->def];
            if (p->dead) verr(V, n, "input %s comes from dead node %d", v->name, p->id);
            else if (p->out != v->id) verr(V, n, "input %s is not the output of its producer node %d", v->name, p->id);
        }
        if (!valid_value(g, n->out)) { verr(V, n, "has no output value"); continue; }
        const Value *o = g->values[n->out];
        if (o->def != n->id) verr(V, n, "output %s names node %d as its producer", o->name, o->def);
        if (o->cls == VC_WEIGHT || o->cls == VC_INPUT) verr(V, n, "writes %s, which is not an intermediate", o->name);
        if (o->cls != oi->out_class)
            verr(V, n, "output %s is not %s", o->name, oi->out_class == VC_KV ? "a KV value"
                                                      : oi->out_class == VC_OUTPUT ? "the logits" : "an activation");
        char why[256];
        if (oi->verify && oi->verify(g, n, why, sizeof why)) verr(V, n, "%s", why);
    }
    /* one live producer per value */
    int *seen = calloc((size_t)g->nvalues + 1, sizeof *seen);
    if (seen) {
        for (int i = 0; i < g->nnodes; i++) {
            const Node *n = g->nodes[i];
            if (n->dead || !valid_value(g, n->out)) continue;
            if (seen[n->out]++) verr(V, n, "output %s is written by more than one node", g->values[n->out]->name);
        }
        free(seen);
    }
}

/* A value's dims: each a positive constant, T, or (a state's rows) fill + T; a weight has no token
 * dimension, a state value's token dimension (if any) is its rows, and at most one dimension is symbolic. */
static void verify_dims(Ver *V, const Value *v) {
    char shape[MAX_RANK * 48 + 4]; /* v's shape as text, written only for a message */
    int symbolic = 0;
    for (int k = 0; k < v->rank; k++) {
        SymDim d = v->dims[k];
        bool is_t = symdim_eq(d, SYMDIM_T), is_rows = symdim_eq(d, DIM_STATE_ROWS);
        if (symdim_is_const(d) ? symdim_eval(d, NULL) <= 0 : !is_t && !is_rows)
            verr(V, NULL, "value %s %s has dimension %d not a positive size, T or fill+T", v->name, ir_shape_text(v, shape, sizeof shape), k);
        else if (v->cls == VC_WEIGHT && !symdim_is_const(d))
            verr(V, NULL, "weight %s %s has a token dimension", v->name, ir_shape_text(v, shape, sizeof shape));
        else if (is_rows != (v->role != STATE_NONE && !symdim_is_const(d)))
            verr(V, NULL, "value %s %s: only a state's rows are fill+T", v->name, ir_shape_text(v, shape, sizeof shape));
        symbolic += !symdim_is_const(d);
    }
    if (symbolic > 1) verr(V, NULL, "value %s %s has more than one token dimension", v->name, ir_shape_text(v, shape, sizeof shape));
}

static void verify_shapes(Ver *V) {
    const Graph *g = V->g;
    for (int i = 0; i < g->nvalues; i++) {
        const Value *v = g->values[i];
        if (!ir_value_live(g, v)) continue;
        if (v->rank <= 0 || v->rank > MAX_RANK) { verr(V, NULL, "value %s has no shape", v->name); continue; }
        verify_dims(V, v);
    }
    for (int i = 0; i < g->nnodes; i++) {
        const Node *n = g->nodes[i];
        if (n->dead || !valid_value(g, n->out)) continue;
        int rank = 0;
        SymDim dims[MAX_RANK] = {{0}};
        char why[256];
        if (!ir_infer_shape(g, n, &rank, dims, why, sizeof why)) { verr(V, n, "%s", why); continue; }
        const Value *o = g->values[n->out];
        bool same = rank == o->rank;
        for (int k = 0; same && k < rank; k++) same = symdim_eq(dims[k], o->dims[k]);
        if (!same) {
            char has[MAX_RANK * 48 + 4], want[MAX_RANK * 48 + 4];
            ir_format_dims(has, sizeof has, o->rank, o->dims);
            ir_format_dims(want, sizeof want, rank, dims);
            verr(V, n, "output %s has shape %s but its inputs imply %s", o->name, has, want);
        }
    }
}

static void verify_layouts(Ver *V) {
    const Graph *g = V->g;
    const ModelSpec *s = g->spec;
    for (int i = 0; i < g->nvalues; i++) {
        const Value *v = g->values[i];
        if (!ir_value_live(g, v)) continue;
        if ((unsigned)v->dtype >= DT_COUNT) { verr(V, NULL, "value %s has no dtype", v->name); continue; }
        DType want = ir_expected_dtype(g, v);
        if (v->dtype != want)
            verr(V, NULL, "value %s is %s, its class requires %s", v->name, dtype_plan_name(v->dtype), dtype_plan_name(want));
        if (v->cls == VC_KV && v->role == STATE_MEMORY && v->order != ORD_TOKENS_CHANNELS)
            verr(V, NULL, "memory %s has order %s, not [tokens,channels]", v->name, dim_order_name(v->order));
        if (v->cls == VC_KV && v->role != STATE_MEMORY && s && v->order != s->layout[TC_KV].order)
            verr(V, NULL, "KV value %s has order %s, the layout says %s", v->name, dim_order_name(v->order),
                 dim_order_name(s->layout[TC_KV].order));
        if ((v->cls == VC_ACTIVATION || v->cls == VC_OUTPUT) && v->order != ORD_TOKENS_CHANNELS)
            verr(V, NULL, "value %s has order %s", v->name, dim_order_name(v->order));
    }
    for (int i = 0; i < g->nnodes; i++) {
        const Node *n = g->nodes[i];
        if (n->dead || !op_is_gemm(n->op) || n->nin < 2 || !valid_value(g, n->in[1])) continue;
        const Value *w = g->values[n->in[1]];
        if (n->trans_w != (w->order == ORD_OUT_IN))
            verr(V, n, "trans_w=%d but weight %s is stored %s", (int)n->trans_w, w->name, dim_order_name(w->order));
    }
}

static void verify_kernels(Ver *V) {
    const Graph *g = V->g;
    if (g->nkernels < 0) verr(V, NULL, "kernel count %d", g->nkernels);
    char *used = calloc((size_t)(g->nkernels > 0 ? g->nkernels : 1), 1);
    for (int i = 0; i < g->nnodes; i++) {
        const Node *n = g->nodes[i];
        if (n->dead) continue;
        if (n->kernel < -1 || n->kernel >= g->nkernels) { verr(V, n, "kernel id %d out of range (%d kernels)", n->kernel, g->nkernels); continue; }
        bool need = ir_node_needs_kernel(n);
        if (need && n->kernel < 0) verr(V, n, "needs a kernel but has none");
        if (!need && n->kernel >= 0) verr(V, n, "is a pure GEMM but has kernel %d", n->kernel);
        if (n->kernel >= 0 && used) used[n->kernel] = 1;
    }
    for (int k = 0; used && k < g->nkernels; k++)
        if (!used[k]) verr(V, NULL, "kernel %d is used by no node", k);
    free(used);
}

static void verify_buffers(Ver *V) {
    const Graph *g = V->g;
    int n = 0;
    const Value **vals = malloc(sizeof *vals * (size_t)(g->nvalues + 1));
    int *st = malloc(sizeof *st * (size_t)(g->nvalues + 1));
    int *en = malloc(sizeof *en * (size_t)(g->nvalues + 1));
    if (!vals || !st || !en) { free(vals); free(st); free(en); return; }
    for (int i = 0; i < g->nvalues; i++) {
        const Value *v = g->values[i];
        if (!ir_value_in_arena(g, v)) { /* false for dead values too */
            if (v->buffer >= 0 && ir_value_live(g, v)) verr(V, NULL, "value %s has an arena slot but does not belong there", v->name);
            continue;
        }
        if (v->buffer < 0) { verr(V, NULL, "value %s has no arena slot", v->name); continue; }
        if (v->offset % 256) verr(V, NULL, "value %s at offset %zu is not 256-byte aligned", v->name, v->offset);
        size_t want = ir_numel(v, g->spec ? g->spec->segment : 1) * (size_t)dtype_size(v->dtype);
        if (v->bytes != want) verr(V, NULL, "value %s has %zu bytes, its shape needs %zu", v->name, v->bytes, want);
        if (v->offset + v->bytes > g->arena_bytes)
            verr(V, NULL, "value %s [%zu, %zu) lies outside the arena (%zu bytes)", v->name, v->offset, v->offset + v->bytes, g->arena_bytes);
        vals[n] = v;
        ir_live_range(g, v, &st[n], &en[n]);
        n++;
    }
    for (int a = 0; a < n; a++)
        for (int b = a + 1; b < n; b++) {
            if (st[a] > en[b] || st[b] > en[a]) continue; /* not live at the same time */
            const Value *x = vals[a], *y = vals[b];
            if (x->offset < y->offset + y->bytes && y->offset < x->offset + x->bytes)
                verr(V, NULL, "values %s [%zu, %zu) and %s [%zu, %zu) are live together (nodes %d..%d and %d..%d) and overlap",
                     x->name, x->offset, x->offset + x->bytes, y->name, y->offset, y->offset + y->bytes, st[a], en[a], st[b], en[b]);
        }
    if (g->arena_bytes > g->naive_bytes) verr(V, NULL, "arena %zu bytes exceeds the no-reuse total %zu", g->arena_bytes, g->naive_bytes);
    free(vals);
    free(st);
    free(en);
}

bool ir_verify(const Graph *g, Diag *d) {
    Ver V = {g, d, 0};
    int stg = stage_of(g);
    verify_structure(&V);
    if (V.errors) return false;
    if (stg >= STG_SHAPES) verify_shapes(&V);
    if (stg >= STG_LAYOUTS && !V.errors) verify_layouts(&V);
    if (stg >= STG_DEDUP && !V.errors) verify_kernels(&V);
    if (stg >= STG_BUFFERS && !V.errors) verify_buffers(&V);
    if (V.errors > 20) diag_plain_error(d, "IR verifier after %s: %d more errors", g->stage ? g->stage : "lower", V.errors - 20);
    return V.errors == 0;
}
