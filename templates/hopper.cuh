// ---------------------------------------------------------------------------
// shortc Hopper intrinsics (sm_90a): warpgroup MMA, TMA and mbarriers.
//
// Pasted after templates/prelude.cuh (and only for kernels that use it) as
// mma_frag.cuh is. Under a CUDA compiler it defines the names below with
// inline PTX (wgmma needs sm_90a: other targets trap); anywhere else the
// simulator's definitions in shortsim_prelude.h serve, with the checks of
// docs/attention/hopper.md. Kernels use only these names and standard CUDA.
//
// Warpgroup MMA (all 128 threads of a warpgroup, threads 128g..128g+127, together):
//   shortc_wgmma_acc<N>                     the thread's N/2 fp32 accumulators of a 64 x N tile; acc[i] is
//                                           row 16*warp + lane/4 + 8*((i%4)/2), column 8*(i/4) + 2*(lane%4) + i%2
//   uint64_t shortc_wgmma_desc(smem, swizzle_bytes, lbo, sbo)   shared-memory matrix descriptor (0/32/64/128)
//   shortc_wgmma_fence()                    wgmma.fence: before the first MMA and after touching accumulators
//   shortc_wgmma_ss_f16<N, TA, TB>(acc, desc_a, desc_b, scale_d)   acc = A*B (+ acc when scale_d), A 64x16 and
//   shortc_wgmma_ss_bf16<N, TA, TB>(...)    B 16xN in shared memory (TA/TB: 1 = MN-major, transposed)
//   shortc_wgmma_rs_f16<N, TB>(acc, a, desc_b, scale_d)    A from registers (a[4]: the mma.m16n8k16 A fragment
//   shortc_wgmma_rs_bf16<N, TB>(...)        of the warp's 16 rows)
//   shortc_wgmma_commit()                   closes the group of MMAs issued so far
//   shortc_wgmma_wait<K>()                  waits until at most K groups are pending
//   shortc_wgmma_fence_acc(acc)             keeps the compiler from moving accumulator uses across a wait
// mbarriers (8 bytes of shared memory):
//   shortc_mbar_init(bar, count)            count arrivals complete a phase (with no transaction bytes due)
//   shortc_mbar_arrive(bar) / shortc_mbar_arrive_expect_tx(bar, bytes) / shortc_mbar_expect_tx(bar, bytes)
//   bool shortc_mbar_try_wait(bar, parity)  true once the phase of that parity has completed
//   shortc_mbar_wait(bar, parity)           spins on try_wait
// TMA (tensor maps from cuTensorMapEncodeTiled, kernel parameters `const __grid_constant__ shortc_tensor_map`):
//   shortc_tma_load_2d(smem, &map, bar, c0, c1) / _3d(..., c2)   box at (c0 innermost, c1, c2) -> smem, completing
//                                           its bytes on bar (arrive_expect_tx the box bytes first)
//   shortc_tma_store_2d(&map, smem, c0, c1) / _3d(..., c2)   smem -> box; then shortc_tma_store_commit() and
//   shortc_tma_store_wait<K>()
//   shortc_fence_proxy_async()              orders this thread's shared-memory stores before async-proxy reads
//                                           (wgmma operands, TMA stores)
//   shortc_setmaxnreg_inc<R>() / _dec<R>()  register budget of the warpgroup (R: 24..256, a multiple of 8)
// ---------------------------------------------------------------------------
#if defined(__CUDACC__)
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define SHORTC_SM90A 1
#endif
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define SHORTC_SM90 1
#endif

// A CUtensorMap as a kernel parameter (128 bytes, 64-byte aligned; NVRTC has no <cuda.h>).
struct __align__(64) shortc_tensor_map {
    unsigned long long opaque[16];
};

template <int N> struct shortc_wgmma_acc {
    static_assert(N == 8 || N == 16 || N == 32 || N == 64 || N == 128 || N == 256, "wgmma N: 8, 16, ..., 256");
    float v[N / 2];
    __device__ __forceinline__ float &operator[](int i) { return v[i]; }
    __device__ __forceinline__ const float &operator[](int i) const { return v[i]; }
};

