// Hand-written kernels for the simulator tests (tests/sim/test_kernels.c).
// The harness pastes templates/prelude.cuh in front, as the emitter does,
// compiles the result through the simulator's compile_module and launches
// the kernels through the RtDriver table. Standard CUDA C++ only, so the
// same file would run on a GPU.

// y = a*x: barrier-free, the fast path.
extern "C" __global__ void k_scale(float *y, const float *x, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i];
}

// Tree reduction in shared memory with __syncthreads (blockDim.x == 256).
extern "C" __global__ void k_block_sum(float *out, const float *x, int n) {
    __shared__ float s[256];
    int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    s[t] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (int st = blockDim.x / 2; st > 0; st >>= 1) {
        if (t < st) s[t] += s[t + st];
        __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = s[0];
}

// The prelude's shuffle + barrier block reduction; every thread writes what it got.
extern "C" __global__ void k_prelude_sum(float *out, const float *x) {
    __shared__ float scratch[32];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = shortc_block_sum(x[i], scratch);
    float m = shortc_warp_max(x[i]);
    out[2 * i] = v;
    out[2 * i + 1] = m;
}

// Every shuffle kind and vote for one block of 64 threads; out is [9][64].
extern "C" __global__ void k_shuffles(int *out, int width, int src, int delta, int lanemask) {
    int t = threadIdx.x;
    int v = t * 10 + 1;
    out[0 * 64 + t] = __shfl_sync(0xffffffffu, v, src, width);
    out[1 * 64 + t] = __shfl_up_sync(0xffffffffu, v, delta, width);
    out[2 * 64 + t] = __shfl_down_sync(0xffffffffu, v, delta, width);
    out[3 * 64 + t] = __shfl_xor_sync(0xffffffffu, v, lanemask, width);
    out[4 * 64 + t] = (int)__ballot_sync(0xffffffffu, t % 3 == 0);
    out[5 * 64 + t] = __any_sync(0xffffffffu, t == 40);
    out[6 * 64 + t] = __all_sync(0xffffffffu, t < 40);
    float f = __shfl_xor_sync(0xffffffffu, (float)t + 0.25f, 1);
    out[7 * 64 + t] = (int)(f * 4.0f);
    unsigned u = __shfl_down_sync(0xffffffffu, 0x80000000u + (unsigned)t, 1);
    __syncwarp();
    out[8 * 64 + t] = (int)(u - 0x80000000u);
}

// Two half-warps shuffling with disjoint masks at the same time (32 threads).
extern "C" __global__ void k_halfwarps(int *out) {
    int t = threadIdx.x;
    unsigned m = t < 16 ? 0x0000ffffu : 0xffff0000u;
    int a = __shfl_xor_sync(m, t, 1);
    int b = __popc(__ballot_sync(m, t & 1));
    out[t] = a + 100 * b;
}

// Warp 0 leaves before warp 1 shuffles: the plain loop converts at thread 32.
extern "C" __global__ void k_late_collective(int *out) {
    if (threadIdx.x < 32) {
        out[threadIdx.x] = -1;
        return;
    }
    out[threadIdx.x] = __shfl_xor_sync(0xffffffffu, (int)threadIdx.x, 1);
}

// Threads at two different barriers.
extern "C" __global__ void k_div_barrier(float *x) {
    if (threadIdx.x < 5) {
        x[threadIdx.x] = 1.0f;
        __syncthreads();
    } else {
        __syncthreads();
        x[threadIdx.x] = 2.0f;
    }
}

// Thread 3 returns while the others wait at the barrier.
extern "C" __global__ void k_exit_wait(float *x) {
    if (threadIdx.x == 3) return;
    __syncthreads();
    x[threadIdx.x] = 1.0f;
}

// Thread 0 returns before anyone reaches the barrier.
extern "C" __global__ void k_exit_first(float *x) {
    if (threadIdx.x == 0) return;
    __syncthreads();
    x[threadIdx.x] = 1.0f;
}

// Lane 7 returns while its warp shuffles with a full mask.
extern "C" __global__ void k_warp_exit(float *x) {
    if (threadIdx.x == 7) return;
    x[threadIdx.x] = __shfl_xor_sync(0xffffffffu, 1.0f, 1);
}

// Half the warp votes with __ballot_sync, the other half with __any_sync.
extern "C" __global__ void k_warp_mixed(int *x) {
    if (threadIdx.x < 16) x[threadIdx.x] = (int)__ballot_sync(0xffffffffu, 1);
    else x[threadIdx.x] = __any_sync(0xffffffffu, 1);
}

// Lane 0 of warp 1 reaches the barrier while lanes 1-31 of warp 1 wait for it in a shuffle.
extern "C" __global__ void k_bar_vs_warp(float *x) {
    if (threadIdx.x > 32) x[threadIdx.x] = __shfl_xor_sync(0xffffffffu, 1.0f, 1);
    __syncthreads();
}

// Copies without a bounds check: reads past the end of x when over-launched.
extern "C" __global__ void k_oob(float *y, const float *x) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    y[i] = x[i];
}

