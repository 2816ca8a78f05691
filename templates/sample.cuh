//! sample.cuh — the next token of generation, drawn on the device from the
//! last logits row (the plan's "sample" program, docs/plan.md), so that a
//! decoding step copies one token id to the host instead of a row of V
//! logits. One block; the same algorithm, arithmetic and seeded stream as
//! the host sampler (runtime/src/sample.c, common/rng.c), so that a seed
//! gives the same tokens on both:
//!
//!   greedy (temperature 0 or top-k 1): the first largest logit (a block
//!     minimum of the keys below);
//!   otherwise: the candidates sorted by (logit descending, id ascending),
//!     as 64-bit keys (order-preserving logit bits, inverted, then the id):
//!     with top-k < V a radix select finds the k-th key (4-bit digits from
//!     the top, one counting pass per digit) and only the k keys up to it
//!     are kept and sorted; the sort is a stable LSD radix sort over the
//!     key's significant digits (the 32 logit bits and the ID_PASSES digits
//!     an id below V needs), each pass a per-thread count of a contiguous
//!     slice, one block scan and a scatter. Then weights
//!     exp((logit - top) / temperature) in double over the top-k, summed in
//!     order, cut to the smallest prefix whose mass reaches top_p · sum, and
//!     a splitmix64 uniform (53 bits) times that mass picks the first token
//!     whose running weight exceeds it.
//!
//! A row holding a NaN or an infinity draws nothing: the kernel writes
//! token -1 - i for the first such logit i and the runtime reports it, as
//! the host sampler does (docs/security.md).
//!
//! The runtime writes the parameter block (shortc_sample_params, the layout
//! of RtSampleParams in runtime/src/rt_internal.h) before the launch; the
//! kernel writes back the token and the advanced generator state.
//!
//! Placeholders: COMMENT KERNEL_NAME V ID_PASSES (4-bit digits of V - 1) THREADS
{{COMMENT}}
// Next-token sampling from the last logits row, one block (templates/sample.cuh).
struct shortc_sample_params {
    unsigned long long state;  // in/out: the splitmix64 state (common/rng.c)
    double temperature;        // 0: greedy
    double top_p;              // nucleus mass, 0 < top_p <= 1
    int top_k;                 // the most likely tokens kept (0: all)
    int token;                 // out: the token drawn; -1 - i when logit i is the first non-finite one
};

// The sort key of logit x of token id: ascending keys are descending logits, then ascending ids.
__device__ __forceinline__ unsigned long long shortc_sample_key(float x, int id) {
    if (x == 0.0f) x = 0.0f;  // -0 and +0 compare equal: one key
    unsigned bits = __float_as_uint(x);
    bits = (bits & 0x80000000u) ? ~bits : (bits | 0x80000000u);  // unsigned order = float order
    return ((unsigned long long)~bits << 32) | (unsigned)id;
}

// splitmix64 and its 53-bit uniform, as rt_splitmix64 and rt_rng_uniform (common/rng.c).
__device__ __forceinline__ double shortc_sample_uniform(unsigned long long *state) {
    unsigned long long z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (double)(z >> 11) * 0x1.0p-53;
}

enum { SHORTC_SAMPLE_DIGITS = 16 };  // radix 16: 4 bits per pass

// The calling thread's contiguous slice [*lo, *hi) of n items.
__device__ __forceinline__ void shortc_sample_slice(int n, int *lo, int *hi) {
    const int per = (n + (int)blockDim.x - 1) / (int)blockDim.x;
    const int l = (int)threadIdx.x * per;
    *lo = l < n ? l : n;
    *hi = l + per < n ? l + per : n;
}

// Exclusive block prefix sum of v (every thread calls); *total gets the sum. buf: [blockDim.x].
__device__ __forceinline__ unsigned shortc_sample_scan(unsigned v, unsigned *buf, unsigned *total) {
    const int t = threadIdx.x, nt = blockDim.x;
    buf[t] = v;
    __syncthreads();
    for (int off = 1; off < nt; off <<= 1) {
        const unsigned add = t >= off ? buf[t - off] : 0u;
        __syncthreads();
        buf[t] += add;
        __syncthreads();
    }
    const unsigned incl = buf[t];
    *total = buf[nt - 1];
    __syncthreads();
    return incl - v;
}

