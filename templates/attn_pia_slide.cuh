//! attn_pia_slide.cuh — the end of a segment of position-infused attention
//! (docs/attention/pia.md; the plan's "slide" program, run by the runtime
//! after the call that completes a segment, with that call's T and P): the
//! layer's cache keeps its last kept = min(P + T, KEEP) rows, moved to rows
//! 0..kept-1, so the next segment's cached tokens are slots 0..kept-1 again. Rows are moved in place: each
//! thread owns one column (part, head, dim) and copies it in increasing row
//! order, so no row is overwritten before it is read (the destination is below
//! the source).
//!
//! Grid: (ceil(2*H*HD / THREADS), 1, 1), block THREADS.
//!
//! Placeholders: COMMENT KERNEL_NAME H HD KEEP THREADS T_KV KV_HTD (0/1)
{{COMMENT}}
// Keeps the last rows of a position-infused cache (templates/attn_pia_slide.cuh).
extern "C" __global__ void {{KERNEL_NAME}}(
    {{T_KV}} *__restrict__ kv,  // [2, H, kv_rows, HD] or [2, kv_rows, H, HD]
    int T, int P, int kv_rows)
{
    constexpr int H = {{H}};
    constexpr int HD = {{HD}};
    constexpr int KEEP = {{KEEP}};
    const int c = blockIdx.x * {{THREADS}} + threadIdx.x;
    const int held = P + T, kept = min(held, KEEP), from = held - kept;
    if (c >= 2 * H * HD || from == 0) return;
    const int p = c / (H * HD), h = (c / HD) % H, j = c % HD;
    for (int r = 0; r < kept; r++) {
{{#if KV_HTD}}
        const size_t base = ((size_t)p * H + h) * kv_rows;
        kv[(base + r) * HD + j] = kv[(base + from + r) * HD + j];
{{#else}}
        kv[(((size_t)p * kv_rows + r) * H + h) * HD + j] = kv[(((size_t)p * kv_rows + from + r) * H + h) * HD + j];
{{#endif}}
    }
}
