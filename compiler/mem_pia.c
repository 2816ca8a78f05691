/*
 * mem_pia.c — Shortformer's position-infused attention (docs/attention/pia.md):
 * the two sinusoid styles its positions come in (their names: names.c).
 *
 * A slot is a row of a layer's cache window: the c cached tokens of a call
 * are slots 0..c-1, its n new tokens c..c+n-1. The position code of slot s
 * is added to the query and key inputs of every layer (after the input
 * norm), never to the values or the embeddings.
 */
#include "shortc.h"

#include <math.h>

/*
 * fairseq (SinusoidalPositionalEmbedding with padding_idx 1): position
 * s + 2, half = D/2 frequencies exp(-i log(10000)/(half-1)), the sines in
 * channels 0..half-1 and the cosines in half..2half-1, a last odd channel 0.
 * Vaswani et al.: position s, channel 2i sin and 2i+1 cos of s / 10000^(2i/D).
 */
double pia_sinusoid(PiaStyle style, int s, int c, int D) {
    if (style == PIA_FAIRSEQ) {
        int half = D / 2;
        if (c >= 2 * half || half < 2) return 0.0;
        int i = c < half ? c : c - half;
        double ang = (double)(s + 2) * exp(-(double)i * log(10000.0) / (double)(half - 1));
        return c < half ? sin(ang) : cos(ang);
    }
    if (style == PIA_VASWANI) {
        int i2 = c & ~1;
        double ang = (double)s / pow(10000.0, (double)i2 / (double)D);
        return (c & 1) ? cos(ang) : sin(ang);
    }
    return 0.0;
}
