/*
 * weights_by_value.h — the interpreter's view of a plan's weights for the
 * checking programs (step_check.c, tests/sim/test_state.c): wts[v] of every
 * IR weight value v points at the plan weight it binds to in pvals (its
 * name and stored shape, rt_plan_weight_index; the arrays rt_weights_random
 * or rt_weights_from_st filled, plan order).
 */
#ifndef SHORTC_TESTS_WEIGHTS_BY_VALUE_H
#define SHORTC_TESTS_WEIGHTS_BY_VALUE_H

#include "rt_internal.h"
#include "shortc.h"

/* wts: g->nvalues entries, zeroed by the caller; entries of non-weights stay NULL. */
static inline void weights_by_value(const Graph *g, const RtPlan *p, float *const *pvals, const float **wts) {
    for (int v = 0; v < g->nvalues; v++) {
        const Value *val = g->values[v];
        if (val->cls != VC_WEIGHT) continue;
        const char *name = val->weight_name ? val->weight_name : val->name;
        if (name[0] == '@') name++;
        int i = rt_plan_weight_index(p, name, val->rank, val->dims);
        if (i >= 0) wts[v] = pvals[i];
    }
}

#endif
