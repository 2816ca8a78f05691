/*
 * rope.c — rotary positions (Su et al., RoFormer) with the frequency
 * scalings of HF transformers' `rope_scaling` (linear position
 * interpolation, dynamic NTK, YaRN, Llama 3.1), and ALiBi's head slopes
 * (Press et al., "Train Short, Test Long"). Shared by the interpreter and
 * the cost model; docs/language.md states the formulas.
 */
#include "shortc.h"

#include <math.h>

static const double TWO_PI = 6.283185307179586476925286766559;

/* YaRN: the rotary dimension whose wavelength fits num_rotations turns into max_pos positions. */
static double yarn_correction_dim(double num_rotations, int dims, double theta, int max_pos) {
    return dims * log(max_pos / (num_rotations * TWO_PI)) / (2 * log(theta));
}

/* YaRN's blend of inv_freq with inv_freq/factor: frequency i keeps (1 - ramp_i) of the original. */
static void yarn_blend(const RopeSpec *r, double *inv_freq) {
    int half = r->dims / 2;
    double lo = floor(yarn_correction_dim(r->beta_fast, r->dims, r->theta, r->original_max));
    double hi = ceil(yarn_correction_dim(r->beta_slow, r->dims, r->theta, r->original_max));
    if (lo < 0) lo = 0;
    if (hi > r->dims - 1) hi = r->dims - 1;
    if (lo == hi) hi += 0.001;
    for (int i = 0; i < half; i++) {
        double ramp = (i - lo) / (hi - lo);
        ramp = ramp < 0 ? 0 : ramp > 1 ? 1 : ramp;
        double extrapolate = 1 - ramp; /* share of the original (high-frequency) inv_freq */
        inv_freq[i] = inv_freq[i] / r->factor * (1 - extrapolate) + inv_freq[i] * extrapolate;
    }
}

/* Llama 3.1: wavelengths above original_max/low_freq are interpolated, below original_max/high_freq kept,
 * and the ones between blended by a smooth factor. */
static void llama3_blend(const RopeSpec *r, double *inv_freq) {
    double low_wavelen = r->original_max / r->low_freq, high_wavelen = r->original_max / r->high_freq;
    for (int i = 0; i < r->dims / 2; i++) {
        double wavelen = TWO_PI / inv_freq[i];
        if (wavelen > low_wavelen) {
            inv_freq[i] /= r->factor;
        } else if (wavelen >= high_wavelen) {
            double smooth = (r->original_max / wavelen - r->low_freq) / (r->high_freq - r->low_freq);
            inv_freq[i] = (1 - smooth) * inv_freq[i] / r->factor + smooth * inv_freq[i];
        }
    }
}

void rope_inv_freq(const RopeSpec *r, int seq_len, double *inv_freq, double *mscale) {
    double theta = r->theta;
    int dims = r->dims;
    *mscale = 1.0;
    if (r->scaling == ROPE_SCALE_DYNAMIC && seq_len > r->original_max)
        theta *= pow(r->factor * seq_len / r->original_max - (r->factor - 1), (double)dims / (dims - 2));
    for (int i = 0; i < dims / 2; i++) inv_freq[i] = 1.0 / pow(theta, 2.0 * i / dims);
    switch (r->scaling) {
    case ROPE_SCALE_LINEAR:
        for (int i = 0; i < dims / 2; i++) inv_freq[i] /= r->factor;
        break;
    case ROPE_SCALE_YARN:
        yarn_blend(r, inv_freq);
        *mscale = r->mscale > 0 ? r->mscale : r->factor <= 1 ? 1.0 : 0.1 * log(r->factor) + 1.0;
        break;
    case ROPE_SCALE_LLAMA3:
        llama3_blend(r, inv_freq);
        break;
    case ROPE_SCALE_NONE:
    case ROPE_SCALE_DYNAMIC:
        break;
    }
}

void rope_rotate(const RopeSpec *r, const double *inv_freq, double mscale, long pos, double *x) {
    int half = r->dims / 2;
    for (int i = 0; i < half; i++) {
        double a = (double)pos * inv_freq[i], c = cos(a) * mscale, s = sin(a) * mscale;
        int i0 = r->interleaved ? 2 * i : i, i1 = r->interleaved ? 2 * i + 1 : i + half;
        double x0 = x[i0], x1 = x[i1];
        x[i0] = x0 * c - x1 * s;
        x[i1] = x1 * c + x0 * s;
    }
}

double alibi_slope(int h, int H) {
    int n = 1;
    while (n * 2 <= H) n *= 2; /* the closest power of two not above H */
    if (h < n) return pow(2.0, -8.0 * (h + 1) / n);
    return pow(2.0, -8.0 * (2 * (h - n) + 1) / (2 * n)); /* odd powers of the next power of two's base */
}
