//! attn_engine.cuh — the attention engine, CUDA-core path: softmax attention
//! y = softmax(q k^T / sqrt(HD) + extra) v over the keys an attention kind's
//! pattern lets each query see (docs/attention/README.md). Online softmax over
//! key tiles, so any T works with a fixed amount of shared memory.
//!
//! A kind plugs in through hooks the emitter writes into HOOKS from the
//! kind's row of the kind table (compiler/attn_kinds.c) and its pattern
//! (compiler/attn_pattern.c), all named KERNEL_NAME_*:
//!   _visible(h, i, j)  visibility of key j to query i (absolute positions;
//!                      false for j > i); tested only on partial tiles;
//!                      templates/attn_hooks.cuh: the kind's function in
//!                      templates/attn_kinds.cuh (pasted after the prelude);
//!   _extra(h, i, j)    score extra added before the softmax (0 for the
//!                      sparse kinds; the hook the memory family fills);
//!   _reach             (BANDED kinds: causal, window) keys i-reach < j <= i are
//!                      the only ones a query may see: the key tiles of a query
//!                      tile are computed in closed form, full when every pair
//!                      lies in the band; no lists;
//!   _off[], _ent[]     (other kinds) per (head or 0, absolute query tile of QT queries) the
//!                      entries _ent[_off[t]] .. _ent[_off[t+1]-1]: with GATHER
//!                      0, key tiles of KT keys as 2*tile + full (full: every
//!                      pair visible, no mask test); with GATHER 1, the
//!                      ascending key positions any query of the tile sees,
//!                      loaded KT at a time (the key source "gathered").
//!   _dil(h), _reach(h), _globals   (RESIDUE kinds: dilated, strided) head h
//!                      groups its queries by residue i mod _dil(h): a query tile
//!                      holds the positions q0 + DIL*r of one residue (tile index
//!                      qt = (q0 / DIL / QT) * DIL + q0 % DIL), and its keys are
//!                      that residue's rows, a causal band of _reach(h) taps in
//!                      residue coordinates tiled in closed form like a banded
//!                      kind (key row r of band tile kb: res + DIL*(kb*KT + r)),
//!                      after the global tiles of keys [0, _globals) (band keys
//!                      below _globals are left to them). Rows are addressed
//!                      with stride DIL; loads stay whole rows.
//! Key tiles that no query of a query tile sees are not in the list: never loaded.
//!
//! Arguments: qkv, kv, y, then T (queries this call), P (absolute position of
//! the first query; keys 0..P+T-1 exist in kv) and kv_rows (rows of kv per
//! head: the stride between heads). Query t of this call is position P+t.
//! Grid: (any, H), block WARPS*32 threads. Block b takes the absolute query
//! tiles that hold this call's queries, from the last (most keys) down,
//! b, b + gridDim.x, ...: ceil(T/QT) blocks cover them when P % QT == 0,
//! and any grid is correct otherwise. Each warp owns QPW queries of the tile.
//! Per key tile of KT keys (KT <= 32):
//!   scores:  lane l computes the dot products of key row l with the warp's queries
//!            (q rows broadcast from shared memory, K rows padded to HD+1 floats);
//!   softmax: running max m and sum l per query, rescaling the accumulator;
//!   output:  each lane owns output dims lane, lane+32, ...; p is broadcast by shuffle.
//! A query that sees no key writes zeros.
//! COUNT_TILES (instrumented builds only, tests/bench/bench_attn.c): the block's
//! thread 0 counts each key tile it loads in KERNEL_NAME_tiles_loaded, a
//! __device__ unsigned the HOOKS text then defines.
//!
//! REC_KEY (the recurrence, docs/attention/recurrence.md): one more key source,
//! the argument xkv = h_prev's key | value | present flag (T_XKV, 2*H*HD + 1),
//! seen by every query of the call when the flag is set: one more online
//! softmax step after the key tiles.
//!
//! PIA (position-infused attention, docs/attention/pia.md): one more argument,
//! pos [slots, 2*H*HD], and two more hooks: _qpos(pos, h, s, j) added to the
//! query of slot s (its absolute position) and _kpos(pos, h, s, j) to the key
//! of slot s as the tile is loaded, so one q.k product per score.
//!
//! REL (Transformer-XL relative attention, docs/attention/relative.md): kv is
//! the memory's keys and values projected this call (a cuBLAS GEMM step),
//! [2, kv_rows, H, HD] at ring row (position mod kv_rows); key positions >= P
//! are this call's, read from qkv. Three more arguments: rel [ND, H*HD] (the
//! projected relative keys W_r R_d), r_w and r_r [H, HD] (u and v). u is added
//! to the query as it is loaded; the hook _rel(rel, r_w, r_r, h, i, j, q)
//! gives (q + v).(W_r R_{i-j}) for the stored query q + u. The score is
//! (q.k + _rel) * SCALE; no tile is taken as full (the memory's first key
//! moves with P); the _visible hook reads the kernel's P.
//!
//! Placeholders: COMMENT KERNEL_NAME H HD WARPS QPW KT SCALE NQT HEAD_TABLES
//!               T_QKV T_KV T_OUT HOOKS KV_HTD (0/1) BANDED (0/1) GATHER (0/1) COUNT_TILES (0/1)
//!               RESIDUE (0/1; never with BANDED, GATHER, REC_KEY, PIA or REL)
//!               REC_KEY (0/1) T_XKV, PIA (0/1), T_POS (PIA only); REC_KEY and PIA never both;
//!               REL (0/1), T_B and T_REL (REL only)
{{COMMENT}}
// Kind hooks and key-tile lists of this kernel (templates/attn_engine.cuh).
{{HOOKS}}

