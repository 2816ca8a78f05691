// A 64-bin histogram: atomics on a static shared-memory copy per block,
// merged into the global bins with atomics.
#define BINS 64
__global__ void histogram(unsigned *bins, const int *data, int n) {
    __shared__ unsigned local[BINS];
    for (int b = threadIdx.x; b < BINS; b += blockDim.x) local[b] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        atomicAdd(&local[data[i] & (BINS - 1)], 1u);
    __syncthreads();
    for (int b = threadIdx.x; b < BINS; b += blockDim.x) atomicAdd(&bins[b], local[b]);
}

#ifndef __SHORTSIM__
// Host code for nvcc; the simulator compiles device code only.
int main() {
    histogram<<<4, 128>>>(nullptr, nullptr, 0);
    return 0;
}
#endif
