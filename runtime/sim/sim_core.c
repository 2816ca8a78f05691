/*
 * sim_core.c — the SIMT simulator's execution engine: worker pool, blocks
 * as plain loops or fibers, barriers, warp collectives, faults.
 *
 * A launch is a job whose tasks are blocks; workers (the calling thread
 * plus a pool) take blocks from an atomic counter. A worker runs a block
 * first as a plain loop over its threads on one fiber stack (the kernel
 * .so's shortsim_plain_NAME). When a thread reaches a barrier or warp
 * collective, the block is converted to fiber mode on the spot: threads
 * before it have run to completion, it keeps the stack it is running on,
 * and the others get fresh fibers. The result is exactly what fiber mode
 * from the start would have produced (round-robin, thread 0 first), so the
 * fast path needs no per-kernel guess and is always safe.
 *
 * In fiber mode a thread runs until it blocks (barrier, warp collective)
 * or exits, then control passes to the next runnable thread in index
 * order. Divergence (threads at different barriers, a thread exiting while
 * others wait, lanes at different collectives, deadlock) is a fault: the
 * block is abandoned by switching back to the worker's own stack, and the
 * launch returns an error with a message naming kernel, block and thread.
 * Hardware faults (SIGSEGV, SIGBUS, SIGFPE, SIGILL) inside a job are
 * turned into faults with siglongjmp out of an alternate signal stack.
 * Under AddressSanitizer every switch, including a fiber's first entry, its
 * end and the siglongjmp, is announced to ASan (sim.h, sim_signal).
 * The Hopper intrinsics (warpgroup MMAs gathered over 128 fibers, mbarriers,
 * TMA, spin-waits that yield) are in sim_core_hopper.inc, included below.
 */
#define _GNU_SOURCE
#include "sim.h"
#include "sim_valgrind.h"

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#if defined(SIM_ASAN)
#include <sanitizer/asan_interface.h>
#endif

#define SIM_ALTSTACK (64 * 1024)
#define SIM_SMEM_REGION (232448 + 4096) /* largest opt-in (sm_90: 227 KB), rounded up below */
#define STATIC_MAP_LEN ((size_t)SHORTSIM_SMEM_SLOTS * SHORTSIM_SMEM_SLOT) /* a worker's static shared memory */

/* ------------------------------------------------------------------ */
/* fibers                                                               */
/* ------------------------------------------------------------------ */

#if defined(SIM_ASAN)
__thread SimFiberCtx *sim_fiber_leaving;
#endif

/* A fresh fiber's first code: completes ASan's switch, then runs c->fn. */
__attribute__((noreturn)) static void sim_fiber_boot(void *arg) {
    SimFiberCtx *c = arg;
#if defined(SIM_ASAN)
    sim_fiber_arrived(NULL);
#endif
    c->fn(c->arg);
    abort(); /* fn never returns */
}

/* What sim_fiber_make does on every architecture; fn(arg) then runs as boot(c). */
static void fiber_init(SimFiberCtx *c, char *lo, size_t size, void (*fn)(void *), void *arg) {
#if defined(SIM_ASAN)
    ASAN_UNPOISON_MEMORY_REGION(lo, size); /* frames of abandoned fibers leave stale redzones */
#endif
    c->stack_lo = lo;
    c->stack_size = size;
    c->asan_fake = NULL;
    c->fn = fn;
    c->arg = arg;
}

#if defined(SIM_FIBER_ASM)
void shortsim_ctx_entry(void);
void sim_fiber_make(SimFiberCtx *c, char *lo, size_t size, void (*fn)(void *), void *arg) {
    fiber_init(c, lo, size, fn, arg);
    fn = sim_fiber_boot;
    arg = c;
    uintptr_t top = ((uintptr_t)lo + size) & ~(uintptr_t)15;
#if defined(__x86_64__)
    /* popped by shortsim_ctx_switch: r15 r14 r13 r12 rbx rbp, then ret; rsp is then top-16 */
    void **sp = (void **)(top - 72);
    sp[0] = 0;                          /* r15 */
    sp[1] = 0;                          /* r14 */
    sp[2] = arg;                        /* r13 */
    sp[3] = (void *)fn;                 /* r12 */
    sp[4] = 0;                          /* rbx */
    sp[5] = 0;                          /* rbp */
    sp[6] = (void *)shortsim_ctx_entry; /* return address */
    sp[7] = 0;
    sp[8] = 0;
#else /* aarch64: x19..x30 then d8..d15, 160 bytes */
    void **sp = (void **)(top - 160);
    memset(sp, 0, 160);
    sp[0] = (void *)fn;                  /* x19 */
    sp[1] = arg;                         /* x20 */
    sp[11] = (void *)shortsim_ctx_entry; /* x30 */
#endif
    c->sp = sp;
}
#else
static void fiber_uc_entry(unsigned hi_fn, unsigned lo_fn, unsigned hi_arg, unsigned lo_arg) {
    void (*fn)(void *) = (void (*)(void *))(((uintptr_t)hi_fn << 32) | lo_fn);
    void *arg = (void *)(((uintptr_t)hi_arg << 32) | lo_arg);
    fn(arg);
    abort();
}
void sim_fiber_make(SimFiberCtx *c, char *lo, size_t size, void (*fn)(void *), void *arg) {
    fiber_init(c, lo, size, fn, arg);
    fn = sim_fiber_boot;
    arg = c;
    getcontext(&c->uc);
    c->uc.uc_stack.ss_sp = lo;
    c->uc.uc_stack.ss_size = size;
    c->uc.uc_link = NULL;
    uintptr_t f = (uintptr_t)fn, a = (uintptr_t)arg;
    makecontext(&c->uc, (void (*)(void))fiber_uc_entry, 4, (unsigned)(f >> 32), (unsigned)f, (unsigned)(a >> 32),
                (unsigned)a);
}
#endif

/* ------------------------------------------------------------------ */
/* state                                                                */
/* ------------------------------------------------------------------ */

/* TS_WG: waits in a warpgroup MMA for the rest of its warpgroup; TS_SPIN: its mbarrier try_wait failed
 * (runnable again once some mbarrier changed, SimWorker.mb_epoch). */
enum { TS_NEW, TS_RUN, TS_BAR, TS_WARP, TS_DONE, TS_WG, TS_SPIN };
enum { MODE_PLAIN, MODE_FIBER };
enum { JOB_KERNEL, JOB_TASKS };

/* Accumulators one thread may have in flight in wgmma.mma_async operations; mbarriers per block. */
#define SIM_WG_PENDING 16
#define SIM_MAX_MBARS 64
#define SIM_MAX_TMA_PENDING 4096

/* One cp.async copy of a thread that has not completed: its source bytes, read at issue. */
typedef struct SimCopy {
    unsigned char *dst;   /* shared-memory destination */
    unsigned group;       /* the commit group it belongs to (the thread's commits before it) */
    unsigned char data[16]; /* the 16 source bytes */
} SimCopy;

typedef struct SimThread {
    SimFiberCtx ctx;      /* saved context while it does not run */
    char *stack;          /* low end of its stack */
    ShortsimU3 tid;       /* its threadIdx */
    unsigned char state;  /* TS_* */
    int line;             /* source line it waits at (barrier or collective) */
    int op;               /* warp operation it waits in */
    int bar_result;       /* __syncthreads_count/and/or result handed over at release */
    const void *in;       /* its warp operands (on its stack) */
    void *out;            /* where the warp operation's result goes */
    SimCopy *cp;          /* cp.async copies not yet completed (malloc'd, cp_cap entries) */
    unsigned ncp;         /* entries in use */
    unsigned cp_cap;      /* entries allocated */
    unsigned cp_commits;  /* commit_group calls so far in this block */
    uint64_t cp_block;    /* the worker's block_serial the fields above belong to */
} SimThread;

/* A thread's Hopper state (docs/attention/hopper.md), apart from SimThread so that blocks without Hopper
 * operations keep their layout; reset when hop_block is not the worker's block_serial. */
typedef struct SimHopThread {
    uint64_t hop_block;   /* the block the fields below belong to */
    unsigned wg_commits;  /* wgmma.commit_group calls so far */
    unsigned char wg_fenced; /* a wgmma.fence was executed (required before the first wgmma.mma_async) */
    unsigned char nwg_pend; /* accumulators with a wgmma not yet waited for */
    int *wg_pend[SIM_WG_PENDING];          /* their pending flags */
    unsigned wg_pend_group[SIM_WG_PENDING]; /* the commit group of each one's latest wgmma */
    const void *spin_bar; /* TS_SPIN: the mbarrier its try_wait failed on */
    int spin_parity;      /* ... and the phase parity it waits for */
    int spin_line;        /* ... and the source line */
    uint64_t spin_epoch;  /* the worker's mb_epoch when it failed */
} SimHopThread;

/* One mbarrier of the running block (its 8 bytes of shared memory hold a marker). */
typedef struct SimMbar {
    unsigned char *addr;  /* the mbarrier in shared memory */
    unsigned expected;    /* arrivals per phase (mbarrier.init's count) */
    unsigned pending;     /* arrivals still missing in the current phase */
    long long tx;         /* transaction bytes still expected in the current phase (may go negative) */
    unsigned phase;       /* completed phases */
    int line;             /* source line of its init */
} SimMbar;

/* A TMA load that has read its global box but not yet written shared memory: it completes (writes and
 * signals its mbarrier) when a thread next waits on that mbarrier. */
typedef struct SimTmaCopy {
    unsigned char *bar;   /* the mbarrier it completes on */
    size_t dst;           /* destination: byte offset in the dynamic shared memory */
    size_t bytes;         /* box bytes */
    int span;             /* shared-memory swizzle span (0, 32, 64, 128) */
    unsigned char *data;  /* the box, dense (malloc'd) */
} SimTmaCopy;

typedef struct SimGroup {
    unsigned mask;        /* lanes taking part (the callers' mask, existing lanes only) */
    unsigned arrived;     /* lanes that have arrived */
    int op;               /* SHORTSIM_OP_* */
    int line;             /* line of the first arrival */
    int width;            /* shuffle width (32 for the others) */
} SimGroup;

typedef struct SimJob {
    int kind;             /* JOB_KERNEL or JOB_TASKS */
    uint64_t ntasks;      /* blocks or tasks */
    _Atomic uint64_t next; /* the next one to take */
    uint64_t chunk;       /* kernel: blocks claimed at a time */
    _Atomic int abort;    /* set on the first fault: take no more */
    SimFunc *fn;          /* kernel: the function */
    void **params;        /* kernel: kernelParams */
    ShortsimU3 grid;      /* kernel: grid dimensions */
    ShortsimU3 block;     /* kernel: block dimensions */
    size_t smem;          /* kernel: dynamic shared memory bytes */
    SimTaskFn taskfn;     /* tasks: the function */
    void *arg;            /* tasks: its argument */
    const char *what;     /* tasks: name for fault messages */
    pthread_mutex_t mu;   /* guards the fault fields */
    int faulted;          /* a fault was recorded */
    CUresult code;        /* the launch's result for it */
    char msg[2048];       /* its message */
} SimJob;

