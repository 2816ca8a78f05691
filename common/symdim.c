/*
 * symdim.c — evaluating and printing symbolic dimensions (SymDim,
 * shortc_common.h): sizes affine in T, P, the state's fill and B, rounded
 * up by a divisor. Shared by the compiler (IR shapes, emission, plan) and
 * the runtime.
 */
#include "shortc_common.h"

#include <stdio.h>

long symdim_eval(SymDim d, const SymEnv *env) {
    long v = d.c;
    if (env) v += d.t * env->T + d.p * env->P + d.fill * env->fill + d.b * env->B;
    long div = d.div > 0 ? d.div : 1;
    if (div == 1) return v;
    return v >= 0 ? (v + div - 1) / div : -((-v) / div);
}

int symdim_is_const(SymDim d) { return d.t == 0 && d.p == 0 && d.fill == 0 && d.b == 0; }

int symdim_eq(SymDim a, SymDim b) {
    long da = a.div > 0 ? a.div : 1, db = b.div > 0 ? b.div : 1;
    return a.t == b.t && a.p == b.p && a.fill == b.fill && a.b == b.b && a.c == b.c && da == db;
}

/* Appends `+k*name` (or the first term without the sign) for a nonzero coefficient. */
static int term(char *buf, unsigned long n, int k, long coef, const char *name) {
    if (coef == 0) return k;
    size_t at = (size_t)k < n ? (size_t)k : n;
    const char *sign = coef < 0 ? "-" : (k > 1 || (k == 1 && buf[0] != '(') ? "+" : "");
    long mag = coef < 0 ? -coef : coef;
    int w = mag == 1 ? snprintf(buf + at, n - at, "%s%s", sign, name)
                     : snprintf(buf + at, n - at, "%s%ld*%s", sign, mag, name);
    return k + (w > 0 ? w : 0);
}

char *symdim_format(SymDim d, char *buf, unsigned long n) {
    if (!buf || n == 0) return buf;
    buf[0] = 0;
    long div = d.div > 0 ? d.div : 1;
    if (symdim_is_const(d)) {
        snprintf(buf, n, "%ld", div == 1 ? d.c : symdim_eval(d, NULL));
        return buf;
    }
    int k = div > 1 ? snprintf(buf, n, "(") : 0;
    k = term(buf, n, k, d.fill, "fill");
    k = term(buf, n, k, d.p, "P");
    k = term(buf, n, k, d.t, "T");
    k = term(buf, n, k, d.b, "B");
    size_t at = (size_t)k < n ? (size_t)k : n;
    if (d.c) k += snprintf(buf + at, n - at, "%+ld", d.c);
    at = (size_t)k < n ? (size_t)k : n;
    if (div > 1) snprintf(buf + at, n - at, ")/%ld", div);
    return buf;
}
