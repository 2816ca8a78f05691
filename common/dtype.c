/*
 * dtype.c — dtype spellings and sizes from the SHORTC_DTYPES table, and
 * round_to_dtype (through the conversions of half.h, so the interpreter's
 * rounding and the runtime's stored weights cannot disagree).
 */
#include "shortc_common.h"

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

float round_to_dtype(float x, DType t) {
    switch (t) {
    case DT_F16: return rt_f16_to_f32(rt_f32_to_f16(x));
    case DT_BF16: return rt_bf16_to_f32(rt_f32_to_bf16(x));
    default: return x;
    }
}
