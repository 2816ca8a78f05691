// ---------------------------------------------------------------------------
// shortc prelude: pasted verbatim at the top of every emitted .cu.
//
// Under a CUDA compiler (nvcc, NVRTC) it includes the half-precision headers
// and defines the named intrinsics below. Anywhere else (the CPU simulator,
// libclang checks) it includes shortsim_prelude.h, which defines the same
// names for the host. Kernels use only standard CUDA C++ plus these names;
// inline PTX appears nowhere but here.
//
//   SHORTC_DYNAMIC_SMEM(type, name)    extern __shared__ type name[]
//   float shortc_ld(const T *p)         load one element as float (T = float, __half, __nv_bfloat16)
//   void  shortc_st(T *p, float v)      store one float, rounded to nearest even
//   shortc_mma_m16n8k16_f16f32(d, a, b, c)   warp-wide tensor-core MMA, fp16 in, fp32 accumulate
//   shortc_mma_m16n8k16_bf16f32(d, a, b, c)  the same with bf16 inputs
//   shortc_mma_m16n8k8_tf32(d, a, b, c)      m16n8k8 with TF32 inputs (fp32 bit patterns), fp32 accumulate
//   unsigned shortc_cvt_tf32(float x)        x rounded to TF32 (cvt.rna.tf32.f32), as a .b32 MMA operand
//   shortc_ldmatrix_x4(r, smem)              warp-wide load of four 8x8 b16 matrices
//   shortc_ldmatrix_x2(r, smem)              two matrices (row addresses from lanes 0-15)
//   shortc_ldmatrix_x4_trans / _x2_trans     the same, each matrix transposed
//   shortc_cp_async_16(smem, gmem)           asynchronous 16-byte global -> shared copy
//   shortc_cp_async_commit()                 closes the group of copies issued so far
//   shortc_cp_async_wait<N>()                waits until at most N groups are pending
//   uint4 shortc_ld128(const void *p)        one 128-bit global/shared load (16-byte aligned)
//   shortc_st128(void *p, uint4 v)           one 128-bit store (16-byte aligned)
//   float shortc_exp2(float x)               2^x, one MUFU.EX2 (approximate, flushes denormals; 2^-inf = 0)
// ---------------------------------------------------------------------------
#if defined(__CUDACC__)
#include <cuda_fp16.h>
#include <cuda_bf16.h>

#define SHORTC_DYNAMIC_SMEM(type, name) extern __shared__ type name[]

__device__ __forceinline__ float shortc_ld(const float *p) { return *p; }
__device__ __forceinline__ float shortc_ld(const __half *p) { return __half2float(*p); }
__device__ __forceinline__ float shortc_ld(const __nv_bfloat16 *p) { return __bfloat162float(*p); }

__device__ __forceinline__ void shortc_st(float *p, float v) { *p = v; }
__device__ __forceinline__ void shortc_st(__half *p, float v) { *p = __float2half_rn(v); }
__device__ __forceinline__ void shortc_st(__nv_bfloat16 *p, float v) { *p = __float2bfloat16_rn(v); }

// d = a * b + c for one m16n8k16 tile held by a warp (row-major A, column-major B),
// fragments as in the PTX ISA: a 4 x .b32 (8 halves), b 2 x .b32 (4 halves), c/d 4 floats.
__device__ __forceinline__ void shortc_mma_m16n8k16_f16f32(float d[4], const unsigned a[4],
                                                           const unsigned b[2], const float c[4]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};\n"
        : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]),
          "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
#else
    (void)d; (void)a; (void)b; (void)c;
    __trap();  // shortc targets sm_80 and newer
#endif
}

// d = a * b + c with bf16 inputs; fragments as for the fp16 form.
__device__ __forceinline__ void shortc_mma_m16n8k16_bf16f32(float d[4], const unsigned a[4],
                                                            const unsigned b[2], const float c[4]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};\n"
        : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]),
          "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
#else
    (void)d; (void)a; (void)b; (void)c;
    __trap();  // shortc targets sm_80 and newer
#endif
}

