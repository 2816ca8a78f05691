/* SHORTC-PLAN-BEGIN
{"format": "shortc-plan", "version": 2, "model": "x", "source": "x.arch",
 "kernels": [{"name": "shortc_scale_f32", "barriers": false, "line": 12, "uses": 1, "params": ["ptr", "ptr", "int", "float"]}],
 "programs": [{"name": "forward", "t": [1, 128], "steps": [{"op": "launch", "kernel": "shortc_scale_f32", "grid": [{"t": 1}, 1, 1], "block": [64, 1, 1], "smem": 0,
            "args": [{"arena": 0}, {"arena": 256}, {"int": {"t": 1}}, {"float": 0.5}], "line": 12, "layer": -1}]}]}
SHORTC-PLAN-END */
// Fixture for `shortc --check`: a type error inside a kernel must be reported
// at the .arch line of the `// from` comment above it (x.arch:12).
#if defined(__CUDACC__)
#include <cuda_fp16.h>
#else
#include "shortsim_prelude.h"
#endif

// from x.arch:12 (scale 0.5)
extern "C" __global__ void shortc_scale_f32(const float *x, float *y, int T, float s) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= T) return;
    __half *h = y;  /* error: float * does not convert to __half * */
    h[0] = x[i] * s;
}