__device__ __forceinline__ unsigned shortc_smem_u32(const void *p) { return (unsigned)__cvta_generic_to_shared(p); }

// Descriptor: start address >> 4 (bits 0-13), leading byte offset >> 4 (16-29), stride byte offset >> 4
// (32-45), base offset 0, layout (62-63: 1 = 128-byte swizzle, 2 = 64, 3 = 32, 0 = none).
__device__ __forceinline__ unsigned long long shortc_wgmma_desc(const void *smem, int swizzle_bytes, unsigned lbo,
                                                                unsigned sbo) {
    const unsigned long long mode = swizzle_bytes == 128 ? 1 : swizzle_bytes == 64 ? 2 : swizzle_bytes == 32 ? 3 : 0;
    return (unsigned long long)((shortc_smem_u32(smem) & 0x3ffff) >> 4) |
           (unsigned long long)((lbo & 0x3ffff) >> 4) << 16 | (unsigned long long)((sbo & 0x3ffff) >> 4) << 32 |
           mode << 62;
}

__device__ __forceinline__ void shortc_wgmma_fence() {
#if defined(SHORTC_SM90A)
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#else
    __trap();
#endif
}
__device__ __forceinline__ void shortc_wgmma_commit() {
#if defined(SHORTC_SM90A)
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
#endif
}
template <int K> __device__ __forceinline__ void shortc_wgmma_wait() {
#if defined(SHORTC_SM90A)
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(K) : "memory");
#endif
}
template <int N> __device__ __forceinline__ void shortc_wgmma_fence_acc(shortc_wgmma_acc<N> &d) {
#pragma unroll
    for (int i = 0; i < N / 2; i++) asm volatile("" : "+f"(d.v[i])::"memory");
}

// wgmma accumulator operand lists per N (generated: N/2 fp32 registers per thread).
#define SHORTC_WGMMA_REGS_8 \
    "%0, %1, %2, %3"
#define SHORTC_WGMMA_OUTS_8(d) \
    "+f"(d.v[0]), "+f"(d.v[1]), "+f"(d.v[2]), "+f"(d.v[3])
#define SHORTC_WGMMA_SS_TAIL_8 "%4, %5, p, 1, 1, %7, %8;\n"
#define SHORTC_WGMMA_SS_PRED_8 "setp.ne.b32 p, %6, 0;\n"
#define SHORTC_WGMMA_RS_TAIL_8 "{%4, %5, %6, %7}, %8, p, 1, 1, %10;\n"
#define SHORTC_WGMMA_RS_PRED_8 "setp.ne.b32 p, %9, 0;\n"
#define SHORTC_WGMMA_REGS_16 \
    "%0, %1, %2, %3, %4, %5, %6, %7"
#define SHORTC_WGMMA_OUTS_16(d) \
    "+f"(d.v[0]), "+f"(d.v[1]), "+f"(d.v[2]), "+f"(d.v[3]), "+f"(d.v[4]), "+f"(d.v[5]), \
    "+f"(d.v[6]), "+f"(d.v[7])
#define SHORTC_WGMMA_SS_TAIL_16 "%8, %9, p, 1, 1, %11, %12;\n"
#define SHORTC_WGMMA_SS_PRED_16 "setp.ne.b32 p, %10, 0;\n"
#define SHORTC_WGMMA_RS_TAIL_16 "{%8, %9, %10, %11}, %12, p, 1, 1, %14;\n"
#define SHORTC_WGMMA_RS_PRED_16 "setp.ne.b32 p, %13, 0;\n"
#define SHORTC_WGMMA_REGS_32 \
    "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15"
#define SHORTC_WGMMA_OUTS_32(d) \
    "+f"(d.v[0]), "+f"(d.v[1]), "+f"(d.v[2]), "+f"(d.v[3]), "+f"(d.v[4]), "+f"(d.v[5]), \
    "+f"(d.v[6]), "+f"(d.v[7]), "+f"(d.v[8]), "+f"(d.v[9]), "+f"(d.v[10]), "+f"(d.v[11]), \
    "+f"(d.v[12]), "+f"(d.v[13]), "+f"(d.v[14]), "+f"(d.v[15])
