// The sm_90a attention kernel of templates/attn_wgmma.cuh under test (tests/sim/test_attn_wgmma.c): the
// harness pastes templates/prelude.cuh, templates/hopper.cuh and templates/attn_wgmma.cuh in front, as the
// emitter would. One kernel per head dim and element type, causal. The same file compiles for sm_90a with
// NVRTC (tests/gate/hopper_sass.sh): the SASS must hold HGMMA, UTMALDG and SYNCS and no HMMA.

#define ATTN_WGMMA_KERNEL(name, D, TE)                                                                             \
    extern "C" __global__ void __launch_bounds__(256, 1)                                                           \
        name(const __grid_constant__ shortc_tensor_map mq, const __grid_constant__ shortc_tensor_map mk,           \
             const __grid_constant__ shortc_tensor_map mv, TE *y, int T, int P, float scale_log2) {               \
        __shared__ __align__(8) unsigned long long bars[5];                                                        \
        shortc_attn_wgmma<D, TE, ShortcAwCausal>(&mq, &mk, &mv, y, T, P, scale_log2, bars);                       \
    }
ATTN_WGMMA_KERNEL(k_aw_causal_f16_d64, 64, __half)
ATTN_WGMMA_KERNEL(k_aw_causal_f16_d128, 128, __half)
ATTN_WGMMA_KERNEL(k_aw_causal_bf16_d64, 64, __nv_bfloat16)
ATTN_WGMMA_KERNEL(k_aw_causal_bf16_d128, 128, __nv_bfloat16)
