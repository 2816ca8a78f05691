/*
 * random_weights.c — random weights for srt_model_random_weights, drawn from the
 * shared seeded generator (common/rng.c).
 *
 * Each tensor has its own stream, so a value depends only on the seed, the
 * tensor's name and its position in the file order, never on the backend,
 * the storage layout or the order of the plan's weight list:
 *
 *   state  = seed XOR fnv1a64(name)              (name without "transformer.")
 *   next() = splitmix64(state)
 *   u()    = (next() >> 11) * 2^-53               uniform in [0, 1)
 *   n()    = sqrt(-2 ln(1 - u1)) * cos(2 pi u2)   one normal per two draws
 *
 * Values are drawn in row-major order of the tensor's file shape:
 *
 *   rank 1, name ends in "bias"    0.02 * n()        biases: small
 *   rank 1, any other name         1 + 0.05 * n()    norm gains: about 1
 *   rank >= 2                      0.02 * n()        matrices, embeddings
 *
 * then stored like weights read from a file (transposed, rounded to the
 * stored dtype).
 */
#include "rt_internal.h"

#include <math.h>
#include <string.h>

void rt_random_tensor(uint64_t seed, const char *name, int rank, const int64_t *shape, float *out, size_t count) {
    (void)shape;
    name = rt_strip_hf_prefix(name);
    RtRng r = {seed ^ rt_hash64(RT_HASH_SEED, name, strlen(name))};
    double scale = 0.02, base = 0.0;
    if (rank == 1 && !rt_ends_with(name, "bias")) {
        scale = 0.05;
        base = 1.0;
    }
    for (size_t i = 0; i < count; i++) out[i] = (float)(base + scale * rt_rng_normal(&r));
}
