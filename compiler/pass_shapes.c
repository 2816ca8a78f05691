/*
 * pass_shapes.c — shape inference and shape checks (docs/ir.md, "shapes").
 *
 * Every value's dims are its stored shape, row-major, outermost first, with
 * SymDims: T for the token dimension, fill+T for a state's rows. Weights and the tokens input get their
 * shapes at lowering; this pass computes the shape of every node output from
 * its inputs with the op's shape rule (ir_infer_shape over op_table, ops.c;
 * the verifier uses it too) and reports inconsistent inputs at the node's
 * .arch statement.
 */
#include "shortc.h"

#include <string.h>

bool pass_shapes(Graph *g, Diag *d) {
    int errors = 0;
    for (int i = 0; i < g->nnodes; i++) {
        Node *n = g->nodes[i];
        if (n->dead || n->out < 0) continue;
        Value *o = g->values[n->out];
        int rank = 0;
        SymDim dims[MAX_RANK] = {{0}};
        char why[256];
        if (!ir_infer_shape(g, n, &rank, dims, why, sizeof why)) {
            char where[32] = "";
            if (n->layer >= 0) snprintf(where, sizeof where, ", layer %d", n->layer);
            diag_error(d, n->src, "shapes: %s %s (node %d%s): %s", op_name(n->op), o->name, n->id, where, why);
            errors++;
            continue;
        }
        o->rank = rank;
        memcpy(o->dims, dims, sizeof o->dims);
    }
    g->stage = "shapes";
    return errors == 0;
}
