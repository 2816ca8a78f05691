/*
 * check.c — `shortc --check`: parses emitted CUDA with libclang's CUDA front
 * end and reports problems against the .arch lines the kernels came from
 * (docs/checks.md).
 *
 * Two checks:
 *  1. Diagnostics. The .cu is parsed as CUDA device code for sm_80 (clang 14,
 *     `-x cuda --cuda-device-only -nocudainc -nocudalib`). CUDA 13's headers
 *     are too new for clang 14, so no toolkit header is read: a builtin header
 *     (`shortc_check_cuda.h`, forced with -include) defines the CUDA keywords
 *     and pulls in clang's own CUDA device headers (builtin variables,
 *     libdevice math, warp intrinsics), and small stand-ins for cuda_fp16.h /
 *     cuda_bf16.h declare the half-precision types and functions. All of them
 *     are libclang unsaved files under /shortc-check/include; system include
 *     directories are switched off, so what parses here is what NVRTC sees
 *     (it has no system headers either). Every error is mapped to the
 *     `// from FILE:LINE` comment above the kernel it occurs in.
 *  2. The kernel contract (docs/plan.md) from the AST: every kernel is an
 *     `extern "C" __global__` function whose parameters are pointers, int and
 *     float; the plan's kernel list and the .cu's kernels are the same set;
 *     every launch step passes as many arguments as the kernel takes, each of
 *     the parameter's kind.
 */
#define _POSIX_C_SOURCE 200809L
#include "plan_schema.h"
#include "shortc.h"
#include "dynlib.h"
#include "fileio.h"

#include <clang-c/Index.h>
#include <cjson/cJSON.h>
#include <dlfcn.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------------ */
/* libclang, loaded on first use                                       */
/* ------------------------------------------------------------------ */

/* libclang is opened with dlopen by --check alone, so shortc starts (and the
 * bundle runs) on machines without LLVM. The header gives the types; the
 * functions come from this table. */
#define LIBCLANG_FUNCS(X) \
    X(clang_Cursor_getArgument) \
    X(clang_Cursor_getMangling) \
    X(clang_Cursor_getNumArguments) \
    X(clang_Location_isFromMainFile) \
    X(clang_createIndex) \
    X(clang_disposeDiagnostic) \
    X(clang_disposeIndex) \
    X(clang_disposeString) \
    X(clang_disposeTranslationUnit) \
    X(clang_getCString) \
    X(clang_getCanonicalType) \
    X(clang_getCursorKind) \
    X(clang_getCursorLocation) \
    X(clang_getCursorSpelling) \
    X(clang_getCursorType) \
    X(clang_getDiagnostic) \
    X(clang_getDiagnosticLocation) \
    X(clang_getDiagnosticSeverity) \
    X(clang_getDiagnosticSpelling) \
    X(clang_getExpansionLocation) \
    X(clang_getFileName) \
    X(clang_getNumDiagnostics) \
    X(clang_getTranslationUnitCursor) \
    X(clang_getTypeSpelling) \
    X(clang_isCursorDefinition) \
    X(clang_parseTranslationUnit2) \
    X(clang_visitChildren)

/* The libclang entry points check.c calls, each typed as its prototype. */
typedef struct LibClang {
#define LIBCLANG_FIELD(f) __typeof__(&f) f; /* libclang's f */
    LIBCLANG_FUNCS(LIBCLANG_FIELD)
#undef LIBCLANG_FIELD
} LibClang;

static LibClang lc;      /* filled by load_libclang */
static bool lc_loaded;   /* every entry of lc resolved */

/* The libclang shared objects tried in order: the one the build found first
 * (SHORTC_LIBCLANG_PATH), then Debian's and LLVM's usual sonames. */
static const char *const libclang_names[] = {
#ifdef SHORTC_LIBCLANG_PATH
    SHORTC_LIBCLANG_PATH,
#endif
    "libclang-14.so.13", "libclang-14.so.1", "libclang.so.13", "libclang.so.1", "libclang.so",
};

