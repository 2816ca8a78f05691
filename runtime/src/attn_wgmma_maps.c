/*
 * attn_wgmma_maps.c — the tensor maps of the sm_90a attention kernel
 * (rt_attn_wgmma.h; the layouts are in docs/attention/hopper.md).
 */
#include "rt_attn_wgmma.h"

#include <stdio.h>

/* The map {D, rows, H} at base (rows and heads `row_stride` and `head_stride` elements apart). */
static CUresult encode_3d(const RtDriver *d, CUtensorMap *map, const RtAttnWgmmaTensors *t, CUdeviceptr base, int rows,
                          size_t row_stride, size_t head_stride) {
    cuuint64_t dims[3] = {(cuuint64_t)t->D, (cuuint64_t)rows, (cuuint64_t)t->H};
    cuuint64_t strides[2] = {(cuuint64_t)row_stride * 2, (cuuint64_t)head_stride * 2};
    cuuint32_t box[3] = {64, 64, 1}, estrides[3] = {1, 1, 1};
    return d->tensorMapEncodeTiled(map, t->bf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 3,
                                   (void *)base, dims, strides, box, estrides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                   CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                                   CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
}

/* The reason t does not suit the kernel, or NULL. */
static const char *shape_error(const RtAttnWgmmaTensors *t) {
    if (t->D != 64 && t->D != 128) return "head dim must be 64 or 128";
    if (t->T < 1 || t->H < 1) return "T and H must be at least 1";
    if (t->P < 0 || t->kv_rows < 0) return "P and kv_rows must not be negative";
    if (!t->qkv) return "qkv is NULL";
    if (t->P > 0 && !t->kv) return "P > 0 keys are cached but the cache is NULL";
    if (t->P > t->kv_rows) return "P exceeds the cache's kv_rows (a ring cache is not supported)";
    return NULL;
}

srt_status rt_attn_wgmma_maps(const RtDriver *d, const RtAttnWgmmaTensors *t, RtAttnWgmmaMaps *out, char *err,
                              size_t errlen) {
    const char *bad = shape_error(t);
    if (bad) {
        snprintf(err, errlen, "attn_wgmma maps (T %d, P %d, H %d, D %d, kv_rows %d): %s", t->T, t->P, t->H, t->D,
                 t->kv_rows, bad);
        return SRT_ERR_INVALID;
    }
    if (!d->tensorMapEncodeTiled) {
        snprintf(err, errlen, "attn_wgmma maps: the driver has no cuTensorMapEncodeTiled (CUDA 12 or newer needed)");
        return SRT_ERR_UNSUPPORTED;
    }
    const size_t hd = (size_t)t->H * (size_t)t->D, row = 3 * hd, elem = 2;
    const char *what = "q";
    CUresult r = encode_3d(d, &out->q, t, t->qkv, t->T, row, (size_t)t->D);
    if (r == CUDA_SUCCESS) what = "k", r = encode_3d(d, &out->k, t, t->qkv + hd * elem, t->T, row, (size_t)t->D);
    if (r == CUDA_SUCCESS) what = "v", r = encode_3d(d, &out->v, t, t->qkv + 2 * hd * elem, t->T, row, (size_t)t->D);
    out->kc = out->k, out->vc = out->v;
    if (r == CUDA_SUCCESS && t->P > 0) {
        /* [2, H, kv_rows, D]: rows D apart, heads kv_rows * D; [2, kv_rows, H, D]: rows H * D, heads D */
        const size_t rs = t->head_major ? (size_t)t->D : hd,
                     hs = t->head_major ? (size_t)t->kv_rows * t->D : (size_t)t->D;
        const CUdeviceptr values = t->kv + (size_t)t->kv_rows * hd * elem;
        what = "cached keys", r = encode_3d(d, &out->kc, t, t->kv, t->P, rs, hs);
        if (r == CUDA_SUCCESS) what = "cached values", r = encode_3d(d, &out->vc, t, values, t->P, rs, hs);
    }
    if (r != CUDA_SUCCESS) {
        snprintf(err, errlen, "attn_wgmma maps: cuTensorMapEncodeTiled refused the %s map (error %d)%s%s", what, (int)r,
                 d->last_fault ? ": " : "", d->last_fault ? d->last_fault() : "");
        return SRT_ERR_DRIVER;
    }
    return SRT_OK;
}
