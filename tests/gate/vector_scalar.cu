// vector_scalar.cu — fixture of the vector gate's self-test (tests/gate/vector_gate.sh):
// a norm-named kernel that moves one half per thread, so its SASS has 16-bit
// global loads and no 128-bit one; the gate must reject it.
#include <cuda_fp16.h>

extern "C" __global__ void shortc_norm_scalar_fixture(const __half *__restrict__ x, __half *__restrict__ y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = __float2half(__half2float(x[i]) * 2.0f);
}