#define SHORTC_WGMMA_SS_TAIL_32 "%16, %17, p, 1, 1, %19, %20;\n"
#define SHORTC_WGMMA_SS_PRED_32 "setp.ne.b32 p, %18, 0;\n"
#define SHORTC_WGMMA_RS_TAIL_32 "{%16, %17, %18, %19}, %20, p, 1, 1, %22;\n"
#define SHORTC_WGMMA_RS_PRED_32 "setp.ne.b32 p, %21, 0;\n"
#define SHORTC_WGMMA_REGS_64 \
    "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
#define SHORTC_WGMMA_OUTS_64(d) \
    "+f"(d.v[0]), "+f"(d.v[1]), "+f"(d.v[2]), "+f"(d.v[3]), "+f"(d.v[4]), "+f"(d.v[5]), \
    "+f"(d.v[6]), "+f"(d.v[7]), "+f"(d.v[8]), "+f"(d.v[9]), "+f"(d.v[10]), "+f"(d.v[11]), \
    "+f"(d.v[12]), "+f"(d.v[13]), "+f"(d.v[14]), "+f"(d.v[15]), "+f"(d.v[16]), "+f"(d.v[17]), \
    "+f"(d.v[18]), "+f"(d.v[19]), "+f"(d.v[20]), "+f"(d.v[21]), "+f"(d.v[22]), "+f"(d.v[23]), \
    "+f"(d.v[24]), "+f"(d.v[25]), "+f"(d.v[26]), "+f"(d.v[27]), "+f"(d.v[28]), "+f"(d.v[29]), \
    "+f"(d.v[30]), "+f"(d.v[31])
#define SHORTC_WGMMA_SS_TAIL_64 "%32, %33, p, 1, 1, %35, %36;\n"
#define SHORTC_WGMMA_SS_PRED_64 "setp.ne.b32 p, %34, 0;\n"
#define SHORTC_WGMMA_RS_TAIL_64 "{%32, %33, %34, %35}, %36, p, 1, 1, %38;\n"
#define SHORTC_WGMMA_RS_PRED_64 "setp.ne.b32 p, %37, 0;\n"
#define SHORTC_WGMMA_REGS_128 \
    "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, " \
    "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
    "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
#define SHORTC_WGMMA_OUTS_128(d) \
    "+f"(d.v[0]), "+f"(d.v[1]), "+f"(d.v[2]), "+f"(d.v[3]), "+f"(d.v[4]), "+f"(d.v[5]), \
    "+f"(d.v[6]), "+f"(d.v[7]), "+f"(d.v[8]), "+f"(d.v[9]), "+f"(d.v[10]), "+f"(d.v[11]), \
    "+f"(d.v[12]), "+f"(d.v[13]), "+f"(d.v[14]), "+f"(d.v[15]), "+f"(d.v[16]), "+f"(d.v[17]), \
    "+f"(d.v[18]), "+f"(d.v[19]), "+f"(d.v[20]), "+f"(d.v[21]), "+f"(d.v[22]), "+f"(d.v[23]), \
    "+f"(d.v[24]), "+f"(d.v[25]), "+f"(d.v[26]), "+f"(d.v[27]), "+f"(d.v[28]), "+f"(d.v[29]), \
    "+f"(d.v[30]), "+f"(d.v[31]), "+f"(d.v[32]), "+f"(d.v[33]), "+f"(d.v[34]), "+f"(d.v[35]), \
    "+f"(d.v[36]), "+f"(d.v[37]), "+f"(d.v[38]), "+f"(d.v[39]), "+f"(d.v[40]), "+f"(d.v[41]), \
    "+f"(d.v[42]), "+f"(d.v[43]), "+f"(d.v[44]), "+f"(d.v[45]), "+f"(d.v[46]), "+f"(d.v[47]), \
    "+f"(d.v[48]), "+f"(d.v[49]), "+f"(d.v[50]), "+f"(d.v[51]), "+f"(d.v[52]), "+f"(d.v[53]), \
    "+f"(d.v[54]), "+f"(d.v[55]), "+f"(d.v[56]), "+f"(d.v[57]), "+f"(d.v[58]), "+f"(d.v[59]), \
    "+f"(d.v[60]), "+f"(d.v[61]), "+f"(d.v[62]), "+f"(d.v[63])
