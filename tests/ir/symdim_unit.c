/*
 * symdim_unit.c — unit tests of the IR's symbolic dimensions (SymDim,
 * common/shortc_common.h; docs/ir.md, "Symbolic dimensions"): the op shape
 * rules on values whose dims are SymDims, the verifier's checks of them and
 * the text form.
 *
 *   symdim_unit MODEL.arch     (a GPT-2-style model: gpt2_tiny)
 *
 * Checks: a matmul of [T,d] by a [d,e] weight is [T,e]; a [d+1,e] weight is an
 * error whose message prints both symbolic shapes; attention over fill+T keys
 * reads a KV state whose rows are fill+T, and keys of T are an error naming
 * both; a KV state's rows are fill+T in the dump and at its capacity in
 * storage; the verifier rejects a state whose rows are T, a weight with a
 * token dimension and an output whose shape differs from its rule's, printing
 * the shapes symbolically; ir_numel_env evaluates every term.
 */
#define _POSIX_C_SOURCE 200809L
#include "shortc.h"

#include <stdlib.h>
#include <string.h>

static int failures;
#define CHECK(c, ...) do { if (!(c)) { failures++; printf("FAIL %s:%d: ", __FILE__, __LINE__); printf(__VA_ARGS__); printf("\n"); } } while (0)

/* The first live node of op in layer (-1: any). */
static Node *find_op(Graph *g, OpKind op, int layer) {
    for (int i = 0; i < g->nnodes; i++) {
        Node *n = g->nodes[i];
        if (!n->dead && n->op == op && (layer < 0 || n->layer == layer)) return n;
    }
    return NULL;
}

/* The shape rule of n: true when it holds; the shape text or the message in out. */
static bool infer(const Graph *g, const Node *n, char *out, size_t len) {
    int rank = 0;
    SymDim dims[MAX_RANK] = {{0}};
    if (!ir_infer_shape(g, n, &rank, dims, out, len)) return false;
    ir_format_dims(out, len, rank, dims);
    return true;
}

/* What the verifier says about g (malloc'd, "" when it passes); *ok its verdict. */
static char *verify_text(const Graph *g, Arena *a, bool *ok) {
    char *msg = NULL;
    size_t mlen = 0;
    FILE *mem = open_memstream(&msg, &mlen);
    Diag d;
    diag_init(&d, a, mem);
    *ok = ir_verify(g, &d);
    fclose(mem);
    return msg;
}

static void expect_rejected(const Graph *g, Arena *a, const char *want, const char *what) {
    bool ok = true;
    char *msg = verify_text(g, a, &ok);
    CHECK(!ok && msg && strstr(msg, want), "%s: want \"%s\", verifier said: %s", what, want, msg ? msg : "nothing");
    free(msg);
}

/* matmul [T,d] x [d,e] -> [T,e]; a weight of the wrong inner size prints both shapes. */
static void test_matmul(Graph *g) {
    Node *n = find_op(g, OP_MATMUL, 0);
    CHECK(n, "no matmul");
    if (!n) return;
    Value *x = g->values[n->in[0]], *w = g->values[n->in[1]];
    char got[256], want[64];
    int d = ir_dim(x, 1), e = ir_dim(w, n->trans_w ? 0 : 1);
    snprintf(want, sizeof want, "[T,%d]", e);
    CHECK(symdim_eq(x->dims[0], SYMDIM_T) && d > 0, "matmul input is not [T,d]");
    CHECK(infer(g, n, got, sizeof got) && strcmp(got, want) == 0, "matmul [T,%d] x weight: %s, want %s", d, got, want);
    int inner = n->trans_w ? 1 : 0;
    SymDim saved = w->dims[inner];
    w->dims[inner] = SYMDIM_CONST(d + 1);
    char xs[64], ws[64];
    ir_format_dims(xs, sizeof xs, x->rank, x->dims);
    ir_format_dims(ws, sizeof ws, w->rank, w->dims);
    CHECK(!infer(g, n, got, sizeof got) && strstr(got, xs) && strstr(got, ws),
          "inner mismatch: message \"%s\" does not print %s and %s", got, xs, ws);
    w->dims[inner] = saved;
    /* a symbolic input width is not a constant: the rule refuses it, printing it */
    saved = x->dims[1];
    x->dims[1] = SYMDIM_KEYS;
    CHECK(!infer(g, n, got, sizeof got) && strstr(got, "[T,fill+T]"), "symbolic width accepted or not printed: %s", got);
    x->dims[1] = saved;
    CHECK(infer(g, n, got, sizeof got), "restored matmul fails: %s", got);
}