// Softmax attention on the attention engine, CUDA-core path (templates/attn_engine.cuh).
extern "C" __global__ void {{KERNEL_NAME}}(
    const {{T_QKV}} *__restrict__ qkv,  // [T, 3*H*HD]: q | k | v, head-major
    const {{T_KV}} *__restrict__ kv,  // [2, H, kv_rows, HD] or [2, kv_rows, H, HD]: keys, values
    {{T_OUT}} *__restrict__ y,  // [T, H*HD]
{{#if REC_KEY}}
    int T, int P, int kv_rows,
    const {{T_XKV}} *__restrict__ xkv)  // recurrence: h_prev's key | value | present, [2*H*HD + 1]
{{#else}}
{{#if PIA}}
    int T, int P, int kv_rows,
    const {{T_POS}} *__restrict__ pos)  // [slots, 2*H*HD]: W_q p_s | W_k p_s, per slot s
{{#else}}
{{#if REL}}
    int T, int P, int kv_rows,
    const {{T_REL}} *__restrict__ rel,  // [ND, H*HD]: W_r R_d per distance d (derived: the load program's)
    const {{T_B}} *__restrict__ r_w,  // [H, HD]: u, added to the query
    const {{T_B}} *__restrict__ r_r)  // [H, HD]: v, the positional term's query bias
{{#else}}
    int T, int P, int kv_rows)
{{#endif}}
{{#endif}}
{{#endif}}
{
    constexpr int H = {{H}};
    constexpr int HD = {{HD}};
    constexpr int KVH = {{KVH}};  // K/V heads G: query head h reads K/V head h / (H / KVH) (grouped-query attention)
    constexpr int QKVW = (H + 2 * KVH) * HD;  // qkv row: q (H heads) | k (KVH) | v (KVH)
    constexpr int WARPS = {{WARPS}};
    constexpr int QPW = {{QPW}};  // queries per warp
    constexpr int QT = WARPS * QPW;  // queries per block
    constexpr int KT = {{KT}};  // keys per tile, one per lane
    constexpr int DPL = (HD + 31) / 32;  // output dims per lane
    constexpr int NQT = {{NQT}};  // absolute query tiles in the lists
    constexpr int HEAD_TABLES = {{HEAD_TABLES}};  // 1: one list per head; 0: shared by all heads
    constexpr float SCALE = {{SCALE}};  // 1 / sqrt(HD)
    constexpr float MASKED = -1.0e30f;  // score of a key the query may not see
    __shared__ float q_s[QT][HD];
    __shared__ float k_s[KT][HD + 1];
    __shared__ float v_s[KT][HD];
    __shared__ int key_s[KT];  // absolute position of each key row, -1: none

    const int h = blockIdx.y;
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
{{#if RESIDUE}}
    // Residue kinds: a query tile holds the positions q0 + DIL*r (r < QT) of one residue res = i mod DIL;
    // tile index qt = (residue index of row 0 / QT) * DIL + res, so this call's queries lie in tiles [first, last].
    const int DIL = {{KERNEL_NAME}}_dil(h), RREACH = {{KERNEL_NAME}}_reach(h);  // head h: dilation, band taps
    const int first = P / (DIL * QT) * DIL, last = (P + T - 1) / (DIL * QT) * DIL + DIL - 1;
{{#else}}
    const int first = P / QT, last = (P + T - 1) / QT;  // absolute query tiles of this call
{{#endif}}

    for (int qt = last - (int)blockIdx.x; qt >= first; qt -= (int)gridDim.x) {
{{#if RESIDUE}}
        const int res = qt % DIL, k0q = qt / DIL * QT;  // the tile's residue; residue index of its row 0
        const int q0 = res + DIL * k0q;  // position of row 0; row r is q0 + DIL*r
        const int qw = q0 + DIL * warp * QPW;  // this warp's first query
        const int rlo = q0 >= P ? 0 : (P - q0 + DIL - 1) / DIL;  // the first row of this call
        if (rlo >= QT || q0 + DIL * rlo >= P + T) continue;  // no query of this call in the tile (block-uniform)
        const int nq = min(QT, (P + T - 1 - q0) / DIL + 1);  // rows below P+T
{{#else}}
        const int q0 = qt * QT;
        const int qw = q0 + warp * QPW;  // this warp's first query
{{#endif}}
        __syncthreads();  // the previous query tile is done with q_s
        for (int i = threadIdx.x; i < QT * HD; i += WARPS * 32) {
{{#if RESIDUE}}
            const int r = i / HD, j = i % HD, t = q0 + DIL * r - P;
{{#else}}
            const int r = i / HD, j = i % HD, t = q0 + r - P;
{{#endif}}
            q_s[r][j] = t >= 0 && t < T ? shortc_ld(qkv + (size_t)t * QKVW + h * HD + j) : 0.0f;
{{#if PIA}}
            if (t >= 0 && t < T) q_s[r][j] += {{KERNEL_NAME}}_qpos(pos, h, q0 + r, j);
{{#endif}}
{{#if REL}}
            if (t >= 0 && t < T) q_s[r][j] += shortc_ld(r_w + h * HD + j);
{{#endif}}
        }

        float m[QPW], l[QPW], o[QPW][DPL];
#pragma unroll
        for (int i = 0; i < QPW; i++) {
            m[i] = MASKED;
            l[i] = 0.0f;
#pragma unroll
            for (int d = 0; d < DPL; d++) o[i][d] = 0.0f;
        }

{{#if RESIDUE}}
        // Residue kinds: the global tiles first (keys [0, globals) up to the tile's last query), then residue
        // res's band in residue coordinates: key tiles kb in [b0, b1) of KT rows res + DIL*(kb*KT + r), the
        // band keys below globals left to the global tiles.
        const int qmax = q0 + DIL * (nq - 1);  // the tile's last query below P+T
        const int ng = (min({{KERNEL_NAME}}_globals, qmax + 1) + KT - 1) / KT;
        const int kg = {{KERNEL_NAME}}_globals > res ? ({{KERNEL_NAME}}_globals - res + DIL - 1) / DIL : 0;  // first band key not global
        const int b0 = max(max(0, k0q - RREACH + 1), kg) / KT, b1 = (k0q + nq - 1) / KT + 1;
        for (int e = 0; e < ng + max(0, b1 - b0); e++) {
            const bool glob = e < ng;
            const int kb = b0 + e - ng;  // band tile in residue coordinates
            const int kfirst = glob ? e * KT : res + DIL * kb * KT;
            const int kmin = glob ? 0 : {{KERNEL_NAME}}_globals;  // band keys below it belong to the global tiles
            const bool full = glob ? (e + 1) * KT <= {{KERNEL_NAME}}_globals && q0 >= (e + 1) * KT - 1
                                   : kb * KT + KT - 1 <= k0q && k0q + QT - 1 - kb * KT < RREACH && kfirst >= kmin;
{{#else}}
{{#if BANDED}}
        // Banded kinds: the key tiles overlapping [q0 - reach + 1, q0 + QT - 1], in closed form.
        const int e0 = max(0, q0 - {{KERNEL_NAME}}_reach + 1) / KT, e1 = (q0 + QT - 1) / KT + 1;
        for (int e = e0; e < e1; e++) {
            const int k0 = e * KT;
{{#if REL}}
            const bool full = false;  // the memory's first key moves with P: every pair is tested
{{#else}}
            const bool full = k0 + KT - 1 <= q0 && q0 + QT - 1 - k0 < {{KERNEL_NAME}}_reach;
{{#endif}}
            const int kfirst = k0;
{{#else}}
        const int list = (HEAD_TABLES ? h * NQT : 0) + qt;
        const int e0 = qt < NQT ? {{KERNEL_NAME}}_off[list] : 0;
        const int e1 = qt < NQT ? {{KERNEL_NAME}}_off[list + 1] : 0;
{{#if GATHER}}
        for (int e = e0; e < e1; e += KT) {
            const bool full = false;  // gathered keys are always mask-tested
            const int kfirst = {{KERNEL_NAME}}_ent[e];
{{#else}}
        for (int e = e0; e < e1; e++) {
            const int k0 = ({{KERNEL_NAME}}_ent[e] >> 1) * KT;
            const bool full = ({{KERNEL_NAME}}_ent[e] & 1) != 0;
            const int kfirst = k0;
{{#endif}}
{{#endif}}
{{#endif}}
            if (kfirst >= P + T) break;  // ascending: the rest of the list is beyond the keys that exist
{{#if COUNT_TILES}}
            if (threadIdx.x == 0) atomicAdd(&{{KERNEL_NAME}}_tiles_loaded, 1u);  // instrumented builds (tests/bench)
{{#endif}}
            __syncthreads();  // q_s written / previous tile consumed
            for (int r = threadIdx.x; r < KT; r += WARPS * 32) {
{{#if RESIDUE}}
                const int t = glob ? (kfirst + r < {{KERNEL_NAME}}_globals ? kfirst + r : -1) : kfirst + DIL * r;
{{#else}}
{{#if GATHER}}
                const int t = e + r < e1 ? {{KERNEL_NAME}}_ent[e + r] : -1;
{{#else}}
                const int t = k0 + r;
{{#endif}}
{{#endif}}
                key_s[r] = t < P + T ? t : -1;
            }
            __syncthreads();
            for (int i = threadIdx.x; i < KT * HD; i += WARPS * 32) {
                const int r = i / HD, j = i % HD, t = key_s[r];
                float kval = 0.0f, vval = 0.0f;
                if (t >= 0) {
{{#if REL}}
                    if (t >= P) {  // this call's token: its key and value in qkv
                        kval = shortc_ld(qkv + (size_t)(t - P) * (3 * H * HD) + (H + h) * HD + j);
                        vval = shortc_ld(qkv + (size_t)(t - P) * (3 * H * HD) + (2 * H + h) * HD + j);
                    } else if (kv_rows > 0) {  // a memory row, at ring row t mod kv_rows
                        kval = shortc_ld(kv + ((size_t)(0 * kv_rows + t % kv_rows) * H + h) * HD + j);
                        vval = shortc_ld(kv + ((size_t)(1 * kv_rows + t % kv_rows) * H + h) * HD + j);
                    }
{{#else}}
{{#if KV_HTD}}
                    kval = shortc_ld(kv + ((size_t)(0 * KVH + h / (H / KVH)) * kv_rows + t) * HD + j);
                    vval = shortc_ld(kv + ((size_t)(1 * KVH + h / (H / KVH)) * kv_rows + t) * HD + j);
{{#else}}
                    kval = shortc_ld(kv + ((size_t)(0 * kv_rows + t) * KVH + h / (H / KVH)) * HD + j);
                    vval = shortc_ld(kv + ((size_t)(1 * kv_rows + t) * KVH + h / (H / KVH)) * HD + j);
{{#endif}}
{{#endif}}
{{#if PIA}}
                    kval += {{KERNEL_NAME}}_kpos(pos, h, t, j);
{{#endif}}
                }
                k_s[r][j] = kval;
                v_s[r][j] = vval;
            }
            __syncthreads();
{{#if RESIDUE}}
            if (kfirst > qw + DIL * (QPW - 1)) continue;  // every key of the tile is in this warp's future
{{#else}}
            if (kfirst > qw + QPW - 1) continue;  // every key of the tile is in this warp's future
{{#endif}}

            // Scores of key row `lane` against the warp's queries.
            float s[QPW];
#pragma unroll
            for (int i = 0; i < QPW; i++) s[i] = 0.0f;
            if (lane < KT) {
#pragma unroll 8
                for (int j = 0; j < HD; j++) {
                    const float kj = k_s[lane][j];
#pragma unroll
                    for (int i = 0; i < QPW; i++) s[i] += q_s[warp * QPW + i][j] * kj;
                }
            }

            // Online softmax update; s[i] becomes the probability weight of the key.
            const int key = lane < KT ? key_s[lane] : -1;
#pragma unroll
            for (int i = 0; i < QPW; i++) {
{{#if RESIDUE}}
                const int q = qw + DIL * i;
                const bool seen = key >= kmin && (full || {{KERNEL_NAME}}_visible(h, q, key));
{{#else}}
                const int q = qw + i;
                const bool seen = key >= 0 && (full || {{KERNEL_NAME}}_visible(h, q, key));
{{#endif}}
{{#if REL}}
                const float si =
                    seen ? (s[i] + {{KERNEL_NAME}}_rel(rel, r_w, r_r, h, q, key, q_s[warp * QPW + i])) * SCALE : MASKED;
{{#else}}
                const float si = seen ? s[i] * SCALE + {{KERNEL_NAME}}_extra(h, q, key) : MASKED;
{{#endif}}
                const float m_new = fmaxf(m[i], shortc_warp_max(si));
                const float corr = expf(m[i] - m_new);
                s[i] = si == MASKED ? 0.0f : expf(si - m_new);
                l[i] = l[i] * corr + shortc_warp_sum(s[i]);
                m[i] = m_new;
#pragma unroll
                for (int d = 0; d < DPL; d++) o[i][d] *= corr;
            }

            // o += p v over the tile.
#pragma unroll 4
            for (int kk = 0; kk < KT; kk++) {
                float p[QPW];
#pragma unroll
                for (int i = 0; i < QPW; i++) p[i] = __shfl_sync(0xffffffffu, s[i], kk);
#pragma unroll
                for (int d = 0; d < DPL; d++) {
                    const int j = lane + 32 * d;
                    if (HD % 32 == 0 || j < HD) {
                        const float vj = v_s[kk][j];
#pragma unroll
                        for (int i = 0; i < QPW; i++) o[i][d] += p[i] * vj;
                    }
                }
            }
        }
{{#if REC_KEY}}

        // The recurrence's key source: h_prev, one more key every query sees (uniform over the block).
        if (shortc_ld(xkv + 2 * H * HD) != 0.0f) {
            __syncthreads();  // q_s written
#pragma unroll
            for (int i = 0; i < QPW; i++) {
                float part = 0.0f;
                for (int j = lane; j < HD; j += 32) part += q_s[warp * QPW + i][j] * shortc_ld(xkv + h * HD + j);
                const float si = shortc_warp_sum(part) * SCALE;
                const float m_new = fmaxf(m[i], si);
                const float corr = expf(m[i] - m_new), p = expf(si - m_new);
                l[i] = l[i] * corr + p;
                m[i] = m_new;
#pragma unroll
                for (int d = 0; d < DPL; d++) {
                    const int j = lane + 32 * d;
                    o[i][d] = o[i][d] * corr + (HD % 32 == 0 || j < HD ? p * shortc_ld(xkv + (H + h) * HD + j) : 0.0f);
                }
            }
        }
{{#endif}}

#pragma unroll
        for (int i = 0; i < QPW; i++) {
{{#if RESIDUE}}
            const int t = qw + DIL * i - P;  // this call's row of the query
{{#else}}
            const int t = qw + i - P;  // this call's row of the query
{{#endif}}
            if (t < 0 || t >= T) continue;
            const float inv = l[i] > 0.0f ? 1.0f / l[i] : 0.0f;
            {{T_OUT}} *out = y + (size_t)t * (H * HD) + h * HD;
#pragma unroll
            for (int d = 0; d < DPL; d++) {
                const int j = lane + 32 * d;
                if (HD % 32 == 0 || j < HD) shortc_st(out + j, o[i][d] * inv);
            }
        }
    }
}