typedef struct SimWorker {
    ShortsimW w;           /* what kernel code reads */
    int id;                /* 0 = the calling thread, then the pool threads */
    pthread_t th;          /* pool thread */
    int has_thread;        /* th is running */
    uint64_t seen_gen;     /* pool threads: the last job generation taken */
    SimFiberCtx home;      /* the worker's own stack */
    SimFiberCtx scratch;   /* save slot for contexts never resumed */
    SimFiberCtx plain_ctx; /* the plain fiber's initial context */
    /* stacks: a header page (&w), then slot s at region + page + s*(guard+stack) + guard */
    char *region;          /* the stack region (SHORTSIM_REGION_ALIGN aligned) */
    size_t region_len;     /* its length: the header page and the slots; the rest of its
                              SHORTSIM_REGION_ALIGN window stays reserved (PROT_NONE) so no
                              other mapping can share the window and pass for stack */
    int slots_ready;       /* slots [0, slots_ready) are mapped read-write */
    unsigned vg_stack[SIM_MAX_THREADS + 1]; /* valgrind's id of slot s's stack, registered when mapped */
    char *plain_stack;     /* the stack the plain loop runs on */
    SimThread *threads;    /* [SIM_MAX_THREADS] */
    SimJob *job;           /* the job being run */
    SimFunc *fn;           /* its kernel */
    void **params;         /* its kernelParams */
    unsigned n;            /* threads per block */
    uint64_t blk_next;     /* next block of the claimed chunk */
    uint64_t blk_end;      /* end of the claimed chunk */
    /* block */
    int mode;              /* MODE_PLAIN or MODE_FIBER */
    uint64_t block_serial; /* blocks started on this worker (cp.async state of older blocks is void) */
    int plain_done;        /* the plain fiber found no block left */
    unsigned cur;          /* fiber mode: the running thread */
    unsigned nlive;        /* threads that have not exited */
    unsigned nexited;      /* threads that have exited */
    unsigned bar_count;    /* threads waiting at the barrier */
    unsigned bar_first;    /* the first of them */
    int bar_line;          /* the barrier's line */
    int bar_kind;          /* SHORTSIM_BAR_* */
    int bar_acc;           /* count/and/or accumulator */
    SimGroup groups[SIM_MAX_THREADS / 32][32]; /* pending warp collectives per warp */
    unsigned warp_exited[SIM_MAX_THREADS / 32];  /* lanes that have exited, per warp */
    unsigned char ngroups[SIM_MAX_THREADS / 32]; /* pending groups per warp */
    long nplain;           /* blocks run as plain loops in this job */
    long nfiber;           /* blocks converted to fibers in this job */
    char *smem_map;        /* dynamic shared memory region, a guard page after it */
    size_t smem_map_len;   /* its length with the guard page */
    char *static_map;      /* static shared memory: SHORTSIM_SMEM_SLOTS slots, each ending in a guard */
    int static_ready;      /* static slots [0, static_ready) have their data part mapped read-write */
    int faulted;           /* the block faulted (message in fault) */
    char fault[2048];      /* the block's fault message */
    sigjmp_buf jb;         /* where the signal handler returns to */
    volatile sig_atomic_t in_job; /* signals in this thread are the job's faults */
    volatile sig_atomic_t on_fiber; /* kernel code runs on fiber stacks (not the worker's own) */
    volatile int sig;      /* the signal caught */
    volatile int sig_code; /* its si_code */
    void *volatile sig_addr; /* its si_addr */
    void *volatile sig_pc;   /* the faulting instruction (NULL when unknown) */
    unsigned long chk_bytes; /* a checked access's size (0: the fault was a signal) */
    int chk_store;           /* a checked access was a write */
    char *alt_mem;         /* alternate signal stack */
    SimShadow shadow;      /* checked mode: the block's shared-memory record (sim_shadow.c) */
    /* Hopper: warpgroup MMAs, mbarriers, TMA (reset when hop_block is not block_serial) */
    uint64_t hop_block;    /* the block the fields below belong to */
    SimHopThread *hop;     /* per thread (SIM_MAX_THREADS, calloc'd at the first Hopper operation) */
    unsigned wg_arrived[SIM_MAX_THREADS / 128]; /* threads of each warpgroup waiting in its wgmma */
    int wg_line[SIM_MAX_THREADS / 128];         /* the wgmma's source line (first arrival) */
    SimMbar mbar[SIM_MAX_MBARS]; /* the block's mbarriers */
    unsigned nmbar;        /* entries in use */
    uint64_t mb_epoch;     /* counts mbarrier changes and TMA issues (spinning threads wait for a change) */
    SimTmaCopy *tma;       /* pending TMA loads (malloc'd, tma_cap entries) */
    unsigned ntma;         /* entries in use */
    unsigned tma_cap;      /* entries allocated */
    float wg_a[64 * 16];   /* a wgmma's A operand, [row][k] */
    float wg_b[256 * 16];  /* its B operand, [column][k] */
    uint32_t wg_off[256 * 16]; /* an operand's element offsets in shared memory */
} SimWorker;

static struct {
    pthread_mutex_t exec_mu; /* one launch / GEMM at a time */
    pthread_mutex_t mu;      /* pool */
    pthread_cond_t cv;       /* a new job (gen) or stop */
    pthread_cond_t done_cv;  /* pending reached 0 */
    SimWorker **w;           /* the workers */
    int nw;                  /* workers including the caller's (w[0]) */
    int want;                /* configured worker count */
    int checked;             /* checked mode */
    uint64_t gen;            /* job generation */
    int pending;             /* pool threads still on the job */
    int stop;                /* pool threads exit */
    SimJob *job;             /* the job of generation gen */
    size_t page;             /* page size */
    size_t stack;            /* stack bytes per CUDA thread */
    pthread_mutex_t fault_mu; /* guards last_fault */
    char last_fault[4096];   /* last fault message */
    int sig_installed;       /* our signal handlers are in place */
    /* checked mode, fixed for the running launch (exec_mu held) */
    SimRange *dev;           /* the device allocations, sorted by address */
    size_t ndev;             /* their count */
    uintptr_t dev_lo, dev_hi; /* the range their mappings span (empty when there are none) */
    size_t dev_cap;          /* capacity of dev */
    unsigned static_lo[SHORTSIM_SMEM_SLOTS]; /* the kernel's static object of slot s: [lo, hi) inside the slot */
    unsigned static_hi[SHORTSIM_SMEM_SLOTS];
    size_t static_rec[SHORTSIM_SMEM_SLOTS]; /* where slot s's object starts in a worker's shadow, after the
                                               dynamic shared memory */
    size_t static_total;     /* bytes of all the slots' objects */
    struct sigaction old[32]; /* the handlers they replaced */
} G = {
    .exec_mu = PTHREAD_MUTEX_INITIALIZER,
    .mu = PTHREAD_MUTEX_INITIALIZER,
    .cv = PTHREAD_COND_INITIALIZER,
    .done_cv = PTHREAD_COND_INITIALIZER,
    .fault_mu = PTHREAD_MUTEX_INITIALIZER,
};

static __thread SimWorker *tl_worker;

static const int sim_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};

/* ------------------------------------------------------------------ */
/* faults                                                               */
/* ------------------------------------------------------------------ */

void sim_set_fault(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    pthread_mutex_lock(&G.fault_mu);
    vsnprintf(G.last_fault, sizeof G.last_fault, fmt, ap);
    pthread_mutex_unlock(&G.fault_mu);
    va_end(ap);
}
void sim_clear_fault(void) {
    pthread_mutex_lock(&G.fault_mu);
    G.last_fault[0] = 0;
    pthread_mutex_unlock(&G.fault_mu);
}
const char *sim_last_fault(void) { return G.last_fault; }

static void job_fault(SimJob *job, CUresult code, const char *msg) {
    pthread_mutex_lock(&job->mu);
    if (!job->faulted) {
        job->faulted = 1;
        job->code = code;
        snprintf(job->msg, sizeof job->msg, "%s", msg);
    }
    pthread_mutex_unlock(&job->mu);
    atomic_store(&job->abort, 1);
}

static const char *op_name(int op) {
    switch (op) {
    case SHORTSIM_OP_SHFL_IDX: return "__shfl_sync";
    case SHORTSIM_OP_SHFL_UP: return "__shfl_up_sync";
    case SHORTSIM_OP_SHFL_DOWN: return "__shfl_down_sync";
    case SHORTSIM_OP_SHFL_XOR: return "__shfl_xor_sync";
    case SHORTSIM_OP_BALLOT: return "__ballot_sync";
    case SHORTSIM_OP_ANY: return "__any_sync";
    case SHORTSIM_OP_ALL: return "__all_sync";
    case SHORTSIM_OP_SYNCWARP: return "__syncwarp";
    case SHORTSIM_OP_MMA_F16F32: return "shortc_mma_m16n8k16_f16f32";
    case SHORTSIM_OP_MMA_BF16F32: return "shortc_mma_m16n8k16_bf16f32";
    case SHORTSIM_OP_LDMATRIX: return "shortc_ldmatrix";
    case SHORTSIM_OP_MMA_TF32: return "shortc_mma_m16n8k8_tf32";
    default: return "warp collective";
    }
}

static ShortsimU3 decompose(const SimWorker *wk, unsigned i) {
    ShortsimU3 t;
    unsigned bx = wk->w.bdim.x, by = wk->w.bdim.y;
    t.x = i % bx;
    t.y = (i / bx) % by;
    t.z = i / (bx * by);
    return t;
}
static unsigned linear_tid(const SimWorker *wk) {
    return wk->w.tid.x + wk->w.bdim.x * (wk->w.tid.y + wk->w.bdim.y * wk->w.tid.z);
}
static const char *tstr(const SimWorker *wk, unsigned i, char *buf) {
    ShortsimU3 t = decompose(wk, i);
    sprintf(buf, "(%u,%u,%u)", t.x, t.y, t.z);
    return buf;
}
static void line_str(int line, char *buf) {
    if (line > 0) sprintf(buf, " (line %d)", line);
    else buf[0] = 0;
}

/* Abandons the block: records the fault and returns to the worker's stack. */
__attribute__((noreturn, format(printf, 2, 3))) static void block_fault(SimWorker *wk, const char *fmt, ...) {
    char what[1536];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    char tb[48];
    unsigned me = wk->mode == MODE_PLAIN ? linear_tid(wk) : wk->cur;
    snprintf(wk->fault, sizeof wk->fault, "kernel %s: block (%u,%u,%u), thread %s: %s", wk->fn->name, wk->w.bid.x,
             wk->w.bid.y, wk->w.bid.z, tstr(wk, me, tb), what);
    wk->faulted = 1;
    sim_fiber_exit(&wk->scratch, &wk->home);
}

