/*
 * sim_hopper.c — the data side of the simulator's Hopper intrinsics
 * (docs/attention/hopper.md): wgmma shared-memory matrix descriptors decoded
 * into element addresses, the shared-memory swizzle, and tensor maps
 * (cuTensorMapEncodeTiled) with the boxes TMA moves. Pure functions: the
 * core (sim_core.c) gathers the warpgroup, owns the mbarriers and reports
 * the faults these functions describe.
 */
#include "sim.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Writes a message into err (errlen bytes) and returns -1. */
__attribute__((format(printf, 3, 4))) static int fail(char *err, size_t errlen, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

size_t sim_swizzle(size_t off, int span) {
    if (span == 0) return off;
    size_t mask = (size_t)span / 16 - 1; /* 128: bits 4-6 ^= bits 7-9; 64: 4-5 ^= 7-8; 32: 4 ^= 7 */
    return off ^ (((off >> 7) & mask) << 4);
}

/* The swizzle span in bytes of a descriptor's layout type (bits 62-63). */
static int desc_span(uint64_t desc) {
    static const int span[4] = {0, 128, 64, 32};
    return span[desc >> 62];
}

int sim_wgmma_offsets(uint64_t desc, int mn, int trans, uint32_t *off, char *err, size_t errlen) {
    uint32_t start = (uint32_t)(desc & 0x3fff) << 4;
    uint32_t lbo = (uint32_t)(desc >> 16 & 0x3fff) << 4;
    uint32_t sbo = (uint32_t)(desc >> 32 & 0x3fff) << 4;
    unsigned base_offset = (unsigned)(desc >> 49 & 7);
    int span = desc_span(desc);
    /* bits 14-15, 30-31, 46-48 and 52-61 are reserved (sm_90) */
    const uint64_t reserved = (3ull << 14) | (3ull << 30) | (7ull << 46) | (0x3ffull << 52);
    if (desc & reserved) return fail(err, errlen, "descriptor 0x%016llx sets reserved bits", (unsigned long long)desc);
    if (base_offset)
        return fail(err, errlen,
                    "descriptor 0x%016llx has base offset %u: the simulator takes swizzle patterns "
                    "from the address bits and wants a start address in the first row of a swizzle atom instead",
                    (unsigned long long)desc, base_offset);
    if (span) {
        uint32_t atom = 8u * (uint32_t)span; /* the pattern repeats every 8 rows of span bytes */
        if (start % atom >= (uint32_t)span)
            return fail(err, errlen,
                        "descriptor start address %u is not in the first row of a %u-byte swizzle atom "
                        "(%d-byte swizzle: the tile must start at a multiple of %u bytes, plus at most %d bytes "
                        "along K)",
                        start, atom, span, atom, span - 32);
        if (!trans && start % (uint32_t)span + 32 > (uint32_t)span)
            return fail(err, errlen,
                        "descriptor start address %u: the 16 K elements (32 bytes) of the slice cross "
                        "a %d-byte swizzled row",
                        start, span);
        if (trans && start % (uint32_t)span)
            return fail(err, errlen,
                        "descriptor start address %u of an MN-major operand is not a multiple of the "
                        "%d-byte swizzle row",
                        start, span);
    }
    int width = span ? span / 2 : 8; /* elements of one row (K-major) or of one MN run (MN-major) */
    if (!trans && mn > 8 && sbo == 0)
        return fail(err, errlen, "descriptor 0x%016llx: stride byte offset 0 for a K-major operand of %d rows",
                    (unsigned long long)desc, mn);
    if (!trans && !span && lbo == 0)
        return fail(err, errlen,
                    "descriptor 0x%016llx: leading byte offset 0 for an unswizzled K-major operand "
                    "(its two 8-element K halves would alias)",
                    (unsigned long long)desc);
    if (trans && sbo == 0)
        return fail(err, errlen,
                    "descriptor 0x%016llx: stride byte offset 0 for an MN-major operand (its two "
                    "8-row K halves would alias)",
                    (unsigned long long)desc);
    if (trans && mn > width && lbo == 0)
        return fail(err, errlen,
                    "descriptor 0x%016llx: leading byte offset 0 for an MN-major operand of %d "
                    "columns (more than the %d of one %s)",
                    (unsigned long long)desc, mn, width, span ? "swizzled row" : "core matrix");
    for (int i = 0; i < mn; i++)
        for (int k = 0; k < 16; k++) {
            uint32_t a;
            if (!trans && !span)
                a = start + (uint32_t)(i / 8) * sbo + (uint32_t)(i % 8) * 16 + (uint32_t)(k / 8) * lbo +
                    (uint32_t)(k % 8) * 2;
            else if (!trans)
                a = start + (uint32_t)(i / 8) * sbo + (uint32_t)(i % 8) * (uint32_t)span + (uint32_t)k * 2;
            else if (!span)
                a = start + (uint32_t)(i / 8) * sbo + (uint32_t)(i % 8) * 2 + (uint32_t)(k / 8) * lbo +
                    (uint32_t)(k % 8) * 16;
            else
                a = start + (uint32_t)(i / width) * lbo + (uint32_t)(i % width) * 2 +
                    (uint32_t)(k % 8) * (uint32_t)span + (uint32_t)(k / 8) * sbo;
            off[i * 16 + k] = (uint32_t)sim_swizzle(a, span);
        }
    return 0;
}

/* ---- tensor maps ------------------------------------------------------ */

/* Bytes per element of a CUtensorMapDataType the simulator supports; 0 for the others. */
static int elem_bytes(CUtensorMapDataType t) {
    switch (t) {
    case CU_TENSOR_MAP_DATA_TYPE_UINT8:
        return 1;
    case CU_TENSOR_MAP_DATA_TYPE_UINT16:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT16:
    case CU_TENSOR_MAP_DATA_TYPE_BFLOAT16:
        return 2;
    case CU_TENSOR_MAP_DATA_TYPE_UINT32:
    case CU_TENSOR_MAP_DATA_TYPE_INT32:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT32:
        return 4;
    case CU_TENSOR_MAP_DATA_TYPE_UINT64:
    case CU_TENSOR_MAP_DATA_TYPE_INT64:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT64:
        return 8;
    default:
        return 0;
    }
}

/* The span in bytes of a CUtensorMapSwizzle; -1 for a mode the simulator does not know. */
static int swizzle_span(CUtensorMapSwizzle s) {
    switch (s) {
    case CU_TENSOR_MAP_SWIZZLE_NONE:
        return 0;
    case CU_TENSOR_MAP_SWIZZLE_32B:
        return 32;
    case CU_TENSOR_MAP_SWIZZLE_64B:
        return 64;
    case CU_TENSOR_MAP_SWIZZLE_128B:
        return 128;
    default:
        return -1;
    }
}

int sim_tmap_encode(ShortsimTensorMap *m, CUtensorMapDataType type, unsigned rank, const void *addr,
                    const uint64_t *dims, const uint64_t *strides, const unsigned *box, const unsigned *estrides,
                    CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle, CUtensorMapFloatOOBfill oob,
                    char *err, size_t errlen) {
    memset(m, 0, sizeof *m);
    int eb = elem_bytes(type), span = swizzle_span(swizzle);
    if (!eb) return fail(err, errlen, "data type %d is not supported by the simulator", (int)type);
    if (rank < 1 || rank > 5) return fail(err, errlen, "rank %u (must be 1 to 5)", rank);
    if (!addr || (uintptr_t)addr % 16) return fail(err, errlen, "global address %p is not 16-byte aligned", addr);
    if (!dims || !box || !estrides || (rank > 1 && !strides)) return fail(err, errlen, "a NULL array argument");
    if (interleave != CU_TENSOR_MAP_INTERLEAVE_NONE)
        return fail(err, errlen, "interleaved layouts are not supported by the simulator");
    if (span < 0) return fail(err, errlen, "swizzle mode %d is not supported by the simulator", (int)swizzle);
    for (unsigned d = 0; d < rank; d++) {
        if (dims[d] == 0 || dims[d] >= (1ull << 32))
            return fail(err, errlen, "globalDim[%u] = %llu (must be 1 to 2^32-1)", d, (unsigned long long)dims[d]);
        if (box[d] == 0 || box[d] > 256) return fail(err, errlen, "boxDim[%u] = %u (must be 1 to 256)", d, box[d]);
        if (estrides[d] != 1)
            return fail(err, errlen, "elementStrides[%u] = %u: the simulator supports 1 only", d, estrides[d]);
        if (d > 0 && (strides[d - 1] % 16 || strides[d - 1] >= (1ull << 40)))
            return fail(err, errlen, "globalStrides[%u] = %llu (must be a multiple of 16 below 2^40)", d - 1,
                        (unsigned long long)strides[d - 1]);
    }
    unsigned inner = box[0] * (unsigned)eb;
    if (inner % 16) return fail(err, errlen, "boxDim[0] * element size = %u bytes is not a multiple of 16", inner);
    if (span && inner > (unsigned)span)
        return fail(err, errlen, "boxDim[0] * element size = %u bytes exceeds the %d-byte swizzle span", inner, span);
    m->magic = SHORTSIM_TMAP_MAGIC;
    m->rank = (unsigned char)rank;
    m->elem = (unsigned char)eb;
    m->swizzle = (unsigned char)span;
    m->oob_nan = oob == CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA;
    m->base = (unsigned long long)(uintptr_t)addr;
    for (unsigned d = 0; d < rank; d++) {
        m->dim[d] = (unsigned)dims[d];
        m->box[d] = (unsigned short)box[d];
        if (d > 0) m->stride[d - 1] = strides[d - 1];
    }
    return 0;
}

size_t sim_tmap_extent(const ShortsimTensorMap *m) {
    size_t last = m->elem;
    for (int d = 0; d < m->rank; d++) last += (size_t)(m->dim[d] - 1) * (d == 0 ? m->elem : m->stride[d - 1]);
    return last;
}

size_t sim_tmap_box_bytes(const ShortsimTensorMap *m) {
    size_t n = m->elem;
    for (int d = 0; d < m->rank; d++) n *= m->box[d];
    return n;
}

/* Calls fn for each element of the box at coord: its offset in the dense box and its global address
 * (NULL when out of bounds). */
static void box_walk(const ShortsimTensorMap *m, const int *coord,
                     void (*fn)(void *ctx, size_t off, unsigned char *g, int elem), void *ctx) {
    unsigned idx[5] = {0};
    size_t total = sim_tmap_box_bytes(m) / m->elem;
    for (size_t e = 0; e < total; e++) {
        size_t rem = e;
        int inside = 1;
        uintptr_t g = (uintptr_t)m->base;
        for (int d = 0; d < m->rank; d++) {
            idx[d] = (unsigned)(rem % m->box[d]);
            rem /= m->box[d];
            long long c = (long long)coord[d] + idx[d];
            if (c < 0 || c >= (long long)m->dim[d])
                inside = 0;
            else
                g += (uintptr_t)c * (d == 0 ? m->elem : m->stride[d - 1]);
        }
        fn(ctx, e * m->elem, inside ? (unsigned char *)g : NULL, m->elem);
    }
}

typedef struct BoxCtx {
    unsigned char *buf; /* the dense box */
    int nan;            /* out-of-bounds reads give NaN */
} BoxCtx;

static void gather_elem(void *ctx, size_t off, unsigned char *g, int elem) {
    BoxCtx *c = ctx;
    if (g)
        memcpy(c->buf + off, g, (size_t)elem);
    else if (!c->nan)
        memset(c->buf + off, 0, (size_t)elem);
    else if (elem == 4)
        memcpy(c->buf + off, &(uint32_t){0x7fc00000u}, 4);
    else if (elem == 2)
        memcpy(c->buf + off, &(uint16_t){0x7e00u}, 2); /* fp16 NaN */
    else
        memset(c->buf + off, 0xff, (size_t)elem);
}

static void scatter_elem(void *ctx, size_t off, unsigned char *g, int elem) {
    BoxCtx *c = ctx;
    if (g) memcpy(g, c->buf + off, (size_t)elem);
}

void sim_tma_gather(const ShortsimTensorMap *m, const int *coord, unsigned char *buf) {
    BoxCtx c = {buf, m->oob_nan};
    box_walk(m, coord, gather_elem, &c);
}

void sim_tma_scatter(const ShortsimTensorMap *m, const int *coord, const unsigned char *buf) {
    BoxCtx c = {(unsigned char *)buf, 0};
    box_walk(m, coord, scatter_elem, &c);
}
