/*
 * shortsim_prelude.h — CPU definitions of everything an emitted kernel may
 * use, for the SIMT simulator (docs/runtime.md, "Simulator").
 *
 * templates/prelude.cuh includes this file when __CUDACC__ is not defined;
 * the emitted .cu is then compiled unchanged by the host C++ compiler (C++17)
 * into a shared object (runtime/sim/sim_compile.c). It also has to parse
 * under libclang for the compiler's checks.
 *
 * Model: each CUDA thread is a fiber on a worker OS thread; a worker runs
 * one block at a time, so shared memory is per worker: the source pass
 * (sim_rewrite.c) turns `__shared__` declarations into references to the
 * worker's shared-memory slots (below); forms it leaves alone are
 * `static thread_local`. threadIdx & co. read the worker's ShortsimW,
 * found from the stack address (every kernel stack lies in an aligned
 * per-worker region that starts with a pointer to it). Barriers and warp collectives call into
 * the simulator core through ShortsimW::api.
 */
#ifndef SHORTSIM_PRELUDE_H
#define SHORTSIM_PRELUDE_H

#if defined(__CUDACC__) || defined(__CUDA_ARCH__)
#error "shortsim_prelude.h is the host (simulator) prelude; CUDA compilers use templates/prelude.cuh"
#endif

/* Defined for code compiled for the simulator: a .cu that also holds host
 * code (main, <<<...>>> launches) can leave it out with #ifndef __SHORTSIM__. */
#define __SHORTSIM__ 1

#include <cassert>
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <tuple>
#include <type_traits>
#include <utility>

#if __has_include(<cuda_runtime.h>)
#include <cuda_runtime.h> /* first, so a kernel file's own #include finds it done (its guard) */
#endif
#include <vector_types.h>
#include <vector_functions.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>

/* ---- CUDA keywords (the toolkit headers define some as empty annotations) ---- */
#undef __global__
#undef __device__
#undef __host__
#undef __shared__
#undef __constant__
#undef __managed__
#undef __forceinline__
#undef __noinline__
#undef __launch_bounds__
#define __global__
#define __device__
#define __host__
#define __constant__ static const
#define __managed__
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
/* One copy per worker thread; a worker runs one block at a time. At least
 * 16-byte aligned, like the GPU places shared arrays (vector and ldmatrix access). */
#define __shared__ static thread_local __attribute__((aligned(16)))

#include "shortsim_abi.h"

/*
 * Loads of values that stay fixed while any kernel code of this object runs
 * (the region header, and blockIdx, blockDim, gridDim and the dynamic shared
 * memory of the running block: the core sets them before it calls a
 * trampoline). An asm that reads memory the compiler is not told about is a
 * pure function of its operands, so the value is computed once and kept in a
 * register instead of being reloaded after every store the kernel makes
 * (which, with -fno-strict-aliasing, could otherwise alias ShortsimW). One
 * asm statement per value, the field offset an immediate, keeps kernels as
 * small to the inliner as plain loads did.
 */
#if defined(__x86_64__)
#define SHORTSIM_LD32 "movl %c2(%1), %0"
#define SHORTSIM_LD64 "movq %c2(%1), %0"
#elif defined(__aarch64__)
#define SHORTSIM_LD32 "ldr %w0, [%1, #%c2]"
#define SHORTSIM_LD64 "ldr %0, [%1, #%c2]"
#endif
template <unsigned long Off, typename T> static inline __attribute__((always_inline)) T shortsim_ld_fixed(const void *base) {
    static_assert(sizeof(T) == 4 || sizeof(T) == 8, "4 or 8 bytes");
    T v;
#if defined(SHORTSIM_LD32)
    if (sizeof(T) == 4) __asm__(SHORTSIM_LD32 : "=r"(v) : "r"(base), "i"(Off));
    else __asm__(SHORTSIM_LD64 : "=r"(v) : "r"(base), "i"(Off));
#else
    std::memcpy((void *)&v, (const char *)base + Off, sizeof v);
#endif
    return v;
}

/* The running worker, found from the stack address (see shortsim_abi.h); the
 * header page is written once, before any kernel runs. */
static inline __attribute__((always_inline)) ShortsimW *shortsim_worker(void) {
    return shortsim_ld_fixed<0, ShortsimW *>(
        (const void *)((uintptr_t)__builtin_frame_address(0) & ~(uintptr_t)(SHORTSIM_REGION_ALIGN - 1)));
}
#define shortsim_w (shortsim_worker())

/* The coordinates at offset Off of ShortsimW, fixed for the block. */
template <unsigned long Off> static inline __attribute__((always_inline)) uint3 shortsim_fixed_u3(const ShortsimW *w) {
    uint3 r;
    r.x = shortsim_ld_fixed<Off, unsigned>(w);
    r.y = shortsim_ld_fixed<Off + 4, unsigned>(w);
    r.z = shortsim_ld_fixed<Off + 8, unsigned>(w);
    return r;
}
template <unsigned long Off> static inline __attribute__((always_inline)) dim3 shortsim_fixed_d3(const ShortsimW *w) {
    return dim3(shortsim_ld_fixed<Off, unsigned>(w), shortsim_ld_fixed<Off + 4, unsigned>(w),
                shortsim_ld_fixed<Off + 8, unsigned>(w));
}

/* threadIdx changes between the threads a plain loop runs (and is written by
 * it through the same pointer, so the compiler forwards the value); the
 * others are values fixed for the block. */
#define threadIdx (static_cast<const uint3 &>(shortsim_w->tid))
#define blockIdx (shortsim_fixed_u3<offsetof(ShortsimW, bid)>(shortsim_w))
#define blockDim (shortsim_fixed_d3<offsetof(ShortsimW, bdim)>(shortsim_w))
#define gridDim (shortsim_fixed_d3<offsetof(ShortsimW, gdim)>(shortsim_w))
#ifndef warpSize
#define warpSize 32
#endif

#define SHORTSIM_MEMBAR() __asm__ __volatile__("" ::: "memory")

/* ---- shared memory ------------------------------------------------------ */
/* sim_rewrite.c replaces CUDA's shared-memory declarations by the forms below
 * before the compiler sees the source (declarations it does not recognise keep
 * the `__shared__` macro above: thread-local storage, unchecked).
 *
 * Dynamic: `extern __shared__ T name[];` is a pointer to the running block's
 * dynamic shared memory (the launch's sharedMemBytes; every such declaration
 * aliases it, as in CUDA). It ends flush against a guard page: exactly in
 * checked builds (SHORTSIM_CHECKED), rounded to 16 bytes otherwise. */