/* ------------------------------------------------------------------ */
/* scheduling                                                           */
/* ------------------------------------------------------------------ */

static void fiber_main(void *arg);
static void thread_exit(SimWorker *wk) __attribute__((noreturn));

/* Runs thread j; self resumes later unless it has exited (dying). */
static void switch_to(SimWorker *wk, SimThread *self, unsigned j, int dying) {
    SimThread *t = &wk->threads[j];
    if (t->state == TS_NEW) {
        sim_fiber_make(&t->ctx, t->stack, G.stack, fiber_main, wk);
        t->state = TS_RUN;
    }
    wk->cur = j;
    wk->w.tid = t->tid;
    if (dying) sim_fiber_exit(&self->ctx, &t->ctx);
    sim_fiber_switch(&self->ctx, &t->ctx);
}

static void spin_deadlock(SimWorker *wk, unsigned i) __attribute__((noreturn));
static void wg_deadlock(SimWorker *wk, unsigned i) __attribute__((noreturn));

__attribute__((noreturn)) static void deadlock(SimWorker *wk) {
    char b[48], la[32], lb[32];
    unsigned n = wk->n;
    for (unsigned i = 0; i < n; i++)
        if (wk->threads[i].state == TS_SPIN) spin_deadlock(wk, i);
    for (unsigned i = 0; i < n; i++)
        if (wk->threads[i].state == TS_WG) wg_deadlock(wk, i);
    if (wk->bar_count > 0) {
        for (unsigned i = 0; i < n; i++)
            if (wk->threads[i].state == TS_WARP) {
                wk->cur = wk->bar_first;
                line_str(wk->bar_line, la);
                line_str(wk->threads[i].line, lb);
                block_fault(wk, "divergence: waits at __syncthreads()%s while thread %s waits at %s%s", la,
                            tstr(wk, i, b), op_name(wk->threads[i].op), lb);
            }
    }
    for (unsigned warp = 0; warp * 32 < n; warp++)
        for (unsigned gi = 0; gi < wk->ngroups[warp]; gi++) {
            SimGroup *g = &wk->groups[warp][gi];
            unsigned missing = g->mask & ~g->arrived;
            unsigned first = warp * 32 + (unsigned)__builtin_ctz(g->arrived);
            unsigned lane = (unsigned)__builtin_ctz(missing), other = warp * 32 + lane;
            SimThread *o = &wk->threads[other];
            wk->cur = first;
            line_str(g->line, la);
            line_str(o->line, lb);
            if (o->state == TS_BAR)
                block_fault(wk, "divergence: waits at %s%s with mask 0x%08x while lane %u (thread %s) waits at "
                                "__syncthreads()%s",
                            op_name(g->op), la, g->mask, lane, tstr(wk, other, b), lb);
            block_fault(wk, "divergence: waits at %s%s with mask 0x%08x while lane %u (thread %s) waits at %s%s",
                        op_name(g->op), la, g->mask, lane, tstr(wk, other, b), op_name(o->op), lb);
        }
    block_fault(wk, "deadlock: no thread can run");
}

/* The current thread cannot continue (blocked, or exited: dying): run the next runnable one. */
static void schedule(SimWorker *wk, int dying) {
    SimThread *self = &wk->threads[wk->cur];
    unsigned n = wk->n;
    for (unsigned k = 1; k <= n; k++) {
        unsigned j = wk->cur + k;
        if (j >= n) j -= n;
        unsigned char s = wk->threads[j].state;
        if (s == TS_RUN || s == TS_NEW) {
            switch_to(wk, self, j, dying);
            return;
        }
        if (s == TS_SPIN && wk->hop[j].spin_epoch != wk->mb_epoch) { /* an mbarrier changed: try again */
            wk->threads[j].state = TS_RUN;
            if (j == wk->cur) return;
            switch_to(wk, self, j, dying);
            return;
        }
    }
    if (wk->nlive == 0) sim_fiber_exit(&self->ctx, &wk->home); /* block done */
    deadlock(wk);
}

static void thread_exit(SimWorker *wk) {
    unsigned me = wk->cur;
    SimThread *self = &wk->threads[me];
    self->state = TS_DONE;
    wk->warp_exited[me >> 5] |= 1u << (me & 31);
    wk->nlive--;
    wk->nexited++;
    char b[48], la[32];
    if (wk->bar_count > 0) {
        line_str(wk->bar_line, la);
        block_fault(wk, "divergence: exited while thread %s (and %u more) waits at __syncthreads()%s",
                    tstr(wk, wk->bar_first, b), wk->bar_count - 1, la);
    }
    if (wk->hop_block == wk->block_serial && wk->wg_arrived[me / 128]) {
        line_str(wk->wg_line[me / 128], la);
        block_fault(wk, "divergence: exited while %u threads of its warpgroup wait at wgmma.mma_async%s",
                    wk->wg_arrived[me / 128], la);
    }
    unsigned warp = me >> 5, lane = me & 31;
    for (unsigned gi = 0; gi < wk->ngroups[warp]; gi++) {
        SimGroup *g = &wk->groups[warp][gi];
        if (g->mask >> lane & 1) {
            line_str(g->line, la);
            block_fault(wk, "divergence: lane %u exited while lanes 0x%08x of its warp wait for it at %s%s (mask 0x%08x)",
                        lane, g->arrived, op_name(g->op), la, g->mask);
        }
    }
    schedule(wk, 1);
    __builtin_unreachable();
}

static void fiber_main(void *arg) {
    SimWorker *wk = arg;
    wk->fn->tramp(wk->params, &wk->w);
    thread_exit(wk);
}

/* Takes the next block of the job; 0 when none is left or the job was
 * aborted. Blocks are claimed in chunks (job->chunk) to keep workers off
 * the shared counter; which worker runs a block does not affect results. */
static int next_block(SimWorker *wk, uint64_t *b) {
    SimJob *job = wk->job;
    if (atomic_load_explicit(&job->abort, memory_order_relaxed)) return 0;
    if (wk->blk_next >= wk->blk_end) {
        uint64_t t = atomic_fetch_add_explicit(&job->next, job->chunk, memory_order_relaxed);
        if (t >= job->ntasks) return 0;
        wk->blk_next = t;
        wk->blk_end = t + job->chunk < job->ntasks ? t + job->chunk : job->ntasks;
    }
    *b = wk->blk_next++;
    return 1;
}

/* The plain fiber: runs blocks one after another as plain loops. When a
 * block converts to fibers, the thread that owned this stack finishes like
 * any fiber and the block's last exit returns to the worker, which starts a
 * new plain fiber for the remaining blocks. */
static void plain_main(void *arg) {
    SimWorker *wk = arg;
    ShortsimU3 g = wk->job->grid;
    uint64_t b, prev = 0;
    int have_prev = 0; /* prev is the block this fiber ran before */
    void (*plain)(void **, ShortsimW *) = wk->fn->plain;
    while (next_block(wk, &b)) {
        ShortsimU3 *bid = &wk->w.bid;
        if (have_prev && b == prev + 1 && bid->x + 1 < g.x) { /* the next block of a chunk: no division */
            bid->x++;
        } else {
            bid->x = (unsigned)(b % g.x);
            bid->y = (unsigned)(b / g.x % g.y);
            bid->z = (unsigned)(b / ((uint64_t)g.x * g.y));
        }
        prev = b;
        have_prev = 1;
        wk->block_serial++;
        if (G.checked) sim_shadow_block(&wk->shadow, (wk->n + 31) / 32);
        wk->w.tid.x = wk->w.tid.y = wk->w.tid.z = 0;
        wk->w.converted = 0;
        wk->mode = MODE_PLAIN;
        wk->cur = 0;
        plain(wk->params, &wk->w);
        if (wk->mode != MODE_PLAIN) thread_exit(wk); /* converted: this stack's thread finished */
        wk->nplain++;
    }
    wk->plain_done = 1;
    sim_fiber_exit(&wk->scratch, &wk->home);
}

/* Plain loop -> fibers at the current thread t: threads < t have exited,
 * t continues on the stack it is running on, threads > t start fresh. */
static void convert(SimWorker *wk) {
    unsigned t = linear_tid(wk), n = wk->n;
    wk->mode = MODE_FIBER;
    wk->w.converted = 1;
    char *s = wk->threads[t].stack;
    wk->threads[t].stack = wk->plain_stack;
    wk->plain_stack = s;
    for (unsigned i = 0; i < n; i++) {
        SimThread *th = &wk->threads[i];
        th->tid = decompose(wk, i);
        th->state = i < t ? TS_DONE : i == t ? TS_RUN : TS_NEW;
    }
    wk->cur = t;
    wk->nexited = t;
    wk->nlive = n - t;
    wk->bar_count = 0;
    memset(wk->ngroups, 0, (n + 31) / 32);
    for (unsigned w = 0; w * 32 < n; w++) /* threads before t have exited */
        wk->warp_exited[w] = t >= (w + 1) * 32 ? 0xffffffffu : t > w * 32 ? (1u << (t - w * 32)) - 1 : 0;
}

/* ------------------------------------------------------------------ */
/* barriers                                                             */
/* ------------------------------------------------------------------ */

static int api_barrier(int kind, int pred, int line) {
    SimWorker *wk = tl_worker;
    if (wk->mode == MODE_PLAIN) convert(wk);
    unsigned me = wk->cur;
    SimThread *self = &wk->threads[me];
    char b[48], la[32], lb[32];
    if (wk->nexited > 0) {
        unsigned e = 0;
        while (wk->threads[e].state != TS_DONE) e++;
        line_str(line, la);
        block_fault(wk, "divergence: waits at __syncthreads()%s but thread %s exited without reaching it", la,
                    tstr(wk, e, b));
    }
    if (wk->bar_count == 0) {
        wk->bar_line = line;
        wk->bar_kind = kind;
        wk->bar_first = me;
        wk->bar_acc = kind == SHORTSIM_BAR_AND ? 1 : 0;
    } else if (wk->bar_line != line || wk->bar_kind != kind) {
        line_str(line, la);
        line_str(wk->bar_line, lb);
        block_fault(wk, "divergence: waits at __syncthreads()%s while thread %s waits at a different "
                        "__syncthreads()%s",
                    la, tstr(wk, wk->bar_first, b), lb);
    }
    switch (kind) {
    case SHORTSIM_BAR_COUNT: wk->bar_acc += pred != 0; break;
    case SHORTSIM_BAR_AND: wk->bar_acc &= pred != 0; break;
    case SHORTSIM_BAR_OR: wk->bar_acc |= pred != 0; break;
    default: break;
    }
    wk->bar_count++;
    if (wk->bar_count == wk->nlive) { /* everyone is here: release */
        int r = wk->bar_acc;
        if (G.checked) sim_shadow_barrier(&wk->shadow);
        for (unsigned i = 0; i < wk->n; i++) {
            SimThread *t = &wk->threads[i];
            if (t->state == TS_BAR) {
                t->state = TS_RUN;
                t->bar_result = r;
            }
        }
        wk->bar_count = 0;
        return r;
    }
    self->state = TS_BAR;
    self->line = line;
    schedule(wk, 0);
    return self->bar_result;
}