#define SHORTC_WGMMA_SS_TAIL_128 "%64, %65, p, 1, 1, %67, %68;\n"
#define SHORTC_WGMMA_SS_PRED_128 "setp.ne.b32 p, %66, 0;\n"
#define SHORTC_WGMMA_RS_TAIL_128 "{%64, %65, %66, %67}, %68, p, 1, 1, %70;\n"
#define SHORTC_WGMMA_RS_PRED_128 "setp.ne.b32 p, %69, 0;\n"
#define SHORTC_WGMMA_REGS_256 \
    "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, " \
    "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
    "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, " \
    "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, " \
    "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, " \
    "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, " \
    "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
#define SHORTC_WGMMA_OUTS_256(d) \
    "+f"(d.v[0]), "+f"(d.v[1]), "+f"(d.v[2]), "+f"(d.v[3]), "+f"(d.v[4]), "+f"(d.v[5]), \
    "+f"(d.v[6]), "+f"(d.v[7]), "+f"(d.v[8]), "+f"(d.v[9]), "+f"(d.v[10]), "+f"(d.v[11]), \
    "+f"(d.v[12]), "+f"(d.v[13]), "+f"(d.v[14]), "+f"(d.v[15]), "+f"(d.v[16]), "+f"(d.v[17]), \
    "+f"(d.v[18]), "+f"(d.v[19]), "+f"(d.v[20]), "+f"(d.v[21]), "+f"(d.v[22]), "+f"(d.v[23]), \
    "+f"(d.v[24]), "+f"(d.v[25]), "+f"(d.v[26]), "+f"(d.v[27]), "+f"(d.v[28]), "+f"(d.v[29]), \
    "+f"(d.v[30]), "+f"(d.v[31]), "+f"(d.v[32]), "+f"(d.v[33]), "+f"(d.v[34]), "+f"(d.v[35]), \
    "+f"(d.v[36]), "+f"(d.v[37]), "+f"(d.v[38]), "+f"(d.v[39]), "+f"(d.v[40]), "+f"(d.v[41]), \
    "+f"(d.v[42]), "+f"(d.v[43]), "+f"(d.v[44]), "+f"(d.v[45]), "+f"(d.v[46]), "+f"(d.v[47]), \
    "+f"(d.v[48]), "+f"(d.v[49]), "+f"(d.v[50]), "+f"(d.v[51]), "+f"(d.v[52]), "+f"(d.v[53]), \
    "+f"(d.v[54]), "+f"(d.v[55]), "+f"(d.v[56]), "+f"(d.v[57]), "+f"(d.v[58]), "+f"(d.v[59]), \
    "+f"(d.v[60]), "+f"(d.v[61]), "+f"(d.v[62]), "+f"(d.v[63]), "+f"(d.v[64]), "+f"(d.v[65]), \
    "+f"(d.v[66]), "+f"(d.v[67]), "+f"(d.v[68]), "+f"(d.v[69]), "+f"(d.v[70]), "+f"(d.v[71]), \
    "+f"(d.v[72]), "+f"(d.v[73]), "+f"(d.v[74]), "+f"(d.v[75]), "+f"(d.v[76]), "+f"(d.v[77]), \
    "+f"(d.v[78]), "+f"(d.v[79]), "+f"(d.v[80]), "+f"(d.v[81]), "+f"(d.v[82]), "+f"(d.v[83]), \
    "+f"(d.v[84]), "+f"(d.v[85]), "+f"(d.v[86]), "+f"(d.v[87]), "+f"(d.v[88]), "+f"(d.v[89]), \
    "+f"(d.v[90]), "+f"(d.v[91]), "+f"(d.v[92]), "+f"(d.v[93]), "+f"(d.v[94]), "+f"(d.v[95]), \
    "+f"(d.v[96]), "+f"(d.v[97]), "+f"(d.v[98]), "+f"(d.v[99]), "+f"(d.v[100]), "+f"(d.v[101]), \
    "+f"(d.v[102]), "+f"(d.v[103]), "+f"(d.v[104]), "+f"(d.v[105]), "+f"(d.v[106]), "+f"(d.v[107]), \
    "+f"(d.v[108]), "+f"(d.v[109]), "+f"(d.v[110]), "+f"(d.v[111]), "+f"(d.v[112]), "+f"(d.v[113]), \
    "+f"(d.v[114]), "+f"(d.v[115]), "+f"(d.v[116]), "+f"(d.v[117]), "+f"(d.v[118]), "+f"(d.v[119]), \
    "+f"(d.v[120]), "+f"(d.v[121]), "+f"(d.v[122]), "+f"(d.v[123]), "+f"(d.v[124]), "+f"(d.v[125]), \
    "+f"(d.v[126]), "+f"(d.v[127])