namespace shortsim {
template <typename T> using type_t = T;
template <typename T> static inline __attribute__((always_inline)) T *dyn_smem() {
    return shortsim_ld_fixed<offsetof(ShortsimW, dyn_smem), T *>(shortsim_w);
}
/* Static: declaration K is the object ending at SHORTSIM_SMEM_SLOT_END of slot
 * K of the block's static region, a guard after it (shortsim_abi.h). */
template <typename T, unsigned long A> static constexpr unsigned long static_offset() {
    constexpr unsigned long al = A > alignof(T) ? A : alignof(T);
#if defined(SHORTSIM_CHECKED)
    constexpr unsigned long sz = (sizeof(T) + al - 1) / al * al; /* the byte after it is the guard */
#else
    constexpr unsigned long al16 = al > 16 ? al : 16; /* vector-friendly, like the GPU places arrays */
    constexpr unsigned long sz = (sizeof(T) + al16 - 1) / al16 * al16;
#endif
    return SHORTSIM_SMEM_SLOT_END - sz;
}
template <typename T, int K, unsigned long A> static inline __attribute__((always_inline)) T &static_smem() {
    static_assert(K < SHORTSIM_SMEM_SLOTS, "more __shared__ declarations than the simulator has slots");
    static_assert(sizeof(T) <= SHORTSIM_SMEM_STATIC_MAX, "a __shared__ object above the 48 KB static limit");
    char *base = shortsim_ld_fixed<offsetof(ShortsimW, static_smem), char *>(shortsim_w);
    return *reinterpret_cast<T *>(base + (unsigned long)K * SHORTSIM_SMEM_SLOT + static_offset<T, A>());
}
/* Namespace-scope forms: objects that stand for the block's storage. */
template <typename T> struct ExternSharedNs {
    operator T *() const { return dyn_smem<T>(); }
    template <typename U> explicit operator U *() const { return reinterpret_cast<U *>(dyn_smem<T>()); }
    template <typename I> T &operator[](I i) const { return dyn_smem<T>()[i]; }
};
template <typename T, int K, unsigned long A> struct StaticSharedNs {
    operator T &() const { return static_smem<T, K, A>(); }
    template <typename I> auto &operator[](I i) const { return static_smem<T, K, A>()[i]; }
};
} // namespace shortsim
#define SHORTSIM_SMEM_RECORD(K, A, NAME, SNAME, FUNC, ...)                                               \
    static const ShortsimSmemDecl shortsim_smem_rec_##NAME __attribute__((section("shortsim_smem"), used)) = { \
        K, __LINE__, sizeof(__VA_ARGS__), shortsim::static_offset<__VA_ARGS__, A>(), SNAME, FUNC}
#define SHORTSIM_EXTERN_SHARED(NAME, ...) __VA_ARGS__ *const NAME = shortsim::dyn_smem<__VA_ARGS__>()
#define SHORTSIM_EXTERN_SHARED_NS(NAME, ...) [[maybe_unused]] static constexpr shortsim::ExternSharedNs<__VA_ARGS__> NAME{}
#define SHORTSIM_STATIC_SHARED(K, A, NAME, SNAME, ...)                                                   \
    SHORTSIM_SMEM_RECORD(K, A, NAME, SNAME, __func__, __VA_ARGS__);                                         \
    shortsim::type_t<__VA_ARGS__> &NAME = shortsim::static_smem<__VA_ARGS__, K, A>()
#define SHORTSIM_STATIC_SHARED_NS(K, A, NAME, SNAME, ...)                                                \
    SHORTSIM_SMEM_RECORD(K, A, NAME, SNAME, "", __VA_ARGS__);                                            \
    [[maybe_unused]] static constexpr shortsim::StaticSharedNs<__VA_ARGS__, K, A> NAME {}

/* The project's own spelling (templates/prelude.cuh), block scope. */
#define SHORTC_DYNAMIC_SMEM(type, name) SHORTSIM_EXTERN_SHARED(name, type)

/* ---- barriers ---------------------------------------------------------- */
/* Set when kernel code returns from a barrier or warp collective: in a plain
 * loop the core has then converted the block to fibers, and the loop must end
 * when the running thread returns (shortsim::run_plain). Per worker thread;
 * its address never escapes, so the kernel's own stores cannot touch it and a
 * barrier-free kernel's loop never reloads it. Initial-exec: glibc places it
 * in static TLS at dlopen (no __tls_get_addr; and LeakSanitizer mistracks
 * small dynamic TLS blocks of objects it did not see allocated). */
static thread_local int shortsim_synced __attribute__((tls_model("initial-exec")));

static inline int shortsim_call_barrier(int kind, int pred, int line) {
    int r = shortsim_w->api->barrier(kind, pred, line);
    shortsim_synced = 1;
    return r;
}
static inline void shortsim_call_warp(int op, unsigned mask, int line, const void *in, void *out) {
    shortsim_w->api->warp(op, mask, line, in, out);
    shortsim_synced = 1;
}

static inline int shortsim_barrier(int kind, int pred, int line) {
    SHORTSIM_MEMBAR();
    int r = shortsim_call_barrier(kind, pred != 0, line);
    SHORTSIM_MEMBAR();
    return r;
}
#define __syncthreads() ((void)shortsim_barrier(SHORTSIM_BAR_SYNC, 0, __LINE__))
#define __syncthreads_count(pred) shortsim_barrier(SHORTSIM_BAR_COUNT, (pred), __LINE__)
#define __syncthreads_and(pred) shortsim_barrier(SHORTSIM_BAR_AND, (pred), __LINE__)
#define __syncthreads_or(pred) shortsim_barrier(SHORTSIM_BAR_OR, (pred), __LINE__)

static inline void __threadfence_block(void) { SHORTSIM_MEMBAR(); }
static inline void __threadfence(void) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
static inline void __threadfence_system(void) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }

[[noreturn]] static inline void shortsim_fault(const char *what) {
    shortsim_w->api->fault(what);
    __builtin_unreachable();
}
[[noreturn]] static inline void __trap(void) { shortsim_fault("__trap() called"); }
[[noreturn]] static inline void __brkpt(void) { shortsim_fault("__brkpt() called"); }

/* assert() in a kernel becomes a reported fault instead of abort(). The
 * definition is hidden (the .so is built with -fvisibility=hidden), so it
 * only replaces glibc's for this kernel object. */
extern "C" [[noreturn]] inline void __assert_fail(const char *assertion, const char *file, unsigned int line,
                                                  const char *function) noexcept {
    char buf[512];
    snprintf(buf, sizeof buf, "assertion `%s' failed (%s:%u, %s)", assertion, file, line, function);
    shortsim_fault(buf);
}

