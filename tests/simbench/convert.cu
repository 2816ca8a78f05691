// Round trips float -> half -> float and float -> bfloat16 -> float (round
// to nearest even), and half2 arithmetic.
#include <cuda_fp16.h>
#include <cuda_bf16.h>
__global__ void convert(float *out, const float *in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = in[i];
    out[i] = __half2float(__float2half(x));
    out[n + i] = __bfloat162float(__float2bfloat16(x));
    __half2 h = __floats2half2_rn(x, 2.0f);
    __half2 s = __hadd2(h, h);
    out[2 * n + i] = __low2float(s);
}
