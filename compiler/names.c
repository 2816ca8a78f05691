/*
 * names.c — spellings of the enums in shortc.h, generated from their
 * X-macro tables, and the dtype rounding shared by the reference
 * interpreter and the runtime's weight loader.
 */
#include "shortc.h"

#include <math.h>
#include <string.h>

static const char *const dtype_names[] = {
#define X(e, arch_name, plan_name, size) arch_name,
    SHORTC_DTYPES(X)
#undef X
};
static const char *const dtype_plan_names[] = {
#define X(e, arch_name, plan_name, size) plan_name,
    SHORTC_DTYPES(X)
#undef X
};
static const int dtype_sizes[] = {
#define X(e, arch_name, plan_name, size) size,
    SHORTC_DTYPES(X)
#undef X
};

const char *dtype_name(DType t) { return (unsigned)t < DT_COUNT ? dtype_names[t] : "?"; }
const char *dtype_plan_name(DType t) { return (unsigned)t < DT_COUNT ? dtype_plan_names[t] : "?"; }
int dtype_size(DType t) { return (unsigned)t < DT_COUNT ? dtype_sizes[t] : 0; }

const char *activation_name(Activation a) {
    switch (a) {
    case ACT_NONE: return "none";
    case ACT_RELU: return "relu";
    case ACT_GELU: return "gelu";
    case ACT_GELU_TANH: return "gelu_tanh";
    }
    return "?";
}

const char *norm_kind_name(NormKind k) {
    switch (k) {
    case NORM_LAYERNORM: return "layernorm";
    case NORM_RMSNORM: return "rmsnorm";
    }
    return "?";
}

const char *norm_place_name(NormPlace p) {
    switch (p) {
    case NORM_PRE: return "pre";
    case NORM_POST: return "post";
    }
    return "?";
}

const char *pos_kind_name(PosKind p) {
    switch (p) {
    case POS_NONE: return "none";
    case POS_SINUSOIDAL: return "sinusoidal";
    case POS_LEARNED: return "learned";
    }
    return "?";
}

static const char *const attn_names[] = {
#define X(e, name, params) name,
    SHORTC_ATTN_KINDS(X)
#undef X
};
const char *attn_kind_name(AttnKind k) { return (unsigned)k < ATTN_COUNT ? attn_names[k] : "?"; }

const char *dim_order_name(DimOrder o) {
    switch (o) {
    case ORD_IN_OUT: return "[in,out]";
    case ORD_OUT_IN: return "[out,in]";
    case ORD_TOKENS_CHANNELS: return "[tokens,channels]";
    case ORD_TOKENS_HEADS_DIM: return "[tokens,heads,dim]";
    case ORD_HEADS_TOKENS_DIM: return "[heads,tokens,dim]";
    }
    return "?";
}


/* Round-to-nearest-even to fp16 (with subnormals, overflow to inf). */
static float round_f16(float x) {
    uint32_t u;
    memcpy(&u, &x, 4);
    uint32_t sign = u & 0x80000000u;
    float ax = fabsf(x);
    if (isnan(x)) return x;
    if (ax >= 65520.0f) { /* rounds to inf */
        uint32_t r = sign | 0x7f800000u;
        float f;
        memcpy(&f, &r, 4);
        return f;
    }
    if (ax < 6.103515625e-05f) { /* subnormal range: quantum 2^-24 */
        float q = 5.9604644775390625e-08f;
        float r = nearbyintf(ax / q) * q;
        return sign ? -r : r;
    }
    /* normal: keep 10 mantissa bits, round half to even */
    uint32_t a = u & 0x7fffffffu;
    uint32_t lsb = (a >> 13) & 1u;
    a += 0x0fffu + lsb;
    a &= ~0x1fffu;
    u = sign | a;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* Round-to-nearest-even to bf16 (keep the top 16 bits). */
static float round_bf16(float x) {
    if (isnan(x)) return x;
    uint32_t u;
    memcpy(&u, &x, 4);
    uint32_t lsb = (u >> 16) & 1u;
    u += 0x7fffu + lsb;
    u &= 0xffff0000u;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

float round_to_dtype(float x, DType t) {
    switch (t) {
    case DT_F16: return round_f16(x);
    case DT_BF16: return round_bf16(x);
    default: return x;
    }
}