/* ------------------------------------------------------------------ */
/* warp collectives                                                     */
/* ------------------------------------------------------------------ */

/* One b16 element of an MMA operand as float: fp16 or bf16 bits. */
static float mma_elem(uint32_t reg, int half, bool bf16) {
    uint16_t h = (uint16_t)(reg >> (16 * half));
    return bf16 ? rt_bf16_to_f32(h) : rt_f16_to_f32(h);
}

/* The D fragments of an m16n8kK MMA from its gathered A [16][K] (row-major), B [K][8] and C [16][8]: lane l's
 * d[0..3] = rows groupID, groupID+8 at columns 2t, 2t+1, each C + the k-ordered sum of A*B in fp32. */
static void warp_mma_store(SimThread *T, int K, const float *A, const float *B, const float C[16][8]) {
    for (unsigned l = 0; l < 32; l++) {
        unsigned gr = l >> 2, t2 = (l & 3) * 2;
        float *d = T[l].out;
        for (int r = 0; r < 4; r++) {
            unsigned row = gr + (r >= 2 ? 8 : 0), col = t2 + (r & 1);
            float acc = C[row][col];
            for (int k = 0; k < K; k++) acc += A[row * K + k] * B[k * 8 + col];
            d[r] = acc;
        }
    }
}

/* mma.m16n8k16.row.col with fp32 accumulators over the 32 lanes T (PTX ISA
 * fragment layouts: groupID = lane/4, t = lane%4; A rows groupID and
 * groupID+8, k pairs 2t and 2t+8; B k pairs 2t and 2t+8 of column groupID;
 * C/D rows groupID and groupID+8, columns 2t, 2t+1). Products are exact in
 * fp32; the sum runs in k order. */
static void warp_mma(SimThread *T, bool bf16) {
    float A[16][16], B[16][8], C[16][8];
    for (unsigned l = 0; l < 32; l++) {
        const ShortsimMmaIn *in = T[l].in;
        unsigned gr = l >> 2, t2 = (l & 3) * 2;
        for (int h = 0; h < 2; h++) {
            A[gr][t2 + h] = mma_elem(in->a[0], h, bf16);
            A[gr + 8][t2 + h] = mma_elem(in->a[1], h, bf16);
            A[gr][t2 + 8 + h] = mma_elem(in->a[2], h, bf16);
            A[gr + 8][t2 + 8 + h] = mma_elem(in->a[3], h, bf16);
            B[t2 + h][gr] = mma_elem(in->b[0], h, bf16);
            B[t2 + 8 + h][gr] = mma_elem(in->b[1], h, bf16);
            C[gr][t2 + h] = in->c[h];
            C[gr + 8][t2 + h] = in->c[2 + h];
        }
    }
    warp_mma_store(T, 16, &A[0][0], &B[0][0], (const float (*)[8])C);
}

/* One TF32 operand of mma.m16n8k8: the register's fp32 bits rounded as cvt.rna.tf32.f32 (rt_round_tf32). */
static float mma_tf32_elem(uint32_t reg) {
    float f;
    memcpy(&f, &reg, sizeof f);
    return rt_round_tf32(f);
}

/* mma.m16n8k8.row.col.f32.tf32.tf32.f32 over the 32 lanes T (PTX ISA fragment
 * layouts: groupID = lane/4, t = lane%4; A a0..a3 = rows groupID, groupID+8 at
 * column t, then the same rows at column t+4; B b0, b1 = rows t, t+4 of column
 * groupID; C/D as m16n8k16). Operands rounded to TF32 (mma_tf32_elem); their
 * products are exact in fp32 (11 x 11 significant bits); the sum runs in k order. */
static void warp_mma_tf32(SimThread *T) {
    float A[16][8], B[8][8], C[16][8];
    for (unsigned l = 0; l < 32; l++) {
        const ShortsimMmaIn *in = T[l].in;
        unsigned gr = l >> 2, t = l & 3, t2 = t * 2;
        A[gr][t] = mma_tf32_elem(in->a[0]);
        A[gr + 8][t] = mma_tf32_elem(in->a[1]);
        A[gr][t + 4] = mma_tf32_elem(in->a[2]);
        A[gr + 8][t + 4] = mma_tf32_elem(in->a[3]);
        B[t][gr] = mma_tf32_elem(in->b[0]);
        B[t + 4][gr] = mma_tf32_elem(in->b[1]);
        for (int h = 0; h < 2; h++) {
            C[gr][t2 + h] = in->c[h];
            C[gr + 8][t2 + h] = in->c[2 + h];
        }
    }
    warp_mma_store(T, 8, &A[0][0], &B[0][0], (const float (*)[8])C);
}

/* ldmatrix.m8n8.x{num}[.trans].b16 over the 32 lanes T: matrix i's row j is
 * at the address lane 8i+j passed; lane l gets, per matrix, the b16 pair at
 * row l/4, columns 2(l%4) and +1 (trans: rows 2(l%4) and +1 of column l/4). */
static void warp_ldmatrix(SimWorker *wk, SimThread *T) {
    const ShortsimLdmIn *in0 = T[0].in;
    int num = in0->num, trans = in0->trans;
    for (unsigned l = 1; l < 32; l++) {
        const ShortsimLdmIn *in = T[l].in;
        if (in->num != num || in->trans != trans)
            block_fault(wk, "divergence: shortc_ldmatrix with x%d%s in lane 0 but x%d%s in lane %u", num,
                        trans ? ".trans" : "", in->num, in->trans ? ".trans" : "", l);
    }
    for (unsigned l = 0; l < 32; l++) {
        unsigned *r = T[l].out;
        for (int i = 0; i < num; i++) {
            if (!trans) {
                const unsigned char *row = ((const ShortsimLdmIn *)T[8 * i + (l >> 2)].in)->row;
                memcpy(&r[i], row + 4 * (l & 3), 4);
                continue;
            }
            uint16_t lo, hi;
            const unsigned char *r0 = ((const ShortsimLdmIn *)T[8 * i + 2 * (l & 3)].in)->row;
            const unsigned char *r1 = ((const ShortsimLdmIn *)T[8 * i + 2 * (l & 3) + 1].in)->row;
            memcpy(&lo, r0 + 2 * (l >> 2), 2);
            memcpy(&hi, r1 + 2 * (l >> 2), 2);
            r[i] = (unsigned)lo | (unsigned)hi << 16;
        }
    }
}

static void warp_complete(SimWorker *wk, unsigned warp, const SimGroup *g) {
    SimThread *T = &wk->threads[warp * 32];
    unsigned mask = g->mask;
    switch (g->op) {
    case SHORTSIM_OP_SHFL_IDX:
    case SHORTSIM_OP_SHFL_UP:
    case SHORTSIM_OP_SHFL_DOWN:
    case SHORTSIM_OP_SHFL_XOR: {
        unsigned long long vals[32];
        for (unsigned l = 0; l < 32; l++)
            if (mask >> l & 1) vals[l] = ((const ShortsimShflIn *)T[l].in)->val;
        for (unsigned l = 0; l < 32; l++) {
            if (!(mask >> l & 1)) continue;
            const ShortsimShflIn *in = T[l].in;
            int w = in->width, b = in->arg & 31;
            int lo = (int)l & ~(w - 1), hi = lo + w - 1, j;
            /* PTX shfl.sync with CUDA's clamp values for each variant */
            switch (g->op) {
            case SHORTSIM_OP_SHFL_IDX: j = lo | (in->arg & (w - 1)); break;
            case SHORTSIM_OP_SHFL_UP: j = (int)l - b; if (j < lo) j = (int)l; break;
            case SHORTSIM_OP_SHFL_DOWN: j = (int)l + b; if (j > hi) j = (int)l; break;
            default: j = (int)l ^ b; if (j > hi) j = (int)l; break;
            }
            /* an inactive source lane gives an undefined value on the GPU: checked mode reports it,
             * unchecked gives the lane's own */
            if (G.checked && !(mask >> j & 1)) {
                char la[32];
                line_str(g->line, la);
                block_fault(wk, "%s%s with mask 0x%08x: lane %u reads lane %d, which is not in the mask%s",
                            op_name(g->op), la, mask, l, j, j >= (int)(wk->n - warp * 32) ? " (no such thread)" : "");
            }
            *(unsigned long long *)T[l].out = (mask >> j & 1) ? vals[j] : vals[l];
        }
        break;
    }
    case SHORTSIM_OP_BALLOT:
    case SHORTSIM_OP_ANY:
    case SHORTSIM_OP_ALL: {
        unsigned ballot = 0;
        for (unsigned l = 0; l < 32; l++)
            if ((mask >> l & 1) && *(const int *)T[l].in) ballot |= 1u << l;
        unsigned r = g->op == SHORTSIM_OP_BALLOT ? ballot : g->op == SHORTSIM_OP_ANY ? ballot != 0 : ballot == mask;
        for (unsigned l = 0; l < 32; l++)
            if (mask >> l & 1) *(unsigned *)T[l].out = r;
        break;
    }
    case SHORTSIM_OP_MMA_F16F32:
    case SHORTSIM_OP_MMA_BF16F32: warp_mma(T, g->op == SHORTSIM_OP_MMA_BF16F32); break;
    case SHORTSIM_OP_MMA_TF32: warp_mma_tf32(T); break;
    case SHORTSIM_OP_LDMATRIX: warp_ldmatrix(wk, T); break;
    default: break;
    }
}

/* Faults on a bad ldmatrix operand: a shape other than x1/x2/x4, or a row
 * address that the shape reads (lanes below 8*num) and is not 16-byte aligned. */
static void ldmatrix_check(SimWorker *wk, const ShortsimLdmIn *in, unsigned lane, const char *la) {
    if (in->num != 1 && in->num != 2 && in->num != 4)
        block_fault(wk, "shortc_ldmatrix%s: %d matrices (must be 1, 2 or 4)", la, in->num);
    if (lane < 8u * (unsigned)in->num && ((uintptr_t)in->row & 15))
        block_fault(wk, "shortc_ldmatrix%s: row address %p of lane %u is not 16-byte aligned", la, in->row, lane);
}