/* ---- warp collectives ------------------------------------------------ */
template <typename T>
static inline T shortsim_shfl(int op, int line, unsigned mask, T var, int arg, int width) {
    static_assert(sizeof(T) <= 8, "shuffled values are at most 8 bytes");
    ShortsimShflIn in;
    in.val = 0;
    std::memcpy((void *)&in.val, (const void *)&var, sizeof(T));
    in.arg = arg;
    in.width = width;
    unsigned long long out = 0;
    SHORTSIM_MEMBAR();
    shortsim_call_warp(op, mask, line, &in, &out);
    SHORTSIM_MEMBAR();
    T r;
    std::memcpy((void *)&r, (const void *)&out, sizeof(T));
    return r;
}
template <typename T> static inline T __shfl_sync(unsigned mask, T var, int srcLane, int width = 32) {
    return shortsim_shfl(SHORTSIM_OP_SHFL_IDX, 0, mask, var, srcLane, width);
}
template <typename T> static inline T __shfl_up_sync(unsigned mask, T var, unsigned delta, int width = 32) {
    return shortsim_shfl(SHORTSIM_OP_SHFL_UP, 0, mask, var, (int)delta, width);
}
template <typename T> static inline T __shfl_down_sync(unsigned mask, T var, unsigned delta, int width = 32) {
    return shortsim_shfl(SHORTSIM_OP_SHFL_DOWN, 0, mask, var, (int)delta, width);
}
template <typename T> static inline T __shfl_xor_sync(unsigned mask, T var, int laneMask, int width = 32) {
    return shortsim_shfl(SHORTSIM_OP_SHFL_XOR, 0, mask, var, laneMask, width);
}
template <typename T> static inline T shortsim_shfl_l(int op, int line, unsigned mask, T var, int arg, int width = 32) {
    return shortsim_shfl(op, line, mask, var, arg, width);
}
/* The macros pass the call site's line for fault messages. */
#define __shfl_sync(mask, ...) shortsim_shfl_l(SHORTSIM_OP_SHFL_IDX, __LINE__, (mask), __VA_ARGS__)
#define __shfl_up_sync(mask, ...) shortsim_shfl_l(SHORTSIM_OP_SHFL_UP, __LINE__, (mask), __VA_ARGS__)
#define __shfl_down_sync(mask, ...) shortsim_shfl_l(SHORTSIM_OP_SHFL_DOWN, __LINE__, (mask), __VA_ARGS__)
#define __shfl_xor_sync(mask, ...) shortsim_shfl_l(SHORTSIM_OP_SHFL_XOR, __LINE__, (mask), __VA_ARGS__)

static inline unsigned shortsim_vote(int op, unsigned mask, int pred, int line) {
    unsigned out = 0;
    SHORTSIM_MEMBAR();
    shortsim_call_warp(op, mask, line, &pred, &out);
    SHORTSIM_MEMBAR();
    return out;
}
#define __ballot_sync(mask, pred) shortsim_vote(SHORTSIM_OP_BALLOT, (mask), (pred) != 0, __LINE__)
#define __any_sync(mask, pred) ((int)shortsim_vote(SHORTSIM_OP_ANY, (mask), (pred) != 0, __LINE__))
#define __all_sync(mask, pred) ((int)shortsim_vote(SHORTSIM_OP_ALL, (mask), (pred) != 0, __LINE__))
static inline void shortsim_syncwarp(unsigned mask, int line) {
    SHORTSIM_MEMBAR();
    shortsim_call_warp(SHORTSIM_OP_SYNCWARP, mask, line, nullptr, nullptr);
    SHORTSIM_MEMBAR();
}
static inline void __syncwarp(unsigned mask = 0xffffffffu) { shortsim_syncwarp(mask, 0); }
#define __syncwarp(...) shortsim_syncwarp(shortsim_mask_or_full(__VA_ARGS__), __LINE__)
static inline unsigned shortsim_mask_or_full(void) { return 0xffffffffu; }
static inline unsigned shortsim_mask_or_full(unsigned m) { return m; }
static inline unsigned __activemask(void) { return shortsim_w->api->activemask(); }

/* ---- named intrinsics of templates/prelude.cuh -------------------------- */
static inline float shortc_ld(const float *p) { return *p; }
static inline float shortc_ld(const __half *p) { return __half2float(*p); }
static inline float shortc_ld(const __nv_bfloat16 *p) { return __bfloat162float(*p); }
static inline void shortc_st(float *p, float v) { *p = v; }
static inline void shortc_st(__half *p, float v) { *p = __float2half_rn(v); }
static inline void shortc_st(__nv_bfloat16 *p, float v) { *p = __float2bfloat16_rn(v); }

/* mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}.f32 (op), fragments per the PTX ISA. */
static inline void shortsim_mma_m16n8k16(int op, int line, float d[4], const unsigned a[4], const unsigned b[2],
                                         const float c[4]) {
    ShortsimMmaIn in;
    for (int i = 0; i < 4; i++) in.a[i] = a[i], in.c[i] = c[i];
    in.b[0] = b[0];
    in.b[1] = b[1];
    float out[4];
    SHORTSIM_MEMBAR();
    shortsim_call_warp(op, 0xffffffffu, line, &in, out);
    SHORTSIM_MEMBAR();
    for (int i = 0; i < 4; i++) d[i] = out[i];
}
/* ldmatrix.sync.aligned.m8n8.x{num}[.trans].shared.b16: lane l passes the row
 * address of row l%8 of matrix l/8 and receives r[i] = matrix i, row l/4, cols
 * 2(l%4), 2(l%4)+1 (with trans: rows 2(l%4), 2(l%4)+1 of column l/4). */
static inline void shortsim_ldmatrix(int line, unsigned *r, const void *smem, int num, int trans) {
    ShortsimLdmIn in = {smem, num, trans};
    unsigned out[4];
    SHORTSIM_MEMBAR();
    shortsim_call_warp(SHORTSIM_OP_LDMATRIX, 0xffffffffu, line, &in, out);
    SHORTSIM_MEMBAR();
    for (int i = 0; i < num; i++) r[i] = out[i];
}
static inline void shortc_mma_m16n8k16_f16f32(float d[4], const unsigned a[4], const unsigned b[2], const float c[4]) {
    shortsim_mma_m16n8k16(SHORTSIM_OP_MMA_F16F32, 0, d, a, b, c);
}
static inline void shortc_mma_m16n8k16_bf16f32(float d[4], const unsigned a[4], const unsigned b[2], const float c[4]) {
    shortsim_mma_m16n8k16(SHORTSIM_OP_MMA_BF16F32, 0, d, a, b, c);
}
/* mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32: the core rounds each operand to TF32 as
 * cvt.rna.tf32.f32 does (a no-op on shortc_cvt_tf32's results), fragments per the PTX ISA. */
static inline void shortc_mma_m16n8k8_tf32(float d[4], const unsigned a[4], const unsigned b[2], const float c[4]) {
    shortsim_mma_m16n8k16(SHORTSIM_OP_MMA_TF32, 0, d, a, b, c);
}
/* cvt.rna.tf32.f32: x rounded to 10 mantissa bits, nearest with ties away from zero (add half of the
 * dropped 13 bits' range, clear them); NaN and infinity unchanged. */
