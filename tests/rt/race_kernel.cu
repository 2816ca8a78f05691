// The victim's kernel of tests/rt/race_cache.c: any kernel will do.
__global__ void bump(float *x) { x[threadIdx.x] += 1.0f; }
