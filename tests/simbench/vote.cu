// Warp votes in a 2-D block (16 x 4 threads: two warps spanning two rows
// each): per thread, the ballot, any and all of in > 0 over its warp.
__global__ void votes(unsigned *out, const int *in) {
    int t = threadIdx.y * blockDim.x + threadIdx.x;
    int g = blockIdx.x * blockDim.x * blockDim.y + t;
    int p = in[g] > 0;
    unsigned b = __ballot_sync(0xffffffffu, p);
    int a = __any_sync(0xffffffffu, p);
    int l = __all_sync(0xffffffffu, p);
    out[3 * g] = b;
    out[3 * g + 1] = (unsigned)a;
    out[3 * g + 2] = (unsigned)l;
}