static inline unsigned shortc_cvt_tf32(float x) {
    unsigned u;
    std::memcpy(&u, &x, sizeof u);
    return (u & 0x7f800000u) == 0x7f800000u ? u : (u + 0x1000u) & ~0x1fffu;
}
static inline void shortc_ldmatrix_x4(unsigned r[4], const void *smem) { shortsim_ldmatrix(0, r, smem, 4, 0); }
static inline void shortc_ldmatrix_x4_trans(unsigned r[4], const void *smem) { shortsim_ldmatrix(0, r, smem, 4, 1); }
static inline void shortc_ldmatrix_x2(unsigned r[2], const void *smem) { shortsim_ldmatrix(0, r, smem, 2, 0); }
static inline void shortc_ldmatrix_x2_trans(unsigned r[2], const void *smem) { shortsim_ldmatrix(0, r, smem, 2, 1); }
#define shortc_mma_m16n8k16_f16f32(d, a, b, c) shortsim_mma_m16n8k16(SHORTSIM_OP_MMA_F16F32, __LINE__, (d), (a), (b), (c))
#define shortc_mma_m16n8k8_tf32(d, a, b, c) shortsim_mma_m16n8k16(SHORTSIM_OP_MMA_TF32, __LINE__, (d), (a), (b), (c))
#define shortc_mma_m16n8k16_bf16f32(d, a, b, c) \
    shortsim_mma_m16n8k16(SHORTSIM_OP_MMA_BF16F32, __LINE__, (d), (a), (b), (c))
#define shortc_ldmatrix_x4(r, smem) shortsim_ldmatrix(__LINE__, (r), (smem), 4, 0)
#define shortc_ldmatrix_x4_trans(r, smem) shortsim_ldmatrix(__LINE__, (r), (smem), 4, 1)
#define shortc_ldmatrix_x2(r, smem) shortsim_ldmatrix(__LINE__, (r), (smem), 2, 0)
#define shortc_ldmatrix_x2_trans(r, smem) shortsim_ldmatrix(__LINE__, (r), (smem), 2, 1)

/* Faults (abandoning the launch) unless p is 16-byte aligned; what names the access. */
static inline void shortsim_check_align16(const void *p, const char *what) {
    if ((uintptr_t)p & 15) {
        char msg[160];
        std::snprintf(msg, sizeof msg, "%s: address %p is not 16-byte aligned", what, p);
        shortsim_fault(msg);
    }
}
/* cp.async: the core reads the source at issue and writes the destination
 * only at the wait_group that covers the copy's group, so a read of the
 * destination before its wait sees the old bytes (the latest legal order). */
static inline void shortc_cp_async_16(void *smem, const void *gmem) {
    shortsim_check_align16(smem, "shortc_cp_async_16 (shared)");
    shortsim_check_align16(gmem, "shortc_cp_async_16 (global)");
    shortsim_w->api->cp_async(SHORTSIM_CP_COPY16, smem, gmem, 0);
}
static inline void shortc_cp_async_commit() { shortsim_w->api->cp_async(SHORTSIM_CP_COMMIT, nullptr, nullptr, 0); }
template <int N> static inline void shortc_cp_async_wait() {
    static_assert(N >= 0, "wait_group takes N >= 0");
    SHORTSIM_MEMBAR();
    shortsim_w->api->cp_async(SHORTSIM_CP_WAIT, nullptr, nullptr, N);
    SHORTSIM_MEMBAR();
}
/* 128-bit accesses (a misaligned one faults on the GPU too). */
static inline uint4 shortc_ld128(const void *p) {
    shortsim_check_align16(p, "shortc_ld128");
    uint4 v;
    std::memcpy(&v, p, sizeof v);
    return v;
}
static inline void shortc_st128(void *p, uint4 v) {
    shortsim_check_align16(p, "shortc_st128");
    std::memcpy(p, &v, sizeof v);
}
/* ex2.approx.ftz.f32, computed accurately. */
static inline float shortc_exp2(float x) { return exp2f(x); }

/* ---- Hopper intrinsics of templates/hopper.cuh (docs/attention/hopper.md) ---- */
/* Every call passes the caller's line (__builtin_LINE() as a default argument) for fault messages. */
#define __grid_constant__
/* A CUtensorMap as a kernel parameter: the simulator's cuTensorMapEncodeTiled fills it with a ShortsimTensorMap. */
struct alignas(64) shortc_tensor_map {
    unsigned long long opaque[16];
};
static_assert(sizeof(shortc_tensor_map) == 128, "a CUtensorMap is 128 bytes");

static inline int shortsim_hop(int op, int line, const ShortsimHopIn &in) {
    SHORTSIM_MEMBAR();
    int r = shortsim_w->api->hopper(op, line, &in);
    shortsim_synced = shortsim_w->converted; /* a wgmma or a failed try_wait switches the block to fibers */
    SHORTSIM_MEMBAR();
    return r;
}
[[noreturn]] static inline void shortsim_wgmma_early(void) {
    shortsim_fault("a wgmma accumulator is read or written before the wgmma.wait_group (shortc_wgmma_wait) that "
                   "covers its wgmma.mma_async");
}
/* The accumulators, with the flag the simulator sets while a wgmma writing them is in flight. */
template <int N> struct shortc_wgmma_acc {
    static_assert(N >= 8 && N <= 256 && N % 8 == 0, "wgmma N: a multiple of 8 from 8 to 256");
    float v[N / 2];
    int pending = 0; /* set at the wgmma, cleared by the wait_group covering it */
    float &operator[](int i) {
        if (pending) shortsim_wgmma_early();
        return v[i];
    }
    const float &operator[](int i) const {
        if (pending) shortsim_wgmma_early();
        return v[i];
    }
};
/* Descriptor of dynamic shared memory at smem: the start address is its offset in the block's dynamic shared
 * memory (which the GPU places at a 1024-byte boundary when nothing else precedes it). */
