/*
 * rt_driver.h — the table of CUDA driver / cuBLAS entry points the runtime
 * executes plans through, and the on-disk artifact cache.
 *
 * One execution path, two drivers: runtime/src/exec.c marshals launch
 * arguments and GEMM parameters exactly as for a GPU and calls them through
 * an RtDriver. backend_cuda.c fills the table from libcuda.so.1,
 * libcublas.so and libcublasLt.so (dlopen; nothing is linked, so the library loads on machines
 * without a driver); runtime/sim/ fills it with the CPU simulator. Only how
 * a module image is produced differs (compile_module): NVRTC -> cubin for
 * cuda, the host C++ compiler -> shared object for sim.
 *
 * Field types come from the toolkit's own prototypes via __typeof__, so a
 * signature mismatch is a compile error.
 */
#ifndef RT_DRIVER_H
#define RT_DRIVER_H

#include <cuda.h>
#include <cublasLt.h>
#include <cublas_v2.h>
#include <stddef.h>
#include <stdint.h>

#include "shortrt.h"

/* What compile_module is asked to build. */
typedef struct RtCompileRequest {
    const char *source;       /* the whole emitted .cu text */
    size_t len;               /* its length */
    const char *name;         /* model name (for messages and file names) */
    int arch;                 /* compute capability * 10 (80, 90); sim: the arch whose limits it checks */
    const char *cache_dir;    /* artifact cache directory */
    const char *const *kernel_names; /* every kernel symbol in the plan (sim trampolines) */
    int nkernels;             /* count */
    int rebuild;              /* 1: the cached image failed to load: evict it, build and store again */
    int sim_prelude;          /* sim: 1 when the source is plain CUDA that does not include the simulator's
                                 prelude itself: the compiler includes it first (-include) */
    const char *const *include_dirs; /* sim: directories the source's #include searches (-I), absolute;
                                 with any, a source that has #include is keyed by its preprocessed text */
    int ninclude_dirs;        /* entries of include_dirs */
} RtCompileRequest;

/* What compile_module produced. */
typedef struct RtCompiled {
    void *image;              /* cuda: cubin bytes; sim: NUL-terminated path of the .so (malloc'd) */
    size_t image_len;         /* bytes in image */
    double compile_ms;        /* time spent compiling (0 on a cache hit) */
    int cache_hit;            /* 1 when taken from the cache */
    int cache_corrupt;        /* 1 when a corrupt entry was found and rebuilt */
    int image_fd;             /* sim: the descriptor the image's /proc/self/fd path names (valid when own_fd) */
    int own_fd;               /* 1 when image_fd is open and closed by rt_compiled_release */
    char note[1536];          /* why the cache was not used or written ("" if it was) */
} RtCompiled;
/* Frees what compile_module allocated and closes its descriptor. */
void rt_compiled_release(RtCompiled *c);

/* Driver calls counted by the simulator since it was filled in (rt_driver_sim); operations
 * recorded into a graph or replayed from one are not calls. */
typedef struct RtCallCounts {
    long launches;        /* cuLaunchKernel calls that ran a kernel */
    long gemms;           /* cublasGemmEx, cublasGemmStridedBatchedEx and cublasLtMatmul calls that ran */
    long captures;        /* cuStreamBeginCapture calls that started a capture */
    long graph_launches;  /* cuGraphLaunch calls */
    long graph_nodes_run; /* operations replayed by those graph launches */
    long lt_descs;        /* cublasLtMatmulDescCreate calls (gemm_lt.c makes one per GEMM step and shape) */
    long lt_heuristics;   /* cublasLtMatmulAlgoGetHeuristic calls (likewise) */
} RtCallCounts;

