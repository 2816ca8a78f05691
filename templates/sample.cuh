//! sample.cuh — the next token of generation, drawn on the device from the
//! last logits row (the plan's "sample" program, docs/plan.md), so that a
//! decoding step copies one token id to the host instead of a row of V
//! logits. One block; the same algorithm, arithmetic and seeded stream as
//! the host sampler (runtime/src/sample.c, common/rng.c), so that a seed
//! gives the same tokens on both:
//!
//!   greedy (temperature 0 or top-k 1): the first largest logit (a block
//!     minimum of the keys below);
//!   otherwise: the tokens sorted by (logit descending, id ascending) — a
//!     bitonic sort of 64-bit keys (order-preserving logit bits, inverted,
//!     then the id) in the scratch buffer — weights
//!     exp((logit - top) / temperature) in double over the top-k, summed in
//!     order, cut to the smallest prefix whose mass reaches top_p · sum, and
//!     a splitmix64 uniform (53 bits) times that mass picks the first token
//!     whose running weight exceeds it.
//!
//! The runtime writes the parameter block (shortc_sample_params, the layout
//! of RtSampleParams in runtime/src/rt_internal.h) before the launch; the
//! kernel writes back the token and the advanced generator state.
//!
//! Placeholders: COMMENT KERNEL_NAME V VPAD (a power of two >= V) THREADS
{{COMMENT}}
// Next-token sampling from the last logits row, one block (templates/sample.cuh).
struct shortc_sample_params {
    unsigned long long state;  // in/out: the splitmix64 state (common/rng.c)
    double temperature;        // 0: greedy
    double top_p;              // nucleus mass, 0 < top_p <= 1
    int top_k;                 // the most likely tokens kept (0: all)
    int token;                 // out: the token drawn
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

extern "C" __global__ void {{KERNEL_NAME}}(
    const float *__restrict__ logits,  // [T, V]: row T - 1 is sampled
    shortc_sample_params *__restrict__ params,  // in/out
    unsigned long long *__restrict__ keys,  // [VPAD] scratch
    double *__restrict__ prob,  // [V] scratch: the sorted tokens' weights
    int T)  // rows
{
    constexpr int V = {{V}};
    constexpr int VPAD = {{VPAD}};
    constexpr int THREADS = {{THREADS}};
    __shared__ unsigned long long least[THREADS];
    const float *row = logits + (size_t)(T - 1) * V;
    const bool greedy = params->temperature == 0.0 || params->top_k == 1;
    unsigned long long mine = ~0ull;
    for (int i = threadIdx.x; i < VPAD; i += THREADS) {
        const unsigned long long k = i < V ? shortc_sample_key(row[i], i) : ~0ull;  // padding sorts last
        if (greedy) mine = k < mine ? k : mine;
        else keys[i] = k;
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
    for (int size = 2; size <= VPAD; size <<= 1) {  // bitonic sort, ascending
        for (int stride = size >> 1; stride > 0; stride >>= 1) {
            for (int i = threadIdx.x; i < VPAD; i += THREADS) {
                const int j = i ^ stride;
                if (j > i) {
                    const unsigned long long a = keys[i], b = keys[j];
                    if ((a > b) == ((i & size) == 0)) {
                        keys[i] = b;
                        keys[j] = a;
                    }
                }
            }
            __syncthreads();
        }
    }
    const int k = params->top_k > 0 && params->top_k < V ? params->top_k : V;
    const double top = (double)row[keys[0] & 0xffffffffu], temperature = params->temperature;
    for (int i = threadIdx.x; i < k; i += THREADS) prob[i] = exp(((double)row[keys[i] & 0xffffffffu] - top) / temperature);
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
    params->token = (int)(unsigned)(keys[pick] & 0xffffffffu);
    params->state = state;
}