static inline unsigned long long shortc_wgmma_desc(const void *smem, int swizzle_bytes, unsigned lbo, unsigned sbo,
                                                   int line = __builtin_LINE()) {
    const char *base = shortsim::dyn_smem<char>();
    unsigned long long len = shortsim_ld_fixed<offsetof(ShortsimW, dyn_smem_bytes), unsigned long long>(shortsim_w);
    uintptr_t off = (uintptr_t)smem - (uintptr_t)base;
    char msg[200];
    const char *bad = (uintptr_t)smem < (uintptr_t)base || off >= len ? "is not in the dynamic shared memory"
                      : off % 16                                       ? "is not 16-byte aligned"
                      : lbo % 16 || sbo % 16 || lbo >= (1u << 18) || sbo >= (1u << 18)
                          ? "has a leading or stride byte offset that is not a multiple of 16 below 2^18"
                      : swizzle_bytes != 0 && swizzle_bytes != 32 && swizzle_bytes != 64 && swizzle_bytes != 128
                          ? "asks for a swizzle other than 0, 32, 64 or 128 bytes"
                          : nullptr;
    if (bad) {
        std::snprintf(msg, sizeof msg, "shortc_wgmma_desc (line %d): the matrix at %p %s", line, smem, bad);
        shortsim_fault(msg);
    }
    const unsigned long long mode = swizzle_bytes == 128 ? 1 : swizzle_bytes == 64 ? 2 : swizzle_bytes == 32 ? 3 : 0;
    return (unsigned long long)(off >> 4) | (unsigned long long)(lbo >> 4) << 16 |
           (unsigned long long)(sbo >> 4) << 32 | mode << 62;
}
static inline void shortc_wgmma_fence(int line = __builtin_LINE()) {
    shortsim_hop(SHORTSIM_HOP_WGMMA_FENCE, line, ShortsimHopIn{});
}
static inline void shortc_wgmma_commit(int line = __builtin_LINE()) {
    shortsim_hop(SHORTSIM_HOP_WGMMA_COMMIT, line, ShortsimHopIn{});
}
template <int K> static inline void shortc_wgmma_wait(int line = __builtin_LINE()) {
    static_assert(K >= 0 && K <= 7, "wgmma.wait_group takes 0 to 7");
    ShortsimHopIn in{};
    in.n = K;
    shortsim_hop(SHORTSIM_HOP_WGMMA_WAIT, line, in);
}
template <int N> static inline void shortc_wgmma_fence_acc(shortc_wgmma_acc<N> &) {}
template <int N>
static inline void shortsim_wgmma(int line, shortc_wgmma_acc<N> &d, unsigned long long da, unsigned long long db,
                                  const unsigned *a, int bf16, int ta, int tb, int scale_d) {
    ShortsimWgmmaIn m{};
    m.desc_a = da;
    m.desc_b = db;
    if (a)
        for (int i = 0; i < 4; i++) m.a[i] = a[i];
    m.acc = d.v;
    m.pending = &d.pending;
    m.n = N;
    m.bf16 = bf16;
    m.a_in_regs = a != nullptr;
    m.trans_a = ta;
    m.trans_b = tb;
    m.scale_d = scale_d != 0;
    ShortsimHopIn in{};
    in.mma = &m;
    shortsim_hop(SHORTSIM_HOP_WGMMA, line, in);
}
template <int N, int TA, int TB>
static inline void shortc_wgmma_ss_f16(shortc_wgmma_acc<N> &d, unsigned long long da, unsigned long long db,
                                       int scale_d, int line = __builtin_LINE()) {
    shortsim_wgmma<N>(line, d, da, db, nullptr, 0, TA, TB, scale_d);
}
template <int N, int TA, int TB>
static inline void shortc_wgmma_ss_bf16(shortc_wgmma_acc<N> &d, unsigned long long da, unsigned long long db,
                                        int scale_d, int line = __builtin_LINE()) {
    shortsim_wgmma<N>(line, d, da, db, nullptr, 1, TA, TB, scale_d);
}
template <int N, int TB>
static inline void shortc_wgmma_rs_f16(shortc_wgmma_acc<N> &d, const unsigned a[4], unsigned long long db,
                                       int scale_d, int line = __builtin_LINE()) {
    shortsim_wgmma<N>(line, d, 0, db, a, 0, 0, TB, scale_d);
}
template <int N, int TB>
static inline void shortc_wgmma_rs_bf16(shortc_wgmma_acc<N> &d, const unsigned a[4], unsigned long long db,
                                        int scale_d, int line = __builtin_LINE()) {
    shortsim_wgmma<N>(line, d, 0, db, a, 1, 0, TB, scale_d);
}
/* mbarriers: the simulator keeps their state and marks their 8 bytes. */
static inline void shortsim_mbar_op(int op, unsigned long long *bar, int n, int line) {
    ShortsimHopIn in{};
    in.bar = bar;
    in.n = n;
    shortsim_hop(op, line, in);
}
static inline void shortc_mbar_init(unsigned long long *bar, unsigned count, int line = __builtin_LINE()) {
    shortsim_mbar_op(SHORTSIM_HOP_MBAR_INIT, bar, (int)count, line);
}
static inline void shortc_mbar_arrive(unsigned long long *bar, int line = __builtin_LINE()) {
    shortsim_mbar_op(SHORTSIM_HOP_MBAR_ARRIVE, bar, 0, line);
}
static inline void shortc_mbar_arrive_expect_tx(unsigned long long *bar, unsigned bytes, int line = __builtin_LINE()) {
    shortsim_mbar_op(SHORTSIM_HOP_MBAR_ARRIVE, bar, (int)bytes, line);
}
static inline void shortc_mbar_expect_tx(unsigned long long *bar, unsigned bytes, int line = __builtin_LINE()) {
    shortsim_mbar_op(SHORTSIM_HOP_MBAR_EXPECT_TX, bar, (int)bytes, line);
}
/* A failed try yields to the other threads (the simulator's spin-wait). */
static inline bool shortc_mbar_try_wait(unsigned long long *bar, unsigned parity, int line = __builtin_LINE()) {
    ShortsimHopIn in{};
    in.bar = bar;
    in.n = (int)(parity & 1);
    return shortsim_hop(SHORTSIM_HOP_MBAR_TRY_WAIT, line, in) != 0;
}
static inline void shortc_mbar_wait(unsigned long long *bar, unsigned parity, int line = __builtin_LINE()) {
    while (!shortc_mbar_try_wait(bar, parity, line)) {
    }
}
/* TMA: loads read global memory at issue and write shared memory when a thread next waits on their mbarrier;
 * stores complete at issue. */
static inline void shortsim_tma(int op, void *smem, const shortc_tensor_map *map, unsigned long long *bar, int rank,
                                const int *c, int line) {
    ShortsimHopIn in{};
    in.smem = smem;
    in.map = map;
    in.bar = bar;
    in.rank = rank;
    for (int i = 0; i < rank; i++) in.coord[i] = c[i];
    shortsim_hop(op, line, in);
}
static inline void shortc_tma_load_2d(void *smem, const shortc_tensor_map *map, unsigned long long *bar, int c0, int c1,
                                      int line = __builtin_LINE()) {
    const int c[2] = {c0, c1};
    shortsim_tma(SHORTSIM_HOP_TMA_LOAD, smem, map, bar, 2, c, line);
}
static inline void shortc_tma_load_3d(void *smem, const shortc_tensor_map *map, unsigned long long *bar, int c0, int c1,
                                      int c2, int line = __builtin_LINE()) {
    const int c[3] = {c0, c1, c2};
    shortsim_tma(SHORTSIM_HOP_TMA_LOAD, smem, map, bar, 3, c, line);
}
static inline void shortc_tma_store_2d(const shortc_tensor_map *map, const void *smem, int c0, int c1,
                                       int line = __builtin_LINE()) {
    const int c[2] = {c0, c1};
    shortsim_tma(SHORTSIM_HOP_TMA_STORE, const_cast<void *>(smem), map, nullptr, 2, c, line);
}
static inline void shortc_tma_store_3d(const shortc_tensor_map *map, const void *smem, int c0, int c1, int c2,
                                       int line = __builtin_LINE()) {
    const int c[3] = {c0, c1, c2};
    shortsim_tma(SHORTSIM_HOP_TMA_STORE, const_cast<void *>(smem), map, nullptr, 3, c, line);
}
static inline void shortc_tma_store_commit(int line = __builtin_LINE()) {
    shortsim_hop(SHORTSIM_HOP_BULK_COMMIT, line, ShortsimHopIn{});
}
template <int K> static inline void shortc_tma_store_wait(int line = __builtin_LINE()) {
    ShortsimHopIn in{};
    in.n = K;
    shortsim_hop(SHORTSIM_HOP_BULK_WAIT, line, in);
}
static inline void shortc_fence_proxy_async(int line = __builtin_LINE()) {
    shortsim_hop(SHORTSIM_HOP_FENCE_PROXY_ASYNC, line, ShortsimHopIn{});
}
/* setmaxnreg has nothing to do on the CPU; its operand is checked as ptxas would. */
template <int R> static inline void shortc_setmaxnreg_inc() {
    static_assert(R >= 24 && R <= 256 && R % 8 == 0, "setmaxnreg: 24 to 256 registers, a multiple of 8");
}
template <int R> static inline void shortc_setmaxnreg_dec() {
    static_assert(R >= 24 && R <= 256 && R % 8 == 0, "setmaxnreg: 24 to 256 registers, a multiple of 8");
}

