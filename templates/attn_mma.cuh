//! attn_mma.cuh — the attention engine, tensor-core path (fp16/bf16 keys and
//! values), FlashAttention-2 style: y = softmax(q k^T / sqrt(HD) + extra) v over
//! the keys an attention kind's pattern lets each query see, with the same
//! hooks and key-tile lists as the CUDA-core path (templates/attn_engine.cuh;
//! docs/attention/README.md, docs/emission.md "Attention, tensor-core path").
//! Needs templates/mma_frag.cuh, which the emitter pastes once after the
//! prelude when a kernel of this template is present.
//!
//! Hooks (written by compiler/emit_attn.c, all named KERNEL_NAME_*): _visible
//! (tested only on partial tiles), _extra (added to the scaled score), and the
//! key source: _reach (BANDED kinds, closed form) or _off[]/_ent[] (key tiles
//! 2*tile + full, or with GATHER the ascending key positions, KT at a time),
//! or with RESIDUE _dil(h)/_reach(h)/_globals: query tiles of one residue
//! i mod DIL (rows q0 + DIL*r, 128-bit loads per row as always), the global
//! tiles, then the residue's band tiled in residue coordinates (attn_engine.cuh).
//!
//! Arguments and grid as attn_engine.cuh: qkv, kv, y, T, P, kv_rows; grid
//! (any, H), block WARPS*32; blocks stride over the absolute query tiles of QT
//! = 16*WARPS queries, from the last down. Work per query tile:
//!   Q:       staged in shared memory as the MMA element type TE (= T_KV) with
//!            128-bit loads, then held as A fragments in registers (QF per
//!            warp, 16 rows each), the shared copy no longer needed;
//!   K, V:    tiles of KT rows, double-buffered: while the warps compute on
//!            one buffer, cp.async (16 bytes per copy) fills the other with the
//!            next tile of the list; keys that do not exist (beyond P+T, or a
//!            gathered tile's empty rows) are zero rows;
//!   scores:  S = Q K^T with mma.m16n8k16 (K^T fragments by ldmatrix), fp32;
//!            scaled, plus _extra; keys the query may not see (partial tiles:
//!            _visible; any tile: keys that do not exist) get -inf;
//!   softmax: online, per row in registers (shortc_frag_softmax_tile: row max
//!            and sum over the quad of lanes that holds a row);
//!   output:  P (fp32 accumulators) is packed in registers into the A operand
//!            of P V (shortc_frag_pv, V fragments by ldmatrix.trans); no shuffle
//!            per key. A query that sees no key writes zeros.
//! Shared memory rows are LD = HDP + 8 elements (HDP: HD rounded up to 16; the
//! 8 spare elements shift each row by 16 bytes against bank conflicts of
//! ldmatrix); columns HD..LD-1 are zeroed once and never written, so a head
//! dim that is not a multiple of 16 (a multiple of 8) runs padded to HDP.
//! Q is staged in the K/V buffers (QT <= 4*KT rows), before the first copy.
//! COUNT_TILES (instrumented builds only): thread 0 counts each key tile it
//! loads in KERNEL_NAME_tiles_loaded, and lane 0 of each warp each tile its
//! warp computes in KERNEL_NAME_warp_tiles (the cost model's tile work).
//!
//! Placeholders: COMMENT KERNEL_NAME H HD HDP WARPS KT SCALE NQT HEAD_TABLES
//!               T_QKV T_KV T_OUT HOOKS KV_HTD (0/1) BANDED (0/1) GATHER (0/1) COUNT_TILES (0/1)
//!               RESIDUE (0/1; never with BANDED or GATHER)
{{COMMENT}}
// Kind hooks and key-tile lists of this kernel (templates/attn_mma.cuh).
{{HOOKS}}

