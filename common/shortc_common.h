/*
 * shortc_common.h — the small layer below both the compiler (compiler/) and
 * the runtime (runtime/): what both must agree on bit for bit.
 *
 *   dtypes              the storage types, their .arch and plan spellings and sizes (dtype.c)
 *   half rounding       fp16/bf16 conversions (half.h) and round_to_dtype (dtype.c)
 *   seeded generator    the splitmix64 stream behind random weights (rng.c)
 *   plan framing        the markers around the plan in an emitted .cu, the most tensor dimensions
 *   symbolic dimensions sizes that are affine in the run-time symbols T, P, fill, B (SymDim)
 *   plan schema         every plan field, its type, required or not (plan_schema.h; uses cJSON)
 *   comment escaping    input text placed in a comment of generated source (escape.c)
 *
 * Neither the compiler's internal header (shortc.h) nor the runtime's
 * (rt_internal.h) is visible from here; both include this one. The half and
 * generator functions keep the rt_ names they had when they were
 * runtime-only. See docs/architecture.md, "Layering".
 */
#ifndef SHORTC_COMMON_H
#define SHORTC_COMMON_H

#include <stddef.h>
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

/* Shared memory per block every CUDA device gives a kernel without asking: its static shared memory, and the
 * default limit of its dynamic shared memory (cuFuncSetAttribute raises the latter). */
#define SHORTC_SMEM_DEFAULT_LIMIT (48 * 1024)
/* The most shared memory per block the emitter plans a kernel for (dynamic, through cuFuncSetAttribute): the
 * smallest opt-in maximum of the devices shortc targets (sm_86/sm_89: 99 KB; sm_80: 163 KB; sm_90: 227 KB).
 * The runtime reads the device's own maximum (CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN) and
 * refuses a launch that needs more. */
#define SHORTC_SMEM_OPTIN_LIMIT (99 * 1024)

/* Markers around the plan inside the .cu (a C comment). */
#define SHORTC_PLAN_BEGIN "/* SHORTC-PLAN-BEGIN"
#define SHORTC_PLAN_END "SHORTC-PLAN-END */"
/* Most dimensions of an IR value and of a plan tensor. */
#define MAX_RANK 4

/* ------------------------------------------------------------------ */
/* Symbolic dimensions (docs/ir.md, "Symbolic dimensions")              */
/* ------------------------------------------------------------------ */

/*
 * A size known only at run time, as a small affine expression over the
 * run-time symbols, rounded up by a divisor:
 *     ceil((t*T + p*P + fill*F + b*B + c) / div)
 * T: new tokens in this call; P: position of the first of them; F: the fill
 * of the state the expression belongs to (rows already cached); B: batch.
 * All coefficients 0: the constant ceil(c / div). One notion for the IR
 * (attention keys = fill + T), emission (launch grids, GEMM sizes) and the
 * plan's DIM.
 */
typedef struct SymDim {
    long t;     /* coefficient of T (new tokens) */
    long p;     /* coefficient of P (position of the first new token) */
    long fill;  /* coefficient of the state's fill */
    long b;     /* coefficient of B (batch) */
    long c;     /* constant term */
    long div;   /* divisor, rounding up (1: none; 0 is read as 1) */
} SymDim;

/* Values of the symbols for one call. */
typedef struct SymEnv {
    long T;     /* new tokens */
    long P;     /* position of the first */
    long fill;  /* the state's fill */
    long B;     /* batch */
} SymEnv;

#define SYMDIM_CONST(x) ((SymDim){.c = (x), .div = 1})
#define SYMDIM_T ((SymDim){.t = 1, .div = 1})
/* Keys visible to a call's queries: the cached fill plus the T new ones. */
#define SYMDIM_KEYS ((SymDim){.t = 1, .fill = 1, .div = 1})

/* The expression's value under env (ceil division; a divisor <= 0 is read as 1). */
long symdim_eval(SymDim d, const SymEnv *env);
/* Whether it depends on no symbol. */
int symdim_is_const(SymDim d);
/* Whether a and b are the same expression (a divisor <= 0 is read as 1). */
int symdim_eq(SymDim a, SymDim b);
/* Text form: `T`, `fill+T`, `(T+15)/16`, `768`; writes at most n bytes, returns buf. */
char *symdim_format(SymDim d, char *buf, unsigned long n);

/* ------------------------------------------------------------------ */
/* Input text in generated comments (escape.c; docs/security.md)        */
/* ------------------------------------------------------------------ */

/* text with every byte that could end or close a comment, a backslash, "??", a '/' after
 * '*', any non-ASCII byte and (unless keep_space) a space written as \xNN; writes at most
 * cap bytes of it (NUL-terminated) into out and returns its full length, as snprintf does. */
size_t shortc_escape_comment(const char *text, int keep_space, char *out, size_t cap);
/* The inverse: len bytes of escaped text decoded into out (room for len + 1); returns the length. */
size_t shortc_unescape_comment(const char *text, size_t len, char *out);

#endif /* SHORTC_COMMON_H */