typedef struct RtDriver {
    const char *name;                                 /* "cuda" or "sim" */
    srt_backend backend;                              /* SRT_BACKEND_CUDA or SRT_BACKEND_SIM */
    /* compile: fills out; on failure writes a message to err and returns an error status */
    srt_status (*compile_module)(const RtCompileRequest *req, RtCompiled *out, char *err, size_t errlen);
    /* driver API subset */
    __typeof__(&cuInit) init;
    __typeof__(&cuDeviceGet) deviceGet;
    __typeof__(&cuDeviceGetAttribute) deviceGetAttribute;
    __typeof__(&cuDevicePrimaryCtxRetain) primaryCtxRetain;
    __typeof__(&cuDevicePrimaryCtxRelease) primaryCtxRelease;
    __typeof__(&cuCtxSetCurrent) ctxSetCurrent;
    __typeof__(&cuModuleLoadData) moduleLoadData;     /* image: cubin (cuda) or .so path (sim) */
    __typeof__(&cuModuleUnload) moduleUnload;
    __typeof__(&cuModuleGetFunction) moduleGetFunction;
    __typeof__(&cuFuncSetAttribute) funcSetAttribute;
    __typeof__(&cuMemAlloc) memAlloc;
    __typeof__(&cuMemFree) memFree;
    __typeof__(&cuMemcpyHtoD) memcpyHtoD;
    __typeof__(&cuMemcpyDtoH) memcpyDtoH;
    __typeof__(&cuMemsetD8) memsetD8;
    __typeof__(&cuLaunchKernel) launchKernel;
    __typeof__(&cuStreamCreate) streamCreate;
    __typeof__(&cuStreamDestroy) streamDestroy;
    __typeof__(&cuStreamSynchronize) streamSynchronize;
    __typeof__(&cuEventCreate) eventCreate;
    __typeof__(&cuEventRecord) eventRecord;
    __typeof__(&cuEventSynchronize) eventSynchronize;
    __typeof__(&cuEventElapsedTime) eventElapsedTime;
    __typeof__(&cuEventDestroy) eventDestroy;
    __typeof__(&cuGetErrorString) getErrorString;
    /* TMA tensor maps for Hopper kernels (docs/attention/hopper.md); the simulator encodes its own subset;
       NULL on a driver older than CUDA 12 */
    __typeof__(&cuTensorMapEncodeTiled) tensorMapEncodeTiled;
    /* CUDA graphs: a program's steps captured on a session's stream once and replayed (exec.c) */
    __typeof__(&cuStreamBeginCapture) streamBeginCapture;
    __typeof__(&cuStreamEndCapture) streamEndCapture;
    __typeof__(&cuGraphInstantiate) graphInstantiate;
    __typeof__(&cuGraphExecUpdate) graphExecUpdate;
    __typeof__(&cuGraphLaunch) graphLaunch;
    __typeof__(&cuGraphExecDestroy) graphExecDestroy;
    __typeof__(&cuGraphDestroy) graphDestroy;
    /* cuBLAS subset */
    __typeof__(&cublasCreate) blasCreate;
    __typeof__(&cublasDestroy) blasDestroy;
    __typeof__(&cublasSetStream) blasSetStream;
    __typeof__(&cublasGemmEx) gemmEx;
    __typeof__(&cublasGemmStridedBatchedEx) gemmStridedBatchedEx;
    /* cuBLASLt subset: GEMMs with a fused epilogue (bias, relu, gelu) */
    __typeof__(&cublasLtCreate) ltCreate;
    __typeof__(&cublasLtDestroy) ltDestroy;
    __typeof__(&cublasLtMatmulDescCreate) ltMatmulDescCreate;
    __typeof__(&cublasLtMatmulDescDestroy) ltMatmulDescDestroy;
    __typeof__(&cublasLtMatmulDescSetAttribute) ltMatmulDescSetAttribute;
    __typeof__(&cublasLtMatrixLayoutCreate) ltMatrixLayoutCreate;
    __typeof__(&cublasLtMatrixLayoutDestroy) ltMatrixLayoutDestroy;
    __typeof__(&cublasLtMatmul) ltMatmul;
    __typeof__(&cublasLtMatmulPreferenceCreate) ltMatmulPreferenceCreate;
    __typeof__(&cublasLtMatmulPreferenceDestroy) ltMatmulPreferenceDestroy;
    __typeof__(&cublasLtMatmulPreferenceSetAttribute) ltMatmulPreferenceSetAttribute;
    __typeof__(&cublasLtMatmulAlgoGetHeuristic) ltMatmulAlgoGetHeuristic;
    /* simulator extension (NULL for cuda): the last fault message (divergent barrier, OOB, limits) */
    const char *(*last_fault)(void);
    /* simulator extension (NULL for cuda): the driver calls made so far (tests count launches per forward) */
    void (*call_counts)(struct RtCallCounts *out);
    void *lib_cuda;                                   /* dlopen handle (cuda) */
    void *lib_cublas;                                 /* dlopen handle (cuda) */
    void *lib_cublaslt;                               /* dlopen handle (cuda) */
} RtDriver;

/* Compiles req with d and loads the image into *mod; a cached image that
 * validated but does not load is evicted (req->rebuild) and built once more.
 * *load is the load's result (CUDA_SUCCESS when nothing was loaded); out is
 * filled either way: release it with rt_compiled_release. */
srt_status rt_compile_and_load(const RtDriver *d, RtCompileRequest *req, RtCompiled *out, CUmodule *mod,
                               CUresult *load, char *err, size_t errlen);

/* Fills d for the CUDA backend. Returns SRT_ERR_NO_DEVICE (message in err) when no driver/GPU. */
srt_status rt_driver_cuda(RtDriver *d, char *err, size_t errlen);
/* Fills d for the simulator (runtime/sim/sim_driver.c). threads: worker threads (0 = cores); checked: bounds/limit checks. */
srt_status rt_driver_sim(RtDriver *d, int threads, int checked, char *err, size_t errlen);

