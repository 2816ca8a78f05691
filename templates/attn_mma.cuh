//! attn_mma.cuh — the attention engine, tensor-core path (fp16/bf16 keys and
//! values; fp32 ones on TF32 MMAs under `math tf32`: T_KV = float, k 8, 16-byte
//! chunks of EPC = 4 elements, operands rounded by shortc_cvt_tf32, V's
//! fragments by shared loads; REL needs 2 bytes), FlashAttention-2 class:
//! y = softmax(q k^T / sqrt(HD) + extra) v
//! over the keys an attention kind's pattern lets each query see, with the
//! same hooks and key-tile lists as the CUDA-core path
//! (templates/attn_engine.cuh; docs/attention/README.md, docs/emission.md
//! "Attention, tensor-core path"). Needs templates/mma_frag.cuh, which the
//! emitter pastes once after the prelude when a kernel of this template is
//! present.
//!
//! Hooks (written by compiler/emit_attn.c, all named KERNEL_NAME_*): _visible
//! (tested only on partial tiles), _extra (added to the scaled score), and the
//! key source: _reach (BANDED kinds, closed form) or _off[]/_ent[] (key tiles
//! 2*tile + full, or with GATHER the ascending key positions, KT at a time),
//! or with RESIDUE _dil(h)/_reach(h)/_globals: query tiles of one residue
//! i mod DIL (rows q0 + DIL*r), the global tiles, then the residue's band
//! tiled in residue coordinates (attn_engine.cuh); for the calls where
//! _plain(P, T) (the cost model's choice, compiler/cost.c
//! attn_residue_choice) the same loop with DIL 1 and the band's reach in
//! positions _span(h): the plain tile loop over absolute query tiles.
//!
//! Arguments as attn_engine.cuh: qkv, kv, y, T, P, kv_rows; grid
//! (ceil((T + QT - 1) / QT), H), with RESIDUE (ceil((T + (2*D-1)*QT - 1) / QT), H)
//! for D the largest dilation of any head; block WARPS*32, dynamic shared
//! memory (QT + 2*KT) * LD * 2 bytes (+ 8*KT with GATHER, + KT*LD*2 with PIA;
//! compiler/emit.c attn_mma_smem, attn_mma_pia_smem). Query tiles are the absolute tiles of QT = 32*WARPS
//! queries (RESIDUE: of one residue each), taken from the last down (causal:
//! the heaviest first): block x takes tile last - x alone (the grid covers
//! every tile the call touches; a block past the first, or on a tile without
//! queries of the call, exits), so no loop counter lives across the key loop.
//! Work per query tile:
//!   Q:       staged in shared memory as the MMA element type TE (= T_KV) with
//!            128-bit loads; each warp owns 32 rows (two m16 blocks) and reads
//!            its A fragments by ldmatrix per key tile (each K or V fragment
//!            then feeds 4 MMAs);
//!   K, V:    one shared buffer each, filled by cp.async (16 bytes per copy):
//!            a tile's V is issued before its Q K^T, the next tile's K before
//!            its softmax, so each copy overlaps the other half's math. Each
//!            thread copies one fixed 16-byte column chunk of rows cr +
//!            RPP*j; a tile costs one row-pointer computation (banded,
//!            lists: first key * row stride; residue: the same in residue
//!            steps), the chunks are constant offsets from it; rows beyond the
//!            keys (P+T, a gathered tile's end) are zero rows, tested only when
//!            the tile reaches them;
//!   scores:  S = Q K^T with mma.m16n8k16 (K^T fragments by ldmatrix), fp32;
//!   masks:   only on partial tiles (a block-uniform branch: a full tile, one
//!            every query of the tile sees whole, runs a path without any
//!            per-score test; its run of consecutive full tiles is the inner
//!            loop): _visible and the key bounds give -inf;
//!   softmax: online in base 2 (shortc_frag_online_exp2): the scale folded
//!            into one FFMA per score before MUFU.EX2; up to HDP 64 the row
//!            sums by one MMA of each P fragment with a block of ones
//!            (shortc_frag_row_sums), above it per lane (fewer registers);
//!   warps:   every warp computes every tile its query tile visits;
//!   output:  P is packed in registers into the A operand of P V (V fragments
//!            by ldmatrix.trans). A query that sees no key writes zeros. Each
//!            warp stages its 2-byte outputs over its own Q rows and stores
//!            them with 128-bit stores (fp32 outputs: pairs from registers).
//! Shared memory rows are LD = HDP + EPC elements (HDP: HD rounded up to 16; the
//! EPC spare elements shift each row by 16 bytes against bank conflicts of
//! ldmatrix); with HD not a multiple of 16, columns HD..HDP-1 are zeroed once
//! and never written (the head runs padded to HDP).
//! COUNT_TILES (instrumented builds only): thread 0 counts each key tile it
//! loads in KERNEL_NAME_tiles_loaded, and lane 0 of each warp each tile its
//! warp computes in KERNEL_NAME_warp_tiles (the cost model's tile work).
//!
//! PIA (position-infused attention, docs/attention/pia.md): one more argument,
//! pos [slots, 2*H*HD] = W_q p_s | W_k p_s in TE (slot = absolute position).
//! The query of slot s adds pos[s][h*HD..] as its tile is staged (fp32 sum,
//! rounded once to TE); the key's term W_k p_s is never added to the cached
//! content key: its rows come by cp.async into a third tile buffer beside K,
//! and the scores are Q K^T + Q Kp^T, a second MMA per K fragment (fp32
//! accumulation, no rounded sum). Banded key source only (PIA is causal).
//!
//! REC_KEY (the recurrence, docs/attention/recurrence.md): one more argument,
//! xkv = h_prev's key | value | present flag (T_XKV, [2*H*HD + 1]): when the
//! flag is set (block-uniform), one more key every query sees, merged into
//! each row's online softmax after the key tiles (its score by the quad of
//! lanes that holds the row, from q_s; its value into the row's accumulators).
//!
//! REL (Transformer-XL relative attention, docs/attention/relative.md; with
//! BANDED, never with GATHER or RESIDUE): the arguments of attn_engine.cuh's
//! REL (kv: the memory's keys and values [2, kv_rows, H, HD] at ring row
//! position mod kv_rows, this call's keys read from qkv; rel [ND, H*HD] the
//! relative keys W_r R_d; r_w, r_r: u and v), qkv, kv and rel all of type TE.
//! The score is (q+u).k_j + (q+v).R_min(i-j, _last_row): Q is staged as q + u
//! (the content term is the usual MMA); a query tile times a key tile touches
//! the QT + KT - 1 distances q0 - kf - KT + 1 .. q0 + QT - 1 - kf, whose rows
//! of R (clamped to [0, _last_row]) are copied with K into r_s; per m16 row
//! block a second MMA of (q+u) + (v-u) (the A fragment, v - u added in
//! registers) against the KT + 16 band rows it needs gives B[r][n] = (q_r+v).
//! R_{band row n}, staged in the warp's b_s, and score (r, c) adds B[r][r - c
//! + KT - 1]: the relative shift as index arithmetic. Full tiles
//! (_full_tile, at the kernel's P) skip the per-score test.
//!
//! Placeholders: COMMENT KERNEL_NAME H HD HDP WARPS KT SCALE NQT HEAD_TABLES
//!               T_QKV T_KV T_OUT HOOKS KV_HTD (0/1) BANDED (0/1) GATHER (0/1) COUNT_TILES (0/1)
//!               RESIDUE (0/1; never with BANDED or GATHER)
//!               PIA (0/1; BANDED only) T_POS (PIA only; = T_KV), REC_KEY (0/1) T_XKV (REC_KEY only),
//!               REL (0/1) T_B and T_REL (REL only); at most one of PIA, REC_KEY and REL
{{COMMENT}}
// Kind hooks and key-tile lists of this kernel (templates/attn_mma.cuh).
{{HOOKS}}

