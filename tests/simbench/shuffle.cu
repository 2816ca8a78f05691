// Warp shuffles with segment widths: a butterfly sum over 8-lane segments,
// an inclusive scan over 16-lane segments, and a broadcast of lane 3 of each
// 8-lane segment. out holds the three results one after another.
__global__ void shuffles(float *out, const float *in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = in[i];
    float sum = v;
    for (int m = 1; m < 8; m <<= 1) sum += __shfl_xor_sync(0xffffffffu, sum, m, 8);
    float scan = v;
    int lane16 = threadIdx.x & 15;
    for (int d = 1; d < 16; d <<= 1) {
        float o = __shfl_up_sync(0xffffffffu, scan, d, 16);
        if (lane16 >= d) scan += o;
    }
    float b = __shfl_sync(0xffffffffu, v, 3, 8);
    out[i] = sum;
    out[n + i] = scan;
    out[2 * n + i] = b;
}