static void api_warp(int op, unsigned mask, int line, const void *in, void *out) {
    SimWorker *wk = tl_worker;
    if (wk->mode == MODE_PLAIN) convert(wk);
    unsigned me = wk->cur, warp = me >> 5, lane = me & 31, base = warp * 32, n = wk->n;
    unsigned exist = n - base >= 32 ? 0xffffffffu : (1u << (n - base)) - 1;
    unsigned em = mask & exist;
    char b[48], la[32], lb[32];
    if (op <= 0 || op >= SHORTSIM_OP_COUNT) block_fault(wk, "unknown warp operation %d", op);
    if (!(em >> lane & 1)) {
        line_str(line, la);
        block_fault(wk, "%s%s with mask 0x%08x that does not name the calling lane %u", op_name(op), la, mask, lane);
    }
    int width = 32;
    if (op >= SHORTSIM_OP_SHFL_IDX && op <= SHORTSIM_OP_SHFL_XOR) {
        width = ((const ShortsimShflIn *)in)->width;
        if (width < 1 || width > 32 || (width & (width - 1))) {
            line_str(line, la);
            block_fault(wk, "%s%s with width %d (must be a power of two <= 32)", op_name(op), la, width);
        }
    } else if (op == SHORTSIM_OP_MMA_F16F32 || op == SHORTSIM_OP_MMA_BF16F32 || op == SHORTSIM_OP_MMA_TF32 ||
               op == SHORTSIM_OP_LDMATRIX) {
        line_str(line, la);
        if (em != 0xffffffffu)
            block_fault(wk, "%s%s needs all 32 lanes of the warp (block of %u threads)", op_name(op), la, n);
        if (op == SHORTSIM_OP_LDMATRIX) ldmatrix_check(wk, (const ShortsimLdmIn *)in, lane, la);
    }
    SimThread *T = &wk->threads[base];
    if (em & wk->warp_exited[warp]) {
        unsigned l = (unsigned)__builtin_ctz(em & wk->warp_exited[warp]);
        line_str(line, la);
        block_fault(wk, "divergence: %s%s with mask 0x%08x but lane %u (thread %s) has exited", op_name(op), la, mask,
                    l, tstr(wk, base + l, b));
    }
    SimGroup *g = NULL;
    for (unsigned gi = 0; gi < wk->ngroups[warp]; gi++) {
        SimGroup *G2 = &wk->groups[warp][gi];
        if (G2->mask == em) {
            g = G2;
        } else if (G2->mask & em) {
            unsigned o = base + (unsigned)__builtin_ctz(G2->arrived);
            line_str(line, la);
            line_str(G2->line, lb);
            block_fault(wk, "divergence: %s%s with mask 0x%08x while thread %s waits at %s%s with mask 0x%08x",
                        op_name(op), la, em, tstr(wk, o, b), op_name(G2->op), lb, G2->mask);
        }
    }
    if (!g) {
        g = &wk->groups[warp][wk->ngroups[warp]++];
        g->mask = em;
        g->arrived = 0;
        g->op = op;
        g->line = line;
        g->width = width;
    } else if (g->op != op || g->width != width) {
        unsigned o = base + (unsigned)__builtin_ctz(g->arrived);
        line_str(line, la);
        line_str(g->line, lb);
        block_fault(wk, "divergence: %s%s (width %d) while thread %s waits at %s%s (width %d), mask 0x%08x",
                    op_name(op), la, width, tstr(wk, o, b), op_name(g->op), lb, g->width, em);
    }
    SimThread *self = &T[lane];
    self->in = in;
    self->out = out;
    self->op = op;
    self->line = line;
    g->arrived |= 1u << lane;
    if (g->arrived == em) {
        warp_complete(wk, warp, g);
        if (G.checked) sim_shadow_warp(&wk->shadow, warp);
        for (unsigned m = em & ~(1u << lane); m; m &= m - 1) T[__builtin_ctz(m)].state = TS_RUN;
        *g = wk->groups[warp][--wk->ngroups[warp]];
        return;
    }
    self->state = TS_WARP;
    schedule(wk, 0);
}

static void api_fault(const char *what) {
    SimWorker *wk = tl_worker;
    block_fault(wk, "%s", what);
}

static unsigned api_activemask(void) {
    SimWorker *wk = tl_worker;
    if (wk->mode == MODE_PLAIN) { /* lanes before it have exited, after it not yet run */
        unsigned me = linear_tid(wk), base = me & ~31u, top = wk->n - base >= 32 ? 32 : wk->n - base;
        unsigned m = top == 32 ? 0xffffffffu : (1u << top) - 1;
        return m & ~((1u << (me & 31)) - 1);
    }
    unsigned base = wk->cur & ~31u, m = 0;
    for (unsigned l = 0; l < 32 && base + l < wk->n; l++)
        if (wk->threads[base + l].state != TS_DONE) m |= 1u << l;
    return m;
}

/* Most cp.async copies one thread may have pending. */
enum { SIM_MAX_PENDING_COPIES = 1 << 16 };

/* cp.async: a copy reads its 16 source bytes at issue and writes shared
 * memory only when a wait_group covers its group, so code that reads the
 * destination before waiting sees the old bytes (as it may on the GPU).
 * Copies not committed to a group are not waited for; those left at the end
 * of the block are dropped. */
static void api_cp_async(int op, void *dst, const void *src, int n) {
    SimWorker *wk = tl_worker;
    unsigned me = wk->mode == MODE_PLAIN ? linear_tid(wk) : wk->cur;
    SimThread *t = &wk->threads[me];
    if (t->cp_block != wk->block_serial) t->ncp = t->cp_commits = 0, t->cp_block = wk->block_serial;
    if (op == SHORTSIM_CP_COPY16) {
        if (t->ncp == t->cp_cap) {
            unsigned cap = t->cp_cap ? 2 * t->cp_cap : 16;
            SimCopy *nc = cap <= SIM_MAX_PENDING_COPIES ? realloc(t->cp, cap * sizeof *nc) : NULL;
            if (!nc)
                block_fault(wk, "shortc_cp_async_16: more than %u copies pending in one thread (no wait_group)",
                            t->cp_cap);
            t->cp = nc;
            t->cp_cap = cap;
        }
        SimCopy *c = &t->cp[t->ncp++];
        c->dst = dst;
        c->group = t->cp_commits;
        memcpy(c->data, src, 16);
    } else if (op == SHORTSIM_CP_COMMIT) {
        t->cp_commits++;
    } else if (op == SHORTSIM_CP_WAIT) {
        unsigned keep = 0;
        for (unsigned i = 0; i < t->ncp; i++) {
            SimCopy *c = &t->cp[i];
            if (c->group < t->cp_commits && t->cp_commits - c->group > (unsigned)n) {
                if (G.checked) sim_check_access(c->dst, 16, 1, NULL); /* the thread's write, now */
                memcpy(c->dst, c->data, 16);
            } else t->cp[keep++] = *c;
        }
        t->ncp = keep;
    } else {
        block_fault(wk, "unknown cp.async operation %d", op);
    }
}

#include "sim_core_hopper.inc"

static const ShortsimApi sim_api = {
    .version = SHORTSIM_ABI_VERSION,
    .barrier = api_barrier,
    .warp = api_warp,
    .fault = api_fault,
    .activemask = api_activemask,
    .cp_async = api_cp_async,
    .hopper = api_hopper,
};

/* ------------------------------------------------------------------ */
/* workers                                                              */
/* ------------------------------------------------------------------ */

static size_t slot_size(void) { return G.page + G.stack; }

/* The static shared-memory slots: each SHORTSIM_SMEM_SLOT_END bytes of data
 * then PROT_NONE up to SHORTSIM_SMEM_SLOT (shortsim_abi.h); reserved here,
 * the data parts made read-write as modules need them (ensure_static_slots). */
static int map_static_smem(SimWorker *wk) {
    char *m = mmap(NULL, STATIC_MAP_LEN, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) return -1;
    wk->static_map = m;
    wk->w.static_smem = m;
    return 0;
}

static int ensure_static_slots(SimWorker *wk, int k) {
    if (k > SHORTSIM_SMEM_SLOTS) return -1;
    for (; wk->static_ready < k; wk->static_ready++)
        if (mprotect(wk->static_map + (size_t)wk->static_ready * SHORTSIM_SMEM_SLOT, SHORTSIM_SMEM_SLOT_END,
                     PROT_READ | PROT_WRITE) != 0)
            return -1;
    return 0;
}
/* Slot s: a guard page then the stack, after the region's header page. */
static char *slot_stack(SimWorker *wk, int s) { return wk->region + G.page + (size_t)s * slot_size() + G.page; }

static void worker_free(SimWorker *wk);