// Writes one element past the dynamic shared memory when asked to.
extern "C" __global__ void k_dyn_smem(float *out, int n, int overrun) {
    SHORTC_DYNAMIC_SMEM(float, buf);
    for (int i = threadIdx.x; i < n; i += blockDim.x) buf[i] = i * 2.0f + blockIdx.x;
    __syncthreads();
    for (int i = threadIdx.x; i < n; i += blockDim.x) out[blockIdx.x * n + i] = buf[n - 1 - i];
    if (overrun && threadIdx.x == 0) buf[n] = 1.0f;
}

// 40000 bytes of static shared memory (+ dynamic from the launch).
extern "C" __global__ void k_big_static(float *out) {
    __shared__ float big[10000];
    SHORTC_DYNAMIC_SMEM(float, dyn);
    big[threadIdx.x] = 1.0f;
    dyn[threadIdx.x] = 2.0f;
    __syncthreads();
    out[threadIdx.x] = big[(threadIdx.x + 1) % blockDim.x] + dyn[threadIdx.x];
}

// float -> half / bfloat16 -> float through the prelude's load/store helpers.
extern "C" __global__ void k_half_rt(__half *h, __nv_bfloat16 *b, float *fh, float *fb, const float *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    shortc_st(&h[i], x[i]);
    shortc_st(&b[i], x[i]);
    fh[i] = shortc_ld(&h[i]);
    fb[i] = shortc_ld(&b[i]);
}

extern "C" __global__ void k_atomics(int *cnt, float *fsum, unsigned *mx, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    atomicAdd(cnt, 1);
    atomicAdd(fsum, 1.0f);
    atomicMax(mx, (unsigned)i);
}

static __device__ __forceinline__ unsigned pack_half2(__half lo, __half hi) {
    unsigned short l, h;
    memcpy(&l, &lo, 2);
    memcpy(&h, &hi, 2);
    return (unsigned)l | ((unsigned)h << 16);
}

