/*
 * half.h — fp16 and bf16 conversions, bit exact with CUDA's host
 * __float2half_rn / __float2bfloat16_rn and their inverses (tests/sim's
 * k_half_rt checks them against the toolkit): round to nearest even,
 * subnormals kept, overflow to infinity, NaN quiet with its payload. One copy
 * for the compiler's round_to_dtype (common/dtype.c), the weight encoder
 * (runtime/src/weights.c), the simulated cuBLAS and mma (runtime/sim).
 */
#ifndef SHORTC_HALF_H
#define SHORTC_HALF_H

#include <stdint.h>
#include <string.h>

static inline float rt_f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
    if (exp == 0) {
        if (man == 0) {
            bits = sign;
        } else { /* subnormal: normalize */
            int e = -1;
            do { man <<= 1; e++; } while (!(man & 0x400));
            bits = sign | ((uint32_t)(127 - 15 - e) << 23) | ((man & 0x3ff) << 13);
        }
    } else if (exp == 31) {
        bits = sign | 0x7f800000u | (man << 13);
    } else {
        bits = sign | ((exp + 112) << 23) | (man << 13);
    }
    float f;
    memcpy(&f, &bits, 4);
    return f;
}
static inline uint16_t rt_f32_to_f16(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000, ax = x & 0x7fffffffu;
    if (ax >= 0x7f800000u) return (uint16_t)(sign | 0x7c00 | (ax > 0x7f800000u ? 0x200 | ((ax >> 13) & 0x3ff) : 0));
    if (ax >= 0x477ff000u) return (uint16_t)(sign | 0x7c00); /* rounds to >= 65520: inf */
    if (ax < 0x38800000u) {                                  /* below the smallest normal half */
        if (ax < 0x33000000u) return (uint16_t)sign;          /* < 2^-25: rounds to 0 */
        uint32_t e = ax >> 23, man = (ax & 0x7fffff) | 0x800000;
        uint32_t shift = 126 - e; /* 14 + (113 - e) - 1 ... value = man * 2^(e-150); half sub unit 2^-24 */
        uint32_t q = man >> shift, rem = man & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (q & 1))) q++;
        return (uint16_t)(sign | q);
    }
    uint32_t r = ax + 0xfff + ((ax >> 13) & 1) - 0x38000000u; /* rebias 127 -> 15, round to nearest even */
    return (uint16_t)(sign | (r >> 13));
}
static inline float rt_bf16_to_f32(uint16_t h) {
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, 4);
    return f;
}
static inline uint16_t rt_f32_to_bf16(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40); /* quiet NaN */
    x += 0x7fff + ((x >> 16) & 1);
    return (uint16_t)(x >> 16);
}
/* f rounded to TF32 (8-bit exponent, 10-bit mantissa) as the tensor cores
 * read fp32 inputs under CUBLAS_COMPUTE_32F_FAST_TF32 (cvt.rna.tf32.f32:
 * nearest, ties away from zero); NaN and infinity unchanged. */
static inline float rt_round_tf32(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    if ((x & 0x7f800000u) == 0x7f800000u) return f;
    x = (x + 0x1000u) & ~0x1fffu;
    memcpy(&f, &x, 4);
    return f;
}

#endif /* SHORTC_HALF_H */