/* attention reads a KV state of fill+T rows with keys=fill+T; keys of T do not match it. */
static void test_attention(Graph *g) {
    Node *n = find_op(g, OP_ATTENTION, 0);
    CHECK(n, "no attention");
    if (!n) return;
    Value *kv = g->values[n->in[1]];
    int axis = ir_token_axis(kv);
    char got[256], kvs[64], want[64];
    ir_format_dims(kvs, sizeof kvs, kv->rank, kv->dims);
    CHECK(kv->role == STATE_KV_CACHE && axis >= 0 && symdim_eq(kv->dims[axis], SYMDIM_KEYS),
          "KV %s is %s, want its rows fill+T", kv->name, kvs);
    CHECK(symdim_eq(n->keys, SYMDIM_KEYS), "attention keys are not fill+T");
    snprintf(want, sizeof want, "[T,%d]", n->heads * n->head_dim);
    CHECK(infer(g, n, got, sizeof got) && strcmp(got, want) == 0, "attention over fill+T keys: %s, want %s", got, want);
    n->keys = SYMDIM_T;
    CHECK(!infer(g, n, got, sizeof got) && strstr(got, "over T keys") && strstr(got, kvs),
          "keys T vs KV %s: message \"%s\"", kvs, got);
    n->keys = SYMDIM_KEYS;
    /* storage: the rows at the capacity (no fill), a call's window at fill + T */
    size_t per_row = ir_numel(kv, 1);
    CHECK(ir_state_numel(kv) == per_row * (size_t)kv->capacity, "state numel %zu, want %zu x %d", ir_state_numel(kv),
          per_row, kv->capacity);
    SymEnv env = {.T = 3, .P = 5, .fill = 5, .B = 1};
    CHECK(ir_numel_env(kv, &env) == per_row * 8, "KV numel at fill 5 + T 3: %zu, want %zu", ir_numel_env(kv, &env),
          per_row * 8);
}

/* The verifier's checks of SymDims, with the shapes printed symbolically. */
static void test_verifier(Graph *g, Arena *a) {
    bool ok = false;
    free(verify_text(g, a, &ok));
    CHECK(ok, "compiled graph does not verify");
    Node *kw = find_op(g, OP_KV_WRITE, 0);
    Value *kv = kw ? g->values[kw->out] : NULL;
    CHECK(kv, "no kv_write");
    if (!kv) return;
    int axis = ir_token_axis(kv);
    kv->dims[axis] = SYMDIM_T;
    expect_rejected(g, a, "only a state's rows are fill+T", "state rows T");
    kv->dims[axis] = SYMDIM_KEYS;
    Node *mm = find_op(g, OP_MATMUL, 0);
    Value *w = g->values[mm->in[1]];
    SymDim saved = w->dims[0];
    w->dims[0] = SYMDIM_T;
    expect_rejected(g, a, "has a token dimension", "weight with T");
    w->dims[0] = (SymDim){.t = 1, .c = 15, .div = 16};
    expect_rejected(g, a, "(T+15)/16", "unsupported symbolic dimension");
    w->dims[0] = saved;
    Value *o = g->values[find_op(g, OP_ATTENTION, 1)->out];
    SymDim width = o->dims[1];
    o->dims[1] = SYMDIM_CONST(ir_dim(o, 1) + 1);
    char want[96];
    snprintf(want, sizeof want, "has shape [T,%d] but its inputs imply [T,%d]", ir_dim(o, 1), ir_dim(o, 1) - 1);
    expect_rejected(g, a, want, "output shape");
    o->dims[1] = width;
    free(verify_text(g, a, &ok));
    CHECK(ok, "restored graph does not verify");
}

/* The dump prints dims with symdim_format. */
static void test_dump(const Graph *g, Diag *d) {
    char *txt = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&txt, &len);
    ir_print(mem, g, d);
    fclose(mem);
    CHECK(txt && strstr(txt, "input %tokens:i32[T]"), "tokens line");
    CHECK(txt && strstr(txt, ",fill+T,") && strstr(txt, "state=kv_cache"), "no fill+T KV in the dump");
    CHECK(txt && strstr(txt, "keys=fill+T"), "attention keys not printed");
    free(txt);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: symdim_unit MODEL.arch\n");
        return 2;
    }
    Arena a;
    arena_init(&a);
    Diag d;
    diag_init(&d, &a, stderr);
    CompileOptions co = {.path = argv[1], .stop = COMPILE_STOP_AFTER_PASSES};
    CompileResult cr;
    if (!shortc_compile(&a, &d, &co, &cr)) {
        fprintf(stderr, "%s: does not compile\n", argv[1]);
        compile_result_free(&cr);
        arena_free(&a);
        return 1;
    }
    test_matmul(cr.graph);
    test_attention(cr.graph);
    test_verifier(cr.graph, &a);
    test_dump(cr.graph, &d);
    compile_result_free(&cr);
    arena_free(&a);
    if (failures) printf("%d failure(s)\n", failures);
    else printf("symdim_unit: all checks passed\n");
    return failures ? 1 : 0;
}