// The bit position of radix pass p: the id digits first (low), then the 8 digits of the logit bits.
__device__ __forceinline__ int shortc_sample_shift(int p, int id_passes) {
    return p < id_passes ? 4 * p : 32 + 4 * (p - id_passes);
}

// The k-th smallest (1-based) of the n distinct keys a (all threads call): one counting pass per digit,
// from the most significant, narrowing to the keys that share the digits found so far.
// count: [16 * blockDim.x], totals: [16], found/rem: one each (shared).
__device__ __forceinline__ unsigned long long shortc_sample_select(const unsigned long long *a, int n, int k,
                                                                   int id_passes, unsigned *count, unsigned *totals,
                                                                   unsigned long long *found, int *rem) {
    const int t = threadIdx.x, nt = blockDim.x;
    int lo, hi;
    shortc_sample_slice(n, &lo, &hi);
    unsigned long long prefix = 0, mask = 0;
    if (t == 0) *found = 0, *rem = k;
    for (int p = id_passes + 7; p >= 0; p--) {
        const int shift = shortc_sample_shift(p, id_passes);
        for (int d = 0; d < SHORTC_SAMPLE_DIGITS; d++) count[d * nt + t] = 0;  // this thread's column
        for (int i = lo; i < hi; i++)
            if ((a[i] & mask) == prefix) count[((a[i] >> shift) & 15u) * nt + t]++;
        __syncthreads();
        if (t < SHORTC_SAMPLE_DIGITS) {
            unsigned sum = 0;
            for (int j = 0; j < nt; j++) sum += count[t * nt + j];
            totals[t] = sum;
        }
        __syncthreads();
        if (t == 0) {
            int r = *rem, d = 0;
            while (d < SHORTC_SAMPLE_DIGITS - 1 && r > (int)totals[d]) r -= (int)totals[d++];
            *found |= (unsigned long long)d << shift;
            *rem = r;
        }
        __syncthreads();
        prefix = *found;
        mask |= 15ull << shift;
    }
    return prefix;
}

// Stable LSD radix sort of a[0, n) ascending over the significant digits, b[0, n) the other buffer;
// returns the one holding the result. count: [16 * blockDim.x], buf: [blockDim.x].
__device__ __forceinline__ unsigned long long *shortc_sample_sort(unsigned long long *a, unsigned long long *b, int n,
                                                                  int id_passes, unsigned *count, unsigned *buf) {
    const int t = threadIdx.x, nt = blockDim.x;
    int lo, hi;
    shortc_sample_slice(n, &lo, &hi);
    for (int p = 0; p < id_passes + 8; p++) {
        const int shift = shortc_sample_shift(p, id_passes);
        for (int d = 0; d < SHORTC_SAMPLE_DIGITS; d++) count[d * nt + t] = 0;  // this thread's column
        for (int i = lo; i < hi; i++) count[((a[i] >> shift) & 15u) * nt + t]++;
        __syncthreads();
        // exclusive scan of count in (digit, thread) order: this thread's 16 consecutive entries
        unsigned own = 0, total;
        for (int j = 0; j < SHORTC_SAMPLE_DIGITS; j++) own += count[t * SHORTC_SAMPLE_DIGITS + j];
        unsigned run = shortc_sample_scan(own, buf, &total);
        for (int j = 0; j < SHORTC_SAMPLE_DIGITS; j++) {
            const unsigned v = count[t * SHORTC_SAMPLE_DIGITS + j];
            count[t * SHORTC_SAMPLE_DIGITS + j] = run;
            run += v;
        }
        __syncthreads();
        for (int i = lo; i < hi; i++) b[count[((a[i] >> shift) & 15u) * nt + t]++] = a[i];  // in slice order: stable
        __syncthreads();
        unsigned long long *swap = a;
        a = b;
        b = swap;
    }
    return a;
}

// Moves the keys of a[0, n) not above thr to b, in order; returns how many (all threads call).
__device__ __forceinline__ int shortc_sample_compact(const unsigned long long *a, int n, unsigned long long thr,
                                                     unsigned long long *b, unsigned *buf) {
    int lo, hi;
    shortc_sample_slice(n, &lo, &hi);
    unsigned mine = 0, total;
    for (int i = lo; i < hi; i++) mine += a[i] <= thr;
    unsigned at = shortc_sample_scan(mine, buf, &total);
    for (int i = lo; i < hi; i++)
        if (a[i] <= thr) b[at++] = a[i];
    __syncthreads();
    return (int)total;
}

