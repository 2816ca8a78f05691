// The sm_90a attention kernel of templates/attn_wgmma.cuh under test (tests/sim/test_attn_wgmma.c): the
// harness pastes templates/prelude.cuh, templates/hopper.cuh and templates/attn_wgmma.cuh in front, as the
// emitter would. One kernel per kind (causal, window), head dim and element type. The same file compiles for sm_90a
// with NVRTC (tests/gate/attn_wgmma_sass.sh): the SASS must hold HGMMA, UTMALDG and SYNCS and no HMMA.

// (No static shared memory: the kernel keeps its mbarriers in the dynamic one, which then starts 1024-byte
// aligned.)
extern "C" __global__ void __launch_bounds__(256, 1)
    k_aw_causal_f16_d64(const __grid_constant__ shortc_tensor_map mq, const __grid_constant__ shortc_tensor_map mk,
                        const __grid_constant__ shortc_tensor_map mv, const __grid_constant__ shortc_tensor_map mkc,
                        const __grid_constant__ shortc_tensor_map mvc, __half *y, int T, int P, float scale_log2) {
    shortc_attn_wgmma<64, __half, ShortcAwCausal>(ShortcAwCausal{}, ShortcAwMaps{&mq, &mk, &mv, &mkc, &mvc}, y, T, P,
                                                  scale_log2);
}
extern "C" __global__ void __launch_bounds__(256, 1)
    k_aw_causal_f16_d128(const __grid_constant__ shortc_tensor_map mq, const __grid_constant__ shortc_tensor_map mk,
                         const __grid_constant__ shortc_tensor_map mv, const __grid_constant__ shortc_tensor_map mkc,
                         const __grid_constant__ shortc_tensor_map mvc, __half *y, int T, int P, float scale_log2) {
    shortc_attn_wgmma<128, __half, ShortcAwCausal>(ShortcAwCausal{}, ShortcAwMaps{&mq, &mk, &mv, &mkc, &mvc}, y, T, P,
                                                   scale_log2);
}
extern "C" __global__ void __launch_bounds__(256, 1)
    k_aw_causal_bf16_d64(const __grid_constant__ shortc_tensor_map mq, const __grid_constant__ shortc_tensor_map mk,
                         const __grid_constant__ shortc_tensor_map mv, const __grid_constant__ shortc_tensor_map mkc,
                         const __grid_constant__ shortc_tensor_map mvc, __nv_bfloat16 *y, int T, int P,
                         float scale_log2) {
    shortc_attn_wgmma<64, __nv_bfloat16, ShortcAwCausal>(ShortcAwCausal{}, ShortcAwMaps{&mq, &mk, &mv, &mkc, &mvc}, y,
                                                         T, P, scale_log2);
}
extern "C" __global__ void __launch_bounds__(256, 1)
    k_aw_causal_bf16_d128(const __grid_constant__ shortc_tensor_map mq, const __grid_constant__ shortc_tensor_map mk,
                          const __grid_constant__ shortc_tensor_map mv, const __grid_constant__ shortc_tensor_map mkc,
                          const __grid_constant__ shortc_tensor_map mvc, __nv_bfloat16 *y, int T, int P,
                          float scale_log2) {
    shortc_attn_wgmma<128, __nv_bfloat16, ShortcAwCausal>(ShortcAwCausal{}, ShortcAwMaps{&mq, &mk, &mv, &mkc, &mvc}, y,
                                                          T, P, scale_log2);
}
extern "C" __global__ void __launch_bounds__(256, 1)
    k_aw_window_f16_d64(const __grid_constant__ shortc_tensor_map mq, const __grid_constant__ shortc_tensor_map mk,
                        const __grid_constant__ shortc_tensor_map mv, const __grid_constant__ shortc_tensor_map mkc,
                        const __grid_constant__ shortc_tensor_map mvc, __half *y, int T, int P, float scale_log2,
                        int size) {
    shortc_attn_wgmma<64, __half, ShortcAwWindow>(ShortcAwWindow{size}, ShortcAwMaps{&mq, &mk, &mv, &mkc, &mvc}, y, T,
                                                  P, scale_log2);
}
extern "C" __global__ void __launch_bounds__(256, 1)
    k_aw_window_f16_d128(const __grid_constant__ shortc_tensor_map mq, const __grid_constant__ shortc_tensor_map mk,
                         const __grid_constant__ shortc_tensor_map mv, const __grid_constant__ shortc_tensor_map mkc,
                         const __grid_constant__ shortc_tensor_map mvc, __half *y, int T, int P, float scale_log2,
                         int size) {
    shortc_attn_wgmma<128, __half, ShortcAwWindow>(ShortcAwWindow{size}, ShortcAwMaps{&mq, &mk, &mv, &mkc, &mvc}, y, T,
                                                   P, scale_log2);
}
extern "C" __global__ void __launch_bounds__(256, 1)
    k_aw_window_bf16_d64(const __grid_constant__ shortc_tensor_map mq, const __grid_constant__ shortc_tensor_map mk,
                         const __grid_constant__ shortc_tensor_map mv, const __grid_constant__ shortc_tensor_map mkc,
                         const __grid_constant__ shortc_tensor_map mvc, __nv_bfloat16 *y, int T, int P,
                         float scale_log2, int size) {
    shortc_attn_wgmma<64, __nv_bfloat16, ShortcAwWindow>(ShortcAwWindow{size}, ShortcAwMaps{&mq, &mk, &mv, &mkc, &mvc},
                                                         y, T, P, scale_log2);
}
extern "C" __global__ void __launch_bounds__(256, 1)
    k_aw_window_bf16_d128(const __grid_constant__ shortc_tensor_map mq, const __grid_constant__ shortc_tensor_map mk,
                          const __grid_constant__ shortc_tensor_map mv, const __grid_constant__ shortc_tensor_map mkc,
                          const __grid_constant__ shortc_tensor_map mvc, __nv_bfloat16 *y, int T, int P,
                          float scale_log2, int size) {
    shortc_attn_wgmma<128, __nv_bfloat16, ShortcAwWindow>(ShortcAwWindow{size}, ShortcAwMaps{&mq, &mk, &mv, &mkc, &mvc},
                                                          y, T, P, scale_log2);
}
