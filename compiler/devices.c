/*
 * devices.c — the devices of the roofline estimate (docs/cost-model.md,
 * "Roofline"): peak rates from the vendors' data sheets (dense, no
 * sparsity) and the per-SM residency limits used by the occupancy estimate,
 * and the roofline time of one cost at the peak where its matrix products
 * run (CostPeak: fp32 CUDA cores, fp16 or bf16 tensor cores).
 *
 * The figures are estimates of what a kernel could reach at best, not
 * measurements: a row is added here when a device is wanted.
 */
#include "shortc.h"

#include <string.h>

#define T_ 1e12 /* tera */

const DeviceSpec device_table[] = {
    {.name = "h100-sxm", .title = "NVIDIA H100 SXM5 80GB", .fp32 = 67 * T_, .tf32 = 494.7 * T_,
     .bf16 = 989.4 * T_, .fp16 = 989.4 * T_, .bandwidth = 3.35 * T_, .sm_regs = 65536, .sm_smem = 228 * 1024,
     .sm_warps = 64, .sm_blocks = 32},
    {.name = "a100-sxm", .title = "NVIDIA A100 SXM4 80GB", .fp32 = 19.5 * T_, .tf32 = 156 * T_,
     .bf16 = 312 * T_, .fp16 = 312 * T_, .bandwidth = 2.039 * T_, .sm_regs = 65536, .sm_smem = 164 * 1024,
     .sm_warps = 64, .sm_blocks = 32},
    {.name = "l4", .title = "NVIDIA L4", .fp32 = 30.3 * T_, .tf32 = 60 * T_, .bf16 = 121 * T_,
     .fp16 = 121 * T_, .bandwidth = 0.3 * T_, .sm_regs = 65536, .sm_smem = 100 * 1024, .sm_warps = 48,
     .sm_blocks = 24},
};
const int ndevices = (int)(sizeof device_table / sizeof device_table[0]);

const DeviceSpec *device_find(const char *name) {
    for (int i = 0; name && i < ndevices; i++)
        if (strcmp(device_table[i].name, name) == 0) return &device_table[i];
    return NULL;
}

const char *cost_peak_name(CostPeak p) {
    static const char *const names[] = {"fp32", "fp16", "bf16", "tf32"};
    return (unsigned)p < sizeof names / sizeof names[0] ? names[p] : "?";
}

CostPeak dtype_peak(DType t) {
    if (t == DT_F16) return PEAK_FP16;
    if (t == DT_BF16) return PEAK_BF16;
    return PEAK_FP32;
}

double device_peak(const DeviceSpec *dev, CostPeak peak) {
    switch (peak) {
    case PEAK_FP16: return dev->fp16;
    case PEAK_BF16: return dev->bf16;
    case PEAK_TF32: return dev->tf32;
    case PEAK_FP32: break;
    }
    return dev->fp32;
}

void roofline_sides(const DeviceSpec *dev, const OpCost *c, CostPeak peak, double *compute, double *memory) {
    double flops = c->mma_flops > 0 ? c->mma_flops : c->flops;
    *compute = flops / device_peak(dev, peak) + c->other_ops / dev->fp32;
    *memory = (op_cost_bytes_read(c) + op_cost_bytes_written(c)) / dev->bandwidth;
}

double roofline_seconds_at(const DeviceSpec *dev, const OpCost *c, CostPeak peak) {
    double compute, memory;
    roofline_sides(dev, c, peak, &compute, &memory);
    return compute > memory ? compute : memory;
}

/* GEMM operands of dtype t: fp32 inputs run on CUDA cores under the runtime's CUBLAS_COMPUTE_32F; halves
 * on tensor cores. Everything else at the fp32 peak. */
double roofline_seconds(const DeviceSpec *dev, const OpCost *c, bool gemm, DType dtype) {
    return roofline_seconds_at(dev, c, gemm ? dtype_peak(dtype) : PEAK_FP32);
}
