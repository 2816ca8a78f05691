/* PLACEHOLDER: replaced wholesale by the owner of this file. */
#include "shortc.h"
Value *ir_new_value(Graph *g, ValueClass cls, const char *name) { (void)g; (void)cls; (void)name; return NULL; }
Node *ir_new_node(Graph *g, OpKind op, Loc src, int layer) { (void)g; (void)op; (void)src; (void)layer; return NULL; }
void ir_add_input(Node *n, int v) { (void)n; (void)v; }
void ir_print(FILE *out, const Graph *g, const Diag *d) { (void)out; (void)g; (void)d; }
bool ir_verify(const Graph *g, Diag *d) { (void)g; (void)d; return false; }
