/* Fixture for the NVRTC gate: a kernel that keeps 64 values live across a
 * loop. Compiled with --maxrregcount=32 it must spill, and the gate must fail. */
// from spill.arch:3 (deliberately register-hungry)
extern "C" __global__ void shortc_spill_fixture(const float *__restrict__ x, float *__restrict__ y, int n) {
    float v[64];
#pragma unroll
    for (int i = 0; i < 64; i++) v[i] = x[i * n + threadIdx.x];
    for (int r = 0; r < n; r++) {
#pragma unroll
        for (int i = 0; i < 64; i++) v[i] = v[i] * v[(i + 1) & 63] + v[(i + 7) & 63];
    }
    float s = 0.0f;
#pragma unroll
    for (int i = 0; i < 64; i++) s += v[i] * (float)i;
    y[threadIdx.x] = s;
}