/* dlopens libclang and resolves every entry; false with an error in d naming the package. */
static bool load_libclang(Diag *d) {
    if (lc_loaded) return true;
    char why[512] = "";
    void *lib = dynlib_open_first(libclang_names, sizeof libclang_names / sizeof libclang_names[0], why, sizeof why);
    if (!lib) {
        diag_plain_error(d, "shortc --check needs libclang 14, which could not be loaded (%s); "
                            "install it (Debian: apt-get install libclang1-14) or run --check on a machine that has it",
                         why[0] ? why : "not found");
        return false;
    }
#define LIBCLANG_LOAD(f)                                                                              \
    if (!(*(void **)&lc.f = dlsym(lib, #f))) {                                                        \
        diag_plain_error(d, "shortc --check: libclang lacks %s (a libclang older than 14?)", #f);    \
        dlclose(lib);                                                                                 \
        return false;                                                                                 \
    }
    LIBCLANG_FUNCS(LIBCLANG_LOAD)
#undef LIBCLANG_LOAD
    lc_loaded = true; /* the library stays loaded for the process */
    return true;
}

/* ------------------------------------------------------------------ */
/* The builtin headers (libclang unsaved files)                        */
/* ------------------------------------------------------------------ */

#define CHECK_DIR "/shortc-check"
#define CHECK_INC CHECK_DIR "/include"
#define CHECK_MAIN CHECK_DIR "/model.cu"

static const char shim_cuda_h[] =
    "/* shortc --check: CUDA keywords and device functions for clang 14 without the toolkit's headers. */\n"
    "#pragma once\n"
    "#define __host__ __attribute__((host))\n"
    "#define __device__ __attribute__((device))\n"
    "#define __global__ __attribute__((global))\n"
    "#define __shared__ __attribute__((shared))\n"
    "#define __constant__ __attribute__((constant))\n"
    "#define __managed__ __attribute__((managed))\n"
    "#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))\n"
    "#define __forceinline__ __inline__ __attribute__((always_inline))\n"
    "#define __noinline__ __attribute__((noinline))\n"
    "#define __align__(n) __attribute__((aligned(n)))\n"
    "#define __CUDACC__ 1\n"
    "#define __CUDACC_RTC__ 1\n"
    "#define CUDA_VERSION 11050 /* the newest clang 14's device headers know */\n"
    "#include <stddef.h>\n"
    "#include <stdint.h>\n"
    "#include <limits.h>\n"
    "#define HUGE_VAL __builtin_huge_val()\n"
    "#define HUGE_VALF __builtin_huge_valf()\n"
    "typedef unsigned int cuuint32_t;\n"
    "#define SHORTC_CHECK_VEC2(T, N, A) struct __align__(A) N##2 { T x, y; }; \\\n"
    "  static __host__ __device__ __inline__ N##2 make_##N##2(T x, T y) { N##2 r; r.x = x; r.y = y; return r; }\n"
    "#define SHORTC_CHECK_VEC3(T, N) struct N##3 { T x, y, z; }; \\\n"
    "  static __host__ __device__ __inline__ N##3 make_##N##3(T x, T y, T z) { N##3 r; r.x = x; r.y = y; r.z = z; return r; }\n"
    "#define SHORTC_CHECK_VEC4(T, N, A) struct __align__(A) N##4 { T x, y, z, w; }; \\\n"
    "  static __host__ __device__ __inline__ N##4 make_##N##4(T x, T y, T z, T w) { N##4 r; r.x = x; r.y = y; r.z = z; r.w = w; return r; }\n"
    "#define SHORTC_CHECK_VECS(T, N, S) SHORTC_CHECK_VEC2(T, N, 2 * S) SHORTC_CHECK_VEC3(T, N) SHORTC_CHECK_VEC4(T, N, 4 * S)\n"
    "SHORTC_CHECK_VECS(signed char, char, 1) SHORTC_CHECK_VECS(unsigned char, uchar, 1)\n"
    "SHORTC_CHECK_VECS(short, short, 2) SHORTC_CHECK_VECS(unsigned short, ushort, 2)\n"
    "SHORTC_CHECK_VECS(int, int, 4) SHORTC_CHECK_VECS(unsigned int, uint, 4)\n"
    "SHORTC_CHECK_VECS(long, long, 8) SHORTC_CHECK_VECS(unsigned long, ulong, 8)\n"
    "SHORTC_CHECK_VECS(long long, longlong, 8) SHORTC_CHECK_VECS(unsigned long long, ulonglong, 8)\n"
    "SHORTC_CHECK_VECS(float, float, 4) SHORTC_CHECK_VECS(double, double, 8)\n"
    "struct dim3 {\n"
    "  unsigned int x, y, z;\n"
    "  __host__ __device__ constexpr dim3(unsigned int x = 1, unsigned int y = 1, unsigned int z = 1) : x(x), y(y), z(z) {}\n"
    "  __host__ __device__ constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}\n"
    "};\n"
    "#include <__clang_cuda_builtin_vars.h>\n"
    "#include <__clang_cuda_libdevice_declares.h>\n"
    "#include <__clang_cuda_device_functions.h>\n"
    "#include <__clang_cuda_math.h>\n"
    "#include <__clang_cuda_intrinsics.h>\n"
    "static __device__ __inline__ size_t __cvta_generic_to_shared(const void *p) { return __nv_cvta_generic_to_shared_impl(p); }\n"
    "static __device__ __inline__ size_t __cvta_generic_to_global(const void *p) { return __nv_cvta_generic_to_global_impl(p); }\n"
    "#define SHORTC_CHECK_ATOMIC(T) \\\n"
    "  __device__ T atomicAdd(T *, T); __device__ T atomicExch(T *, T); \\\n"
    "  __device__ T atomicMin(T *, T); __device__ T atomicMax(T *, T); __device__ T atomicCAS(T *, T, T); \\\n"
    "  __device__ T atomicAnd(T *, T); __device__ T atomicOr(T *, T); __device__ T atomicXor(T *, T);\n"
    "SHORTC_CHECK_ATOMIC(int) SHORTC_CHECK_ATOMIC(unsigned int) SHORTC_CHECK_ATOMIC(unsigned long long)\n"
    "__device__ int atomicSub(int *, int); __device__ unsigned int atomicSub(unsigned int *, unsigned int);\n"
    "__device__ float atomicAdd(float *, float); __device__ double atomicAdd(double *, double);\n"
    "__device__ float atomicExch(float *, float);\n"
    "__device__ unsigned int atomicInc(unsigned int *, unsigned int);\n"
    "__device__ unsigned int atomicDec(unsigned int *, unsigned int);\n";

/*
 * Stand-ins for cuda_fp16.h and cuda_bf16.h: the same type names,
 * conversions and operators as CUDA's (so overload resolution sees what
 * NVRTC sees), declarations only.
 */
#define SHIM_HALF_TYPE(T, RAW, RAW2)                                                               \
    "struct " RAW " { unsigned short x; };\n"                                                    \
    "struct " RAW2 " { unsigned short x, y; };\n"                                                \
    "struct __align__(2) " T " {\n"                                                              \
    "protected:\n"                                                                               \
    "  unsigned short __x;\n"                                                                    \
    "public:\n"                                                                                  \
    "  " T "() = default;\n"                                                                     \
    "  __host__ __device__ " T "(const " RAW " &);\n"                                            \
    "  __host__ __device__ operator " RAW "() const;\n"                                          \
    "  __host__ __device__ " T " &operator=(const " RAW " &);\n"                                 \
    "  __host__ __device__ " T "(float); __host__ __device__ " T "(double);\n"                   \
    "  __host__ __device__ " T "(short); __host__ __device__ " T "(unsigned short);\n"           \
    "  __host__ __device__ " T "(int); __host__ __device__ " T "(unsigned int);\n"               \
    "  __host__ __device__ " T "(long); __host__ __device__ " T "(unsigned long);\n"             \
    "  __host__ __device__ " T "(long long); __host__ __device__ " T "(unsigned long long);\n"   \
    "  __host__ __device__ operator float() const;\n"                                            \
    "  __host__ __device__ " T " &operator=(float); __host__ __device__ " T " &operator=(double);\n" \
    "  __host__ __device__ operator signed char() const; __host__ __device__ operator unsigned char() const;\n" \
    "  __host__ __device__ operator char() const;\n"                                             \
    "  __host__ __device__ operator short() const; __host__ __device__ operator unsigned short() const;\n" \
    "  __host__ __device__ operator int() const; __host__ __device__ operator unsigned int() const;\n" \
    "  __host__ __device__ operator long() const; __host__ __device__ operator unsigned long() const;\n" \
    "  __host__ __device__ operator long long() const; __host__ __device__ operator unsigned long long() const;\n" \
    "  __host__ __device__ operator bool() const;\n"                                             \
    "};\n"                                                                                       \
    "struct __align__(4) " T "2 {\n"                                                             \
    "  " T " x, y;\n"                                                                            \
    "  " T "2() = default;\n"                                                                    \
    "  __host__ __device__ " T "2(const " T " &a, const " T " &b);\n"                            \
    "  __host__ __device__ " T "2(const " RAW2 " &);\n"                                          \
    "  __host__ __device__ operator " RAW2 "() const;\n"                                         \
    "};\n"                                                                                       \
    "#define SHORTC_CHECK_OPS(T) \\\n"                                                          \
    "  __host__ __device__ T operator+(const T &, const T &); __host__ __device__ T operator-(const T &, const T &); \\\n" \
    "  __host__ __device__ T operator*(const T &, const T &); __host__ __device__ T operator/(const T &, const T &); \\\n" \
    "  __host__ __device__ T &operator+=(T &, const T &); __host__ __device__ T &operator-=(T &, const T &); \\\n" \
    "  __host__ __device__ T &operator*=(T &, const T &); __host__ __device__ T &operator/=(T &, const T &); \\\n" \
    "  __host__ __device__ T operator+(const T &); __host__ __device__ T operator-(const T &);\n" \
    "#define SHORTC_CHECK_CMP(T) \\\n"                                                          \
    "  __host__ __device__ bool operator==(const T &, const T &); __host__ __device__ bool operator!=(const T &, const T &); \\\n" \
    "  __host__ __device__ bool operator<(const T &, const T &); __host__ __device__ bool operator>(const T &, const T &); \\\n" \
    "  __host__ __device__ bool operator<=(const T &, const T &); __host__ __device__ bool operator>=(const T &, const T &);\n" \
    "SHORTC_CHECK_OPS(" T ") SHORTC_CHECK_CMP(" T ") SHORTC_CHECK_OPS(" T "2)\n"             \
    "#undef SHORTC_CHECK_OPS\n"                                                                  \
    "#undef SHORTC_CHECK_CMP\n"

/* Functions both types have: T = the type, S = its short name in function names ("half", "bfloat16"). */
#define SHIM_HALF_FUNCS(T, S)                                                                         \
    "__device__ " T " __hadd(" T ", " T "); __device__ " T " __hsub(" T ", " T ");\n"              \
    "__device__ " T " __hmul(" T ", " T "); __device__ " T " __hdiv(" T ", " T ");\n"              \
    "__device__ " T " __hfma(" T ", " T ", " T "); __device__ " T " __hneg(" T "); __device__ " T " __habs(" T ");\n" \
    "__device__ " T " __hmax(" T ", " T "); __device__ " T " __hmin(" T ", " T ");\n"              \
    "__device__ bool __heq(" T ", " T "); __device__ bool __hne(" T ", " T "); __device__ bool __hlt(" T ", " T ");\n" \
    "__device__ bool __hle(" T ", " T "); __device__ bool __hgt(" T ", " T "); __device__ bool __hge(" T ", " T ");\n" \
    "__device__ bool __hisnan(" T "); __device__ int __hisinf(" T ");\n"                            \
    "__device__ " T " hexp(" T "); __device__ " T " hlog(" T "); __device__ " T " hsqrt(" T ");\n" \
    "__device__ " T " hrsqrt(" T "); __device__ " T " hrcp(" T "); __device__ " T " htanh(" T ");\n" \
    "__device__ " T "2 __hadd2(" T "2, " T "2); __device__ " T "2 __hsub2(" T "2, " T "2);\n"      \
    "__device__ " T "2 __hmul2(" T "2, " T "2); __device__ " T "2 __hfma2(" T "2, " T "2, " T "2);\n" \
    "__device__ " T "2 __hmax2(" T "2, " T "2); __device__ " T "2 __hmin2(" T "2, " T "2);\n"      \
    "__device__ " T "2 __halves2" S "2(" T ", " T "); __device__ " T " __low2" S "(" T "2); __device__ " T " __high2" S "(" T "2);\n" \
    "__device__ float __low2float(" T "2); __device__ float __high2float(" T "2);\n"                \
    "__device__ " T " __shfl_sync(unsigned int, " T ", int, int = 32);\n"                        \
    "__device__ " T " __shfl_xor_sync(unsigned int, " T ", int, int = 32);\n"                    \
    "__device__ " T " __shfl_down_sync(unsigned int, " T ", unsigned int, int = 32);\n"         \
    "__device__ " T " __shfl_up_sync(unsigned int, " T ", unsigned int, int = 32);\n"           \
    "__device__ " T "2 __shfl_xor_sync(unsigned int, " T "2, int, int = 32);\n"                  \
    "__device__ " T " __ldg(const " T " *); __device__ " T "2 __ldg(const " T "2 *);\n"            \
    "__device__ " T " atomicAdd(" T " *, " T "); __device__ " T "2 atomicAdd(" T "2 *, " T "2);\n"

static const char shim_fp16_h[] =
    "/* shortc --check stand-in for cuda_fp16.h (declarations only). */\n"
    "#pragma once\n"
    SHIM_HALF_TYPE("__half", "__half_raw", "__half2_raw")
    SHIM_HALF_FUNCS("__half", "half")
    "__host__ __device__ float __half2float(__half); __host__ __device__ __half __float2half(float);\n"
    "__host__ __device__ __half __float2half_rn(float); __host__ __device__ __half __float2half_rz(float);\n"
    "__host__ __device__ __half __double2half(double);\n"
    "__host__ __device__ __half2 __float2half2_rn(float); __host__ __device__ __half2 __floats2half2_rn(float, float);\n"
    "__host__ __device__ float2 __half22float2(__half2); __host__ __device__ __half2 __float22half2_rn(float2);\n"
    "__device__ __half __int2half_rn(int); __device__ int __half2int_rn(__half); __device__ int __half2int_rz(__half);\n"
    "__device__ short __half_as_short(__half); __device__ unsigned short __half_as_ushort(__half);\n"
    "__device__ __half __short_as_half(short); __device__ __half __ushort_as_half(unsigned short);\n";

static const char shim_bf16_h[] =
    "/* shortc --check stand-in for cuda_bf16.h (declarations only). */\n"
    "#pragma once\n"
    "#include <cuda_fp16.h>\n"
    SHIM_HALF_TYPE("__nv_bfloat16", "__nv_bfloat16_raw", "__nv_bfloat162_raw")
    SHIM_HALF_FUNCS("__nv_bfloat16", "bfloat16")
    "__host__ __device__ float __bfloat162float(__nv_bfloat16); __host__ __device__ __nv_bfloat16 __float2bfloat16(float);\n"
    "__host__ __device__ __nv_bfloat16 __float2bfloat16_rn(float); __host__ __device__ __nv_bfloat16 __float2bfloat16_rz(float);\n"
    "__host__ __device__ __nv_bfloat16 __double2bfloat16(double);\n"
    "__host__ __device__ __nv_bfloat162 __float2bfloat162_rn(float);\n"
    "__host__ __device__ __nv_bfloat162 __floats2bfloat162_rn(float, float);\n"
    "__host__ __device__ float2 __bfloat1622float2(__nv_bfloat162); __host__ __device__ __nv_bfloat162 __float22bfloat162_rn(float2);\n"
    "__device__ short __bfloat16_as_short(__nv_bfloat16); __device__ unsigned short __bfloat16_as_ushort(__nv_bfloat16);\n"
    "__device__ __nv_bfloat16 __short_as_bfloat16(short); __device__ __nv_bfloat16 __ushort_as_bfloat16(unsigned short);\n"
    "typedef __nv_bfloat16 nv_bfloat16; typedef __nv_bfloat162 nv_bfloat162;\n";

/* One in-memory header under CHECK_INC. */
typedef struct ShimFile {
    const char *name;   /* path under CHECK_INC */
    const char *text;   /* contents */
} ShimFile;

static const ShimFile shim_files[] = {
    {"shortc_check_cuda.h", shim_cuda_h},
    {"cuda_fp16.h", shim_fp16_h},
    {"cuda_bf16.h", shim_bf16_h},
    /* clang's __clang_cuda_intrinsics.h includes this toolkit header; its content is not needed */
    {"crt/sm_70_rt.hpp", ""},
    /* harmless if a prelude includes them: the math functions come from clang's device headers */
    {"cuda_runtime.h", ""},
    {"math.h", ""},
    {"cmath", ""},
    {"cstdint", "#include <stdint.h>\n"},
};
#define NSHIM ((int)(sizeof shim_files / sizeof shim_files[0]))

/* ------------------------------------------------------------------ */
/* The .cu text: lines, `// from` comments, kernel names                */
/* ------------------------------------------------------------------ */

/* The .cu being checked, with a line index. */
typedef struct CuText {
    const char *text;   /* the .cu */
    size_t len;         /* bytes */
    const char *path;   /* as given (messages) */
    int *line_start;    /* byte offset of each line (1-based index; [0] unused) */
    int nlines;         /* lines */
} CuText;

static void cu_index_lines(Arena *a, CuText *cu) {
    int n = 1;
    for (size_t i = 0; i < cu->len; i++) n += cu->text[i] == '\n';
    cu->line_start = arena_alloc(a, sizeof(int) * (size_t)(n + 2));
    cu->nlines = n;
    int line = 1;
    cu->line_start[1] = 0;
    for (size_t i = 0; i < cu->len; i++)
        if (cu->text[i] == '\n') cu->line_start[++line] = (int)i + 1;
    cu->line_start[n + 1] = (int)cu->len;
}

static size_t cu_line_len(const CuText *cu, int line) {
    size_t b = (size_t)cu->line_start[line], e = b;
    while (e < cu->len && cu->text[e] != '\n') e++;
    return e - b;
}

/* Where a generated line came from: `// from FILE:LINE` above it. */
typedef struct Origin {
    const char *file;   /* .arch path (arena copy); NULL: before any kernel (the prelude) */
    int line;           /* .arch line */
    int comment_line;   /* .cu line of the comment */
} Origin;

/* Parses `// from FILE:LINE ...` on a .cu line (FILE escaped: common/escape.c); false if the line is not such a comment. */
static bool parse_from_comment(Arena *a, const CuText *cu, int line, Origin *o) {
    const char *s = cu->text + cu->line_start[line];
    size_t n = cu_line_len(cu, line);
    size_t i = 0;
    while (i < n && (s[i] == ' ' || s[i] == '\t')) i++;
    if (n - i < 8 || memcmp(s + i, "// from ", 8) != 0) return false;
    i += 8;
    size_t b = i;
    while (i < n && s[i] != ' ' && s[i] != '\t') i++;
    /* FILE:LINE — the line number follows the last ':' */
    size_t colon = i;
    while (colon > b && s[colon - 1] != ':') colon--;
    if (colon <= b + 1 || colon == i) return false;
    int ln = 0;
    for (size_t k = colon; k < i; k++) {
        if (s[k] < '0' || s[k] > '9') return false;
        ln = ln * 10 + (s[k] - '0');
    }
    char *file = arena_alloc(a, colon - b); /* the path as emit.c escaped it (no space in it) */
    if (!file) return false;
    shortc_unescape_comment(s + b, colon - 1 - b, file);
    o->file = file;
    o->line = ln;
    o->comment_line = line;
    return true;
}

/* The nearest `// from` comment at or above `line`. */
static Origin origin_of_line(Arena *a, const CuText *cu, int line) {
    Origin o = {NULL, 0, 0};
    for (int l = line < cu->nlines ? line : cu->nlines; l >= 1; l--)
        if (parse_from_comment(a, cu, l, &o)) return o;
    return o;
}

/* The kernel a `// from` comment belongs to: the identifier before '(' after the next `__global__`. */
static const char *kernel_after_line(Arena *a, const CuText *cu, int line) {
    const char *p = cu->text + cu->line_start[line];
    const char *end = cu->text + cu->len;
    const char *g = NULL;
    for (const char *q = p; q + 10 <= end; q++)
        if (memcmp(q, "__global__", 10) == 0) { g = q; break; }
    if (!g) return "?";
    const char *paren = memchr(g, '(', (size_t)(end - g));
    if (!paren) return "?";
    const char *e = paren;
    while (e > g && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n')) e--;
    const char *b = e;
    while (b > g && (b[-1] == '_' || (b[-1] >= 'a' && b[-1] <= 'z') || (b[-1] >= 'A' && b[-1] <= 'Z') ||
                     (b[-1] >= '0' && b[-1] <= '9')))
        b--;
    return b < e ? arena_strndup(a, b, (size_t)(e - b)) : "?";
}

/* ------------------------------------------------------------------ */
/* Reporting                                                           */
/* ------------------------------------------------------------------ */

/* State of one check_cuda_source call. */
typedef struct Checker {
    Diag *d;           /* where problems are reported */
    Arena *a;          /* the Diag's arena (strings live as long as the Diag) */
    CuText cu;         /* the .cu */
    Source *cu_src;    /* the .cu in the Diag's source table (for notes with the generated line) */
} Checker;

static bool same_path(const char *a, const char *b) {
    if (strcmp(a, b) == 0) return true;
    size_t na = strlen(a), nb = strlen(b);
    if (na == nb) return false;
    const char *longer = na > nb ? a : b, *shorter = na > nb ? b : a;
    size_t nl = na > nb ? na : nb, ns = na > nb ? nb : na;
    return strcmp(longer + nl - ns, shorter) == 0 && longer[nl - ns - 1] == '/';
}

/* The .arch file as a Diag source: already loaded, or loaded now if it is readable; NULL otherwise. */
static Source *arch_source(Checker *c, const char *path) {
    for (int i = 0; i < c->d->nsources; i++)
        if (same_path(c->d->sources[i]->path, path)) return c->d->sources[i];
    const char *why;
    int fd = fio_open_regular(path, NULL, &why);
    if (fd < 0) return NULL;
    close(fd);
    return diag_load_file(c->d, path);
}

/* Loc of a whole line (1-based) in a source; LOC_NONE if out of range. */
static Loc line_loc(const Source *s, int line, int col) {
    int l = 1;
    size_t i = 0;
    while (l < line && i < s->len) {
        if (s->text[i] == '\n') l++;
        i++;
    }
    if (l != line) return LOC_NONE;
    size_t e = i;
    while (e < s->len && s->text[e] != '\n') e++;
    size_t b = i + (col > 1 ? (size_t)(col - 1) : 0);
    if (b > e) b = e;
    if (col <= 1) {
        /* the whole statement, without leading blanks */
        while (b < e && (s->text[b] == ' ' || s->text[b] == '\t')) b++;
    } else {
        /* the word at the column (or one character) */
        size_t w = b;
        while (w < e && (s->text[w] == '_' || (s->text[w] >= 'a' && s->text[w] <= 'z') ||
                         (s->text[w] >= 'A' && s->text[w] <= 'Z') || (s->text[w] >= '0' && s->text[w] <= '9')))
            w++;
        e = w > b ? w : b + 1;
    }
    return (Loc){s->id, (int)b, (int)(b < e ? e : b + 1)};
}

/*
 * Reports msg for .cu line:col. Inside a kernel (below a `// from` comment):
 * `FILE:LINE:1: error: in generated kernel NAME (model.cu:L:C): msg`, at the
 * .arch line (with its text when the file can be read), then a note showing
 * the generated line. In the prelude: at the .cu line itself.
 */
static void report(Checker *c, bool is_error, int line, int col, const char *msg) {
    Diag *d = c->d;
    if (line < 1) line = 1;
    if (line > c->cu.nlines) line = c->cu.nlines;
    Origin o = origin_of_line(c->a, &c->cu, line);
    Loc cu_loc = line_loc(c->cu_src, line, col);
    if (!o.file) {
        if (is_error) diag_error(d, cu_loc, "in the generated prelude: %s", msg);
        else diag_warning(d, cu_loc, "in the generated prelude: %s", msg);
        return;
    }
    const char *kernel = kernel_after_line(c->a, &c->cu, o.comment_line);
    Source *arch = arch_source(c, o.file);
    Loc arch_loc = arch ? line_loc(arch, o.line, 1) : LOC_NONE;
    if (arch_loc.file >= 0) {
        if (is_error)
            diag_error(d, arch_loc, "in generated kernel %s (%s:%d:%d): %s", kernel, c->cu.path, line, col, msg);
        else
            diag_warning(d, arch_loc, "in generated kernel %s (%s:%d:%d): %s", kernel, c->cu.path, line, col, msg);
    } else {
        if (is_error) d->errors++;
        else d->warnings++;
        if (!is_error || d->errors <= d->max_errors)
            fprintf(d->out, "%s:%d:1: %s: in generated kernel %s (%s:%d:%d): %s\n", o.file, o.line,
                    is_error ? "error" : "warning", kernel, c->cu.path, line, col, msg);
    }
    if (!is_error || d->errors <= d->max_errors) diag_note(d, cu_loc, "generated code is here");
}

/* A problem in the plan itself: at the plan text in the .cu. */
static void report_plan(Checker *c, Loc loc, const char *msg) {
    diag_error(c->d, loc, "in the embedded plan: %s", msg);
}

/* ------------------------------------------------------------------ */
/* Kernels from the AST                                                */
/* ------------------------------------------------------------------ */

/* One kernel parameter as the AST has it. */
typedef struct KParam {
    const char *name;   /* parameter name ("" if unnamed) */
    const char *type;   /* spelling of its type */
    char kind;          /* 'p' pointer, 'i' int, 'f' float, '?' anything else */
    int line, col;      /* .cu position */
} KParam;

/* One __global__ function of the .cu. */
typedef struct KernelDecl {
    const char *name;   /* spelling */
    bool extern_c;      /* C linkage (symbol == spelling) */
    int line, col;      /* .cu position of the name */
    KParam *params;     /* parameters */
    int nparams;        /* count */
} KernelDecl;

/* The __global__ functions of the main file, collected by visit_decl. */
typedef struct KernelList {
    Arena *a;            /* owner of the storage and strings */
    KernelDecl *items;   /* kernels in source order */
    int len;             /* entries in use */
    int cap;             /* entries allocated */
} KernelList;

static char *cxstr(Arena *a, CXString s) {
    const char *c = lc.clang_getCString(s);
    char *r = arena_strdup(a, c ? c : "");
    lc.clang_disposeString(s);
    return r;
}

static void cursor_pos(CXCursor cur, int *line, int *col) {
    CXSourceLocation loc = lc.clang_getCursorLocation(cur);
    unsigned l = 0, c = 0;
    lc.clang_getExpansionLocation(loc, NULL, &l, &c, NULL);
    *line = (int)l;
    *col = (int)c;
}

static enum CXChildVisitResult find_global_attr(CXCursor cur, CXCursor parent, CXClientData data) {
    (void)parent;
    if (lc.clang_getCursorKind(cur) == CXCursor_CUDAGlobalAttr) {
        *(bool *)data = true;
        return CXChildVisit_Break;
    }
    return CXChildVisit_Continue;
}

static char param_kind(CXType t) {
    CXType ct = lc.clang_getCanonicalType(t);
    switch (ct.kind) {
    case CXType_Pointer: return 'p';
    case CXType_Int: return 'i';
    case CXType_Float: return 'f';
    default: return '?';
    }
}

static void add_kernel(KernelList *kl, CXCursor cur) {
    Arena *a = kl->a;
    const char *name = cxstr(a, lc.clang_getCursorSpelling(cur));
    for (int i = 0; i < kl->len; i++)
        if (strcmp(kl->items[i].name, name) == 0) {
            /* a declaration and its definition: keep the definition */
            if (!lc.clang_isCursorDefinition(cur)) return;
            kl->len--;
            memmove(&kl->items[i], &kl->items[i + 1], sizeof *kl->items * (size_t)(kl->len - i));
            break;
        }
    if (kl->len == kl->cap) {
        int ncap = kl->cap ? kl->cap * 2 : 16;
        KernelDecl *ni = arena_alloc(a, sizeof *ni * (size_t)ncap);
        if (kl->len) memcpy(ni, kl->items, sizeof *ni * (size_t)kl->len);
        kl->items = ni;
        kl->cap = ncap;
    }
    KernelDecl *k = &kl->items[kl->len++];
    memset(k, 0, sizeof *k);
    k->name = name;
    const char *mangled = cxstr(a, lc.clang_Cursor_getMangling(cur));
    k->extern_c = strcmp(mangled, name) == 0;
    cursor_pos(cur, &k->line, &k->col);
    int n = lc.clang_Cursor_getNumArguments(cur);
    k->nparams = n > 0 ? n : 0;
    k->params = arena_alloc(a, sizeof *k->params * (size_t)(k->nparams + 1));
    for (int i = 0; i < k->nparams; i++) {
        CXCursor p = lc.clang_Cursor_getArgument(cur, (unsigned)i);
        CXType t = lc.clang_getCursorType(p);
        k->params[i].name = cxstr(a, lc.clang_getCursorSpelling(p));
        k->params[i].type = cxstr(a, lc.clang_getTypeSpelling(t));
        k->params[i].kind = param_kind(t);
        cursor_pos(p, &k->params[i].line, &k->params[i].col);
    }
}

static enum CXChildVisitResult visit_decl(CXCursor cur, CXCursor parent, CXClientData data) {
    (void)parent;
    if (!lc.clang_Location_isFromMainFile(lc.clang_getCursorLocation(cur))) return CXChildVisit_Continue;
    switch (lc.clang_getCursorKind(cur)) {
    case CXCursor_FunctionDecl: {
        bool global = false;
        lc.clang_visitChildren(cur, find_global_attr, &global);
        if (global) add_kernel(data, cur);
        return CXChildVisit_Continue;
    }
    case CXCursor_LinkageSpec:
    case CXCursor_Namespace:
    case CXCursor_UnexposedDecl:
        return CXChildVisit_Recurse;
    default:
        return CXChildVisit_Continue;
    }
}

static const KernelDecl *find_kernel(const KernelList *kl, const char *name) {
    for (int i = 0; i < kl->len; i++)
        if (strcmp(kl->items[i].name, name) == 0) return &kl->items[i];
    return NULL;
}

/* ------------------------------------------------------------------ */
/* The contract: kernels vs the plan                                   */
/* ------------------------------------------------------------------ */

/* The first `"name"` inside the plan comment (for messages); the plan's first line if absent. */
static Loc plan_loc_of(const Checker *c, const char *plan_begin, const char *plan_end, const char *name) {
    size_t n = strlen(name);
    for (const char *p = plan_begin; n > 0 && p + n + 2 <= plan_end; p++) {
        p = memchr(p, '"', (size_t)(plan_end - p));
        if (!p || p + n + 2 > plan_end) break;
        if (memcmp(p + 1, name, n) == 0 && p[n + 1] == '"') {
            int off = (int)(p - c->cu.text);
            return (Loc){c->cu_src->id, off, off + (int)n + 2};
        }
    }
    int off = (int)(plan_begin - c->cu.text);
    return (Loc){c->cu_src->id, off, off + (int)strlen(SHORTC_PLAN_BEGIN)};
}

static const char *kind_word(char k) {
    return k == 'p' ? "a pointer" : k == 'i' ? "an int" : k == 'f' ? "a float" : "of another kind";
}

/* The kind of a plan ARG: REF -> 'p', {"int": DIM} -> 'i', {"float": x} -> 'f'. */
static char arg_kind(const cJSON *arg) {
    if (!cJSON_IsObject(arg)) return '?';
    if (cJSON_GetObjectItemCaseSensitive(arg, "int")) return 'i';
    if (cJSON_GetObjectItemCaseSensitive(arg, "float")) return 'f';
    if (cJSON_GetObjectItemCaseSensitive(arg, "arena") || cJSON_GetObjectItemCaseSensitive(arg, "weight") ||
        cJSON_GetObjectItemCaseSensitive(arg, "state") || cJSON_GetObjectItemCaseSensitive(arg, "const") ||
        cJSON_GetObjectItemCaseSensitive(arg, "derived"))
        return 'p';
    return '?';
}

/* The launches of one program's steps (steps[i] is "plan step i+1" in messages) against the kernels. */
static void check_launches(Checker *c, const KernelList *kl, const cJSON *steps, const char *b, const char *e) {
    char msg[1024];
    int si = 0;
    const cJSON *st;
    cJSON_ArrayForEach(st, steps) {
        si++;
        const cJSON *op = cJSON_GetObjectItemCaseSensitive(st, "op");
        if (!cJSON_IsString(op) || strcmp(op->valuestring, "launch") != 0) continue;
        const cJSON *jn = cJSON_GetObjectItemCaseSensitive(st, "kernel");
        const cJSON *args = cJSON_GetObjectItemCaseSensitive(st, "args");
        const char *name = cJSON_IsString(jn) ? jn->valuestring : "?";
        const KernelDecl *k = find_kernel(kl, name);
        if (!k) {
            snprintf(msg, sizeof msg, "step %d launches kernel '%s', which the .cu does not define", si, name);
            report_plan(c, plan_loc_of(c, b, e, name), msg);
            continue;
        }
        int nargs = cJSON_GetArraySize(args);
        if (!cJSON_IsArray(args) || nargs != k->nparams) {
            snprintf(msg, sizeof msg, "plan step %d launches '%s' with %d arguments; the kernel takes %d", si, name,
                     nargs, k->nparams);
            report(c, true, k->line, k->col, msg);
            continue;
        }
        for (int j = 0; j < nargs; j++) {
            char ak = arg_kind(cJSON_GetArrayItem(args, j));
            if (ak == k->params[j].kind || k->params[j].kind == '?') continue;
            snprintf(msg, sizeof msg,
                     "plan step %d passes %s as argument %d of '%s', but parameter '%s' has type '%s'", si,
                     ak == '?' ? "an unknown value" : kind_word(ak), j + 1, name, k->params[j].name,
                     k->params[j].type);
            report(c, true, k->params[j].line, k->params[j].col, msg);
        }
    }
}

static void check_contract(Checker *c, const KernelList *kl) {
    char msg[1024];
    const char *b = strstr(c->cu.text, SHORTC_PLAN_BEGIN);
    const char *e = b ? strstr(b, SHORTC_PLAN_END) : NULL;
    if (!b || !e) {
        snprintf(msg, sizeof msg, "no embedded plan (a comment from '%s' to '%s')", SHORTC_PLAN_BEGIN, SHORTC_PLAN_END);
        report_plan(c, line_loc(c->cu_src, 1, 1), msg);
        return;
    }
    const char *json = b + strlen(SHORTC_PLAN_BEGIN);
    cJSON *plan = cJSON_ParseWithLength(json, (size_t)(e - json));
    if (!plan) {
        const char *at = cJSON_GetErrorPtr();
        Loc loc = plan_loc_of(c, b, e, "");
        if (at && at >= json && at < e) loc = (Loc){c->cu_src->id, (int)(at - c->cu.text), (int)(at - c->cu.text) + 1};
        report_plan(c, loc, "not valid JSON");
        return;
    }
    char why[320];
    if (!plan_schema_check(plan, why, sizeof why)) {
        snprintf(msg, sizeof msg, "does not conform to the plan schema: %s", why);
        report_plan(c, plan_loc_of(c, b, e, ""), msg); /* and the kernel contract is still checked */
    }
    const cJSON *kernels = cJSON_GetObjectItemCaseSensitive(plan, "kernels");
    const cJSON *programs = cJSON_GetObjectItemCaseSensitive(plan, "programs");
    if (!cJSON_IsArray(kernels) || !cJSON_IsArray(programs)) {
        report_plan(c, plan_loc_of(c, b, e, ""), "no \"kernels\" or \"programs\" array");
        cJSON_Delete(plan);
        return;
    }

    /* every plan kernel is defined, extern "C", with contract parameter types, at the plan's line */
    const cJSON *pk;
    cJSON_ArrayForEach(pk, kernels) {
        const cJSON *jn = cJSON_GetObjectItemCaseSensitive(pk, "name");
        if (!cJSON_IsString(jn)) {
            report_plan(c, plan_loc_of(c, b, e, "kernels"), "a kernel without a name");
            continue;
        }
        const char *name = jn->valuestring;
        const KernelDecl *k = find_kernel(kl, name);
        if (!k) {
            snprintf(msg, sizeof msg, "kernel '%s' is listed but the .cu defines no __global__ function of that name",
                     name);
            report_plan(c, plan_loc_of(c, b, e, name), msg);
            continue;
        }
        /* its "params" kinds are the C signature's */
        const cJSON *jp = cJSON_GetObjectItemCaseSensitive(pk, "params");
        if (!cJSON_IsArray(jp)) {
            snprintf(msg, sizeof msg, "kernel '%s' has no \"params\" list", name);
            report_plan(c, plan_loc_of(c, b, e, name), msg);
        } else if (cJSON_GetArraySize(jp) != k->nparams) {
            snprintf(msg, sizeof msg, "the plan lists %d params for kernel '%s'; the kernel takes %d",
                     cJSON_GetArraySize(jp), name, k->nparams);
            report(c, true, k->line, k->col, msg);
        } else {
            for (int j = 0; j < k->nparams; j++) {
                const cJSON *pj = cJSON_GetArrayItem(jp, j);
                const char *pw = cJSON_IsString(pj) ? pj->valuestring : "";
                char pkind = strcmp(pw, "ptr") == 0 ? 'p' : strcmp(pw, "int") == 0 ? 'i' : strcmp(pw, "float") == 0 ? 'f' : '?';
                if (pkind == k->params[j].kind || k->params[j].kind == '?') continue;
                snprintf(msg, sizeof msg, "the plan's params give '%s' as parameter %d of '%s', but parameter '%s' has type '%s'",
                         pkind == '?' ? "an unknown kind" : pw, j + 1, name, k->params[j].name, k->params[j].type);
                report(c, true, k->params[j].line, k->params[j].col, msg);
            }
        }
        const cJSON *jl = cJSON_GetObjectItemCaseSensitive(pk, "line");
        Origin o = origin_of_line(c->a, &c->cu, k->line);
        if (cJSON_IsNumber(jl) && o.file && o.line != jl->valueint) {
            snprintf(msg, sizeof msg, "the plan gives kernel '%s' .arch line %d, the comment above it says %s:%d", name,
                     jl->valueint, o.file, o.line);
            report(c, true, k->line, k->col, msg);
        }
    }
    for (int i = 0; i < kl->len; i++) {
        const KernelDecl *k = &kl->items[i];
        bool listed = false;
        cJSON_ArrayForEach(pk, kernels) {
            const cJSON *jn = cJSON_GetObjectItemCaseSensitive(pk, "name");
            if (cJSON_IsString(jn) && strcmp(jn->valuestring, k->name) == 0) listed = true;
        }
        if (!listed) {
            snprintf(msg, sizeof msg, "__global__ function '%s' is not in the plan's kernel list", k->name);
            report(c, true, k->line, k->col, msg);
        }
        if (!k->extern_c) {
            snprintf(msg, sizeof msg, "kernel '%s' must be declared extern \"C\" (the runtime looks it up by name)",
                     k->name);
            report(c, true, k->line, k->col, msg);
        }
        for (int j = 0; j < k->nparams; j++)
            if (k->params[j].kind == '?') {
                snprintf(msg, sizeof msg,
                         "parameter %d ('%s') of kernel '%s' has type '%s'; kernel parameters are pointers, int and "
                         "float only",
                         j + 1, k->params[j].name, k->name, k->params[j].type);
                report(c, true, k->params[j].line, k->params[j].col, msg);
            }
    }

    /* every launch of every program passes what the kernel takes */
    const cJSON *pg;
    cJSON_ArrayForEach(pg, programs) check_launches(c, kl, cJSON_GetObjectItemCaseSensitive(pg, "steps"), b, e);
    cJSON_Delete(plan);
}

/* ------------------------------------------------------------------ */
/* Entry point                                                         */
/* ------------------------------------------------------------------ */

static Source *cu_source(Diag *d, const char *text, size_t len, const char *path) {
    for (int i = 0; i < d->nsources; i++)
        if (d->sources[i]->text == text || (strcmp(d->sources[i]->path, path) == 0 && d->sources[i]->len == len &&
                                            memcmp(d->sources[i]->text, text, len) == 0))
            return d->sources[i];
    return diag_add_source(d, path, text, len);
}

int check_cuda_source(Diag *d, const char *cu_text, size_t len, const char *cu_path) {
    int errors_before = d->errors;
    if (!load_libclang(d)) return d->errors - errors_before;
    Checker c = {.d = d, .a = d->arena};
    c.cu_src = cu_source(d, cu_text, len, cu_path);
    c.cu.text = c.cu_src->text; /* NUL-terminated copy */
    c.cu.len = len;
    c.cu.path = cu_path;
    cu_index_lines(c.a, &c.cu);

    struct CXUnsavedFile unsaved[NSHIM + 1];
    char shim_paths[NSHIM][128];
    for (int i = 0; i < NSHIM; i++) {
        snprintf(shim_paths[i], sizeof shim_paths[i], "%s/%s", CHECK_INC, shim_files[i].name);
        unsaved[i] = (struct CXUnsavedFile){shim_paths[i], shim_files[i].text, strlen(shim_files[i].text)};
    }
    unsaved[NSHIM] = (struct CXUnsavedFile){CHECK_MAIN, c.cu.text, (unsigned long)len};
    static const char *const args[] = {
        "-x", "cuda", "--cuda-device-only", "--cuda-gpu-arch=sm_80", "-nocudainc", "-nocudalib",
        /* no host headers: only clang's builtin headers and the stand-ins above */
        "-Xclang", "-nostdsysteminc", "-nostdinc++", "-ffreestanding", "-std=c++17",
        "-Wno-unknown-cuda-version", "-I" CHECK_INC, "-include", "shortc_check_cuda.h",
    };
    CXIndex index = lc.clang_createIndex(0, 0);
    CXTranslationUnit tu = NULL;
    enum CXErrorCode ec = lc.clang_parseTranslationUnit2(index, CHECK_MAIN, args, (int)(sizeof args / sizeof args[0]),
                                                      unsaved, NSHIM + 1, CXTranslationUnit_None, &tu);
    if (ec != CXError_Success || !tu) {
        diag_plain_error(d, "%s: libclang could not parse the file (error %d)", cu_path, (int)ec);
        lc.clang_disposeIndex(index);
        return d->errors - errors_before;
    }

    unsigned ndiag = lc.clang_getNumDiagnostics(tu);
    for (unsigned i = 0; i < ndiag; i++) {
        CXDiagnostic dg = lc.clang_getDiagnostic(tu, i);
        enum CXDiagnosticSeverity sev = lc.clang_getDiagnosticSeverity(dg);
        if (sev != CXDiagnostic_Warning && sev != CXDiagnostic_Error && sev != CXDiagnostic_Fatal) {
            lc.clang_disposeDiagnostic(dg);
            continue;
        }
        bool is_error = sev != CXDiagnostic_Warning;
        char *text = cxstr(c.a, lc.clang_getDiagnosticSpelling(dg));
        CXFile file = NULL;
        unsigned line = 0, col = 0;
        lc.clang_getExpansionLocation(lc.clang_getDiagnosticLocation(dg), &file, &line, &col, NULL);
        char *fname = file ? cxstr(c.a, lc.clang_getFileName(file)) : NULL;
        if (fname && strcmp(fname, CHECK_MAIN) == 0) {
            report(&c, is_error, (int)line, (int)col, text);
        } else if (is_error) {
            /* in a stand-in header or without a location: say so, it is a check problem as much as an emit one */
            if (fname)
                diag_plain_error(d, "%s: %s:%u:%u (shortc --check's builtin CUDA header): %s", cu_path, fname, line,
                                 col, text);
            else
                diag_plain_error(d, "%s: %s", cu_path, text);
        }
        lc.clang_disposeDiagnostic(dg);
    }

    KernelList kl = {.a = c.a};
    lc.clang_visitChildren(lc.clang_getTranslationUnitCursor(tu), visit_decl, &kl);
    check_contract(&c, &kl);

    lc.clang_disposeTranslationUnit(tu);
    lc.clang_disposeIndex(index);
    return d->errors - errors_before;
}