/* ---- atomics (real atomics: blocks run on several workers) --------------- */
/* Checked builds mark the operation's accesses as atomic (ShortsimW::in_atomic): they do not race with
 * each other in the shared-memory race detector. */
#if defined(SHORTSIM_CHECKED)
namespace shortsim {
struct AtomicScope {
    AtomicScope() { shortsim_w->in_atomic = 1; }
    ~AtomicScope() { shortsim_w->in_atomic = 0; }
};
} // namespace shortsim
#define SHORTSIM_ATOMIC_SCOPE shortsim::AtomicScope shortsim_atomic_scope
#else
#define SHORTSIM_ATOMIC_SCOPE (void)0
#endif
#define SHORTSIM_ATOMIC_INT(T)                                                                         \
    static inline T atomicAdd(T *p, T v) { SHORTSIM_ATOMIC_SCOPE; return __atomic_fetch_add(p, v, __ATOMIC_RELAXED); }        \
    static inline T atomicSub(T *p, T v) { SHORTSIM_ATOMIC_SCOPE; return __atomic_fetch_sub(p, v, __ATOMIC_RELAXED); }        \
    static inline T atomicAnd(T *p, T v) { SHORTSIM_ATOMIC_SCOPE; return __atomic_fetch_and(p, v, __ATOMIC_RELAXED); }        \
    static inline T atomicOr(T *p, T v) { SHORTSIM_ATOMIC_SCOPE; return __atomic_fetch_or(p, v, __ATOMIC_RELAXED); }          \
    static inline T atomicXor(T *p, T v) { SHORTSIM_ATOMIC_SCOPE; return __atomic_fetch_xor(p, v, __ATOMIC_RELAXED); }        \
    static inline T atomicExch(T *p, T v) { SHORTSIM_ATOMIC_SCOPE; return __atomic_exchange_n(p, v, __ATOMIC_RELAXED); }      \
    static inline T atomicCAS(T *p, T cmp, T v) { SHORTSIM_ATOMIC_SCOPE;                                                      \
        __atomic_compare_exchange_n(p, &cmp, v, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);             \
        return cmp;                                                                                    \
    }                                                                                                  \
    static inline T atomicMax(T *p, T v) { SHORTSIM_ATOMIC_SCOPE;                                                             \
        T old = __atomic_load_n(p, __ATOMIC_RELAXED);                                                  \
        while (old < v && !__atomic_compare_exchange_n(p, &old, v, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) { \
        }                                                                                              \
        return old;                                                                                    \
    }                                                                                                  \
    static inline T atomicMin(T *p, T v) { SHORTSIM_ATOMIC_SCOPE;                                                             \
        T old = __atomic_load_n(p, __ATOMIC_RELAXED);                                                  \
        while (old > v && !__atomic_compare_exchange_n(p, &old, v, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) { \
        }                                                                                              \
        return old;                                                                                    \
    }
SHORTSIM_ATOMIC_INT(int)
SHORTSIM_ATOMIC_INT(unsigned int)
SHORTSIM_ATOMIC_INT(unsigned long long int)
SHORTSIM_ATOMIC_INT(long long int)
#undef SHORTSIM_ATOMIC_INT
static inline unsigned atomicInc(unsigned *p, unsigned limit) { SHORTSIM_ATOMIC_SCOPE;
    unsigned old = __atomic_load_n(p, __ATOMIC_RELAXED);
    while (!__atomic_compare_exchange_n(p, &old, old >= limit ? 0u : old + 1u, true, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED)) {
    }
    return old;
}
template <typename F, typename U, typename Op> static inline F shortsim_atomic_float(F *p, Op op) {
    SHORTSIM_ATOMIC_SCOPE;
    static_assert(sizeof(F) == sizeof(U), "size");
    U *q = reinterpret_cast<U *>(p);
    U old = __atomic_load_n(q, __ATOMIC_RELAXED), nu;
    for (;;) {
        F f;
        std::memcpy((void *)&f, &old, sizeof f);
        F r = op(f);
        std::memcpy(&nu, (const void *)&r, sizeof nu);
        if (__atomic_compare_exchange_n(q, &old, nu, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) return f;
    }
}
static inline float atomicAdd(float *p, float v) { SHORTSIM_ATOMIC_SCOPE;
    return shortsim_atomic_float<float, uint32_t>(p, [v](float x) { return x + v; });
}
static inline double atomicAdd(double *p, double v) { SHORTSIM_ATOMIC_SCOPE;
    return shortsim_atomic_float<double, uint64_t>(p, [v](double x) { return x + v; });
}
static inline float atomicExch(float *p, float v) { SHORTSIM_ATOMIC_SCOPE;
    return shortsim_atomic_float<float, uint32_t>(p, [v](float) { return v; });
}
static inline float atomicMax(float *p, float v) { SHORTSIM_ATOMIC_SCOPE;
    return shortsim_atomic_float<float, uint32_t>(p, [v](float x) { return fmaxf(x, v); });
}
static inline float atomicMin(float *p, float v) { SHORTSIM_ATOMIC_SCOPE;
    return shortsim_atomic_float<float, uint32_t>(p, [v](float x) { return fminf(x, v); });
}
static inline __half atomicAdd(__half *p, __half v) { SHORTSIM_ATOMIC_SCOPE;
    return shortsim_atomic_float<__half, uint16_t>(
        p, [v](__half x) { return __float2half_rn(__half2float(x) + __half2float(v)); });
}
#define atomicAdd_block atomicAdd
#define atomicAdd_system atomicAdd

/* ---- math: CUDA's fast intrinsics computed accurately ------------------- */
static inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
static inline double rsqrt(double x) { return 1.0 / sqrt(x); }
static inline float rcbrtf(float x) { return 1.0f / cbrtf(x); }
/* glibc's <math.h> declares __expf, __logf, ... as its own internal functions:
 * CUDA's names are mapped onto ours with object-like macros (every system
 * header is already included above, so nothing else is renamed). */
static inline float shortsim_expf(float x) { return expf(x); }
static inline float shortsim_exp10f(float x) { return powf(10.0f, x); }
static inline float shortsim_logf(float x) { return logf(x); }
static inline float shortsim_log2f(float x) { return log2f(x); }
static inline float shortsim_log10f(float x) { return log10f(x); }
static inline float shortsim_powf(float x, float y) { return powf(x, y); }
static inline float shortsim_sinf(float x) { return sinf(x); }
static inline float shortsim_cosf(float x) { return cosf(x); }
static inline float shortsim_tanf(float x) { return tanf(x); }
static inline void shortsim_sincosf(float x, float *s, float *c) { *s = sinf(x), *c = cosf(x); }
#define __expf shortsim_expf
#define __exp10f shortsim_exp10f
#define __logf shortsim_logf
#define __log2f shortsim_log2f
#define __log10f shortsim_log10f
#define __powf shortsim_powf
#define __sinf shortsim_sinf
#define __cosf shortsim_cosf
#define __tanf shortsim_tanf
#define __sincosf shortsim_sincosf
static inline float __fdividef(float x, float y) { return x / y; }
static inline float fdividef(float x, float y) { return x / y; }
static inline float __saturatef(float x) { return x > 0.0f ? (x < 1.0f ? x : 1.0f) : 0.0f; }
static inline float __fmaf_rn(float a, float b, float c) { return fmaf(a, b, c); }
static inline float __fmaf_rz(float a, float b, float c) { return fmaf(a, b, c); }
static inline float __fadd_rn(float a, float b) { return a + b; }
static inline float __fsub_rn(float a, float b) { return a - b; }
static inline float __fmul_rn(float a, float b) { return a * b; }
static inline float __fdiv_rn(float a, float b) { return a / b; }
static inline float __frcp_rn(float a) { return 1.0f / a; }
static inline float __fsqrt_rn(float a) { return sqrtf(a); }
static inline float __frsqrt_rn(float a) { return 1.0f / sqrtf(a); }
static inline double __fma_rn(double a, double b, double c) { return fma(a, b, c); }
static inline double __dadd_rn(double a, double b) { return a + b; }
static inline double __dmul_rn(double a, double b) { return a * b; }
static inline float normcdff(float x) { return 0.5f * erfcf(-x * 0.70710678118654752f); }
static inline double normcdf(double x) { return 0.5 * erfc(-x * 0.70710678118654752); }

static inline int __float_as_int(float x) { int i; std::memcpy(&i, &x, 4); return i; }
static inline unsigned __float_as_uint(float x) { unsigned i; std::memcpy(&i, &x, 4); return i; }
static inline float __int_as_float(int i) { float x; std::memcpy(&x, &i, 4); return x; }
static inline float __uint_as_float(unsigned i) { float x; std::memcpy(&x, &i, 4); return x; }
static inline long long __double_as_longlong(double x) { long long i; std::memcpy(&i, &x, 8); return i; }
static inline double __longlong_as_double(long long i) { double x; std::memcpy(&x, &i, 8); return x; }
static inline int __float2int_rn(float x) { return (int)nearbyintf(x); }
static inline int __float2int_rz(float x) { return (int)x; }
static inline int __float2int_rd(float x) { return (int)floorf(x); }
static inline int __float2int_ru(float x) { return (int)ceilf(x); }
static inline unsigned __float2uint_rn(float x) { return (unsigned)nearbyintf(x); }
static inline unsigned __float2uint_rz(float x) { return (unsigned)x; }
static inline float __int2float_rn(int i) { return (float)i; }
static inline float __uint2float_rn(unsigned i) { return (float)i; }

static inline int __popc(unsigned x) { return __builtin_popcount(x); }
static inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
static inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz((unsigned)x); }
static inline int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll((unsigned long long)x); }
static inline int __ffs(int x) { return __builtin_ffs(x); }
static inline int __ffsll(long long x) { return __builtin_ffsll(x); }
static inline unsigned __brev(unsigned x) {
    x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
    x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
    x = ((x >> 4) & 0x0f0f0f0fu) | ((x & 0x0f0f0f0fu) << 4);
    x = ((x >> 8) & 0x00ff00ffu) | ((x & 0x00ff00ffu) << 8);
    return (x >> 16) | (x << 16);
}
static inline int __mul24(int a, int b) {
    return (int)((long long)(((a & 0xffffff) ^ 0x800000) - 0x800000) * (((b & 0xffffff) ^ 0x800000) - 0x800000));
}
static inline unsigned __umul24(unsigned a, unsigned b) { return (a & 0xffffffu) * (b & 0xffffffu); }
static inline int __mulhi(int a, int b) { return (int)(((long long)a * b) >> 32); }
static inline unsigned __umulhi(unsigned a, unsigned b) { return (unsigned)(((unsigned long long)a * b) >> 32); }
static inline unsigned __funnelshift_l(unsigned lo, unsigned hi, unsigned s) {
    unsigned long long v = ((unsigned long long)hi << 32) | lo;
    return (unsigned)((v << (s & 31)) >> 32);
}
static inline unsigned __funnelshift_r(unsigned lo, unsigned hi, unsigned s) {
    unsigned long long v = ((unsigned long long)hi << 32) | lo;
    return (unsigned)(v >> (s & 31));
}
static inline long long clock64(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}
static inline void __nanosleep(unsigned) {}

/* CUDA's min/max are global overloads for every arithmetic pair. */
template <typename A, typename B,
          typename = typename std::enable_if<std::is_arithmetic<A>::value && std::is_arithmetic<B>::value>::type>
static inline typename std::common_type<A, B>::type min(A a, B b) {
    typedef typename std::common_type<A, B>::type T;
    return (T)b < (T)a ? (T)b : (T)a;
}
template <typename A, typename B,
          typename = typename std::enable_if<std::is_arithmetic<A>::value && std::is_arithmetic<B>::value>::type>
static inline typename std::common_type<A, B>::type max(A a, B b) {
    typedef typename std::common_type<A, B>::type T;
    return (T)a < (T)b ? (T)b : (T)a;
}
static inline float min(float a, float b) { return fminf(a, b); }
static inline float max(float a, float b) { return fmaxf(a, b); }

/* Cache-hinted loads and stores are plain accesses. */
template <typename T> static inline T __ldg(const T *p) { return *p; }
template <typename T> static inline T __ldca(const T *p) { return *p; }
template <typename T> static inline T __ldcg(const T *p) { return *p; }
template <typename T> static inline T __ldcs(const T *p) { return *p; }
template <typename T> static inline T __ldlu(const T *p) { return *p; }
template <typename T> static inline T __ldcv(const T *p) { return *p; }
template <typename T> static inline void __stwb(T *p, T v) { *p = v; }
template <typename T> static inline void __stcg(T *p, T v) { *p = v; }
template <typename T> static inline void __stcs(T *p, T v) { *p = v; }
template <typename T> static inline void __stwt(T *p, T v) { *p = v; }
static inline size_t __cvta_generic_to_shared(const void *p) { return (size_t)p; }

/* ---- trampolines (sim_compile.c appends SHORTSIM_KERNEL(name) per kernel) ---- */
namespace shortsim {
template <typename... A> constexpr std::size_t arity(void (*)(A...)) { return sizeof...(A); }

/* One letter per parameter (shortsim_abi.h): pointer, float, int, unsigned, other. */
template <typename T> constexpr char param_kind() {
    return std::is_pointer<T>::value                               ? 'p'
           : std::is_same<T, float>::value                         ? 'f'
           : std::is_integral<T>::value && sizeof(T) == 4          ? (std::is_signed<T>::value ? 'i' : 'u')
                                                                   : '?';
}
template <typename... A> struct param_kinds {
    static constexpr char s[sizeof...(A) + 1] = {param_kind<std::decay_t<A>>()..., 0};
};
template <typename... A> constexpr const char *param_kinds_of(void (*)(A...)) { return param_kinds<A...>::s; }

template <auto F, typename... A, std::size_t... I>
static inline void run_one(void (*)(A...), void **p, std::index_sequence<I...>) {
    (void)p;
    F(*static_cast<std::decay_t<A> *>(p[I])...);
}

/* Every thread of the block in turn on one stack. If a thread reaches a
 * barrier or warp collective, the core converts the block to fibers (the
 * running thread keeps this stack); the call's return sets shortsim_synced
 * and the loop ends when that thread returns. The kernel (and what it calls)
 * is inlined into the loop whatever its size (flatten): per-block values
 * then stay in registers and threadIdx.x is the loop counter. */
template <auto F, typename... A, std::size_t... I>
__attribute__((flatten)) static inline void run_plain(void (*)(A...), void **p, std::index_sequence<I...>) {
    (void)p;
    const std::tuple<std::decay_t<A>...> args(*static_cast<std::decay_t<A> *>(p[I])...);
    /* the same pointer value kernel code computes (this stack is in the region),
     * so the compiler sees the threadIdx stores below reach the kernel's reads */
    ShortsimW *const w = shortsim_worker();
    const dim3 n = shortsim_fixed_d3<offsetof(ShortsimW, bdim)>(w);
    shortsim_synced = 0;
    for (unsigned z = 0; z < n.z; z++) {
        w->tid.z = z;
        for (unsigned y = 0; y < n.y; y++) {
            w->tid.y = y;
            for (unsigned x = 0; x < n.x; x++) {
                w->tid.x = x;
                F(std::get<I>(args)...);
                if (__builtin_expect(shortsim_synced, 0)) return;
            }
        }
    }
}
} // namespace shortsim

#define SHORTSIM_EXPORT extern "C" __attribute__((visibility("default")))

/* ---- checked mode: every access outside the stack is checked ------------ */
/* Checked objects are compiled with -fsanitize=kernel-address and every
 * instrumentation call made out of line (sim_compile.c): each load and store
 * of N bytes calls __asan_loadN_noabort / __asan_storeN_noabort. These hooks
 * (hidden: they bind inside this object only, also in an ASan host process)
 * skip the running worker's own stack region (locals, the common case) and
 * its ShortsimW (threadIdx and the rest) and pass anything else to the core (ShortsimCheckFn, shortsim_abi.h), which
 * checks device allocations and shared memory byte for byte. The checker is
 * NULL until the core has loaded the object (static initialisers run
 * unchecked). The hooks themselves are not instrumented. */
#if defined(SHORTSIM_CHECKED)
extern "C" {
__attribute__((visibility("default"))) ShortsimCheckFn shortsim_checker = nullptr;
}
namespace shortsim {
static inline __attribute__((always_inline, no_sanitize_address)) void check(const void *p, unsigned long n, int store,
                                                                             const void *pc) {
    ShortsimCheckFn fn = shortsim_checker;
    if (!fn) return;
    uintptr_t region = (uintptr_t)__builtin_frame_address(0) & ~(uintptr_t)(SHORTSIM_REGION_ALIGN - 1);
    if (((uintptr_t)p & ~(uintptr_t)(SHORTSIM_REGION_ALIGN - 1)) == region) return; /* own stack region */
    if ((uintptr_t)p - (uintptr_t)shortsim_worker() < sizeof(ShortsimW)) return;   /* threadIdx & co. */
    fn(p, n, store, pc);
}
} // namespace shortsim
/* The address of the instrumented access's call: the return address is the
 * next instruction, which may belong to the next source line. */
#define SHORTSIM_CALL_SITE() ((const char *)__builtin_return_address(0) - 1)
#define SHORTSIM_CHECK_HOOKS(N)                                                                         \
    extern "C" __attribute__((visibility("hidden"), no_sanitize_address, noinline)) void                \
        __asan_load##N##_noabort(void *p) {                                                             \
        shortsim::check(p, N, 0, SHORTSIM_CALL_SITE());                                          \
    }                                                                                                   \
    extern "C" __attribute__((visibility("hidden"), no_sanitize_address, noinline)) void                \
        __asan_store##N##_noabort(void *p) {                                                            \
        shortsim::check(p, N, 1, SHORTSIM_CALL_SITE());                                          \
    }