static SimWorker *worker_new(int id) {
    SimWorker *wk = calloc(1, sizeof *wk);
    if (!wk) return NULL;
    wk->id = id;
    wk->w.api = &sim_api;
    /* the stack region: a header page holding &wk->w, then the slots, aligned to
     * SHORTSIM_REGION_ALIGN so kernel code finds the header from its stack address */
    wk->region_len = G.page + (size_t)(SIM_MAX_THREADS + 1) * slot_size();
    wk->region = MAP_FAILED;
    if (wk->region_len > (size_t)SHORTSIM_REGION_ALIGN) { /* large pages with SHORTSIM_STACK_KB near its cap */
        free(wk);
        return NULL;
    }
    /* The whole aligned window is kept: checked code skips every address in its own stack's window
     * (shortsim_prelude.h), so shared memory mapped inside it would go unchecked. */
    size_t align = (size_t)SHORTSIM_REGION_ALIGN, reserve = 2 * align;
    char *res = mmap(NULL, reserve, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (res != MAP_FAILED) {
        char *r = (char *)(((uintptr_t)res + align - 1) & ~(uintptr_t)(align - 1));
        if (r > res) munmap(res, (size_t)(r - res));
        munmap(r + align, (size_t)(res + reserve - (r + align)));
        if (mprotect(r, G.page, PROT_READ | PROT_WRITE) == 0) {
            *(ShortsimW **)r = &wk->w;
            mprotect(r, G.page, PROT_READ);
            wk->region = r;
        } else {
            munmap(r, align);
        }
    }
    wk->threads = calloc(SIM_MAX_THREADS, sizeof *wk->threads);
    size_t smem = (SIM_SMEM_REGION + G.page - 1) / G.page * G.page;
    wk->smem_map_len = smem + G.page;
    wk->smem_map = mmap(NULL, wk->smem_map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    wk->alt_mem = malloc(SIM_ALTSTACK);
    if (wk->region == MAP_FAILED || !wk->threads || wk->smem_map == MAP_FAILED || !wk->alt_mem) {
        if (wk->region != MAP_FAILED) munmap(wk->region, (size_t)SHORTSIM_REGION_ALIGN);
        if (wk->smem_map != MAP_FAILED) munmap(wk->smem_map, wk->smem_map_len);
        free(wk->threads);
        free(wk->alt_mem);
        free(wk);
        return NULL;
    }
    mprotect(wk->smem_map + smem, G.page, PROT_NONE); /* guard after the dynamic shared memory */
    if (map_static_smem(wk) != 0) {
        worker_free(wk);
        return NULL;
    }
    for (int i = 0; i < SIM_MAX_THREADS; i++) wk->threads[i].stack = slot_stack(wk, i + 1);
    wk->plain_stack = slot_stack(wk, 0);
    return wk;
}

static int ensure_slots(SimWorker *wk, int k) {
    while (wk->slots_ready < k) {
        char *lo = slot_stack(wk, wk->slots_ready);
        if (mprotect(lo, G.stack, PROT_READ | PROT_WRITE) != 0) return -1;
        /* a fiber stack, so valgrind sees switches between them as such, not as giant frames */
        wk->vg_stack[wk->slots_ready] = VALGRIND_STACK_REGISTER(lo, lo + G.stack);
        wk->slots_ready++;
    }
    return 0;
}

/* Runs blocks of the kernel job until none is left or one faults. */
static void run_blocks(SimWorker *wk) {
    wk->plain_done = 0;
    while (!wk->plain_done && !wk->faulted) {
        sim_fiber_make(&wk->plain_ctx, wk->plain_stack, G.stack, plain_main, wk);
        wk->on_fiber = 1;
        sim_fiber_switch(&wk->home, &wk->plain_ctx);
        wk->on_fiber = 0;
        if (!wk->plain_done && !wk->faulted) wk->nfiber++; /* a converted block completed */
    }
}

/* The declaration of static shared-memory slot the running kernel uses (NULL: none recorded). */
static const ShortsimSmemDecl *slot_decl(const SimJob *job, size_t slot) {
    const ShortsimSmemDecl *d = NULL;
    const SimModule *m = job->kind == JOB_KERNEL ? job->fn->mod : NULL;
    for (size_t i = 0; m && i < m->nsmem_decls; i++) {
        const ShortsimSmemDecl *r = &m->smem_decls[i];
        if ((size_t)r->slot == slot && (!d || strcmp(r->func, job->fn->name) == 0)) d = r;
    }
    return d;
}

/* Where address a in the static shared-memory slots lies: past the end of the
 * declaration of that slot the running kernel uses. */
static void describe_static(SimWorker *wk, SimJob *job, uintptr_t a, char *buf, size_t len) {
    size_t off = a - (uintptr_t)wk->static_map, slot = off / SHORTSIM_SMEM_SLOT, in = off % SHORTSIM_SMEM_SLOT;
    const ShortsimSmemDecl *d = slot_decl(job, slot);
    if (!d || (in >= d->offset && in < d->offset + d->bytes)) {
        snprintf(buf, len, ": static shared memory (slot %zu)", slot);
        return;
    }
    int before = in < d->offset;
    snprintf(buf, len, ": %zu bytes %s static shared array `%s' (%u bytes, line %d%s%s)",
             (size_t)(before ? d->offset - in : in - (d->offset + d->bytes)),
             before ? "before the start of" : "past the end of", d->name, d->bytes, d->line, d->func[0] ? ", in " : "",
             d->func);
}

static void describe_signal(SimWorker *wk, SimJob *job, char *msg, size_t len) {
    char where[512], what[400], src[320];
    const char *kind = "fault";
    switch (wk->sig) {
    case SIGSEGV: kind = "invalid memory access"; break;
    case SIGBUS: kind = "bus error (misaligned or unmapped access)"; break;
    case SIGFPE: kind = wk->sig_code == FPE_INTDIV ? "integer division by zero" : "arithmetic exception"; break;
    case SIGILL: kind = "illegal instruction"; break;
    }
    uintptr_t a = (uintptr_t)wk->sig_addr;
    where[0] = 0;
    /* x86-64 reports a general-protection fault (a misaligned aligned-vector
     * access, a non-canonical address) with no address */
    int gp = wk->sig == SIGSEGV && wk->sig_code == SI_KERNEL && a == 0;
    if (gp)
        kind = "general protection fault (a misaligned vector access, e.g. float4 at an address not a multiple of "
               "16 (checked mode aligns a buffer only to its size's largest power-of-two factor), or a "
               "non-canonical address)";
    if (!gp && (wk->sig == SIGSEGV || wk->sig == SIGBUS)) {
        uintptr_t r0 = (uintptr_t)wk->region, r1 = r0 + wk->region_len;
        uintptr_t s0 = (uintptr_t)wk->smem_map, s1 = s0 + wk->smem_map_len;
        if (a >= r0 && a < r1) {
            snprintf(where, sizeof where, ": stack overflow (each thread has a %zu KB stack; set SHORTSIM_STACK_KB)",
                     G.stack / 1024);
        } else if (a >= s0 && a < (uintptr_t)wk->w.dyn_smem) {
            snprintf(where, sizeof where, ": %zu bytes before the start of the %llu-byte dynamic shared memory",
                     (size_t)((uintptr_t)wk->w.dyn_smem - a), (unsigned long long)wk->w.dyn_smem_bytes);
        } else if (a >= s0 && a < s1) {
            snprintf(where, sizeof where, ": %zu bytes past the end of the %llu-byte dynamic shared memory",
                     (size_t)(a - (uintptr_t)wk->w.dyn_smem) - (size_t)wk->w.dyn_smem_bytes,
                     (unsigned long long)wk->w.dyn_smem_bytes);
        } else if (a >= (uintptr_t)wk->static_map && a < (uintptr_t)wk->static_map + STATIC_MAP_LEN) {
            describe_static(wk, job, a, where, sizeof where);
        } else {
            where[0] = ':';
            where[1] = ' ';
            sim_describe_address(wk->sig_addr, where + 2, sizeof where - 2);
        }
    }
    if (wk->chk_bytes)
        snprintf(what, sizeof what, "invalid memory access (a %lu-byte %s) at address %p", wk->chk_bytes,
                 wk->chk_store ? "write" : "read", wk->sig_addr);
    else
        snprintf(what, sizeof what, "%s at address %p", kind, wk->sig_addr);
    sim_source_line(wk->sig_pc, src, sizeof src);
    size_t wl = strlen(where);
    if (src[0]) snprintf(where + wl, sizeof where - wl, " [%s]", src);
    if (job->kind == JOB_KERNEL) {
        char tb[48];
        unsigned me = wk->mode == MODE_PLAIN ? linear_tid(wk) : wk->cur;
        snprintf(msg, len, "kernel %s: block (%u,%u,%u), thread %s: %s%s", job->fn->name, wk->w.bid.x, wk->w.bid.y,
                 wk->w.bid.z, tstr(wk, me, tb), what, where);
    } else {
        snprintf(msg, len, "%s: %s%s", job->what, what, where);
    }
}

static void worker_run_job(SimWorker *wk, SimJob *job) {
    tl_worker = wk;
    wk->faulted = 0;
    wk->job = job;
    wk->nplain = wk->nfiber = 0;
    if (job->kind == JOB_KERNEL) {
        wk->fn = job->fn;
        wk->params = job->params;
        wk->n = job->block.x * job->block.y * job->block.z;
        wk->w.bdim = job->block;
        wk->w.gdim = job->grid;
        /* flush against the guard: exactly when checked, else in 16-byte units */
        size_t smem = G.checked ? job->smem : (job->smem + 15) & ~(size_t)15;
        wk->w.dyn_smem = wk->smem_map + wk->smem_map_len - G.page - smem;
        wk->w.dyn_smem_bytes = job->smem;
        wk->blk_next = wk->blk_end = 0;
        if (ensure_slots(wk, (int)wk->n + 1) != 0) {
            job_fault(job, CUDA_ERROR_OUT_OF_MEMORY, "simulator: cannot map thread stacks");
            return;
        }
        if (ensure_static_slots(wk, job->fn->mod ? job->fn->mod->nsmem_slots : 0) != 0) {
            job_fault(job, CUDA_ERROR_OUT_OF_MEMORY, "simulator: cannot map static shared memory");
            return;
        }
        if (G.checked && sim_shadow_reserve(&wk->shadow, job->smem + G.static_total) != 0) {
            job_fault(job, CUDA_ERROR_OUT_OF_MEMORY, "simulator: cannot record shared memory (checked mode)");
            return;
        }
    }
    if (sigsetjmp(wk->jb, 0) != 0) {
        wk->in_job = 0;
        if (wk->on_fiber) { /* back on the worker's stack from a fiber's fault */
#if defined(SIM_ASAN)
            sim_fiber_leaving = NULL;
            sim_fiber_arrived(wk->home.asan_fake);
#endif
            wk->on_fiber = 0;
        }
        char msg[2048];
        describe_signal(wk, job, msg, sizeof msg);
        job_fault(job, job->kind == JOB_KERNEL ? CUDA_ERROR_ILLEGAL_ADDRESS : CUDA_ERROR_LAUNCH_FAILED, msg);
        goto out;
    }
    wk->in_job = 1;
    if (job->kind == JOB_KERNEL) {
        run_blocks(wk);
        if (wk->faulted) job_fault(job, CUDA_ERROR_LAUNCH_FAILED, wk->fault);
    } else {
        for (;;) {
            if (atomic_load_explicit(&job->abort, memory_order_relaxed)) break;
            uint64_t t = atomic_fetch_add_explicit(&job->next, 1, memory_order_relaxed);
            if (t >= job->ntasks) break;
            job->taskfn(job->arg, t, wk->id);
        }
    }
    wk->in_job = 0;
out:
    if (job->kind == JOB_KERNEL && (wk->nplain || wk->nfiber)) {
        __atomic_fetch_add(&job->fn->blocks_plain, wk->nplain, __ATOMIC_RELAXED);
        __atomic_fetch_add(&job->fn->blocks_fiber, wk->nfiber, __ATOMIC_RELAXED);
    }
}

static void set_altstack(SimWorker *wk, stack_t *old) {
    stack_t ss = {.ss_sp = wk->alt_mem, .ss_size = SIM_ALTSTACK, .ss_flags = 0};
    sigaltstack(&ss, old);
}

static void *pool_main(void *arg) {
    SimWorker *wk = arg;
    set_altstack(wk, NULL);
    tl_worker = wk;
    uint64_t seen = wk->seen_gen;
    pthread_mutex_lock(&G.mu);
    for (;;) {
        while (!G.stop && G.gen == seen) pthread_cond_wait(&G.cv, &G.mu);
        if (G.stop) break;
        seen = G.gen;
        SimJob *job = G.job;
        pthread_mutex_unlock(&G.mu);
        worker_run_job(wk, job);
        pthread_mutex_lock(&G.mu);
        if (--G.pending == 0) pthread_cond_signal(&G.done_cv);
    }
    pthread_mutex_unlock(&G.mu);
    stack_t ss = {.ss_flags = SS_DISABLE};
    sigaltstack(&ss, NULL);
    return NULL;
}

static void worker_free(SimWorker *wk) {
    for (int s = 0; s < wk->slots_ready; s++) VALGRIND_STACK_DEREGISTER(wk->vg_stack[s]);
    for (int i = 0; i < SIM_MAX_THREADS; i++) free(wk->threads[i].cp);
    for (unsigned i = 0; i < wk->ntma; i++) free(wk->tma[i].data);
    free(wk->tma);
    free(wk->hop);
    munmap(wk->region, (size_t)SHORTSIM_REGION_ALIGN);
    munmap(wk->smem_map, wk->smem_map_len);
    if (wk->static_map) munmap(wk->static_map, STATIC_MAP_LEN);
    free(wk->threads);
    free(wk->alt_mem);
    sim_shadow_free(&wk->shadow);
    free(wk);
}

/* Resizes the pool to G.want workers. Called with exec_mu held. */
static int pool_ensure(void) {
    if (G.nw == G.want && G.w) return 0;
    /* stop the old pool threads */
    if (G.nw > 1) {
        pthread_mutex_lock(&G.mu);
        G.stop = 1;
        pthread_cond_broadcast(&G.cv);
        pthread_mutex_unlock(&G.mu);
        for (int i = 1; i < G.nw; i++) {
            pthread_join(G.w[i]->th, NULL);
            worker_free(G.w[i]);
        }
        G.stop = 0;
    }
    SimWorker *w0 = G.w ? G.w[0] : NULL;
    free(G.w);
    G.w = calloc((size_t)G.want, sizeof *G.w);
    G.nw = 0;
    if (!G.w) return -1;
    if (!w0) w0 = worker_new(0);
    if (!w0) return -1;
    G.w[G.nw++] = w0;
    for (int i = 1; i < G.want; i++) {
        SimWorker *wk = worker_new(i);
        if (!wk) break;
        wk->seen_gen = G.gen;
        if (pthread_create(&wk->th, NULL, pool_main, wk) != 0) {
            worker_free(wk);
            break;
        }
        wk->has_thread = 1;
        G.w[G.nw++] = wk;
    }
    G.want = G.nw;
    return 0;
}

/* ------------------------------------------------------------------ */
/* signals                                                              */
/* ------------------------------------------------------------------ */

/* The instruction a signal interrupted, from its context. */
static void *signal_pc(void *ucv) {
    ucontext_t *uc = ucv;
#if defined(__x86_64__) && defined(REG_RIP)
    return (void *)uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
    return (void *)uc->uc_mcontext.pc;
#else
    (void)uc;
    return NULL;
#endif
}

/* Abandons the job after a fault recorded in wk->sig*: back to worker_run_job. */
__attribute__((noreturn)) static void leave_job(SimWorker *wk) {
#if defined(SIM_ASAN)
    /* leaving the fiber the fault happened on (it dies) for the worker's stack */
    if (wk->on_fiber) __sanitizer_start_switch_fiber(NULL, wk->home.stack_lo, wk->home.stack_size);
#endif
    siglongjmp(wk->jb, 1);
}

static void sim_signal(int sig, siginfo_t *si, void *uc) {
    SimWorker *wk = tl_worker;
    if (wk && wk->in_job) {
        wk->in_job = 0;
        wk->sig = sig;
        wk->sig_code = si->si_code;
        wk->sig_addr = si->si_addr;
        wk->sig_pc = signal_pc(uc);
        wk->chk_bytes = 0;
        leave_job(wk);
    }
    /* not ours: hand over to whoever had it, or die the default way */
    struct sigaction *old = &G.old[sig];
    if ((old->sa_flags & SA_SIGINFO) && old->sa_sigaction) {
        old->sa_sigaction(sig, si, uc);
    } else if (old->sa_handler != SIG_DFL && old->sa_handler != SIG_IGN) {
        old->sa_handler(sig);
    } else {
        signal(sig, SIG_DFL); /* the faulting instruction runs again and kills the process */
    }
}

/* ------------------------------------------------------------------ */
/* checked accesses                                                     */
/* ------------------------------------------------------------------ */

/* Fixes the bounds that checked accesses of launch job are held to (G.dev,
 * G.static_lo/hi); -1 when out of memory. exec_mu held. A slot's object is
 * the kernel's own declaration of it, else every declaration of the slot
 * together (one in a __device__ function the kernel calls). */
static int prepare_checked(const SimJob *job) {
    long n = sim_device_ranges(&G.dev, &G.dev_cap);
    if (n < 0) return -1;
    G.ndev = (size_t)n;
    G.dev_lo = G.dev_hi = 0;
    for (size_t i = 0; i < G.ndev; i++) {
        if (i == 0 || G.dev[i].map_lo < G.dev_lo) G.dev_lo = G.dev[i].map_lo;
        if (G.dev[i].map_hi > G.dev_hi) G.dev_hi = G.dev[i].map_hi;
    }
    unsigned char state[SHORTSIM_SMEM_SLOTS] = {0}; /* 0 no declaration seen, 1 another function's, 2 the kernel's */
    for (int k = 0; k < SHORTSIM_SMEM_SLOTS; k++) G.static_lo[k] = G.static_hi[k] = SHORTSIM_SMEM_SLOT_END;
    const SimModule *m = job->fn->mod;
    for (size_t i = 0; m && i < m->nsmem_decls; i++) {
        const ShortsimSmemDecl *d = &m->smem_decls[i];
        if (d->slot < 0 || d->slot >= SHORTSIM_SMEM_SLOTS || d->offset > SHORTSIM_SMEM_SLOT_END) continue;
        unsigned char st = strcmp(d->func, job->fn->name) == 0 ? 2 : 1;
        unsigned lo = d->offset, hi = d->offset + d->bytes, k = (unsigned)d->slot;
        if (st < state[k]) continue;
        if (st > state[k]) G.static_lo[k] = lo, G.static_hi[k] = hi; /* the first of its kind */
        if (lo < G.static_lo[k]) G.static_lo[k] = lo;
        if (hi > G.static_hi[k]) G.static_hi[k] = hi;
        state[k] = st;
    }
    G.static_total = 0;
    for (int k = 0; k < SHORTSIM_SMEM_SLOTS; k++) {
        G.static_rec[k] = G.static_total;
        G.static_total += G.static_hi[k] - G.static_lo[k];
    }
    return 0;
}

/* Where a checked address lies (checked_bounds). */
enum { IN_NONE, IN_DEVICE, IN_DYN_SMEM, IN_STATIC_SMEM };

/* The object that checked address a must stay inside, [*lo, *hi): the
 * block's dynamic shared memory, a static shared object (of *slot), or a
 * device allocation; IN_NONE when a is none of these (the stack, host memory). */
static int checked_bounds(const SimWorker *wk, uintptr_t a, uintptr_t *lo, uintptr_t *hi, size_t *slot) {
    uintptr_t s0 = (uintptr_t)wk->smem_map, t0 = (uintptr_t)wk->static_map;
    if (a - s0 < wk->smem_map_len) {
        *lo = (uintptr_t)wk->w.dyn_smem;
        *hi = *lo + wk->w.dyn_smem_bytes;
        return IN_DYN_SMEM;
    }
    if (a - t0 < STATIC_MAP_LEN) {
        *slot = (a - t0) / SHORTSIM_SMEM_SLOT;
        uintptr_t base = t0 + *slot * SHORTSIM_SMEM_SLOT;
        *lo = base + G.static_lo[*slot];
        *hi = base + G.static_hi[*slot];
        return IN_STATIC_SMEM;
    }
    if (a - G.dev_lo >= G.dev_hi - G.dev_lo) return IN_NONE; /* host memory (the heap, other stacks, globals) */
    size_t l = 0, r = G.ndev; /* the last allocation whose mapping starts at or below a */
    while (l < r) {
        size_t mid = l + (r - l) / 2;
        if (G.dev[mid].map_lo <= a) l = mid + 1;
        else r = mid;
    }
    if (l == 0 || a >= G.dev[l - 1].map_hi) return IN_NONE;
    *lo = G.dev[l - 1].lo;
    *hi = G.dev[l - 1].hi;
    return IN_DEVICE;
}

/* The thread running kernel code now. */
static unsigned running_tid(const SimWorker *wk) { return wk->mode == MODE_PLAIN ? linear_tid(wk) : wk->cur; }

/* Names the shared-memory byte of shadow record idx: "byte K of ...". */
static void shared_byte(const SimWorker *wk, size_t idx, char *buf, size_t len) {
    if (idx < wk->job->smem) {
        snprintf(buf, len, "byte %zu of the %zu-byte dynamic shared memory", idx, wk->job->smem);
        return;
    }
    size_t slot = 0;
    while (slot + 1 < SHORTSIM_SMEM_SLOTS && G.static_rec[slot + 1] <= idx - wk->job->smem) slot++;
    const ShortsimSmemDecl *d = slot_decl(wk->job, slot);
    size_t k = idx - wk->job->smem - G.static_rec[slot];
    if (d) snprintf(buf, len, "byte %zu of static shared array `%s' (line %d)", k, d->name, d->line);
    else snprintf(buf, len, "byte %zu of static shared memory (slot %zu)", k, slot);
}

/* The other party of a race, as a report names it ("thread (1,0,0) [file:line in fn]"). */
static void other_access(const SimWorker *wk, const SimShadowHit *hit, char *buf, size_t len) {
    char tb[48], src[320];
    sim_source_line(hit->pc, src, sizeof src);
    const char *who = hit->tid == SIM_SHADOW_MANY     ? "other threads"
                      : hit->tid == SIM_SHADOW_ATOMIC ? "atomic operations of other threads"
                                                      : NULL;
    int n = who ? snprintf(buf, len, "%s", who) : snprintf(buf, len, "thread %s", tstr(wk, hit->tid, tb));
    if (src[0] && n >= 0 && (size_t)n < len) snprintf(buf + n, len - (size_t)n, " [%s]", src);
}

/* Faults the block on a shadow verdict v for an access of n bytes at a (store: a write). */
__attribute__((noreturn)) static void shadow_fault(SimWorker *wk, int v, uintptr_t a, unsigned long n, int store,
                                                   const void *pc, const SimShadowHit *hit) {
    char obj[200], src[320], other[400];
    shared_byte(wk, hit->offset, obj, sizeof obj);
    sim_source_line(pc, src, sizeof src);
    const char *rw = store ? "write" : "read";
    char at[600];
    snprintf(at, sizeof at, "a %lu-byte %s at address %p (%s)%s%s%s", n, rw, (void *)a, obj, src[0] ? " [" : "", src,
             src[0] ? "]" : "");
    if (v == SIM_SHADOW_UNINIT)
        block_fault(wk, "read of uninitialised shared memory: %s: no thread of the block has written it", at);
    other_access(wk, hit, other, sizeof other);
    const char *did = v == SIM_SHADOW_WAR ? "read" : "wrote";
    block_fault(wk, "data race on shared memory: %s, and %s %s it with no __syncthreads() between", at, other, did);
}

/* Checked mode: records thread tid's access in the shadow of the shared memory holding a (region
 * from checked_bounds, [lo, ...) its object) and faults on a race or an uninitialised read. */
static void shadow_check(SimWorker *wk, int region, size_t slot, uintptr_t a, uintptr_t lo, unsigned long n,
                         int kind, const void *pc) {
    size_t idx = (size_t)(a - lo) + (region == IN_STATIC_SMEM ? wk->job->smem + G.static_rec[slot] : 0);
    SimShadowHit hit;
    int v = sim_shadow_access(&wk->shadow, idx, n, running_tid(wk), kind, pc, &hit);
    if (v != SIM_SHADOW_OK) shadow_fault(wk, v, a, n, kind == SIM_ACC_WRITE, pc, &hit);
}

void sim_check_access(const void *p, unsigned long n, int store, const void *pc) {
    SimWorker *wk = tl_worker;
    if (!G.checked || !wk || !wk->in_job || !wk->job || wk->job->kind != JOB_KERNEL) return;
    uintptr_t a = (uintptr_t)p, lo, hi;
    size_t slot = 0;
    int region = checked_bounds(wk, a, &lo, &hi, &slot);
    if (region == IN_NONE) return;
    if (a >= lo && n <= hi - lo && a - lo <= hi - lo - n) {
        int kind = wk->w.in_atomic ? SIM_ACC_ATOMIC : store ? SIM_ACC_WRITE : SIM_ACC_READ;
        if (region != IN_DEVICE) shadow_check(wk, region, slot, a, lo, n, kind, pc);
        return;
    }
    wk->in_job = 0;
    wk->sig = SIGSEGV;
    wk->sig_code = SEGV_ACCERR;
    wk->sig_addr = (void *)(a < lo || a >= hi ? a : hi); /* the first byte outside */
    wk->sig_pc = (void *)pc;
    wk->chk_bytes = n;
    wk->chk_store = store;
    leave_job(wk);
}

static void install_signals(void) {
    if (G.sig_installed) return;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = sim_signal;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof sim_signals / sizeof *sim_signals; i++)
        sigaction(sim_signals[i], &sa, &G.old[sim_signals[i]]);
    G.sig_installed = 1;
}

/* ------------------------------------------------------------------ */
/* jobs                                                                 */
/* ------------------------------------------------------------------ */

static void sim_init_once(void) {
    if (G.page) return;
    long p = sysconf(_SC_PAGESIZE);
    G.page = p > 0 ? (size_t)p : 4096;
    size_t kb = 64;
    const char *e = getenv("SHORTSIM_STACK_KB");
    if (e && atoi(e) >= 16) kb = (size_t)atoi(e);
    if (kb > 1000) kb = 1000; /* 1025 stacks must fit the aligned region (shortsim_abi.h) */
    G.stack = (kb * 1024 + G.page - 1) / G.page * G.page;
    if (G.want <= 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        G.want = n > 0 ? (int)n : 1;
    }
}

void sim_configure(int threads, int checked) {
    pthread_mutex_lock(&G.exec_mu);
    sim_init_once();
    if (threads <= 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        threads = n > 0 ? (int)n : 1;
    }
    if (threads > 256) threads = 256;
    G.want = threads;
    G.checked = checked != 0;
    install_signals();
    pthread_mutex_unlock(&G.exec_mu);
}
int sim_checked(void) { return G.checked; }
int sim_nworkers(void) { return G.want; }

/* Runs job on the pool; the caller works as worker 0. exec_mu held. */
static void run_job(SimJob *job) {
    if (pool_ensure() != 0 || !G.w) {
        job_fault(job, CUDA_ERROR_OUT_OF_MEMORY, "simulator: cannot create workers");
        return;
    }
    int parallel = G.nw > 1 && job->ntasks > 1;
    if (parallel) {
        pthread_mutex_lock(&G.mu);
        G.job = job;
        G.gen++;
        G.pending = G.nw - 1;
        pthread_cond_broadcast(&G.cv);
        pthread_mutex_unlock(&G.mu);
    }
    SimWorker *w0 = G.w[0];
    stack_t old;
    set_altstack(w0, &old);
    SimWorker *prev = tl_worker;
    worker_run_job(w0, job);
    tl_worker = prev;
    if (old.ss_flags & SS_DISABLE) {
        stack_t ss = {.ss_flags = SS_DISABLE};
        sigaltstack(&ss, NULL);
    } else {
        sigaltstack(&old, NULL);
    }
    if (parallel) {
        pthread_mutex_lock(&G.mu);
        while (G.pending > 0) pthread_cond_wait(&G.done_cv, &G.mu);
        G.job = NULL;
        pthread_mutex_unlock(&G.mu);
    }
}

int sim_smem_optin_limit(int arch) {
    if (arch >= 90) return 232448;              /* sm_90: 227 KB */
    if (arch == 86 || arch == 89) return 101376; /* 99 KB */
    if (arch >= 80) return 166912;              /* sm_80: 163 KB */
    if (arch >= 75) return 65536;
    if (arch >= 70) return 98304;
    return 49152;
}

/* Runs a job prepared by the caller (G.exec_mu held), releases the lock and
 * the job's mutex; nonzero (with the fault recorded) if a block faulted. */
static int finish_job(SimJob *job) {
    sim_init_once();
    install_signals();
    run_job(job);
    pthread_mutex_unlock(&G.exec_mu);
    pthread_mutex_destroy(&job->mu);
    if (job->faulted) sim_set_fault("%s", job->msg);
    return job->faulted != 0;
}

CUresult sim_launch(SimFunc *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                    unsigned smem, void **params) {
    sim_clear_fault(); /* a fault message describes the last launch only */
    if (!f) {
        sim_set_fault("cuLaunchKernel: NULL function");
        return CUDA_ERROR_INVALID_HANDLE;
    }
    int arch = f->mod ? f->mod->arch : 80;
    unsigned long long nthreads = (unsigned long long)bx * by * bz;
    const char *bad = NULL;
    char buf[256];
    if (!gx || !gy || !gz || !bx || !by || !bz) bad = "a grid or block dimension is 0";
    else if (nthreads > 1024) {
        snprintf(buf, sizeof buf, "%llu threads per block (%ux%ux%u) exceed the limit of 1024 (sm_%d)", nthreads, bx,
                 by, bz, arch);
        bad = buf;
    } else if (bx > 1024 || by > 1024 || bz > 64) {
        snprintf(buf, sizeof buf, "block (%u,%u,%u) exceeds the block dimension limits (1024,1024,64) (sm_%d)", bx, by,
                 bz, arch);
        bad = buf;
    } else if (gx > 2147483647u || gy > 65535 || gz > 65535) {
        snprintf(buf, sizeof buf, "grid (%u,%u,%u) exceeds the grid limits (2147483647,65535,65535) (sm_%d)", gx, gy,
                 gz, arch);
        bad = buf;
    } else if ((long long)smem > f->max_dyn_smem) {
        int optin = sim_smem_optin_limit(arch);
        if (f->max_dyn_smem + (long long)f->static_smem <= SIM_SMEM_DEFAULT_LIMIT)
            snprintf(buf, sizeof buf,
                     "%u bytes of dynamic shared memory (+%zu static) exceed the %d-byte default limit; raise "
                     "CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES (up to %d bytes in all on sm_%d)",
                     smem, f->static_smem, SIM_SMEM_DEFAULT_LIMIT, optin, arch);
        else
            snprintf(buf, sizeof buf,
                     "%u bytes of dynamic shared memory exceed the function's limit of %d bytes (sm_%d allows %d in "
                     "all)",
                     smem, f->max_dyn_smem, arch, optin);
        bad = buf;
    }
    if (bad) {
        sim_set_fault("kernel %s: launch rejected: %s", f->name, bad);
        return CUDA_ERROR_INVALID_VALUE;
    }
    SimJob job;
    memset(&job, 0, sizeof job);
    pthread_mutex_init(&job.mu, NULL);
    job.kind = JOB_KERNEL;
    job.ntasks = (uint64_t)gx * gy * gz;
    job.fn = f;
    job.params = params;
    job.grid = (ShortsimU3){gx, gy, gz};
    job.block = (ShortsimU3){bx, by, bz};
    job.smem = smem;
    pthread_mutex_lock(&G.exec_mu);
    if (G.checked && prepare_checked(&job) != 0) {
        pthread_mutex_unlock(&G.exec_mu);
        pthread_mutex_destroy(&job.mu);
        sim_set_fault("kernel %s: launch failed: out of memory", f->name);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    /* about 16 chunks per worker, at most 64 blocks each */
    uint64_t per = job.ntasks / ((uint64_t)(G.want > 0 ? G.want : 1) * 16);
    job.chunk = per < 1 ? 1 : per > 64 ? 64 : per;
    return finish_job(&job) ? job.code : CUDA_SUCCESS;
}

int sim_parallel_for(uint64_t ntasks, SimTaskFn fn, void *arg, const char *what) {
    if (ntasks == 0) return 0;
    SimJob job;
    memset(&job, 0, sizeof job);
    pthread_mutex_init(&job.mu, NULL);
    job.kind = JOB_TASKS;
    job.ntasks = ntasks;
    job.taskfn = fn;
    job.arg = arg;
    job.what = what;
    pthread_mutex_lock(&G.exec_mu);
    return finish_job(&job) ? -1 : 0;
}

void sim_func_stats(CUfunction f, long *blocks_plain, long *blocks_fiber) {
    SimFunc *sf = (SimFunc *)f;
    if (blocks_plain) *blocks_plain = sf ? __atomic_load_n(&sf->blocks_plain, __ATOMIC_RELAXED) : 0;
    if (blocks_fiber) *blocks_fiber = sf ? __atomic_load_n(&sf->blocks_fiber, __ATOMIC_RELAXED) : 0;
}

/* ------------------------------------------------------------------ */
/* switch benchmark                                                     */
/* ------------------------------------------------------------------ */

static struct {
    SimFiberCtx main;        /* the measuring thread */
    SimFiberCtx f;           /* the fiber it switches to */
} bench;

static void bench_fiber(void *arg) {
    (void)arg;
    for (;;) sim_fiber_switch(&bench.f, &bench.main);
}

double sim_measure_switch_ns(long n) {
    size_t sz = 64 * 1024;
    char *stk = malloc(sz);
    if (!stk || n <= 0) {
        free(stk);
        return -1;
    }
    unsigned vg = VALGRIND_STACK_REGISTER(stk, stk + sz);
    sim_fiber_make(&bench.f, stk, sz, bench_fiber, NULL);
    sim_fiber_switch(&bench.main, &bench.f); /* warm up */
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long i = 0; i < n; i++) sim_fiber_switch(&bench.main, &bench.f);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    VALGRIND_STACK_DEREGISTER(vg);
    free(stk);
    double ns = (t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec);
    return ns / (2.0 * n); /* each iteration is two switches */
}
