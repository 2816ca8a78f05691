/* SHORTC-PLAN-BEGIN
{"format": "shortc-plan", "version": 1, "model": "x", "source": "x.arch",
 "config": {"vocab": 8, "segment": 4}, "arena_bytes": 512, "tokens": {"arena": 0},
 "logits": {"arena": 256, "dtype": "f32", "shape": [{"t": 1}, 8]}, "weights": [], "state": [],
 "kernels": [{"name": "shortc_scale_f32", "barriers": false, "line": 12, "uses": 1, "params": ["ptr", "ptr", "int", "float"]}],
 "steps": [{"op": "launch", "kernel": "shortc_scale_f32", "grid": [{"t": 1}, 1, 1], "block": [64, 1, 1], "smem": 0,
            "args": [{"arena": 0}, {"arena": 256}, {"int": {"t": 1}}, {"float": 0.5}], "line": 12, "layer": -1}]}
SHORTC-PLAN-END */
// Fixture: a plan of version 1 (an older shortc: one "steps" list, no scalars, constants or programs).
// Both the checker and the runtime refuse it with the same clear message.

// from x.arch:12 (scale 0.5)
extern "C" __global__ void shortc_scale_f32(const float *x, float *y, int T, float s) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < T) y[i] = x[i] * s;
}
