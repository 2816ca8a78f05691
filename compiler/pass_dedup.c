/*
 * pass_dedup.c — kernel ids shared across identical nodes (docs/ir.md,
 * "dedup").
 *
 * A node's signature is its op, its attributes and the shape, dtype and
 * order of each input it reads (a fused matmul's epilogue kernel does not
 * read x or w) and of its output; weight names, layer indices and
 * source locations are not part of it. Nodes with equal signatures share a
 * kernel id, numbered in order of first appearance. Pure GEMMs (a matmul
 * without epilogue, the logits projection) are cuBLAS calls and get -1; a
 * matmul with an epilogue gets the id of its epilogue kernel. Since every
 * layer produces the same signatures, the kernel count does not depend on
 * the number of layers.
 */
#include "shortc.h"

#include <stdlib.h>
#include <string.h>

static void sig_value(char *buf, size_t n, size_t *k, const Value *v) {
    if (*k >= n) return;
    *k += (size_t)snprintf(buf + *k, n - *k, " %s", dtype_plan_name(v->dtype));
    if (*k < n) *k += ir_format_dims(buf + *k, n - *k, v->rank, v->dims);
    if (*k < n) *k += (size_t)snprintf(buf + *k, n - *k, "%d", (int)v->order);
}

/* The signature text of a node (see the file comment). */
static void signature(const Graph *g, const Node *nd, char *buf, size_t n) {
    size_t k = (size_t)snprintf(buf, n, "%s", op_name(nd->op));
    const OpInfo *oi = op_info(nd->op);
    if (oi && oi->key_attrs && k < n) k = oi->key_attrs(buf, n, k, nd);
    /* A fused matmul's kernel is its epilogue, which reads the GEMM result
     * (the output), the bias and the residual but never x or w: their shapes
     * (e.g. the inner dimension K) must not split otherwise equal kernels. */
    int first = oi ? oi->kernel_first_input : 0;
    for (int i = first; i < nd->nin && k < n; i++) sig_value(buf, n, &k, g->values[nd->in[i]]);
    if (k < n) k += (size_t)snprintf(buf + k, n - k, " ->");
    sig_value(buf, n, &k, g->values[nd->out]);
}

bool pass_dedup(Graph *g, Diag *d) {
    char **sigs = calloc((size_t)g->nnodes + 1, sizeof *sigs);
    if (!sigs) {
        diag_plain_error(d, "dedup: out of memory");
        return false;
    }
    int nk = 0;
    char buf[1024];
    for (int i = 0; i < g->nnodes; i++) {
        Node *n = g->nodes[i];
        n->kernel = -1;
        if (n->dead || !ir_node_needs_kernel(n)) continue;
        signature(g, n, buf, sizeof buf);
        int k = 0;
        while (k < nk && strcmp(sigs[k], buf) != 0) k++;
        if (k == nk) sigs[nk++] = arena_strdup(g->arena, buf);
        n->kernel = k;
    }
    g->nkernels = nk;
    free(sigs);
    g->stage = "dedup";
    return true;
}