#define SHORTC_WGMMA_SS_TAIL_256 "%128, %129, p, 1, 1, %131, %132;\n"
#define SHORTC_WGMMA_SS_PRED_256 "setp.ne.b32 p, %130, 0;\n"
#define SHORTC_WGMMA_RS_TAIL_256 "{%128, %129, %130, %131}, %132, p, 1, 1, %134;\n"
#define SHORTC_WGMMA_RS_PRED_256 "setp.ne.b32 p, %133, 0;\n"

// wgmma.mma_async.sync.aligned.m64nNk16.f32.TY.TY with A and B in shared memory.
#define SHORTC_WGMMA_SS_ASM(N, TY, d, da, db, scale_d, TA, TB)                                              \
    asm volatile("{\n.reg .pred p;\n" SHORTC_WGMMA_SS_PRED_##N "wgmma.mma_async.sync.aligned.m64n" #N       \
                 "k16.f32." TY "." TY " {" SHORTC_WGMMA_REGS_##N "}, " SHORTC_WGMMA_SS_TAIL_##N "}\n"      \
                 : SHORTC_WGMMA_OUTS_##N(d)                                                               \
                 : "l"(da), "l"(db), "r"(scale_d), "n"(TA), "n"(TB))
// ... with A in registers.
#define SHORTC_WGMMA_RS_ASM(N, TY, d, a, db, scale_d, TB)                                                  \
    asm volatile("{\n.reg .pred p;\n" SHORTC_WGMMA_RS_PRED_##N "wgmma.mma_async.sync.aligned.m64n" #N       \
                 "k16.f32." TY "." TY " {" SHORTC_WGMMA_REGS_##N "}, " SHORTC_WGMMA_RS_TAIL_##N "}\n"      \
                 : SHORTC_WGMMA_OUTS_##N(d)                                                               \
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(scale_d), "n"(TB))

// One instance per N, element type and operand source (the PTX names N in the opcode).
#define SHORTC_WGMMA_DEFINE(N)                                                                             \
    template <int TA, int TB> struct shortc_wgmma_ss<N, TA, TB> {                                          \
        __device__ __forceinline__ static void f16(shortc_wgmma_acc<N> &d, unsigned long long da,          \
                                                   unsigned long long db, int scale_d) {                   \
            SHORTC_WGMMA_SS_ASM(N, "f16", d, da, db, scale_d, TA, TB);                                     \
        }                                                                                                  \
        __device__ __forceinline__ static void bf16(shortc_wgmma_acc<N> &d, unsigned long long da,         \
                                                    unsigned long long db, int scale_d) {                  \
            SHORTC_WGMMA_SS_ASM(N, "bf16", d, da, db, scale_d, TA, TB);                                    \
        }                                                                                                  \
    };                                                                                                     \
    template <int TB> struct shortc_wgmma_rs<N, TB> {                                                      \
        __device__ __forceinline__ static void f16(shortc_wgmma_acc<N> &d, const unsigned a[4],            \
                                                   unsigned long long db, int scale_d) {                   \
            SHORTC_WGMMA_RS_ASM(N, "f16", d, a, db, scale_d, TB);                                          \
        }                                                                                                  \
        __device__ __forceinline__ static void bf16(shortc_wgmma_acc<N> &d, const unsigned a[4],           \
                                                    unsigned long long db, int scale_d) {                  \
            SHORTC_WGMMA_RS_ASM(N, "bf16", d, a, db, scale_d, TB);                                         \
        }                                                                                                  \
    };