// d = a * b + c for one m16n8k8 tile with TF32 inputs (row-major A, column-major B; g = lane/4, t = lane%4):
// a 4 x .b32 = A rows g, g+8 at column t, then rows g, g+8 at column t+4; b 2 x .b32 = B rows t and t+4 of
// column g; c/d as m16n8k16. The operands must already be TF32 (shortc_cvt_tf32): the instruction reads them
// as they are.
__device__ __forceinline__ void shortc_mma_m16n8k8_tf32(float d[4], const unsigned a[4], const unsigned b[2],
                                                        const float c[4]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};\n"
        : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]),
          "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
#else
    (void)d; (void)a; (void)b; (void)c;
    __trap();  // shortc targets sm_80 and newer
#endif
}

// x rounded to TF32 (10 mantissa bits, nearest with ties away from zero; NaN and infinity kept), as the bits
// of an fp32 register: the operand form of shortc_mma_m16n8k8_tf32. Not volatile: repeated conversions of
// one value fold into one.
__device__ __forceinline__ unsigned shortc_cvt_tf32(float x) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    unsigned r;
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
    return r;
#else
    return __float_as_uint(x);
#endif
}

// ldmatrix: lanes 8i..8i+7 pass the addresses (16-byte aligned, shared) of
// rows 0-7 of matrix i; lane l receives r[i] = row l/4, columns 2(l%4) and
// 2(l%4)+1 of matrix i (low half first). The _trans forms deliver each matrix
// transposed: r[i] = rows 2(l%4) and 2(l%4)+1 of column l/4. x2 reads the
// addresses of lanes 0-15 only (every lane still passes a valid one).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define SHORTC_LDMATRIX4(r, smem, op)                                                    \
    asm volatile(op " {%0, %1, %2, %3}, [%4];\n"                                        \
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])                        \
                 : "r"((unsigned)__cvta_generic_to_shared(smem)))
#define SHORTC_LDMATRIX2(r, smem, op)                                                    \
    asm volatile(op " {%0, %1}, [%2];\n"                                                \
                 : "=r"(r[0]), "=r"(r[1])                                                \
                 : "r"((unsigned)__cvta_generic_to_shared(smem)))
#else
#define SHORTC_LDMATRIX4(r, smem, op) ((void)(r), (void)(smem), __trap())
#define SHORTC_LDMATRIX2(r, smem, op) ((void)(r), (void)(smem), __trap())
#endif
__device__ __forceinline__ void shortc_ldmatrix_x4(unsigned r[4], const void *smem) {
    SHORTC_LDMATRIX4(r, smem, "ldmatrix.sync.aligned.m8n8.x4.shared.b16");
}
__device__ __forceinline__ void shortc_ldmatrix_x4_trans(unsigned r[4], const void *smem) {
    SHORTC_LDMATRIX4(r, smem, "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16");
}
__device__ __forceinline__ void shortc_ldmatrix_x2(unsigned r[2], const void *smem) {
    SHORTC_LDMATRIX2(r, smem, "ldmatrix.sync.aligned.m8n8.x2.shared.b16");
}
__device__ __forceinline__ void shortc_ldmatrix_x2_trans(unsigned r[2], const void *smem) {
    SHORTC_LDMATRIX2(r, smem, "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16");
}

// cp.async.cg: 16 bytes from global to shared without passing through
// registers (both addresses 16-byte aligned); complete only after a
// commit and a wait that covers its group.
__device__ __forceinline__ void shortc_cp_async_16(void *smem, const void *gmem) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n"
                 :: "r"((unsigned)__cvta_generic_to_shared(smem)), "l"(gmem) : "memory");
#else
    (void)smem; (void)gmem;
    __trap();
#endif
}
__device__ __forceinline__ void shortc_cp_async_commit() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}
template <int N> __device__ __forceinline__ void shortc_cp_async_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group %0;\n" :: "n"(N) : "memory");
#endif
}

// 128-bit accesses (standard CUDA: a uint4 access compiles to one LDG/STG/LDS.128).
__device__ __forceinline__ uint4 shortc_ld128(const void *p) { return *static_cast<const uint4 *>(p); }
__device__ __forceinline__ void shortc_st128(void *p, uint4 v) { *static_cast<uint4 *>(p) = v; }

// 2^x by the special-function unit alone (exp2f adds a denormal fix-up around it).
__device__ __forceinline__ float shortc_exp2(float x) {
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
    return y;
}

