/*
 * sim_shadow.c — checked mode's record of shared memory (interface in
 * sim.h): for every byte of the running block's dynamic and static shared
 * memory, the thread that last wrote it and the one(s) that last read it,
 * each with the barrier epoch and its warp's epoch at that access and the
 * instruction that made it.
 *
 * Epochs come from one counter per worker that only grows: a block's start,
 * each completed __syncthreads() and each completed warp collective (for
 * that warp) take its next value. So records of earlier blocks or launches
 * are simply older than the block's start, and nothing is ever cleared.
 *
 * Two accesses to a byte by different threads, at least one a write, race
 * when no __syncthreads() lies between them (same barrier epoch) and the
 * threads are in different warps, or in the same warp with no collective of
 * that warp between them. A read of a byte no thread of the block has
 * written is a read of uninitialised shared memory. Atomic operations do not
 * race with each other (only with plain accesses).
 */
#include "sim.h"

#include <stdlib.h>
#include <string.h>

int sim_shadow_reserve(SimShadow *s, size_t len) {
    if (len <= s->cap) return 0;
    SimShadowByte *b = realloc(s->b, len * sizeof *b);
    if (!b) return -1;
    memset(b + s->cap, 0, (len - s->cap) * sizeof *b); /* epoch 0: never accessed */
    s->b = b;
    s->cap = len;
    return 0;
}

void sim_shadow_free(SimShadow *s) {
    free(s->b);
    memset(s, 0, sizeof *s);
}

void sim_shadow_block(SimShadow *s, unsigned nwarps) {
    s->block_start = s->bar = ++s->clock;
    for (unsigned w = 0; w < nwarps && w < SIM_MAX_THREADS / 32; w++) s->warp[w] = s->clock;
}

void sim_shadow_barrier(SimShadow *s) { s->bar = ++s->clock; }

void sim_shadow_warp(SimShadow *s, unsigned warp) { s->warp[warp] = ++s->clock; }

/* 1 when an access made by thread other (warp epoch then: other_warp) in barrier epoch bar, and one by
 * thread tid now, are unordered. */
static int unordered(const SimShadow *s, uint32_t bar, unsigned other, uint32_t other_warp, unsigned tid) {
    if (bar != s->bar || other == tid) return 0;
    if (other == SIM_SHADOW_MANY || other / 32 != tid / 32) return 1;
    return other_warp == s->warp[tid / 32];
}

/* The verdict on one byte b accessed by tid (kind: SIM_ACC_*); the record is updated when it is 0. */
static int access_byte(SimShadow *s, SimShadowByte *b, unsigned tid, int kind, const void *pc, SimShadowHit *hit) {
    int reads = kind != SIM_ACC_WRITE, writes = kind != SIM_ACC_READ, atomic = kind == SIM_ACC_ATOMIC;
    if (reads && b->w_bar < s->block_start) return SIM_SHADOW_UNINIT;
    int other_atomic = b->w_tid == SIM_SHADOW_ATOMIC, other_async = b->w_tid == SIM_SHADOW_ASYNC;
    if (!(atomic && other_atomic) && !other_async && unordered(s, b->w_bar, b->w_tid, b->w_warp, tid)) {
        hit->tid = b->w_tid, hit->pc = b->w_pc;
        return writes ? SIM_SHADOW_WAW : SIM_SHADOW_RAW;
    }
    if (writes && unordered(s, b->r_bar, b->r_tid, b->r_warp, tid)) {
        hit->tid = b->r_tid, hit->pc = b->r_pc;
        return SIM_SHADOW_WAR;
    }
    unsigned warp = tid / 32;
    if (writes) {
        b->w_bar = s->bar, b->w_warp = s->warp[warp], b->w_pc = pc, b->w_fence = s->fence;
        b->w_tid = atomic ? SIM_SHADOW_ATOMIC : (uint16_t)tid;
    } else if (b->r_bar == s->bar && b->r_tid != tid) {
        if (b->r_tid != SIM_SHADOW_MANY && b->r_tid / 32 != warp) b->r_warp = 0; /* readers in several warps */
        b->r_tid = SIM_SHADOW_MANY;
    } else {
        b->r_bar = s->bar, b->r_warp = s->warp[warp], b->r_pc = pc, b->r_tid = (uint16_t)tid;
    }
    return SIM_SHADOW_OK;
}

int sim_shadow_access(SimShadow *s, size_t idx, size_t n, unsigned tid, int kind, const void *pc, SimShadowHit *hit) {
    for (size_t i = 0; i < n && idx + i < s->cap; i++) {
        int v = access_byte(s, &s->b[idx + i], tid, kind, pc, hit);
        if (v != SIM_SHADOW_OK) {
            hit->offset = idx + i;
            return v;
        }
    }
    return SIM_SHADOW_OK;
}

void sim_shadow_async_write(SimShadow *s, size_t idx, size_t n) {
    for (size_t i = 0; i < n && idx + i < s->cap; i++) {
        SimShadowByte *b = &s->b[idx + i];
        b->w_bar = s->bar, b->w_warp = 0, b->w_pc = NULL, b->w_tid = SIM_SHADOW_ASYNC, b->w_fence = s->fence;
    }
}

int sim_shadow_async_read(const SimShadow *s, size_t idx, size_t n, SimShadowHit *hit) {
    for (size_t i = 0; i < n && idx + i < s->cap; i++) {
        const SimShadowByte *b = &s->b[idx + i];
        hit->offset = idx + i;
        if (b->w_bar < s->block_start) return SIM_SHADOW_UNINIT;
        if (b->w_tid < SIM_SHADOW_ASYNC && b->w_fence == s->fence) {
            hit->tid = b->w_tid, hit->pc = b->w_pc;
            return SIM_SHADOW_UNFENCED;
        }
    }
    return SIM_SHADOW_OK;
}
