// Namespace-scope dynamic shared memory used through reinterpret_cast, the usual
// way to carve typed arrays out of one raw buffer (tests/cmake/simbench.cmake).
extern __shared__ __align__(16) unsigned char smem_raw[];
__global__ void ns_extern(float *x, int n) {
    float *f = reinterpret_cast<float *>(smem_raw);
    f[threadIdx.x] = 2.0f;
    __syncthreads();
    x[threadIdx.x] = f[(threadIdx.x + 1) % n] + (float)smem_raw[1] * 0.0f;
}