#else
#include "shortsim_prelude.h"
#endif

// ---------------------------------------------------------------------------
// Helpers shared by the kernel templates: standard CUDA only, so the
// simulator compiles them as they are.
// ---------------------------------------------------------------------------

// Sum / maximum over the 32 lanes of a full warp; every lane gets the result.
__device__ __forceinline__ float shortc_warp_sum(float v) {
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
    return v;
}
__device__ __forceinline__ float shortc_warp_max(float v) {
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
    return v;
}

// Sum over the whole block (blockDim.x a multiple of 32, at most 1024);
// every thread gets the result. `scratch` is __shared__ float[32]. Must be
// reached by all threads of the block; may be called repeatedly.
__device__ __forceinline__ float shortc_block_sum(float v, float *scratch) {
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    const int nwarps = blockDim.x >> 5;
    v = shortc_warp_sum(v);
    __syncthreads();                 // scratch may still be read by a previous call
    if (lane == 0) scratch[warp] = v;
    __syncthreads();
    v = lane < nwarps ? scratch[lane] : 0.0f;
    return shortc_warp_sum(v);       // every warp reduces the partial sums itself
}

// ---------------------------------------------------------------------------
// Vector access (elementwise, norm and embedding kernels): VEC consecutive
// elements of T moved as whole 16-byte pieces (uint4: one 128-bit load or
// store each) when VEC * sizeof(T) >= 16, else as one narrower access.
// The address must be aligned to min(16, VEC * sizeof(T)) bytes; the emitter
// picks VEC so that every row start is (docs/emission.md, "Vector access").
// Standard CUDA C++ only, so the simulator compiles it as it is.
//
//   shortc_ld_vec<VEC>(const T *p, float out[VEC])   load VEC elements as floats
//   shortc_st_vec<VEC>(T *p, const float v[VEC])     store VEC floats, each rounded to nearest even
//   shortc_round<T>(float v)                         v rounded to T's precision (as a store and load would)
// ---------------------------------------------------------------------------

// An unsigned type of BYTES bytes (2, 4, 8 or 16) to move raw element bits in.
template <int BYTES> struct shortc_raw;
template <> struct shortc_raw<2> { typedef unsigned short type; };
template <> struct shortc_raw<4> { typedef unsigned type; };
template <> struct shortc_raw<8> { typedef uint2 type; };
template <> struct shortc_raw<16> { typedef uint4 type; };

// Bytes moved by one access of a VEC-element vector of T: 16 at most.
template <int VEC, typename T> struct shortc_vec_chunk {
    static constexpr int BYTES = VEC * (int)sizeof(T) < 16 ? VEC * (int)sizeof(T) : 16;
    static constexpr int ELEMS = BYTES / (int)sizeof(T);   // elements per access
    static constexpr int COUNT = VEC / ELEMS;              // accesses per vector
    typedef typename shortc_raw<BYTES>::type Raw;
};

template <int VEC, typename T> __device__ __forceinline__ void shortc_ld_vec(const T *p, float *out) {
    typedef shortc_vec_chunk<VEC, T> C;
#pragma unroll
    for (int k = 0; k < C::COUNT; k++) {
        const typename C::Raw raw = reinterpret_cast<const typename C::Raw *>(p)[k];
        const T *e = reinterpret_cast<const T *>(&raw);
#pragma unroll
        for (int j = 0; j < C::ELEMS; j++) out[k * C::ELEMS + j] = shortc_ld(e + j);
    }
}

template <int VEC, typename T> __device__ __forceinline__ void shortc_st_vec(T *p, const float *v) {
    typedef shortc_vec_chunk<VEC, T> C;
#pragma unroll
    for (int k = 0; k < C::COUNT; k++) {
        typename C::Raw raw;
        T *e = reinterpret_cast<T *>(&raw);
#pragma unroll
        for (int j = 0; j < C::ELEMS; j++) shortc_st(e + j, v[k * C::ELEMS + j]);
        reinterpret_cast<typename C::Raw *>(p)[k] = raw;
    }
}

template <typename T> __device__ __forceinline__ float shortc_round(float v) {
    T r;
    shortc_st(&r, v);
    return shortc_ld(&r);
}
