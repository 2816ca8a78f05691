// Per-block sums through dynamic shared memory (sized by the launch). Two
// extern declarations alias the same buffer, as in CUDA: the block's count
// of positive inputs is kept as an int in the word after the sums.
#include <cuda_runtime.h>
extern __shared__ float partial[];
__global__ void block_sum(float *sums, float *counts, const float *in, int n) {
    extern __shared__ int words[];
    unsigned t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    float v = i < n ? in[i] : 0.0f;
    partial[t] = v;
    if (t == 0) words[blockDim.x] = 0;
    __syncthreads();
    if (v > 0.0f) atomicAdd(&words[blockDim.x], 1);
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (t < s) partial[t] += partial[t + s];
        __syncthreads();
    }
    if (t == 0) {
        sums[blockIdx.x] = partial[0];
        counts[blockIdx.x] = (float)words[blockDim.x];
    }
}
