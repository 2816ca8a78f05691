// Shared-memory hazards that checked mode (the default of `shortc sim`) must
// report, and one kernel that must pass (tests/cmake/simbench.cmake,
// docs/simulator.md "What is reported"). Blocks of 64 threads, x of 64 floats.

// A read of what another thread wrote with no __syncthreads() between (read after write).
__global__ void race_raw(float *x) {
    __shared__ float s[64];
    int i = threadIdx.x;
    s[i] = x[i];
    x[i] = i > 0 ? s[i - 1] : 0.0f;
}
// A write over what another thread read with no __syncthreads() between (write after read).
__global__ void race_war(float *x) {
    __shared__ float s[65];
    int i = threadIdx.x;
    s[i] = x[i];
    if (i == 0) s[64] = 0.0f;
    __syncthreads();
    float v = s[i + 1];
    s[i] = v;
    __syncthreads();
    x[i] = s[i];
}
// Two threads write one word in the same barrier interval (write after write).
__global__ void race_waw(float *x) {
    extern __shared__ float d[];
    int i = threadIdx.x;
    d[i / 2] = x[i];
    __syncthreads();
    x[i] = d[i / 2];
}
// Half the threads fill the array; every thread reads its own element.
__global__ void uninit_read(float *x) {
    __shared__ float s[64];
    int i = threadIdx.x;
    if (i < 32) s[i] = x[i];
    __syncthreads();
    x[i] = s[i];
}
// Lanes 0-15 shuffle with mask 0x0000ffff but read lanes 16-31.
__global__ void shuffle_outside_mask(float *x) {
    int i = threadIdx.x;
    float v = x[i];
    if ((i & 31) < 16) v = __shfl_sync(0x0000ffffu, v, (i & 31) + 16);
    x[i] = v;
}
// One float past a 33-float static array: inside its 16-byte rounding.
__global__ void static_rounding(float *x) {
    __shared__ float s[33];
    int i = threadIdx.x;
    if (i <= 33) s[i] = x[i];
    __syncthreads();
    x[0] = s[0];
}
// No hazard: atomics race only with plain accesses, __syncwarp orders a
// warp's lanes, a shuffle reads lanes in its mask. x comes back unchanged.
__global__ void race_free(float *x) {
    __shared__ float s[64];
    __shared__ int count;
    int i = threadIdx.x;
    if (i == 0) count = 0;
    __syncthreads();
    atomicAdd(&count, 1);
    s[i] = x[i];
    __syncwarp();
    float v = s[i ^ 1];
    __syncthreads();
    float w = __shfl_xor_sync(0xffffffffu, v, 1);
    if (count == 64) x[i] = w;
}
