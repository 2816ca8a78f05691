/*
 * rt_attn_wgmma.h — the tensor maps of the sm_90a attention kernel
 * (templates/attn_wgmma.cuh, docs/attention/hopper.md "The attention kernel"),
 * encoded on the host through the driver table (cuTensorMapEncodeTiled:
 * libcuda's on a GPU, the simulator's otherwise).
 */
#ifndef RT_ATTN_WGMMA_H
#define RT_ATTN_WGMMA_H

#include <stdbool.h>
#include <stddef.h>

#include "rt_driver.h"

/* One attention call's tensors in the attention engine's layouts (templates/attn_engine.cuh). */
typedef struct RtAttnWgmmaTensors {
    CUdeviceptr qkv; /* [T, 3*H*D]: q | k | v, head-major */
    CUdeviceptr kv;  /* the cache's keys then values: [2, H, kv_rows, D] (head_major) or [2, kv_rows, H, D] */
    int T;           /* queries (and keys) of this call, >= 1 */
    int P;           /* cached keys before them, 0 <= P <= kv_rows (not a ring) */
    int H;           /* heads */
    int D;           /* head dim: 64 or 128 */
    int kv_rows;     /* rows of the cache per key/value (0 with no cache) */
    bool head_major; /* the cache's layout (above) */
    bool bf16;       /* element type: bf16, else fp16 */
} RtAttnWgmmaTensors;

/* The kernel's five map parameters (ShortcAwMaps): this call's q, k, v {D, T, H}, the cached keys and values
 * {D, P, H} (copies of k and v when P is 0: the kernel does not read them then). */
typedef struct RtAttnWgmmaMaps {
    CUtensorMap q, k, v; /* over qkv */
    CUtensorMap kc, vc;  /* over rows 0..P-1 of the cache */
} RtAttnWgmmaMaps;

/* Encodes the maps of t into out (128-byte swizzle, boxes 64 x 64 x 1). SRT_OK; SRT_ERR_INVALID with the
 * reason in err for a shape the kernel does not take or a missing cache; SRT_ERR_UNSUPPORTED when the table
 * has no tensorMapEncodeTiled (a driver older than CUDA 12); SRT_ERR_DRIVER when the driver refuses a map
 * (the simulator's reason appended). */
srt_status rt_attn_wgmma_maps(const RtDriver *d, const RtAttnWgmmaTensors *t, RtAttnWgmmaMaps *out, char *err,
                              size_t errlen);

#endif
