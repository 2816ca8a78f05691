/* PLACEHOLDER: replaced wholesale by the owner of this file. */
#include "shortc.h"
bool interp_run(const Graph *g, Diag *d, const float *const *w, const int32_t *t, int n, float *l) { (void)g; (void)w; (void)t; (void)n; (void)l; diag_plain_error(d, "interp: placeholder"); return false; }
