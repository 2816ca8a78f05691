/*
 * shortc_common.h — the small layer below both the compiler (compiler/) and
 * the runtime (runtime/): what both must agree on bit for bit.
 *
 *   dtypes              the storage types, their .arch and plan spellings and sizes (dtype.c)
 *   half rounding       fp16/bf16 conversions (half.h) and round_to_dtype (dtype.c)
 *   seeded generator    the splitmix64 stream behind random weights (rng.c)
 *   plan framing        the markers around the plan in an emitted .cu, the most tensor dimensions
 *   plan schema         every plan field, its type, required or not (plan_schema.h; uses cJSON)
 *
 * Neither the compiler's internal header (shortc.h) nor the runtime's
 * (rt_internal.h) is visible from here; both include this one. The half and
 * generator functions keep the rt_ names they had when they were
 * runtime-only. See docs/architecture.md, "Layering".
 */
#ifndef SHORTC_COMMON_H
#define SHORTC_COMMON_H

#include <stdint.h>

#include "half.h"

/* ------------------------------------------------------------------ */
/* Dtypes (dtype.c)                                                     */
/* ------------------------------------------------------------------ */

/* enum, .arch spelling, plan/IR spelling, bytes per element */
#define SHORTC_DTYPES(X) \
    X(DT_F32,  "fp32", "f32", 4) \
    X(DT_F16,  "fp16", "f16", 2) \
    X(DT_BF16, "bf16", "bf16", 2) \
    X(DT_I32,  "i32",  "i32", 4)   /* token ids only; not a storage choice */

typedef enum DType {
#define X(e, arch_name, plan_name, size) e,
    SHORTC_DTYPES(X)
#undef X
    DT_COUNT /* number of dtypes (not a dtype) */
} DType;
const char *dtype_name(DType t);       /* .arch spelling: fp32 */
const char *dtype_plan_name(DType t);  /* plan/IR spelling: f32 */
int dtype_size(DType t);               /* bytes per element; 0 for an out-of-range value */

/* x rounded to the nearest value of dtype t (round to nearest even, as CUDA's
 * __float2half_rn / __float2bfloat16_rn); f32 and i32: x unchanged. Shared by the
 * reference interpreter and the runtime's weight encoder. */
float round_to_dtype(float x, DType t);

/* ------------------------------------------------------------------ */
/* Seeded generator (rng.c)                                             */
/* ------------------------------------------------------------------ */

typedef struct RtRng {
    uint64_t s;           /* splitmix64 state */
} RtRng;
uint64_t rt_splitmix64(RtRng *r);
double rt_rng_uniform(RtRng *r);   /* [0, 1) with 53 bits */
double rt_rng_normal(RtRng *r);    /* N(0, 1), Box-Muller (cosine branch) */

/* ------------------------------------------------------------------ */
/* The plan's framing (docs/plan.md)                                     */
/* ------------------------------------------------------------------ */

/* Markers around the plan inside the .cu (a C comment). */
#define SHORTC_PLAN_BEGIN "/* SHORTC-PLAN-BEGIN"
#define SHORTC_PLAN_END "SHORTC-PLAN-END */"
/* Most dimensions of an IR value and of a plan tensor. */
#define MAX_RANK 4

#endif /* SHORTC_COMMON_H */
