/*
 * rng.c — the seeded generator both layers use: a splitmix64 stream, 53-bit
 * uniforms and Box-Muller normals. How random weights are drawn from it
 * (one stream per tensor, seeded by its name) is runtime/src/random_weights.c.
 */
#include "shortc_common.h"

#include <math.h>

uint64_t rt_splitmix64(RtRng *r) {
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

double rt_rng_uniform(RtRng *r) { return (double)(rt_splitmix64(r) >> 11) * 0x1.0p-53; }

double rt_rng_normal(RtRng *r) {
    double u1 = rt_rng_uniform(r), u2 = rt_rng_uniform(r);
    return sqrt(-2.0 * log(1.0 - u1)) * cos(6.283185307179586 * u2);
}