extern "C" __global__ void {{KERNEL_NAME}}(
    const float *__restrict__ logits,  // [T, V]: row T - 1 is sampled
    shortc_sample_params *__restrict__ params,  // in/out
    unsigned long long *__restrict__ keys,  // [2 V] scratch: the keys and the radix passes' other buffer
    double *__restrict__ prob,  // [V] scratch: the sorted tokens' weights
    int T)  // rows
{
    constexpr int V = {{V}};
    constexpr int ID_PASSES = {{ID_PASSES}};
    constexpr int THREADS = {{THREADS}};
    __shared__ unsigned long long least[THREADS];
    __shared__ unsigned count[SHORTC_SAMPLE_DIGITS * THREADS];
    __shared__ unsigned buf[THREADS];
    __shared__ unsigned totals[SHORTC_SAMPLE_DIGITS];
    __shared__ unsigned long long found;
    __shared__ int rem;
    const float *row = logits + (size_t)(T - 1) * V;
    const bool greedy = params->temperature == 0.0 || params->top_k == 1;
    unsigned long long mine = ~0ull;
    unsigned first_bad = V;  // this thread's first non-finite logit (all exponent bits set)
    for (int i = threadIdx.x; i < V; i += THREADS) {
        const unsigned long long k = shortc_sample_key(row[i], i);
        if ((__float_as_uint(row[i]) & 0x7f800000u) == 0x7f800000u && (unsigned)i < first_bad) first_bad = i;
        if (greedy) mine = k < mine ? k : mine;
        else keys[i] = k;
    }
    buf[threadIdx.x] = first_bad;  // the block's first (buf is free until the sort)
    __syncthreads();
    for (int half = THREADS / 2; half > 0; half >>= 1) {
        if ((int)threadIdx.x < half && buf[threadIdx.x + half] < buf[threadIdx.x]) buf[threadIdx.x] = buf[threadIdx.x + half];
        __syncthreads();
    }
    if (buf[0] < (unsigned)V) {
        if (threadIdx.x == 0) params->token = -1 - (int)buf[0];
        return;
    }
    if (greedy) {  // uniform over the block
        least[threadIdx.x] = mine;
        __syncthreads();
        for (int half = THREADS / 2; half > 0; half >>= 1) {
            if ((int)threadIdx.x < half && least[threadIdx.x + half] < least[threadIdx.x])
                least[threadIdx.x] = least[threadIdx.x + half];
            __syncthreads();
        }
        if (threadIdx.x == 0) params->token = (int)(unsigned)(least[0] & 0xffffffffu);
        return;
    }
    __syncthreads();
    const int k = params->top_k > 0 && params->top_k < V ? params->top_k : V;
    unsigned long long *sorted = keys, *other = keys + V;
    int n = V;
    if (k < V) {  // only the k largest logits are sorted
        const unsigned long long kth = shortc_sample_select(keys, V, k, ID_PASSES, count, totals, &found, &rem);
        n = shortc_sample_compact(keys, V, kth, other, buf);
        sorted = other, other = keys;
    }
    sorted = shortc_sample_sort(sorted, other, n, ID_PASSES, count, buf);
    const double top = (double)row[sorted[0] & 0xffffffffu], temperature = params->temperature;
    for (int i = threadIdx.x; i < k; i += THREADS) prob[i] = exp(((double)row[sorted[i] & 0xffffffffu] - top) / temperature);
    __syncthreads();
    if (threadIdx.x != 0) return;
    double sum = 0;
    for (int i = 0; i < k; i++) sum += prob[i];  // in order, as the host sums
    int keep = 0;
    double mass = 0;
    while (keep < k && (keep == 0 || mass < params->top_p * sum)) mass += prob[keep++];  // nucleus
    unsigned long long state = params->state;
    const double u = shortc_sample_uniform(&state) * mass;
    double acc = 0;
    int pick = keep - 1;
    for (int i = 0; i < keep; i++)
        if ((acc += prob[i]) > u) {
            pick = i;
            break;
        }
    params->token = (int)(unsigned)(sorted[pick] & 0xffffffffu);
    params->state = state;
}