{{#if RESIDUE}}
{{#else}}
// Position of key row r of the key tile at list entry e (entries e..e1-1 remain), -1: none.
__device__ __forceinline__ int {{KERNEL_NAME}}_row(int e, int e1, int r, int KT) {
{{#if BANDED}}
    (void)e1;
    return e * KT + r;
{{#else}}
{{#if GATHER}}
    (void)KT;
    return e + r < e1 ? {{KERNEL_NAME}}_ent[e + r] : -1;
{{#else}}
    (void)e1;
    return ({{KERNEL_NAME}}_ent[e] >> 1) * KT + r;
{{#endif}}
{{#endif}}
}
{{#endif}}

// Softmax attention on the attention engine, tensor-core path (templates/attn_mma.cuh).
extern "C" __global__ void {{KERNEL_NAME}}(
    const {{T_QKV}} *__restrict__ qkv,  // [T, 3*H*HD]: q | k | v, head-major
    const {{T_KV}} *__restrict__ kv,  // [2, H, kv_rows, HD] or [2, kv_rows, H, HD]: keys, values
    {{T_OUT}} *__restrict__ y,  // [T, H*HD]
    int T, int P, int kv_rows)
{
    typedef {{T_KV}} TE;  // MMA element type (queries are converted to it)
    constexpr int H = {{H}};
    constexpr int HD = {{HD}};
    constexpr int HDP = {{HDP}};  // HD rounded up to 16: the MMA's k (scores) and n (output) extent
    constexpr int LD = HDP + 8;  // shared-memory row stride, elements
    constexpr int CH = HD / 8;  // 16-byte chunks per row
    constexpr int WARPS = {{WARPS}};
    constexpr int QT = 16 * WARPS;  // queries per block: 16 rows per warp
    constexpr int KT = {{KT}};  // keys per tile
    constexpr int STEP = {{GATHER}} ? KT : 1;  // list entries per tile
    constexpr int NQT = {{NQT}};  // absolute query tiles in the lists
    constexpr int HEAD_TABLES = {{HEAD_TABLES}};  // 1: one list per head; 0: shared by all heads
    constexpr float SCALE = {{SCALE}};  // 1 / sqrt(HD)
    static_assert(HD % 8 == 0 && QT <= 4 * KT && KT % 16 == 0, "attn_mma.cuh tiling");
    __shared__ uint4 kv_raw[2 * 2 * KT * LD * sizeof(TE) / 16];  // 16-byte aligned storage of kv_s
    TE (*const kv_s)[2][KT][LD] = reinterpret_cast<TE (*)[2][KT][LD]>(kv_raw);  // [buffer][K, V][key row][dim]; Q staged over it
    __shared__ int key_s[2][KT];  // [buffer][row]: absolute key position, -1: none
    TE *const q_s = &kv_s[0][0][0][0];  // Q staging, QT rows of LD

    const int h = blockIdx.y;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int g = lane >> 2, t4 = lane & 3;  // accumulator rows g, g+8; columns 2*t4, 2*t4+1
{{#if RESIDUE}}
    // Residue kinds: a query tile holds the positions q0 + DIL*r (r < QT) of one residue res = i mod DIL;
    // tile index qt = (residue index of row 0 / QT) * DIL + res, so this call's queries lie in tiles [first, last].
    const int DIL = {{KERNEL_NAME}}_dil(h), RREACH = {{KERNEL_NAME}}_reach(h);  // head h: dilation, band taps
    const int first = P / (DIL * QT) * DIL, last = (P + T - 1) / (DIL * QT) * DIL + DIL - 1;
{{#else}}
    const int first = P / QT, last = (P + T - 1) / QT;  // absolute query tiles of this call
{{#endif}}
    const uint4 zero = make_uint4(0u, 0u, 0u, 0u);

    for (int i = threadIdx.x; i < (int)(sizeof kv_raw / 16); i += WARPS * 32)  // padding columns stay zero
        shortc_st128(&kv_raw[i], zero);
    __syncthreads();

    for (int qt = last - (int)blockIdx.x; qt >= first; qt -= (int)gridDim.x) {
{{#if RESIDUE}}
        const int res = qt % DIL, k0q = qt / DIL * QT;  // the tile's residue; residue index of its row 0
        const int q0 = res + DIL * k0q;  // position of row 0; row r is q0 + DIL*r
        const int qw = q0 + DIL * warp * 16;  // this warp's first query
        const int rlo = q0 >= P ? 0 : (P - q0 + DIL - 1) / DIL;  // the first row of this call
        if (rlo >= QT || q0 + DIL * rlo >= P + T) continue;  // no query of this call in the tile (block-uniform)
        const int nq = min(QT, (P + T - 1 - q0) / DIL + 1);  // rows below P+T
{{#else}}
        const int q0 = qt * QT;
        const int qw = q0 + warp * 16;  // this warp's first query
{{#endif}}
        for (int i = threadIdx.x; i < QT * CH; i += WARPS * 32) {
{{#if RESIDUE}}
            const int r = i / CH, c = i % CH, t = q0 + DIL * r - P;
{{#else}}
            const int r = i / CH, c = i % CH, t = q0 + r - P;
{{#endif}}
            uint4 raw = zero;
            if (t >= 0 && t < T) raw = shortc_ld128(qkv + (size_t)t * (3 * H * HD) + h * HD + c * 8);
            const {{T_QKV}} *src = reinterpret_cast<const {{T_QKV}} *>(&raw);
            TE *dst = q_s + r * LD + c * 8;
#pragma unroll
            for (int j = 0; j < 8; j++) shortc_st(dst + j, shortc_ld(src + j));  // 2-byte types: 8 per 16 bytes
        }
        __syncthreads();
        unsigned qf[HDP / 16][4];  // the warp's 16 query rows as A fragments
#pragma unroll
        for (int kk = 0; kk < HDP / 16; kk++) shortc_frag_load_a(qf[kk], q_s + warp * 16 * LD + kk * 16, LD);
        __syncthreads();  // Q is in registers: the buffers are free

        float o[HDP / 8][4], m[2], l[2];
#pragma unroll
        for (int j = 0; j < HDP / 8; j++) o[j][0] = o[j][1] = o[j][2] = o[j][3] = 0.0f;
        m[0] = m[1] = shortc_frag_neg_inf();
        l[0] = l[1] = 0.0f;

{{#if RESIDUE}}
        // Residue kinds: the global tiles first (keys [0, globals) up to the tile's last query), then residue
        // res's band in residue coordinates: key tiles kb in [b0, b1) of KT rows res + DIL*(kb*KT + r), the
        // band keys below globals left to the global tiles.
        const int qmax = q0 + DIL * (nq - 1);  // the tile's last query below P+T
        const int ng = (min({{KERNEL_NAME}}_globals, qmax + 1) + KT - 1) / KT;
        const int kg = {{KERNEL_NAME}}_globals > res ? ({{KERNEL_NAME}}_globals - res + DIL - 1) / DIL : 0;  // first band key not global
        const int b0 = max(max(0, k0q - RREACH + 1), kg) / KT, b1 = (k0q + nq - 1) / KT + 1;
        const int e0 = 0, e1 = ng + max(0, b1 - b0);
        // Position of key row r of the tile at entry e, -1: none.
        auto key_row = [&](int e, int r) {
            return e < ng ? (e * KT + r < {{KERNEL_NAME}}_globals ? e * KT + r : -1) : res + DIL * ((b0 + e - ng) * KT + r);
        };
{{#else}}
{{#if BANDED}}
        // Banded kinds: the key tiles overlapping [q0 - reach + 1, q0 + QT - 1], in closed form.
        const int e0 = max(0, q0 - {{KERNEL_NAME}}_reach + 1) / KT, e1 = (q0 + QT - 1) / KT + 1;
{{#else}}
        const int list = (HEAD_TABLES ? h * NQT : 0) + qt;
        const int e0 = qt < NQT ? {{KERNEL_NAME}}_off[list] : 0;
        const int e1 = qt < NQT ? {{KERNEL_NAME}}_off[list + 1] : 0;
{{#endif}}
{{#endif}}
        // Issues the copies of the key tile at entry e into buffer b (zero rows for absent keys).
        auto load_tile = [&](int e, int b) {
{{#if COUNT_TILES}}
            if (threadIdx.x == 0) atomicAdd(&{{KERNEL_NAME}}_tiles_loaded, 1u);  // instrumented builds (tests/bench)
{{#endif}}
            for (int i = threadIdx.x; i < 2 * KT * CH; i += WARPS * 32) {
                const int part = i / (KT * CH), r = i / CH % KT, c = i % CH;
{{#if RESIDUE}}
                const int t = key_row(e, r);
{{#else}}
                const int t = {{KERNEL_NAME}}_row(e, e1, r, KT);
{{#endif}}
                const bool have = t >= 0 && t < P + T;
                if (part == 0 && c == 0) key_s[b][r] = have ? t : -1;
                TE *dst = &kv_s[b][part][r][c * 8];
{{#if KV_HTD}}
                const TE *src = kv + ((size_t)(part * H + h) * kv_rows + t) * HD + c * 8;
{{#else}}
                const TE *src = kv + ((size_t)(part * kv_rows + t) * H + h) * HD + c * 8;
{{#endif}}
                if (have) shortc_cp_async_16(dst, src);
                else shortc_st128(dst, zero);
            }
        };
        // The tile at entry e exists: inside the list, and its first key below P+T (lists ascend).
{{#if RESIDUE}}
        auto tile_exists = [&](int e) { return e < e1 && key_row(e, 0) < P + T; };
{{#else}}
        auto tile_exists = [&](int e) { return e < e1 && {{KERNEL_NAME}}_row(e, e1, 0, KT) < P + T; };
{{#endif}}

        bool have = tile_exists(e0);
        if (have) load_tile(e0, 0);
        shortc_cp_async_commit();
        for (int e = e0, n = 0; have; e += STEP, n++) {
            const int b = n & 1;
            const bool next = tile_exists(e + STEP);
            if (next) load_tile(e + STEP, b ^ 1);  // the other buffer, consumed before the last barrier
            shortc_cp_async_commit();
            shortc_cp_async_wait<1>();  // this tile's copies have landed (the next may be in flight)
            __syncthreads();
{{#if RESIDUE}}
            const int kfirst = key_row(e, 0);
            const bool glob = e < ng;
            const int kb = b0 + e - ng;  // band tile in residue coordinates
            const int kmin = glob ? 0 : {{KERNEL_NAME}}_globals;  // band keys below it belong to the global tiles
            const bool full = glob ? (e + 1) * KT <= {{KERNEL_NAME}}_globals && q0 >= (e + 1) * KT - 1
                                   : kb * KT + KT - 1 <= k0q && k0q + QT - 1 - kb * KT < RREACH && kfirst >= kmin;
{{#else}}
            const int kfirst = {{KERNEL_NAME}}_row(e, e1, 0, KT);
{{#if BANDED}}
            const bool full = kfirst + KT - 1 <= q0 && q0 + QT - 1 - kfirst < {{KERNEL_NAME}}_reach;
{{#else}}
{{#if GATHER}}
            const bool full = false;  // gathered keys are always mask-tested
{{#else}}
            const bool full = ({{KERNEL_NAME}}_ent[e] & 1) != 0;
{{#endif}}
{{#endif}}
{{#endif}}
{{#if RESIDUE}}
            if (kfirst <= qw + DIL * 15) {  // else every key of the tile is in this warp's future
{{#else}}
            if (kfirst <= qw + 15) {  // else every key of the tile is in this warp's future
{{#endif}}
{{#if COUNT_TILES}}
                if (lane == 0) atomicAdd(&{{KERNEL_NAME}}_warp_tiles, 1u);  // instrumented builds (tests/costdoc)
{{#endif}}
                float s[KT / 8][4];
#pragma unroll
                for (int j = 0; j < KT / 8; j++) s[j][0] = s[j][1] = s[j][2] = s[j][3] = 0.0f;
#pragma unroll
                for (int kk = 0; kk < HDP / 16; kk++)
#pragma unroll
                    for (int nb = 0; nb < KT / 16; nb++) {
                        unsigned bf[4];
                        shortc_frag_load_kt(bf, &kv_s[b][0][nb * 16][kk * 16], LD);
                        shortc_frag_mma(TE(), s[2 * nb], qf[kk], bf);
                        shortc_frag_mma(TE(), s[2 * nb + 1], qf[kk], bf + 2);
                    }
#pragma unroll
                for (int j = 0; j < KT / 8; j++)
#pragma unroll
                    for (int x = 0; x < 4; x++) {
{{#if RESIDUE}}
                        const int q = qw + DIL * (g + 8 * (x >> 1)), key = key_s[b][8 * j + 2 * t4 + (x & 1)];
                        const bool seen = key >= kmin && (full || {{KERNEL_NAME}}_visible(h, q, key));
{{#else}}
                        const int q = qw + g + 8 * (x >> 1), key = key_s[b][8 * j + 2 * t4 + (x & 1)];
                        const bool seen = key >= 0 && (full || {{KERNEL_NAME}}_visible(h, q, key));
{{#endif}}
                        s[j][x] = seen ? s[j][x] * SCALE + {{KERNEL_NAME}}_extra(h, q, key) : shortc_frag_neg_inf();
                    }
                shortc_frag_softmax_tile<KT / 8, HDP / 8>(s, o, m, l, 1.0f);
                shortc_frag_pv<TE, KT, HDP>(o, s, &kv_s[b][1][0][0], LD);
            }
            __syncthreads();  // buffer b consumed: the next iteration may refill it
            have = next;
        }

#pragma unroll
        for (int x = 0; x < 2; x++) {
{{#if RESIDUE}}
            const int t = qw + DIL * (g + 8 * x) - P;  // this call's row of the query
{{#else}}
            const int t = qw + g + 8 * x - P;  // this call's row of the query
{{#endif}}
            if (t < 0 || t >= T) continue;
            const float inv = l[x] > 0.0f ? 1.0f / l[x] : 0.0f;
            {{T_OUT}} *out = y + (size_t)t * (H * HD) + h * HD;
#pragma unroll
            for (int j = 0; j < HDP / 8; j++) {
                const int d = 8 * j + 2 * t4;
                if (HD % 16 == 0 || d < HD) {
                    shortc_st(out + d, o[j][2 * x] * inv);
                    shortc_st(out + d + 1, o[j][2 * x + 1] * inv);
                }
            }
        }
    }
}