// One warp: D = A*B + C for A 16x16 row-major, B 16x8 stored column-major (B[n*16+k]),
// C and D 16x8 row-major. Fragments per the PTX ISA (m16n8k16, .f16 A/B, .f32 C/D).
// Also loads A's fragments with ldmatrix.x4 from shared memory; flags[l] = 1 when they match.
extern "C" __global__ void k_mma(float *D, const __half *A, const __half *B, const float *C, int *flags) {
    __shared__ __half As[16 * 16];
    int l = threadIdx.x, g = l >> 2, t = l & 3;
    for (int i = l; i < 256; i += 32) As[i] = A[i];
    __syncthreads();
    unsigned a[4], b[2];
    float c[4], d[4];
    a[0] = pack_half2(A[g * 16 + 2 * t], A[g * 16 + 2 * t + 1]);
    a[1] = pack_half2(A[(g + 8) * 16 + 2 * t], A[(g + 8) * 16 + 2 * t + 1]);
    a[2] = pack_half2(A[g * 16 + 2 * t + 8], A[g * 16 + 2 * t + 9]);
    a[3] = pack_half2(A[(g + 8) * 16 + 2 * t + 8], A[(g + 8) * 16 + 2 * t + 9]);
    b[0] = pack_half2(B[g * 16 + 2 * t], B[g * 16 + 2 * t + 1]);
    b[1] = pack_half2(B[g * 16 + 2 * t + 8], B[g * 16 + 2 * t + 9]);
    c[0] = C[g * 8 + 2 * t];
    c[1] = C[g * 8 + 2 * t + 1];
    c[2] = C[(g + 8) * 8 + 2 * t];
    c[3] = C[(g + 8) * 8 + 2 * t + 1];
    shortc_mma_m16n8k16_f16f32(d, a, b, c);
    D[g * 8 + 2 * t] = d[0];
    D[g * 8 + 2 * t + 1] = d[1];
    D[(g + 8) * 8 + 2 * t] = d[2];
    D[(g + 8) * 8 + 2 * t + 1] = d[3];
    // ldmatrix.x4: matrix 0 = rows 0-7 / cols 0-7, 1 = rows 8-15 / cols 0-7,
    // 2 = rows 0-7 / cols 8-15, 3 = rows 8-15 / cols 8-15: exactly a[0..3].
    unsigned r[4];
    int row = (l & 7) + 8 * ((l >> 3) & 1), col = 8 * (l >> 4);
    shortc_ldmatrix_x4(r, &As[row * 16 + col]);
    flags[l] = r[0] == a[0] && r[1] == a[1] && r[2] == a[2] && r[3] == a[3];
}

// 16x16 tiles through shared memory with 2-D blocks (16 x 8).
extern "C" __global__ void k_transpose(float *out, const float *in, int rows, int cols) {
    __shared__ float tile[16][17];
    int x = blockIdx.x * 16 + threadIdx.x, y = blockIdx.y * 16 + threadIdx.y;
    for (int j = 0; j < 16; j += 8)
        if (x < cols && y + j < rows) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * cols + x];
    __syncthreads();
    x = blockIdx.y * 16 + threadIdx.x;
    y = blockIdx.x * 16 + threadIdx.y;
    for (int j = 0; j < 16; j += 8)
        if (x < rows && y + j < cols) out[(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
}

// Row softmax, one block of 128 threads per row: shuffles, shared memory, barriers and
// transcendental math, for the determinism test.
extern "C" __global__ void k_softmax(float *y, const float *x, int cols) {
    __shared__ float scratch[32];
    const float *row = x + (size_t)blockIdx.x * cols;
    float m = -INFINITY;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, row[c]);
    m = shortc_warp_max(m);
    __shared__ float wmax[4];
    if ((threadIdx.x & 31) == 0) wmax[threadIdx.x >> 5] = m;
    __syncthreads();
    m = fmaxf(fmaxf(wmax[0], wmax[1]), fmaxf(wmax[2], wmax[3]));
    float s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) s += __expf(row[c] - m);
    s = shortc_block_sum(s, scratch);
    for (int c = threadIdx.x; c < cols; c += blockDim.x) y[(size_t)blockIdx.x * cols + c] = __expf(row[c] - m) / s;
}

extern "C" __global__ void k_assert(int *x) {
    assert(threadIdx.x != 5);
    x[threadIdx.x] = 1;
}

extern "C" __global__ void k_divzero(int *out, int d) { out[threadIdx.x] = 100 / (d + (int)threadIdx.x - 2); }

// __syncthreads_count/_and/_or.
extern "C" __global__ void k_bar_reduce(int *out) {
    int t = threadIdx.x;
    int c = __syncthreads_count(t % 3 == 0);
    int a = __syncthreads_and(t < 1000);
    int o = __syncthreads_or(t == 77);
    if (t == 0) {
        out[0] = c;
        out[1] = a;
        out[2] = o;
    }
}
