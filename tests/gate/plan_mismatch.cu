/* SHORTC-PLAN-BEGIN
{"format": "shortc-plan", "version": 2, "model": "x", "source": "x.arch",
 "kernels": [{"name": "shortc_scale_f32", "barriers": false, "line": 12, "uses": 1, "params": ["ptr", "ptr", "float", "int"]},
             {"name": "shortc_missing_f32", "barriers": false, "line": 14, "uses": 1, "params": []}],
 "programs": [{"name": "forward", "t": [1, 128], "steps": [{"op": "launch", "kernel": "shortc_scale_f32", "grid": [{"t": 1}, 1, 1], "block": [64, 1, 1], "smem": 0,
            "args": [{"arena": 0}, {"arena": 256}, {"float": 0.5}, {"int": {"t": 1}}], "line": 12, "layer": -1}]}]}
SHORTC-PLAN-END */
// Fixture for `shortc --check`: compiles cleanly, but the kernels do not
// match the plan: the launch passes (float, int) where the kernel takes
// (int, float) and the plan's "params" say (float, int), a plan kernel is missing, an extra kernel is not in the plan
// and is not extern "C", and one takes a double.

// from x.arch:12 (scale 0.5)
extern "C" __global__ void shortc_scale_f32(const float *x, float *y, int T, float s) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < T) y[i] = x[i] * s;
}

// from x.arch:13 (extra)
__global__ void shortc_extra_f32(float *y, double s) {
    y[threadIdx.x] *= (float)s;
}