template <int N, int TA, int TB> struct shortc_wgmma_ss;
template <int N, int TB> struct shortc_wgmma_rs;
#if defined(SHORTC_SM90A)
SHORTC_WGMMA_DEFINE(8)
SHORTC_WGMMA_DEFINE(16)
SHORTC_WGMMA_DEFINE(32)
SHORTC_WGMMA_DEFINE(64)
SHORTC_WGMMA_DEFINE(128)
SHORTC_WGMMA_DEFINE(256)
#else
template <int N, int TA, int TB> struct shortc_wgmma_ss { // not sm_90a: wgmma does not exist
    __device__ __forceinline__ static void f16(shortc_wgmma_acc<N> &, unsigned long long, unsigned long long, int) {
        __trap();
    }
    __device__ __forceinline__ static void bf16(shortc_wgmma_acc<N> &, unsigned long long, unsigned long long, int) {
        __trap();
    }
};
template <int N, int TB> struct shortc_wgmma_rs {
    __device__ __forceinline__ static void f16(shortc_wgmma_acc<N> &, const unsigned *, unsigned long long, int) {
        __trap();
    }
    __device__ __forceinline__ static void bf16(shortc_wgmma_acc<N> &, const unsigned *, unsigned long long, int) {
        __trap();
    }
};
#endif
template <int N, int TA, int TB>
__device__ __forceinline__ void shortc_wgmma_ss_f16(shortc_wgmma_acc<N> &d, unsigned long long da, unsigned long long db,
                                                    int scale_d) {
    shortc_wgmma_ss<N, TA, TB>::f16(d, da, db, scale_d);
}
template <int N, int TA, int TB>
__device__ __forceinline__ void shortc_wgmma_ss_bf16(shortc_wgmma_acc<N> &d, unsigned long long da, unsigned long long db,
                                                     int scale_d) {
    shortc_wgmma_ss<N, TA, TB>::bf16(d, da, db, scale_d);
}
template <int N, int TB>
__device__ __forceinline__ void shortc_wgmma_rs_f16(shortc_wgmma_acc<N> &d, const unsigned a[4], unsigned long long db,
                                                    int scale_d) {
    shortc_wgmma_rs<N, TB>::f16(d, a, db, scale_d);
}
template <int N, int TB>
__device__ __forceinline__ void shortc_wgmma_rs_bf16(shortc_wgmma_acc<N> &d, const unsigned a[4], unsigned long long db,
                                                     int scale_d) {
    shortc_wgmma_rs<N, TB>::bf16(d, a, db, scale_d);
}

// ---- mbarriers -------------------------------------------------------------
#if defined(SHORTC_SM90)
__device__ __forceinline__ void shortc_mbar_init(unsigned long long *bar, unsigned count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(shortc_smem_u32(bar)), "r"(count) : "memory");
}
__device__ __forceinline__ void shortc_mbar_arrive(unsigned long long *bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(shortc_smem_u32(bar)) : "memory");
}
__device__ __forceinline__ void shortc_mbar_arrive_expect_tx(unsigned long long *bar, unsigned bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(shortc_smem_u32(bar)), "r"(bytes)
                 : "memory");
}
__device__ __forceinline__ void shortc_mbar_expect_tx(unsigned long long *bar, unsigned bytes) {
    asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;\n" ::"r"(shortc_smem_u32(bar)), "r"(bytes)
                 : "memory");
}
__device__ __forceinline__ bool shortc_mbar_try_wait(unsigned long long *bar, unsigned parity) {
    unsigned ok;
    asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
                 : "=r"(ok)
                 : "r"(shortc_smem_u32(bar)), "r"(parity)
                 : "memory");
    return ok != 0;
}

