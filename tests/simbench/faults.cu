// Kernels the simulator must report (tests/cmake/simbench.cmake).
// A barrier only part of the block reaches.
__global__ void divergent_barrier(float *out) {
    if (threadIdx.x < 16) __syncthreads();
    out[threadIdx.x] = 1.0f;
}
// One element past a static shared array when launched with 33 threads.
__global__ void static_overrun(float *out) {
    __shared__ float s[32];
    s[threadIdx.x] = (float)threadIdx.x;
    __syncthreads();
    out[0] = s[0];
}
// Reads one element past the dynamic shared memory (n floats of it).
__global__ void dynamic_overrun(float *out, int n) {
    extern __shared__ float buf[];
    if (threadIdx.x < n) buf[threadIdx.x] = 1.0f;
    __syncthreads();
    if (threadIdx.x == 0) out[0] = buf[n];
}
// Writes x[i] for every thread: one past the end when over-launched.
__global__ void global_store(float *x) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    x[i] = 2.0f;
}
// Reads x[n] (one past the end of an n-element buffer).
__global__ void global_load(float *out, const float *x, int n) {
    out[0] = x[n];
}
// An aligned 16-byte vector load (GCC's vector type: movaps on x86-64) from
// a 1001-float buffer, which checked mode starts at a 4-byte boundary.
typedef float shortsim_v4 __attribute__((vector_size(16)));
__global__ void aligned_vector_load(float *out, const float *x) {
    shortsim_v4 a = reinterpret_cast<const shortsim_v4 *>(x)[threadIdx.x];
    shortsim_v4 b = reinterpret_cast<const shortsim_v4 *>(x)[threadIdx.x + 1];
    a = a * b;
    out[threadIdx.x] = a[0] + a[1] + a[2] + a[3];
}
// Two arrays in one declaration, 33 threads: one element past the first is reported (not a
// silent store into the second, as when the declaration fell back to thread-local storage).
__global__ void two_declarators(float *out) {
    __shared__ float a[32], b[32];
    if (threadIdx.x < 32) b[threadIdx.x] = 0.0f;
    a[threadIdx.x] = 1.0f;
    __syncthreads();
    out[0] = a[0] + b[0];
}