// Launch bounds: 2 blocks per SM, which leaves ptxas all 255 registers (its schedule spills less with them);
// declared apart so that the definition keeps the plain form tools look for.
extern "C" __global__ void __launch_bounds__({{WARPS}} * 32, 2) {{KERNEL_NAME}}(const {{T_QKV}} *__restrict__ qkv,
{{#if PIA}}
    const {{T_KV}} *__restrict__ kv, {{T_OUT}} *__restrict__ y, int T, int P, int kv_rows, const {{T_POS}} *__restrict__ pos);
{{#else}}
{{#if REC_KEY}}
    const {{T_KV}} *__restrict__ kv, {{T_OUT}} *__restrict__ y, int T, int P, int kv_rows, const {{T_XKV}} *__restrict__ xkv);
{{#else}}
{{#if REL}}
    const {{T_KV}} *__restrict__ kv, {{T_OUT}} *__restrict__ y, int T, int P, int kv_rows, const {{T_REL}} *__restrict__ rel,
    const {{T_B}} *__restrict__ r_w, const {{T_B}} *__restrict__ r_r);
{{#else}}
    const {{T_KV}} *__restrict__ kv, {{T_OUT}} *__restrict__ y, int T, int P, int kv_rows);
{{#endif}}
{{#endif}}
{{#endif}}

// Softmax attention on the attention engine, tensor-core path (templates/attn_mma.cuh).
extern "C" __global__ void {{KERNEL_NAME}}(
    const {{T_QKV}} *__restrict__ qkv,  // [T, 3*H*HD]: q | k | v, head-major
    const {{T_KV}} *__restrict__ kv,  // [2, H, kv_rows, HD] or [2, kv_rows, H, HD]: keys, values
    {{T_OUT}} *__restrict__ y,  // [T, H*HD]
{{#if PIA}}
    int T, int P, int kv_rows,
    const {{T_POS}} *__restrict__ pos)  // [slots, 2*H*HD]: W_q p_s | W_k p_s, per slot s
{{#else}}
{{#if REC_KEY}}
    int T, int P, int kv_rows,
    const {{T_XKV}} *__restrict__ xkv)  // recurrence: h_prev's key | value | present, [2*H*HD + 1]
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
    typedef {{T_KV}} TE;  // MMA element type (queries are converted to it)
    typedef {{T_OUT}} TO;  // output element type
    constexpr int H = {{H}};
    constexpr int HD = {{HD}};
    constexpr int KVH = {{KVH}};  // K/V heads G: query head h reads K/V head h / (H / KVH) (grouped-query attention)
    constexpr int QKVW = (H + 2 * KVH) * HD;  // qkv row: q (H heads) | k (KVH) | v (KVH)
    constexpr int HDP = {{HDP}};  // HD rounded up to 16: the MMA's k (scores) and n (output) extent
    constexpr int EPC = shortc_frag_epc<TE>();  // elements per 16-byte chunk: 8 (fp16/bf16), 4 (fp32, TF32 MMAs)
    constexpr int KS = shortc_frag_k<TE>();  // the MMA's k extent: m16n8k16 (fp16/bf16), m16n8k8 (TF32)
    constexpr int LD = HDP + EPC;  // shared-memory row stride, elements (rows shifted by 16 bytes)
    constexpr int CH = HD / EPC;  // 16-byte chunks per row
    constexpr int WARPS = {{WARPS}}, THREADS = WARPS * 32;
    constexpr int MB = 2;  // m16 row blocks per warp
    constexpr int WR = 16 * MB;  // query rows per warp
    constexpr int QT = WR * WARPS;  // queries per block
    constexpr int KT = {{KT}};  // keys per tile
    constexpr int STEP = {{GATHER}} ? KT : 1;  // list entries per tile
    constexpr int NQT = {{NQT}};  // absolute query tiles in the lists
    constexpr int HEAD_TABLES = {{HEAD_TABLES}};  // 1: one list per head; 0: shared by all heads
    constexpr float SCALE = {{SCALE}};  // 1 / sqrt(HD)
    constexpr float INV_SCALE = 1.0f / SCALE;  // _extra in units of a raw score
    constexpr float C2 = SCALE * 1.44269504088896341f;  // scale * log2(e): one FFMA before MUFU.EX2
    constexpr bool LANE_SUMS = HDP > 64;  // row sums by FADD per lane (else by MMA with ones: fewer instructions, 4 more registers)
    constexpr int RS = {{KV_HTD}} ? HD : KVH * HD;  // elements between consecutive key rows of K (and V)
    constexpr int RPP = THREADS / CH;  // rows per pass of a tile copy: thread t copies chunk t % CH of row t / CH
    constexpr int KPASS = (KT + RPP - 1) / RPP, QPASS = (QT + RPP - 1) / RPP;  // passes per K/V tile, per Q tile
    constexpr bool EVEN = THREADS % CH == 0 && KT % RPP == 0 && QT % RPP == 0;  // every pass row exists
    static_assert(HD % EPC == 0 && sizeof({{T_QKV}}) == sizeof(TE) && KT % 16 == 0 && KT <= 128 && CH <= THREADS, "attn_mma.cuh tiling");  // KT/4 mask bits per row
    constexpr int KBUF = {{PIA}} ? 3 : 2;  // key-tile buffers in shared memory: K, V (PIA: and Kp)
{{#if PIA}}
    constexpr int PW = 2 * H * HD;  // pos row stride: W_q p_s | W_k p_s
    static_assert(sizeof({{T_POS}}) == sizeof(TE) && {{BANDED}} && !{{GATHER}} && !{{RESIDUE}}, "attn_mma.cuh PIA: TE table, banded keys");
{{#endif}}
    SHORTC_DYNAMIC_SMEM(uint4, smem_raw);  // 16-byte aligned
    TE *const q_s = reinterpret_cast<TE *>(smem_raw);  // [QT][LD]: Q, then each warp's outputs over its rows
    TE *const k_s = q_s + QT * LD;  // [KT][LD]: the current key tile
    TE *const v_s = k_s + KT * LD;  // [KT][LD]: its values
{{#if PIA}}
    TE *const kp_s = v_s + KT * LD;  // [KT][LD]: the key tile's positional rows W_k p_s (PIA)
{{#endif}}
{{#if REL}}
    constexpr int NR = QT + KT;  // relative-key rows per tile: the band of QT + KT - 1 distances (and one spare)
    constexpr int NBW = KT + 16;  // band columns of one m16 row block: distances r - c + KT - 1 (r < 16, c < KT)
    constexpr int LDB = NBW + 8;  // fp32 row stride of a warp's band product
    constexpr int RPASS = (NR + RPP - 1) / RPP;  // passes per band copy
    static_assert(sizeof({{T_QKV}}) == sizeof(TE) && sizeof({{T_REL}}) == sizeof(TE) && sizeof(TE) == 2,
                  "REL: qkv and rel are of type TE, 2 bytes (fp32 keys keep the CUDA-core path)");
    TE *const r_s = v_s + KT * LD;  // [NR][LD]: the tile's band of relative keys, row b = distance q0 - kf - KT + 1 + b
    float *const u_s = reinterpret_cast<float *>(r_s + NR * LD);  // [HDP]: u
    unsigned *const vu_s = reinterpret_cast<unsigned *>(u_s + HDP);  // [HDP / 2]: v - u as pairs of TE (zeros past HD)
    float *const b_s = u_s + HDP + HDP / 2 + (threadIdx.x >> 5) * 16 * LDB;  // [16][LDB]: this warp's band product of one row block
{{#endif}}
{{#if GATHER}}
    int *const key_s = reinterpret_cast<int *>(v_s + KT * LD);  // [2][KT]: key positions of a gathered tile, -1: none
{{#endif}}

    const int h = blockIdx.y;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int g = lane >> 2, t4 = lane & 3;  // accumulator rows g, g+8; columns 2*t4, 2*t4+1
    const int cc = threadIdx.x % CH, cr = threadIdx.x / CH;  // this thread's copy chunk (column) and first row
    const bool copier = EVEN || cr < RPP;  // THREADS % CH threads copy nothing
{{#if RESIDUE}}
    // Residue kinds: a query tile holds the positions q0 + DIL*r (r < QT) of one residue res = i mod DIL;
    // tile index qt = (residue index of row 0 / QT) * DIL + res, so this call's queries lie in tiles [first, last].
    // The cost model's per-call choice (_plain): the plain tile loop is the same loop with dilation 1 and the
    // band's reach in positions (_span); its band tiles hold keys of every residue, so none is full unless the
    // head's dilation is 1.
    const bool plain = {{KERNEL_NAME}}_plain(P, T);
    const int DIL = plain ? 1 : {{KERNEL_NAME}}_dil(h);  // head h: the tiling's dilation
    const int RREACH = plain ? {{KERNEL_NAME}}_span(h) : {{KERNEL_NAME}}_reach(h);  // band taps in steps of DIL
    const int FREACH = !plain || {{KERNEL_NAME}}_dil(h) == 1 ? RREACH : 0;  // full band tiles lie within it (0: none)
    const int first = P / (DIL * QT) * DIL, last = (P + T - 1) / (DIL * QT) * DIL + DIL - 1;
    const int QS = DIL;  // positions between consecutive query rows
{{#else}}
    const int last = (P + T - 1) / QT;  // the last absolute query tile of this call (the first: P / QT)
    constexpr int QS = 1;  // positions between consecutive query rows
{{#endif}}
    const uint4 zero = make_uint4(0u, 0u, 0u, 0u);
    // This thread's chunk of key row 0 of head h in K (V: + VOFF elements).
{{#if KV_HTD}}
    const TE *const kthr = kv + (size_t)(h / (H / KVH)) * kv_rows * HD + cc * EPC;
    const size_t VOFF = (size_t)KVH * kv_rows * HD;
{{#else}}
    const TE *const kthr = kv + (size_t)(h / (H / KVH)) * HD + cc * EPC;
    const size_t VOFF = (size_t)kv_rows * KVH * HD;
{{#endif}}
{{#if PIA}}
    const TE *const pthr = reinterpret_cast<const TE *>(pos) + (H + h) * HD + cc * EPC;  // this thread's chunk of W_k p_0
{{#endif}}

    if (HD % 16 != 0) {  // the padding columns HD..HDP-1 must read as zeros: zero everything once
        constexpr int N16 = ((QT + KBUF * KT + ({{REL}} ? QT + KT : 0)) * LD * (int)sizeof(TE)) / 16;  // PIA: Kp (KBUF); REL: r_s (NR rows)
        for (int i = threadIdx.x; i < N16; i += THREADS) shortc_st128(&smem_raw[i], zero);
    }

    {  // one query tile per block (no loop counter lives across the key loop): the grid covers every tile
        const int qt = last - (int)blockIdx.x;  // the heaviest (causal: last) first
{{#if RESIDUE}}
        if (qt < first) return;  // below this call's first tile (block-uniform)
{{#else}}
        if ((qt + 1) * QT <= P) return;  // below this call's first tile (block-uniform)
{{#endif}}
{{#if RESIDUE}}
        const int res = qt % DIL, k0q = qt / DIL * QT;  // the tile's residue; residue index of its row 0
        const int q0 = res + DIL * k0q;  // position of row 0; row r is q0 + DIL*r
        const int rlo = q0 >= P ? 0 : (P - q0 + DIL - 1) / DIL;  // the first row of this call
        if (rlo >= QT || q0 + DIL * rlo >= P + T) return;  // no query of this call in the tile (block-uniform)
        const int nq = min(QT, (P + T - 1 - q0) / DIL + 1);  // rows below P+T
{{#else}}
        const int q0 = qt * QT;
{{#endif}}
{{#if REL}}
        const int mfirst = P - min(P, kv_rows), mring = kv_rows > 0 ? mfirst % kv_rows : 0;  // the memory's first key, its ring row
{{#endif}}
        const int qw = q0 + QS * warp * WR;  // this warp's first query

{{#if REL}}
        {  // u and v - u in shared memory (fp32), the biases read 16 bytes at a time
            constexpr int EPB = 16 / (int)sizeof({{T_B}});  // elements per 16 bytes
            for (int c = threadIdx.x; c < HDP / EPB; c += THREADS) {
                uint4 ru = zero, rv = zero;
                if (c * EPB < HD) {
                    ru = shortc_ld128(r_w + h * HD + c * EPB);
                    rv = shortc_ld128(r_r + h * HD + c * EPB);
                }
                const {{T_B}} *u = reinterpret_cast<const {{T_B}} *>(&ru), *v = reinterpret_cast<const {{T_B}} *>(&rv);
#pragma unroll
                for (int x = 0; x < EPB; x++) u_s[c * EPB + x] = shortc_ld(u + x);
#pragma unroll
                for (int x = 0; x < EPB; x += 2)
                    vu_s[(c * EPB + x) / 2] = shortc_pack2(TE(), shortc_ld(v + x) - shortc_ld(u + x), shortc_ld(v + x + 1) - shortc_ld(u + x + 1));
            }
        }
{{#endif}}
        __syncthreads();  // the previous tile's warps are done with q_s (outputs) and k_s, v_s
#pragma unroll
        for (int j = 0; j < QPASS; j++) {  // Q rows, converted to TE, 128-bit loads and stores
            const int r = cr + RPP * j, t = q0 + QS * r - P;
            if (!EVEN && (!copier || r >= QT)) continue;
            uint4 raw = zero, out;
            if (t >= 0 && t < T) raw = shortc_ld128(qkv + (size_t)t * QKVW + h * HD + cc * EPC);
            const {{T_QKV}} *src = reinterpret_cast<const {{T_QKV}} *>(&raw);
            TE *o8 = reinterpret_cast<TE *>(&out);
{{#if PIA}}
            uint4 praw = zero;  // the query's positional term W_q p_s of slot s = its position
            if (t >= 0 && t < T) praw = shortc_ld128(pos + (size_t)(q0 + QS * r) * PW + h * HD + cc * EPC);
            const TE *p8 = reinterpret_cast<const TE *>(&praw);
#pragma unroll
            for (int x = 0; x < EPC; x++) shortc_frag_st_op(o8 + x, shortc_ld(src + x) + shortc_ld(p8 + x));  // summed in fp32
{{#else}}
{{#if REL}}
#pragma unroll
            for (int x = 0; x < EPC; x++)  // q + u (padding rows stay zero)
                shortc_frag_st_op(o8 + x, shortc_ld(src + x) + (t >= 0 && t < T ? u_s[cc * EPC + x] : 0.0f));
{{#else}}
#pragma unroll
            for (int x = 0; x < EPC; x++) shortc_frag_st_op(o8 + x, shortc_ld(src + x));  // fp32: rounded to TF32 once
{{#endif}}
{{#endif}}
            shortc_st128(q_s + r * LD + cc * EPC, out);
        }

{{#if RESIDUE}}
        // Residue kinds: the global tiles first (keys [0, globals) up to the tile's last query), then residue
        // res's band in residue coordinates: key tiles kb in [b0, b1) of KT rows res + DIL*(kb*KT + r), the
        // band keys below globals left to the global tiles.
        const int qmax = q0 + DIL * (nq - 1);  // the tile's last query below P+T
        const int gend = min({{KERNEL_NAME}}_globals, P + T);  // global keys that exist
        const int ng = (min({{KERNEL_NAME}}_globals, qmax + 1) + KT - 1) / KT;
        const int kg = {{KERNEL_NAME}}_globals > res ? ({{KERNEL_NAME}}_globals - res + DIL - 1) / DIL : 0;  // first band key not global
        const int b0 = max(max(0, k0q - RREACH + 1), kg) / KT, b1 = (k0q + nq - 1) / KT + 1;
        const int e0 = 0, e1 = ng + max(0, b1 - b0);
        // First key of the tile at entry e.
        auto kfirst_of = [&](int e) { return e < ng ? e * KT : res + DIL * (b0 + e - ng) * KT; };
{{#else}}
{{#if BANDED}}
        // Banded kinds: the key tiles overlapping [q0 - reach + 1, q0 + QT - 1], in closed form.
        const int e0 = max(0, q0 - {{KERNEL_NAME}}_reach + 1) / KT, e1 = (q0 + QT - 1) / KT + 1;
        auto kfirst_of = [&](int e) { return e * KT; };
{{#else}}
        const int list = (HEAD_TABLES ? h * NQT : 0) + qt;
        const int e0 = qt < NQT ? {{KERNEL_NAME}}_off[list] : 0;
        const int e1 = qt < NQT ? {{KERNEL_NAME}}_off[list + 1] : 0;
{{#if GATHER}}
        auto kfirst_of = [&](int e) { return {{KERNEL_NAME}}_ent[e]; };
{{#else}}
        auto kfirst_of = [&](int e) { return ({{KERNEL_NAME}}_ent[e] >> 1) * KT; };
{{#endif}}
{{#endif}}
{{#endif}}
        // The tile at entry e exists: inside the list, and its first key below P+T (lists ascend).
        auto tile_exists = [&](int e) { return e < e1 && kfirst_of(e) < P + T; };
        // Whether every query of the tile sees every key of the tile at entry e (no per-score test).
        auto tile_full = [&](int e) {
{{#if RESIDUE}}
            const int kb = b0 + e - ng;
            return e < ng ? (e + 1) * KT <= {{KERNEL_NAME}}_globals && q0 >= (e + 1) * KT - 1
                          : kb * KT + KT - 1 <= k0q && k0q + QT - 1 - kb * KT < FREACH && kfirst_of(e) >= {{KERNEL_NAME}}_globals;
{{#else}}
{{#if BANDED}}
            const int kf = e * KT;
{{#if REL}}
            return {{KERNEL_NAME}}_full_tile(q0, QT, kf, KT);  // the memory's first key moves with P
{{#else}}
            return kf + KT - 1 <= q0 && q0 + QT - 1 - kf < {{KERNEL_NAME}}_reach;
{{#endif}}
{{#else}}
{{#if GATHER}}
            (void)e;
            return false;  // gathered keys are always mask-tested
{{#else}}
            return ({{KERNEL_NAME}}_ent[e] & 1) != 0;
{{#endif}}
{{#endif}}
{{#endif}}
        };
        // Whether every key row of the tile at entry e exists (below the call's keys: no zero rows).
        auto tile_whole = [&](int e) {
{{#if GATHER}}
            (void)e;
            return false;
{{#else}}
{{#if RESIDUE}}
            return e < ng ? kfirst_of(e) + KT <= gend : kfirst_of(e) + DIL * (KT - 1) < P + T;
{{#else}}
            return kfirst_of(e) + KT <= P + T;
{{#endif}}
{{#endif}}
        };
        // Issues the copies of the K (src = kthr) or V (src = kthr + VOFF) rows of the tile at entry e into
        // buf (n: the tile's parity, for a gathered tile's key positions); rows with no key are zeros. whole:
        // the tile is whole (tile_whole), so no row is tested.
        auto load_tile = [&](int e, int n, TE *buf, const TE *src, bool whole) {
            (void)n, (void)whole;
{{#if GATHER}}
#pragma unroll
            for (int j = 0; j < KPASS; j++) {
                const int r = cr + RPP * j;
                if (!EVEN && (!copier || r >= KT)) continue;
                const int key = e + r < e1 ? {{KERNEL_NAME}}_ent[e + r] : -1;
                const bool have = key >= 0 && key < P + T;
                if (buf == k_s && cc == 0) key_s[n * KT + r] = have ? key : -1;
                if (have) shortc_cp_async_16(buf + r * LD + cc * EPC, src + (size_t)key * RS);
                else shortc_st128(buf + r * LD + cc * EPC, zero);
            }
{{#else}}
            const int kf = kfirst_of(e);
{{#if REL}}
            // Transformer-XL: key t >= P is this call's (qkv), an earlier one the memory's ring row t mod kv_rows
            // (kv); rows below the memory's first position or at P+T and beyond are zeros. With K, the tile's
            // band of relative keys: row b of r_s is distance q0 - kf - KT + 1 + b clamped to [0, _last_row].
            (void)src, (void)whole;
            const int part = buf == v_s;  // 0: keys, 1: values
            const TE *const qkv_e = reinterpret_cast<const TE *>(qkv) + (1 + part) * H * HD + h * HD + cc * EPC;  // row P
            const TE *const mem_e = kv + (size_t)part * kv_rows * H * HD + h * HD + cc * EPC;  // ring row 0
            {
#pragma unroll
                for (int j = 0; j < KPASS; j++) {
                    const int r = cr + RPP * j, t = kf + r;
                    if (!EVEN && (!copier || r >= KT)) continue;
                    const int ring = t - mfirst + mring;  // memory key t's ring row, t mod kv_rows (t - mfirst < kv_rows)
                    if (t >= mfirst && t < P + T)
                        shortc_cp_async_16(buf + r * LD + cc * EPC, t >= P ? qkv_e + (size_t)(t - P) * (3 * H * HD)
                                                                         : mem_e + (size_t)(ring < kv_rows ? ring : ring - kv_rows) * (H * HD));
                    else
                        shortc_st128(buf + r * LD + cc * EPC, zero);
                }
            }
            if (!part) {  // the band of relative keys, rows dmin .. dmin + NR - 1 clamped to [0, _last_row]
                const int dmin = q0 - kf - KT + 1;  // the distance of band row 0
                const TE *const rel_e = reinterpret_cast<const TE *>(rel) + h * HD + cc * EPC;
                {
#pragma unroll
                    for (int j = 0; j < RPASS; j++) {
                        const int r = cr + RPP * j;
                        if ((!EVEN || NR % RPP != 0) && (!copier || r >= NR)) continue;
                        const int d = min(max(dmin + r, 0), {{KERNEL_NAME}}_last_row);  // negative: never visible
                        shortc_cp_async_16(r_s + r * LD + cc * EPC, rel_e + (size_t)d * (H * HD));
                    }
                }
            }
{{#else}}
{{#if RESIDUE}}
            const int ks = e < ng ? 1 : DIL;  // positions between the tile's key rows
            const TE *row = src + (size_t)(kf + ks * cr) * RS;  // this thread's chunk of row cr
            const size_t pass = (size_t)ks * RPP * RS;  // elements between its rows
{{#else}}
            const TE *row = src + (size_t)(kf + cr) * RS;  // this thread's chunk of row cr
            constexpr int pass = RPP * RS;  // elements between its rows
{{#endif}}
{{#if PIA}}
            const bool kpos = buf == k_s;  // a key tile: its positional rows W_k p_s into kp_s as well
            const TE *prow = pthr + (size_t)(kf + cr) * PW;  // this thread's chunk of the positional row cr
{{#endif}}
            if (whole) {  // block-uniform: no test per row
#pragma unroll
                for (int j = 0; j < KPASS; j++)
                    if (EVEN || (copier && cr + RPP * j < KT)) {
                        shortc_cp_async_16(buf + (cr + RPP * j) * LD + cc * EPC, row + j * pass);
{{#if PIA}}
                        if (kpos) shortc_cp_async_16(kp_s + (cr + RPP * j) * LD + cc * EPC, prow + (size_t)j * RPP * PW);
{{#endif}}
                    }
            } else {
{{#if RESIDUE}}
                const int rows = e < ng ? min(KT, gend - kf) : min(KT, (P + T - kf + DIL - 1) / DIL);  // rows that exist
{{#else}}
                const int rows = min(KT, P + T - kf);  // rows that exist
{{#endif}}
#pragma unroll
                for (int j = 0; j < KPASS; j++) {
                    const int r = cr + RPP * j;
                    if (!EVEN && (!copier || r >= KT)) continue;
                    if (r < rows) shortc_cp_async_16(buf + r * LD + cc * EPC, row + j * pass);
                    else shortc_st128(buf + r * LD + cc * EPC, zero);
{{#if PIA}}
                    if (kpos && r < rows) shortc_cp_async_16(kp_s + r * LD + cc * EPC, prow + (size_t)j * RPP * PW);
                    else if (kpos) shortc_st128(kp_s + r * LD + cc * EPC, zero);
{{#endif}}
                }
            }
{{#endif}}
{{#endif}}
        };
        // Position of key column col of the tile at entry e (parity n, first key kf); -1: no key there.
        auto key_at = [&](int e, int n, int kf, int col) {
            (void)e, (void)n;
{{#if GATHER}}
            (void)kf;
            return key_s[n * KT + col];
{{#else}}
{{#if RESIDUE}}
            const int key = e < ng ? kf + col : kf + DIL * col;
            return key >= (e < ng ? 0 : {{KERNEL_NAME}}_globals) && key < (e < ng ? gend : P + T) ? key : -1;
{{#else}}
            return kf + col < P + T ? kf + col : -1;
{{#endif}}
{{#endif}}
        };

        float o[MB][HDP / 8][4], m[MB][2], l[MB][4];  // outputs, row maxima (raw scores), row sums (shortc_frag_row_sums)
#pragma unroll
        for (int mb = 0; mb < MB; mb++) {
#pragma unroll
            for (int j = 0; j < HDP / 8; j++) o[mb][j][0] = o[mb][j][1] = o[mb][j][2] = o[mb][j][3] = 0.0f;
            m[mb][0] = m[mb][1] = shortc_frag_neg_inf();
            l[mb][0] = l[mb][1] = l[mb][2] = l[mb][3] = 0.0f;
        }

        int e = e0, n = 0;  // the current tile's list entry and parity
        bool pending = false;  // K(e) is not issued yet (a full step leaves a next tile that is not whole)
        // One key tile: K(e) was issued by the previous step (or before the first); issues V(e), then K of
        // the next tile; MASKED (partial tiles): _visible and the key bounds per score. A full tile (!MASKED)
        // is whole, and issues the next K only
        // when that is whole too (else pending): its code tests no row. Returns whether a next tile exists
        // (e, n then name it).
        auto step = [&](const bool MASKED) {  // called with constants: each call inlines one path
            shortc_cp_async_wait<0>();
            __syncthreads();  // K(e) is in k_s; every warp is done with v_s
            load_tile(e, n, v_s, kthr + VOFF, !MASKED || tile_whole(e));
            shortc_cp_async_commit();
            const int kf = kfirst_of(e);
            float s[MB][KT / 8][4];
            // Partial tiles: bit 2j + (x & 1) of seen[mb][x >> 1]: the key of score s[mb][j][x] exists and is
            // visible to its query, found before the scores exist (fewer registers live).
            unsigned seen[MB][2] = {};
            {  // every warp computes every tile (skipping a warp whose rows all precede the tile costs registers)
{{#if COUNT_TILES}}
                if (lane == 0) atomicAdd(&{{KERNEL_NAME}}_warp_tiles, 1u);  // instrumented builds (tests/costdoc)
{{#endif}}
                if (MASKED)
#pragma unroll
                    for (int mb = 0; mb < MB; mb++)
#pragma unroll
                        for (int j = 0; j < KT / 8; j++)
#pragma unroll
                            for (int x = 0; x < 4; x++) {
                                const int q = qw + QS * (16 * mb + g + 8 * (x >> 1)), key = key_at(e, n, kf, 8 * j + 2 * t4 + (x & 1));
                                if (key >= 0 && {{KERNEL_NAME}}_visible(h, q, key)) seen[mb][x >> 1] |= 1u << (2 * j + (x & 1));
                            }
#pragma unroll
                for (int mb = 0; mb < MB; mb++)
#pragma unroll
                    for (int j = 0; j < KT / 8; j++) s[mb][j][0] = s[mb][j][1] = s[mb][j][2] = s[mb][j][3] = 0.0f;
{{#if REL}}
                // The position term first (the scores of one m16 row block live, not all: fewer registers), a block at a time: B = (q + v) R_band^T over the
                // block's NBW band rows (from 32 warp + 16 mb), staged in b_s; score (r, c) adds B[r][r - c + KT - 1].
#pragma unroll
                for (int mb = 0; mb < MB; mb++) {
                    unsigned qv[HDP / 16][4];  // the A fragments of q + v = (q + u) + (v - u)
#pragma unroll
                    for (int kk = 0; kk < HDP / 16; kk++) {
                        shortc_frag_load_a(qv[kk], q_s + (warp * WR + 16 * mb) * LD + kk * 16, LD);
                        shortc_frag_add_cols<TE>(qv[kk], vu_s + kk * 8);
                    }
                    __syncwarp();  // the previous block's reads of b_s are done
#pragma unroll
                    for (int nb = 0; nb < NBW / 16; nb++) {  // 16 band rows at a time: 8 accumulators live
                        float bp[2][4] = {};
#pragma unroll
                        for (int kk = 0; kk < HDP / 16; kk++) {
                            unsigned bf[4];
                            shortc_frag_load_kt(bf, r_s + (warp * WR + 16 * mb + nb * 16) * LD + kk * 16, LD);
                            shortc_frag_mma(TE(), bp[0], qv[kk], bf);
                            shortc_frag_mma(TE(), bp[1], qv[kk], bf + 2);
                        }
#pragma unroll
                        for (int j = 0; j < 2; j++)
#pragma unroll
                            for (int x = 0; x < 4; x++) b_s[(g + 8 * (x >> 1)) * LDB + 16 * nb + 8 * j + 2 * t4 + (x & 1)] = bp[j][x];
                    }
                    __syncwarp();
#pragma unroll
                    for (int j = 0; j < KT / 8; j++)
#pragma unroll
                        for (int x = 0; x < 4; x++) {
                            const int r = g + 8 * (x >> 1), c = 8 * j + 2 * t4 + (x & 1);
                            s[mb][j][x] = b_s[r * LDB + r - c + KT - 1];  // the relative shift (the content MMA adds q.k)
                        }
                }
{{#endif}}
#pragma unroll
                for (int kk = 0; kk < HDP / KS; kk++) {
                    unsigned qa[MB][4];
#pragma unroll
                    for (int mb = 0; mb < MB; mb++) shortc_frag_load_a(qa[mb], q_s + (warp * WR + 16 * mb) * LD + kk * KS, LD);
#pragma unroll
                    for (int nb = 0; nb < KT / 16; nb++) {
                        unsigned bf[4];
                        shortc_frag_load_kt(bf, k_s + nb * 16 * LD + kk * KS, LD);
#pragma unroll
                        for (int mb = 0; mb < MB; mb++) {
                            shortc_frag_mma(TE(), s[mb][2 * nb], qa[mb], bf);
                            shortc_frag_mma(TE(), s[mb][2 * nb + 1], qa[mb], bf + 2);
                        }
{{#if PIA}}
                        shortc_frag_load_kt(bf, kp_s + nb * 16 * LD + kk * KS, LD);  // + q.(W_k p_s), accumulated in fp32
#pragma unroll
                        for (int mb = 0; mb < MB; mb++) {
                            shortc_frag_mma(TE(), s[mb][2 * nb], qa[mb], bf);
                            shortc_frag_mma(TE(), s[mb][2 * nb + 1], qa[mb], bf + 2);
                        }
{{#endif}}
                    }
                }
#pragma unroll
                for (int mb = 0; mb < MB; mb++)
#pragma unroll
                    for (int j = 0; j < KT / 8; j++)
#pragma unroll
                        for (int x = 0; x < 4; x++) {
                            const int q = qw + QS * (16 * mb + g + 8 * (x >> 1)), key = key_at(e, n, kf, 8 * j + 2 * t4 + (x & 1));
                            // + _extra in raw-score units (0 - 0 leaves s as it is: no instruction)
                            const float sx = s[mb][j][x] - (0.0f - {{KERNEL_NAME}}_extra(h, q, key)) * INV_SCALE;
                            if (MASKED) s[mb][j][x] = seen[mb][x >> 1] >> (2 * j + (x & 1)) & 1u ? sx : shortc_frag_neg_inf();
                            else s[mb][j][x] = sx;
                        }
            }
            const int en = e + STEP;
            const bool next = tile_exists(en), nwhole = next && tile_whole(en);
            shortc_cp_async_wait<0>();
            __syncthreads();  // V(e) is in v_s; every warp is done with k_s
            if (next && (MASKED || nwhole)) {
{{#if COUNT_TILES}}
                if (threadIdx.x == 0) atomicAdd(&{{KERNEL_NAME}}_tiles_loaded, 1u);  // instrumented builds (tests/bench)
{{#endif}}
                load_tile(en, n ^ 1, k_s, kthr, MASKED ? nwhole : true);
            }
            shortc_cp_async_commit();
            pending = next && !MASKED && !nwhole;
            {
#pragma unroll
                for (int mb = 0; mb < MB; mb++) shortc_frag_online_exp2<KT / 8, HDP / 8, LANE_SUMS>(s[mb], o[mb], m[mb], l[mb], C2);
#pragma unroll
                for (int kk = 0; kk < KT / KS; kk++) {  // k blocks of keys: 16 (two n8 score blocks), TF32 8 (one)
                    unsigned pa[MB][4];
#pragma unroll
                    for (int mb = 0; mb < MB; mb++) {
                        if constexpr (KS == 16) shortc_frag_pack_p<TE>(pa[mb], s[mb][2 * kk], s[mb][2 * kk + 1]);
                        else shortc_frag_pack_p_tf32(pa[mb], s[mb][kk]);
                        if (!LANE_SUMS) shortc_frag_row_sums<TE>(l[mb], pa[mb]);  // the rows summed as P V weighs them
                    }
#pragma unroll
                    for (int nb = 0; nb < HDP / 16; nb++) {
                        unsigned bf[4];
                        shortc_frag_load_v(bf, v_s + kk * KS * LD + nb * 16, LD);
#pragma unroll
                        for (int mb = 0; mb < MB; mb++) {
                            shortc_frag_mma(TE(), o[mb][2 * nb], pa[mb], bf);
                            shortc_frag_mma(TE(), o[mb][2 * nb + 1], pa[mb], bf + 2);
                        }
                    }
                }
            }
            e = en;
            n ^= 1;
            return next;
        };

        bool have = tile_exists(e0);
        if (have) {
{{#if COUNT_TILES}}
            if (threadIdx.x == 0) atomicAdd(&{{KERNEL_NAME}}_tiles_loaded, 1u);  // instrumented builds (tests/bench)
{{#endif}}
            load_tile(e0, 0, k_s, kthr, tile_whole(e0));
        }
        shortc_cp_async_commit();
        while (have) {
            if (pending) {  // k_s is free: the last step's second barrier passed
{{#if COUNT_TILES}}
                if (threadIdx.x == 0) atomicAdd(&{{KERNEL_NAME}}_tiles_loaded, 1u);  // instrumented builds (tests/bench)
{{#endif}}
                load_tile(e, n, k_s, kthr, false);
                shortc_cp_async_commit();
                pending = false;
            }
            if (!tile_full(e)) have = step(true);
            else  // the main loop: a run of full tiles
                do have = step(false);
                while (have && !pending && tile_full(e));
        }

        // Outputs: O / l, rows of this call only.
        float sum[MB][2];  // row sums (whole rows)
#pragma unroll
        for (int mb = 0; mb < MB; mb++)
#pragma unroll
            for (int x = 0; x < 2; x++) sum[mb][x] = LANE_SUMS ? shortc_frag_quad_sum(l[mb][2 * x]) : l[mb][2 * x];
{{#if REC_KEY}}
        float flag;  // h_prev's present flag
        if constexpr (sizeof({{T_XKV}}) == 4) {
            flag = shortc_ld(xkv + 2 * H * HD);
        } else {  // no 16-bit global load: the 32 bits from the flag (volatile: not narrowed), 2 bytes past the end (arena: 256-aligned)
            const unsigned w = *reinterpret_cast<const volatile unsigned *>(xkv + 2 * H * HD);
            flag = shortc_ld(reinterpret_cast<const {{T_XKV}} *>(&w));
        }
        if (flag != 0.0f) {  // the recurrence's key source: h_prev, one more key every query sees (block-uniform)
            __syncthreads();  // q_s written (when no key tile ran, no barrier followed the staging)
            float sx[MB][2] = {};  // this lane's part of q . k_prev, rows g and g+8 of each block
#pragma unroll
            for (int j = 0; j < HDP / 8; j++) {
                const int d = 8 * j + 2 * t4;  // the lane's output columns d, d+1: the quad covers the row
                if (HD % 16 == 0 || d < HD) {
                    float k2[2], q2[2];
                    shortc_frag_ld2(xkv + h * HD + d, k2);
#pragma unroll
                    for (int mb = 0; mb < MB; mb++)
#pragma unroll
                        for (int x = 0; x < 2; x++) {
                            shortc_frag_ld2(q_s + (warp * WR + 16 * mb + g + 8 * x) * LD + d, q2);
                            sx[mb][x] += q2[0] * k2[0] + q2[1] * k2[1];
                        }
                }
            }
            float corr[MB][2], p[MB][2];  // the rows' rescale to the new maximum, the extra key's weight
#pragma unroll
            for (int mb = 0; mb < MB; mb++)
#pragma unroll
                for (int x = 0; x < 2; x++) {
                    const float s1 = shortc_frag_quad_sum(sx[mb][x]), m1 = fmaxf(m[mb][x], s1);
                    corr[mb][x] = shortc_exp2((m[mb][x] - m1) * C2);  // 0 for a row that saw no key (m = -inf)
                    p[mb][x] = shortc_exp2((s1 - m1) * C2);
                    sum[mb][x] = sum[mb][x] * corr[mb][x] + p[mb][x];
                }
#pragma unroll
            for (int j = 0; j < HDP / 8; j++) {
                const int d = 8 * j + 2 * t4;
                float v2[2] = {0.0f, 0.0f};
                if (HD % 16 == 0 || d < HD) shortc_frag_ld2(xkv + (H + h) * HD + d, v2);
#pragma unroll
                for (int mb = 0; mb < MB; mb++)
#pragma unroll
                    for (int x = 0; x < 2; x++)
#pragma unroll
                        for (int c = 0; c < 2; c++) o[mb][j][2 * x + c] = o[mb][j][2 * x + c] * corr[mb][x] + p[mb][x] * v2[c];
            }
        }
{{#endif}}
        float inv[MB][2];
#pragma unroll
        for (int mb = 0; mb < MB; mb++)
#pragma unroll
            for (int x = 0; x < 2; x++) inv[mb][x] = sum[mb][x] > 0.0f ? 1.0f / sum[mb][x] : 0.0f;
        shortc_frag_store_rows<H, HD, HDP, LD, MB>(y, q_s + warp * WR * LD, o, inv, qw - P, QS, T, h);
    }
}