// ---- TMA -------------------------------------------------------------------
__device__ __forceinline__ void shortc_tma_load_2d(void *smem, const shortc_tensor_map *map, unsigned long long *bar,
                                                   int c0, int c1) {
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], "
                 "[%4];\n" ::"r"(shortc_smem_u32(smem)), "l"(map), "r"(c0), "r"(c1), "r"(shortc_smem_u32(bar))
                 : "memory");
}
__device__ __forceinline__ void shortc_tma_load_3d(void *smem, const shortc_tensor_map *map, unsigned long long *bar,
                                                   int c0, int c1, int c2) {
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, "
                 "%4}], [%5];\n" ::"r"(shortc_smem_u32(smem)), "l"(map), "r"(c0), "r"(c1), "r"(c2),
                 "r"(shortc_smem_u32(bar))
                 : "memory");
}
__device__ __forceinline__ void shortc_tma_store_2d(const shortc_tensor_map *map, const void *smem, int c0, int c1) {
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%2, %3}], [%1];\n" ::"l"(map),
                 "r"(shortc_smem_u32(smem)), "r"(c0), "r"(c1)
                 : "memory");
}
__device__ __forceinline__ void shortc_tma_store_3d(const shortc_tensor_map *map, const void *smem, int c0, int c1,
                                                    int c2) {
    asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group [%0, {%2, %3, %4}], [%1];\n" ::"l"(map),
                 "r"(shortc_smem_u32(smem)), "r"(c0), "r"(c1), "r"(c2)
                 : "memory");
}
__device__ __forceinline__ void shortc_tma_store_commit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
template <int K> __device__ __forceinline__ void shortc_tma_store_wait() {
    asm volatile("cp.async.bulk.wait_group %0;\n" ::"n"(K) : "memory");
}
__device__ __forceinline__ void shortc_fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }
#else
__device__ __forceinline__ void shortc_mbar_init(unsigned long long *, unsigned) { __trap(); }
__device__ __forceinline__ void shortc_mbar_arrive(unsigned long long *) { __trap(); }
__device__ __forceinline__ void shortc_mbar_arrive_expect_tx(unsigned long long *, unsigned) { __trap(); }
__device__ __forceinline__ void shortc_mbar_expect_tx(unsigned long long *, unsigned) { __trap(); }
__device__ __forceinline__ bool shortc_mbar_try_wait(unsigned long long *, unsigned) { __trap(); return false; }
__device__ __forceinline__ void shortc_tma_load_2d(void *, const shortc_tensor_map *, unsigned long long *, int, int) {
    __trap();
}
__device__ __forceinline__ void shortc_tma_load_3d(void *, const shortc_tensor_map *, unsigned long long *, int, int,
                                                   int) {
    __trap();
}
__device__ __forceinline__ void shortc_tma_store_2d(const shortc_tensor_map *, const void *, int, int) { __trap(); }
__device__ __forceinline__ void shortc_tma_store_3d(const shortc_tensor_map *, const void *, int, int, int) { __trap(); }
__device__ __forceinline__ void shortc_tma_store_commit() { __trap(); }
template <int K> __device__ __forceinline__ void shortc_tma_store_wait() { __trap(); }
__device__ __forceinline__ void shortc_fence_proxy_async() { __trap(); }
#endif
__device__ __forceinline__ void shortc_mbar_wait(unsigned long long *bar, unsigned parity) {
    while (!shortc_mbar_try_wait(bar, parity)) {
    }
}

// ---- register budget ---------------------------------------------------------
template <int R> __device__ __forceinline__ void shortc_setmaxnreg_inc() {
    static_assert(R >= 24 && R <= 256 && R % 8 == 0, "setmaxnreg: 24 to 256 registers, a multiple of 8");
#if defined(SHORTC_SM90A)
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(R));
#endif
}
template <int R> __device__ __forceinline__ void shortc_setmaxnreg_dec() {
    static_assert(R >= 24 && R <= 256 && R % 8 == 0, "setmaxnreg: 24 to 256 registers, a multiple of 8");
#if defined(SHORTC_SM90A)
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(R));
#endif
}
#endif // __CUDACC__
