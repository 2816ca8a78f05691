// Accesses just below an object, which checked mode must report at the
// exact byte (tests/cmake/simbench.cmake): the guard pages only catch
// overruns, these are caught by the per-access checks (docs/simulator.md).
// Thread 0 writes x[-1] (4 bytes before a buffer).
__global__ void global_underrun(float *x) {
    int i = (int)threadIdx.x - 1;
    x[i] = 2.0f;
}
// Thread 0 reads one byte before a buffer through a char pointer.
__global__ void global_byte_underrun(float *out, const char *x, int off) {
    out[0] = (float)x[off];
}
// Thread 0 writes s[-1] of a static shared array.
__global__ void static_underrun(float *out) {
    __shared__ float s[32];
    s[(int)threadIdx.x - 1] = (float)threadIdx.x;
    __syncthreads();
    out[0] = s[0];
}
// Thread 0 reads d[-1] of the dynamic shared memory.
__global__ void dynamic_underrun(float *out, int n) {
    extern __shared__ float d[];
    if (threadIdx.x < n) d[threadIdx.x] = 1.0f;
    __syncthreads();
    out[threadIdx.x] = d[(int)threadIdx.x - 1];
}
// Every access in bounds, read and written through every width the checks
// see (1, 2, 4, 8, 16 bytes and a struct copy): no report, exact result.
struct Triple {
    float a, b, c;
};
__global__ void in_bounds(float *x, int n) {
    __shared__ float s[33];
    extern __shared__ float d[];
    int i = threadIdx.x;
    s[i] = x[i];
    d[i] = s[i] + 1.0f;
    __syncthreads();
    if (i == 0) {
        unsigned char *b = reinterpret_cast<unsigned char *>(x);
        b[0] = b[0];
        unsigned short *h = reinterpret_cast<unsigned short *>(x);
        h[n * 2 - 1] = h[n * 2 - 1];
        double *g = reinterpret_cast<double *>(d);
        g[0] = g[0];
        Triple t = reinterpret_cast<Triple *>(s)[10];
        reinterpret_cast<Triple *>(s)[0] = t;
    }
    __syncthreads();
    x[i] = d[i] + s[(i + 32) % 33];
}
// atomicAdd on x[i] (the prelude's atomic: the report names this line, not the prelude's).
__global__ void atomic_underrun(float *x, int i) {
    atomicAdd(&x[i], 1.0f);
}
// A read followed by more statements: the report names the read's line (59), not the next one.
__global__ void multiline_underrun(float *a) {
    int t = threadIdx.x;
    float v = a[t - 1];
    v = v * 2.0f + 1.0f;
    a[t] = v;
}