SHORTSIM_CHECK_HOOKS(1)
SHORTSIM_CHECK_HOOKS(2)
SHORTSIM_CHECK_HOOKS(4)
SHORTSIM_CHECK_HOOKS(8)
SHORTSIM_CHECK_HOOKS(16)
#undef SHORTSIM_CHECK_HOOKS
extern "C" __attribute__((visibility("hidden"), no_sanitize_address, noinline)) void __asan_loadN_noabort(void *p,
                                                                                                       long n) {
    shortsim::check(p, (unsigned long)n, 0, SHORTSIM_CALL_SITE());
}
extern "C" __attribute__((visibility("hidden"), no_sanitize_address, noinline)) void __asan_storeN_noabort(void *p,
                                                                                                        long n) {
    shortsim::check(p, (unsigned long)n, 1, SHORTSIM_CALL_SITE());
}
extern "C" __attribute__((visibility("hidden"))) void __asan_handle_no_return(void) {}
#endif
/* The static shared-memory records of this object (section shortsim_smem). */
extern "C" const ShortsimSmemDecl __start_shortsim_smem[] __attribute__((weak, visibility("hidden")));
extern "C" const ShortsimSmemDecl __stop_shortsim_smem[] __attribute__((weak, visibility("hidden")));
#define SHORTSIM_MODULE()                                                                              \
    SHORTSIM_EXPORT const ShortsimSmemDecl *shortsim_smem_decls(unsigned long *n) {                    \
        *n = __start_shortsim_smem ? (unsigned long)(__stop_shortsim_smem - __start_shortsim_smem) : 0; \
        return __start_shortsim_smem;                                                                  \
    }
#define SHORTSIM_KERNEL(NAME)                                                                          \
    SHORTSIM_EXPORT const char *const shortsim_params_##NAME = shortsim::param_kinds_of(&NAME);        \
    SHORTSIM_EXPORT void shortsim_tramp_##NAME(void **p, ShortsimW *w) {                              \
        (void)w;                                                                                       \
        shortsim::run_one<&NAME>(&NAME, p, std::make_index_sequence<shortsim::arity(&NAME)>());         \
    }                                                                                                  \
    SHORTSIM_EXPORT void shortsim_plain_##NAME(void **p, ShortsimW *w) {                              \
        (void)w;                                                                                       \
        shortsim::run_plain<&NAME>(&NAME, p, std::make_index_sequence<shortsim::arity(&NAME)>());       \
    }

#endif /* SHORTSIM_PRELUDE_H */