/*
 * On-disk artifact cache (runtime/src/cache.c). An entry is a plain file
 * <dir>/<key>.<ext> plus a sidecar <key>.<ext>.meta holding its length and a
 * 64-bit content hash; both are written to temporary files and renamed into
 * place (entry first, then meta). A lookup whose meta is missing or does not
 * match the entry, or whose bytes fail the caller's check, is a corrupt
 * entry: it is counted (not removed, so that concurrent processes are safe)
 * and the caller rebuilds and stores, which replaces both files. The
 * directory must be private to the user (owned, not group/world-writable,
 * no symlink) and reached through parents that only the user or root can
 * change, else it is refused; it is opened once and every entry is reached
 * through that descriptor (openat & co.), never by path.
 */
typedef struct RtCache {
    char dir[1024];   /* cache directory (created on init), parents' symbolic links resolved: for messages */
    int fd;           /* the directory, opened once (O_PATH, no symlink followed); -1 when not open */
    char why[1200];   /* why rt_cache_init refused the directory ("" if it did not) */
    int hits;         /* lookups that found a valid entry */
    int misses;       /* lookups that found nothing */
    int corrupt;      /* lookups that found a corrupt or half-stored entry */
} RtCache;
/* The default cache directory: $SHORTC_CACHE, else $HOME/.cache/shortc when $HOME is an existing absolute
 * directory other than "/", else /tmp/shortc-cache-EUID (rt_fallback_cache_dir). */
void rt_default_cache_dir(char *buf, size_t len);
/* The cache directory used when the chosen one is unusable: /tmp/shortc-cache-EUID. */
void rt_fallback_cache_dir(char *buf, size_t len);
/* path made absolute against the working directory (unchanged when it is); 0 on success, -1 when too long. */
int rt_abs_path(const char *path, char *out, size_t len);
/* Creates dir (0700), opens it and checks it is a private directory of this user below parents only
 * the user or root can change (cache.c); 0 on success (close with rt_cache_close), else -1 and c->why. */
int rt_cache_init(RtCache *c, const char *dir);
/* Closes the directory rt_cache_init opened (harmless when it did not). */
void rt_cache_close(RtCache *c);
/* rt_cache_init on dir, else on /tmp/shortc-cache-UID; note says why dir was not used ("" if it was). 0 on success. */
int rt_cache_open(RtCache *c, const char *dir, char *note, size_t notelen);
/* 1 and the entry's path on a valid hit; 0 on a miss or a corrupt entry (nothing removed). */
int rt_cache_lookup(RtCache *c, const char *key, const char *ext, char *path, size_t pathlen);
/* rt_cache_lookup that also runs check (NULL: none) on the entry's bytes and, when data is not NULL,
 * hands them over (malloc'd, NUL-terminated) on a hit: the bytes validated are the bytes used. */
int rt_cache_load(RtCache *c, const char *key, const char *ext, int (*check)(const void *, size_t), char *path,
                  size_t pathlen, void **data, size_t *len);
/* rt_cache_lookup that also runs check and, on a hit, hands over a read-only descriptor of the entry
 * whose bytes validated (close it): what the simulator loads, through /proc/self/fd. */
int rt_cache_load_fd(RtCache *c, const char *key, const char *ext, int (*check)(const void *, size_t), char *path,
                     size_t pathlen, int *fd);
/* Removes an entry and its meta (one that validated but failed to load). */
void rt_cache_evict(RtCache *c, const char *key, const char *ext);
/* Stores data atomically; 0 on success and the entry's path. */
int rt_cache_store(RtCache *c, const char *key, const char *ext, const void *data, size_t len,
                   char *path, size_t pathlen);
/* Writes a new file name (0600, never through a symbolic link or over an existing file) in directory
 * dirfd; 0 on success, else -1 with errno and nothing left behind. */
int rt_write_at(int dirfd, const char *name, const void *data, size_t len);
/* 1 when data is a 64-bit ELF image for machine (EM_CUDA, EM_X86_64...) whose program headers,
 * segments, section headers and sections all lie within len bytes (what a loader maps). */
int rt_elf_check(const void *data, size_t len, int machine);
/* name with every character but [A-Za-z0-9_-] made '_', cut to len - 1 bytes: a file-name-safe part of an entry's name. */
void rt_cache_safe_name(const char *name, char *out, size_t len);
/* Largest file the runtime reads whole (a .cu, a cache entry, a log). */
#define RT_FILE_MAX ((size_t)1 << 30)
/* Reads a whole regular file (fileio.h: no FIFO or device, at most 1 GiB) into malloc'd memory,
 * NUL-terminated (free()); NULL if it cannot. len may be NULL. */
char *rt_read_all(const char *path, size_t *len);
/* 64-bit FNV-1a, chainable: h = rt_hash64(h, data, len), start with RT_HASH_SEED. */
#define RT_HASH_SEED 0xcbf29ce484222325ull
uint64_t rt_hash64(uint64_t h, const void *data, size_t len);

/* The CUDA toolkit include directories NVRTC and the simulator compile kernels
 * against, separated by ';' or ':': $SHORTC_CUDA_INCLUDE if set and non-empty,
 * else the toolkit CMake found (backend_cuda.c). */
const char *rt_cuda_include_dirs(void);

#endif /* RT_DRIVER_H */
