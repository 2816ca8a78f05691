/*
 * sim_driver.c — rt_driver_sim(): the RtDriver table filled with CPU
 * implementations of the CUDA driver and cuBLAS subset the runtime uses.
 *
 * Device pointers are host addresses. Every allocation gets its own mapping,
 * apart from the host heap, with a PROT_NONE guard page before and after it.
 * Unchecked, the data starts the mapping (page-aligned, like cudaMalloc's
 * 256 bytes); checked, it ends exactly at the guard after it, so a read or
 * write one byte past the end faults and is reported with the nearest
 * allocation; checked objects also check every access against the exact
 * bounds (sim_device_ranges, sim_check_access), below the data included.
 * Launches are synchronous (or recorded by a capturing stream: sim_graph.c);
 * events record the host's monotonic clock.
 */
#define _GNU_SOURCE
#include "rt_driver.h"
#include "sim.h"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------------ */
/* allocations                                                          */
/* ------------------------------------------------------------------ */

typedef struct SimAlloc {
    uintptr_t ptr;    /* the device pointer */
    size_t size;      /* bytes asked for */
    void *map;        /* its mapping (guard pages included) */
    size_t map_len;   /* the mapping's length */
    int id;           /* 1, 2, ... in allocation order (fault messages) */
} SimAlloc;

static struct {
    pthread_mutex_t mu;   /* guards the table */
    SimAlloc *a;          /* live allocations */
    size_t n;             /* count */
    size_t cap;           /* capacity */
    int next_id;          /* last id given */
} A = {.mu = PTHREAD_MUTEX_INITIALIZER};

static size_t page_size(void) {
    long p = sysconf(_SC_PAGESIZE);
    return p > 0 ? (size_t)p : 4096;
}

static CUresult sim_memAlloc(CUdeviceptr *dptr, size_t bytes) {
    if (!dptr || bytes == 0) {
        sim_set_fault("cuMemAlloc: %s", !dptr ? "NULL result pointer" : "zero bytes");
        return CUDA_ERROR_INVALID_VALUE;
    }
    SimAlloc al = {0};
    al.size = bytes;
    size_t pg = page_size();
    if (bytes > SIZE_MAX - 3 * pg) return CUDA_ERROR_OUT_OF_MEMORY;
    size_t data = (bytes + pg - 1) / pg * pg;
    al.map_len = data + 2 * pg;
    al.map = mmap(NULL, al.map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (al.map == MAP_FAILED) return CUDA_ERROR_OUT_OF_MEMORY;
    mprotect(al.map, pg, PROT_NONE);
    mprotect((char *)al.map + pg + data, pg, PROT_NONE);
    /* checked: flush against the guard after it (alignment: the size's own) */
    al.ptr = (uintptr_t)al.map + pg + (sim_checked() ? data - bytes : 0);
    pthread_mutex_lock(&A.mu);
    if (A.n == A.cap) {
        size_t cap = A.cap ? A.cap * 2 : 64;
        SimAlloc *na = realloc(A.a, cap * sizeof *na);
        if (!na) {
            pthread_mutex_unlock(&A.mu);
            munmap(al.map, al.map_len);
            return CUDA_ERROR_OUT_OF_MEMORY;
        }
        A.a = na;
        A.cap = cap;
    }
    al.id = ++A.next_id;
    A.a[A.n++] = al;
    pthread_mutex_unlock(&A.mu);
    *dptr = (CUdeviceptr)al.ptr;
    return CUDA_SUCCESS;
}

static CUresult sim_memFree(CUdeviceptr dptr) {
    if (dptr == 0) return CUDA_SUCCESS;
    pthread_mutex_lock(&A.mu);
    for (size_t i = 0; i < A.n; i++)
        if (A.a[i].ptr == dptr) {
            SimAlloc al = A.a[i];
            A.a[i] = A.a[--A.n];
            pthread_mutex_unlock(&A.mu);
            munmap(al.map, al.map_len);
            return CUDA_SUCCESS;
        }
    pthread_mutex_unlock(&A.mu);
    sim_set_fault("cuMemFree: 0x%llx is not the start of a device allocation", (unsigned long long)dptr);
    return CUDA_ERROR_INVALID_VALUE;
}

/* 1 when [p, p + n) lies inside one live device allocation. */
static int inside_allocation(uintptr_t p, size_t n) {
    int ok = 0;
    pthread_mutex_lock(&A.mu);
    for (size_t i = 0; i < A.n && !ok; i++)
        ok = p >= A.a[i].ptr && n <= A.a[i].size && p - A.a[i].ptr <= A.a[i].size - n;
    pthread_mutex_unlock(&A.mu);
    return ok;
}

/* cuTensorMapEncodeTiled: the simulator's subset (sim_tmap_encode), and the whole tensor inside one device
 * allocation. The map's 128 bytes hold a ShortsimTensorMap that the TMA intrinsics read. */
static CUresult sim_tensorMapEncodeTiled(CUtensorMap *map, CUtensorMapDataType type, cuuint32_t rank, void *addr,
                                         const cuuint64_t *dims, const cuuint64_t *strides, const cuuint32_t *box,
                                         const cuuint32_t *estrides, CUtensorMapInterleave interleave,
                                         CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2,
                                         CUtensorMapFloatOOBfill oob) {
    (void)l2;
    char err[400];
    ShortsimTensorMap m;
    if (!map) {
        sim_set_fault("cuTensorMapEncodeTiled: NULL tensor map");
        return CUDA_ERROR_INVALID_VALUE;
    }
    if (sim_tmap_encode(&m, type, rank, addr, dims, strides, box, estrides, interleave, swizzle, oob, err,
                        sizeof err) != 0) {
        sim_set_fault("cuTensorMapEncodeTiled: %s", err);
        return CUDA_ERROR_INVALID_VALUE;
    }
    size_t extent = sim_tmap_extent(&m);
    if (!inside_allocation((uintptr_t)addr, extent)) {
        char where[300];
        sim_describe_address(addr, where, sizeof where);
        sim_set_fault("cuTensorMapEncodeTiled: the tensor (%zu bytes from %p) does not lie inside one device "
                      "allocation (its start: %s)", extent, addr, where);
        return CUDA_ERROR_INVALID_VALUE;
    }
    memset(map, 0, sizeof *map);
    memcpy(map, &m, sizeof m);
    return CUDA_SUCCESS;
}

void sim_describe_address(const void *addr, char *buf, size_t len) {
    uintptr_t a = (uintptr_t)addr;
    const SimAlloc *best = NULL;
    uintptr_t bestd = UINTPTR_MAX;
    int inside = 0;
    pthread_mutex_lock(&A.mu);
    for (size_t i = 0; i < A.n; i++) {
        const SimAlloc *al = &A.a[i];
        uintptr_t d;
        int in = 0;
        if (a < al->ptr) d = al->ptr - a;
        else if (a >= al->ptr + al->size) d = a - (al->ptr + al->size) + 1;
        else d = 0, in = 1;
        if (d < bestd) bestd = d, best = al, inside = in;
    }
    if (!best) {
        snprintf(buf, len, "no device allocations exist");
    } else if (inside) {
        snprintf(buf, len, "inside allocation #%d (%p, %zu bytes) at offset %zu", best->id, (void *)best->ptr,
                 best->size, (size_t)(a - best->ptr));
    } else if (a < best->ptr) {
        snprintf(buf, len, "%zu bytes before the start of allocation #%d (%p, %zu bytes)", (size_t)(best->ptr - a),
                 best->id, (void *)best->ptr, best->size);
    } else {
        snprintf(buf, len, "%zu bytes past the end of allocation #%d (%p, %zu bytes)",
                 (size_t)(a - (best->ptr + best->size)), best->id, (void *)best->ptr, best->size);
    }
    pthread_mutex_unlock(&A.mu);
}

static int range_cmp(const void *x, const void *y) {
    const SimRange *a = x, *b = y;
    return a->map_lo < b->map_lo ? -1 : a->map_lo > b->map_lo;
}

long sim_device_ranges(SimRange **tab, size_t *cap) {
    pthread_mutex_lock(&A.mu);
    size_t n = A.n;
    if (n > *cap) {
        SimRange *t = realloc(*tab, n * sizeof *t);
        if (!t) {
            pthread_mutex_unlock(&A.mu);
            return -1;
        }
        *tab = t;
        *cap = n;
    }
    for (size_t i = 0; i < n; i++)
        (*tab)[i] = (SimRange){(uintptr_t)A.a[i].map, (uintptr_t)A.a[i].map + A.a[i].map_len, A.a[i].ptr,
                               A.a[i].ptr + A.a[i].size};
    pthread_mutex_unlock(&A.mu);
    if (n > 1) qsort(*tab, n, sizeof **tab, range_cmp);
    return (long)n;
}

/* 1 when [p, p+n) lies inside one allocation. */
static int range_ok(uintptr_t p, size_t n) {
    int ok = 0;
    pthread_mutex_lock(&A.mu);
    for (size_t i = 0; i < A.n && !ok; i++)
        ok = p >= A.a[i].ptr && n <= A.a[i].size && p - A.a[i].ptr <= A.a[i].size - n;
    pthread_mutex_unlock(&A.mu);
    return ok;
}

static CUresult bad_range(const char *fn, uintptr_t p, size_t n) {
    char where[256];
    sim_describe_address((const void *)p, where, sizeof where);
    sim_set_fault("%s: device range [%p, +%zu) is not inside one allocation (start: %s)", fn, (void *)p, n, where);
    return CUDA_ERROR_INVALID_VALUE;
}

static CUresult sim_memcpyHtoD(CUdeviceptr dst, const void *src, size_t n) {
    if (n == 0) return CUDA_SUCCESS;
    if (!range_ok(dst, n)) return bad_range("cuMemcpyHtoD", dst, n);
    memcpy((void *)(uintptr_t)dst, src, n);
    return CUDA_SUCCESS;
}
static CUresult sim_memcpyDtoH(void *dst, CUdeviceptr src, size_t n) {
    if (n == 0) return CUDA_SUCCESS;
    if (!range_ok(src, n)) return bad_range("cuMemcpyDtoH", src, n);
    memcpy(dst, (const void *)(uintptr_t)src, n);
    return CUDA_SUCCESS;
}
static CUresult sim_memsetD8(CUdeviceptr dst, unsigned char v, size_t n) {
    if (n == 0) return CUDA_SUCCESS;
    if (!range_ok(dst, n)) return bad_range("cuMemsetD8", dst, n);
    memset((void *)(uintptr_t)dst, v, n);
    return CUDA_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* device, context                                                      */
/* ------------------------------------------------------------------ */

static int device_arch(void) {
    const char *e = getenv("SHORTSIM_ARCH");
    int a = e ? atoi(e) : 0;
    return a >= 50 ? a : 80;
}

static CUresult sim_init(unsigned flags) {
    (void)flags;
    return CUDA_SUCCESS;
}
static CUresult sim_deviceGet(CUdevice *dev, int ordinal) {
    if (!dev) return CUDA_ERROR_INVALID_VALUE;
    if (ordinal != 0) return CUDA_ERROR_INVALID_DEVICE;
    *dev = 0;
    return CUDA_SUCCESS;
}
static CUresult sim_deviceGetAttribute(int *pi, CUdevice_attribute attr, CUdevice dev) {
    if (!pi) return CUDA_ERROR_INVALID_VALUE;
    if (dev != 0) return CUDA_ERROR_INVALID_DEVICE;
    int arch = device_arch();
    int v = 0;
    switch (attr) {
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: v = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X: v = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y: v = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z: v = 64; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: v = 2147483647; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y: v = 65535; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: v = 65535; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: v = SIM_SMEM_DEFAULT_LIMIT; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: v = sim_smem_optin_limit(arch); break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR:
        v = arch >= 90 ? 233472 : arch == 86 || arch == 89 ? 102400 : 167936;
        break;
    case CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY: v = 65536; break;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE: v = 32; break;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK: v = 65536; break;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR: v = 65536; break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: v = sim_nworkers(); break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: v = arch >= 90 || arch == 80 ? 2048 : 1536; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR: v = arch >= 90 ? 32 : arch == 80 ? 32 : 16; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: v = arch / 10; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: v = arch % 10; break;
    case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: v = 40 * 1024 * 1024; break;
    case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING: v = 1; break;
    case CU_DEVICE_ATTRIBUTE_INTEGRATED: v = 0; break;
    case CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS: v = 0; break;
    case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH: v = 5120; break;
    default: v = 0; break;
    }
    *pi = v;
    return CUDA_SUCCESS;
}

static int sim_ctx_token;
static CUresult sim_primaryCtxRetain(CUcontext *pctx, CUdevice dev) {
    if (!pctx) return CUDA_ERROR_INVALID_VALUE;
    if (dev != 0) return CUDA_ERROR_INVALID_DEVICE;
    *pctx = (CUcontext)&sim_ctx_token;
    return CUDA_SUCCESS;
}
static CUresult sim_primaryCtxRelease(CUdevice dev) { return dev == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE; }
static CUresult sim_ctxSetCurrent(CUcontext ctx) {
    (void)ctx;
    return CUDA_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* modules                                                              */
/* ------------------------------------------------------------------ */

typedef struct SimModuleX {
    SimModule m;          /* what sim_core.c sees */
    SimFunc **funcs;      /* functions handed out (freed with the module) */
    int nfuncs;           /* count */
    struct {
        char *name;       /* kernel */
        size_t bytes;     /* its static shared memory */
    } *tls;               /* from the ELF symbol table */
    int ntls;             /* count */
    int fd;               /* the object's descriptor that m.path names (/proc/self/fd/N); -1 for a plain path */
} SimModuleX;

/* Thread-local symbols named _ZZ<len><kernel>E... are __shared__ arrays
 * declared in that (extern "C") kernel's body: their sizes add up to its
 * static shared memory. */
static void read_static_smem(SimModuleX *mx, const char *path) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_size < (off_t)sizeof(Elf64_Ehdr)) {
        close(fd);
        return;
    }
    size_t len = (size_t)st.st_size;
    unsigned char *f = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (f == MAP_FAILED) return;
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)f;
    if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_shoff == 0 ||
        eh->e_shoff + (size_t)eh->e_shnum * sizeof(Elf64_Shdr) > len) {
        munmap(f, len);
        return;
    }
    const Elf64_Shdr *sh = (const Elf64_Shdr *)(f + eh->e_shoff);
    for (int i = 0; i < eh->e_shnum; i++) {
        if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= eh->e_shnum) continue;
        const Elf64_Shdr *strs = &sh[sh[i].sh_link];
        if (sh[i].sh_offset + sh[i].sh_size > len || strs->sh_offset + strs->sh_size > len) continue;
        const Elf64_Sym *sym = (const Elf64_Sym *)(f + sh[i].sh_offset);
        size_t nsym = sh[i].sh_size / sizeof(Elf64_Sym);
        const char *str = (const char *)f + strs->sh_offset;
        for (size_t s = 0; s < nsym; s++) {
            if (ELF64_ST_TYPE(sym[s].st_info) != STT_TLS || sym[s].st_name >= strs->sh_size) continue;
            const char *nm = str + sym[s].st_name;
            if (strncmp(nm, "_ZZ", 3) != 0) continue;
            char *end;
            long L = strtol(nm + 3, &end, 10);
            if (L <= 0 || L > 4096 || strnlen(end, (size_t)L + 1) < (size_t)L + 1 || end[L] != 'E') continue;
            int k;
            for (k = 0; k < mx->ntls; k++)
                if ((long)strlen(mx->tls[k].name) == L && memcmp(mx->tls[k].name, end, (size_t)L) == 0) break;
            if (k == mx->ntls) {
                void *nt = realloc(mx->tls, (size_t)(mx->ntls + 1) * sizeof *mx->tls);
                if (!nt) break;
                mx->tls = nt;
                mx->tls[k].name = strndup(end, (size_t)L);
                mx->tls[k].bytes = 0;
                if (!mx->tls[k].name) break;
                mx->ntls++;
            }
            mx->tls[k].bytes += sym[s].st_size;
        }
    }
    munmap(f, len);
}

/* Bytes of the static __shared__ objects the source pass placed for kernel
 * name: its own declarations and the namespace-scope ones (16-byte units, as
 * they are laid out on the GPU). */
static size_t placed_static_smem(const SimModule *m, const char *name) {
    size_t sum = 0;
    for (size_t i = 0; i < m->nsmem_decls; i++) {
        const ShortsimSmemDecl *d = &m->smem_decls[i];
        if (!d->func[0] || strcmp(d->func, name) == 0) sum += (d->bytes + 15) & ~(unsigned long long)15;
    }
    return sum;
}

/* The path to dlopen for image: a /proc/self/fd/N path (sim_compile.c) is re-pointed at a duplicate
 * of N (*fd) that the module keeps, since the compiler's descriptor is closed once loaded. */
static const char *own_image(const char *image, char *buf, size_t len, int *fd) {
    *fd = -1;
    int n = -1;
    if (sscanf(image, "/proc/self/fd/%d", &n) != 1 || n < 0) return image;
    if ((*fd = fcntl(n, F_DUPFD_CLOEXEC, 0)) < 0) return image;
    snprintf(buf, len, "/proc/self/fd/%d", *fd);
    return buf;
}

static CUresult sim_moduleLoadData(CUmodule *module, const void *image) {
    if (!module || !image) return CUDA_ERROR_INVALID_VALUE;
    char own[64];
    int fd;
    const char *path = own_image(image, own, sizeof own, &fd);
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h && fd >= 0) close(fd);
    if (!h) {
        const char *e = dlerror();
        sim_set_fault("cuModuleLoadData: cannot load kernel object: %s", e ? e : path);
        return CUDA_ERROR_INVALID_IMAGE;
    }
    const int *abi = dlsym(h, "shortsim_abi");
    if (!abi || *abi != SHORTSIM_ABI_VERSION) {
        sim_set_fault("cuModuleLoadData: %s is not a simulator kernel object of ABI version %d", path,
                      SHORTSIM_ABI_VERSION);
        dlclose(h);
        if (fd >= 0) close(fd);
        return CUDA_ERROR_INVALID_IMAGE;
    }
    const int *arch = dlsym(h, "shortsim_arch");
    SimModuleX *mx = calloc(1, sizeof *mx);
    if (!mx || !(mx->m.path = strdup(path))) {
        free(mx);
        dlclose(h);
        if (fd >= 0) close(fd);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    mx->fd = fd;
    mx->m.handle = h;
    mx->m.arch = arch ? *arch : 80;
    const ShortsimSmemDecl *(*decls)(unsigned long *) = (const ShortsimSmemDecl *(*)(unsigned long *))dlsym(
        h, "shortsim_smem_decls");
    unsigned long nd = 0;
    if (decls) mx->m.smem_decls = decls(&nd);
    mx->m.nsmem_decls = mx->m.smem_decls ? nd : 0;
    for (size_t i = 0; i < mx->m.nsmem_decls; i++)
        if (mx->m.smem_decls[i].slot >= mx->m.nsmem_slots) mx->m.nsmem_slots = mx->m.smem_decls[i].slot + 1;
    read_static_smem(mx, path);
    /* a checked object passes its accesses to the core */
    ShortsimCheckFn *checker = dlsym(h, "shortsim_checker");
    if (checker) *checker = sim_check_access;
    *module = (CUmodule)mx;
    return CUDA_SUCCESS;
}

static CUresult sim_moduleUnload(CUmodule hmod) {
    SimModuleX *mx = (SimModuleX *)hmod;
    if (!mx) return CUDA_ERROR_INVALID_HANDLE;
    for (int i = 0; i < mx->nfuncs; i++) free(mx->funcs[i]);
    for (int i = 0; i < mx->ntls; i++) free(mx->tls[i].name);
    free(mx->funcs);
    free(mx->tls);
    dlclose(mx->m.handle);
    if (mx->fd >= 0) {
        /* an object that stays mapped (C++ unique symbols keep it) keeps its descriptor: dlopen
         * would take a later object opened under the same /proc/self/fd name for this one */
        void *still = dlopen(mx->m.path, RTLD_NOW | RTLD_NOLOAD);
        if (still) dlclose(still);
        else close(mx->fd);
    }
    free(mx->m.path);
    free(mx);
    return CUDA_SUCCESS;
}

static CUresult sim_moduleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name) {
    SimModuleX *mx = (SimModuleX *)hmod;
    if (!hfunc || !name) return CUDA_ERROR_INVALID_VALUE;
    if (!mx) return CUDA_ERROR_INVALID_HANDLE;
    for (int i = 0; i < mx->nfuncs; i++)
        if (strcmp(mx->funcs[i]->name, name) == 0) {
            *hfunc = (CUfunction)mx->funcs[i];
            return CUDA_SUCCESS;
        }
    size_t nl = strlen(name);
    char *sym = malloc(nl + 32);
    if (!sym) return CUDA_ERROR_OUT_OF_MEMORY;
    sprintf(sym, "shortsim_tramp_%s", name);
    void *tramp = dlsym(mx->m.handle, sym);
    sprintf(sym, "shortsim_plain_%s", name);
    void *plain = dlsym(mx->m.handle, sym);
    sprintf(sym, "shortsim_params_%s", name);
    const char *const *kinds = dlsym(mx->m.handle, sym);
    free(sym);
    if (!tramp || !plain) {
        sim_set_fault("cuModuleGetFunction: kernel %s is not in %s (was it among the compile request's kernel names?)",
                      name, mx->m.path);
        return CUDA_ERROR_NOT_FOUND;
    }
    SimFunc *f = calloc(1, sizeof *f + nl + 1);
    SimFunc **nf = realloc(mx->funcs, (size_t)(mx->nfuncs + 1) * sizeof *nf);
    if (!f || !nf) {
        free(f);
        if (nf) mx->funcs = nf;
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    mx->funcs = nf;
    memcpy(f->name, name, nl + 1);
    f->mod = &mx->m;
    f->tramp = (void (*)(void **, ShortsimW *))tramp;
    f->plain = (void (*)(void **, ShortsimW *))plain;
    f->param_kinds = kinds ? *kinds : NULL;
    for (int i = 0; i < mx->ntls; i++)
        if (strcmp(mx->tls[i].name, name) == 0) f->static_smem = mx->tls[i].bytes;
    f->static_smem += placed_static_smem(&mx->m, name);
    f->max_dyn_smem = f->static_smem < SIM_SMEM_DEFAULT_LIMIT ? SIM_SMEM_DEFAULT_LIMIT - (int)f->static_smem : 0;
    mx->funcs[mx->nfuncs++] = f;
    *hfunc = (CUfunction)f;
    return CUDA_SUCCESS;
}

static CUresult sim_funcSetAttribute(CUfunction hfunc, CUfunction_attribute attr, int value) {
    SimFunc *f = (SimFunc *)hfunc;
    if (!f) return CUDA_ERROR_INVALID_HANDLE;
    if (attr == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) {
        int limit = sim_smem_optin_limit(f->mod ? f->mod->arch : 80);
        if (value < 0 || (long long)value + (long long)f->static_smem > limit) {
            /* a byte count, printed unsigned: 0xffffffff is 4294967295 bytes, not -1 */
            sim_set_fault("cuFuncSetAttribute: kernel %s: %u bytes of dynamic shared memory (+%zu static) exceed "
                          "the sm_%d limit of %d bytes",
                          f->name, (unsigned)value, f->static_smem, f->mod ? f->mod->arch : 80, limit);
            return CUDA_ERROR_INVALID_VALUE;
        }
        f->max_dyn_smem = value;
    }
    return CUDA_SUCCESS;
}

/* A kernel launch recorded in a graph: the launch's shape, then each argument's value at
 * offsets[i] of vals (copied when it was issued, as the driver copies kernel node parameters). */
typedef struct SimLaunchNode {
    SimFunc *f;                   /* the kernel */
    unsigned dims[6];             /* grid x, y, z, block x, y, z */
    unsigned smem;                /* dynamic shared memory bytes */
    int nparams;                  /* arguments */
    size_t offsets[SIM_MAX_GRAPH_PARAMS]; /* where each argument's value lies in vals */
    unsigned char vals[];         /* the values */
} SimLaunchNode;

static CUresult replay_launch(const void *payload) {
    const SimLaunchNode *n = payload;
    void *params[SIM_MAX_GRAPH_PARAMS];
    for (int i = 0; i < n->nparams; i++) params[i] = (void *)(n->vals + n->offsets[i]);
    return sim_launch(n->f, n->dims[0], n->dims[1], n->dims[2], n->dims[3], n->dims[4], n->dims[5], n->smem,
                      n->nparams ? params : NULL);
}

/* Records a launch on a capturing stream: its argument sizes come from the kernel's parameter kinds. */
static CUresult capture_launch(SimFunc *f, const unsigned dims[6], unsigned smem, CUstream stream, void **params) {
    const char *kinds = f->param_kinds;
    size_t np = kinds ? strlen(kinds) : 0, bytes = 0;
    if (!kinds || np > SIM_MAX_GRAPH_PARAMS || strchr(kinds, '?') || (np && !params)) {
        sim_capture_invalidate(stream);
        sim_set_fault("cuLaunchKernel: kernel %s cannot be captured in a graph by the simulator (%s)", f->name,
                      !kinds ? "its parameter kinds are unknown"
                      : np > SIM_MAX_GRAPH_PARAMS ? "too many parameters"
                      : np && !params             ? "no kernelParams"
                                                  : "a parameter is neither a pointer nor a 4-byte scalar");
        return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    }
    for (size_t i = 0; i < np; i++) bytes += kinds[i] == 'p' ? sizeof(void *) : 4;
    SimLaunchNode *n = malloc(sizeof *n + bytes);
    if (n) {
        n->f = f;
        memcpy(n->dims, dims, sizeof n->dims);
        n->smem = smem;
        n->nparams = (int)np;
        size_t at = 0;
        for (size_t i = 0; i < np; i++) {
            size_t sz = kinds[i] == 'p' ? sizeof(void *) : 4;
            n->offsets[i] = at;
            memcpy(n->vals + at, params[i], sz);
            at += sz;
        }
    }
    return sim_capture_add(stream, replay_launch, n, sizeof *n + bytes);
}

static CUresult sim_launchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                 unsigned bz, unsigned smem, CUstream stream, void **params, void **extra) {
    if (extra) {
        sim_set_fault("cuLaunchKernel: the `extra` argument is not supported by the simulator");
        return CUDA_ERROR_NOT_SUPPORTED;
    }
    if (sim_capturing(stream)) {
        if (!f) return CUDA_ERROR_INVALID_HANDLE;
        const unsigned dims[6] = {gx, gy, gz, bx, by, bz};
        return capture_launch((SimFunc *)f, dims, smem, stream, params);
    }
    sim_count_call(SIM_CALL_LAUNCH);
    return sim_launch((SimFunc *)f, gx, gy, gz, bx, by, bz, smem, params);
}

/* ------------------------------------------------------------------ */
/* streams and events                                                   */
/* ------------------------------------------------------------------ */

typedef struct SimEvent {
    double ms;            /* monotonic clock at the last record */
    int recorded;         /* recorded at least once */
} SimEvent;

static CUresult sim_eventCreate(CUevent *ph, unsigned flags) {
    (void)flags;
    if (!ph) return CUDA_ERROR_INVALID_VALUE;
    SimEvent *e = calloc(1, sizeof *e);
    if (!e) return CUDA_ERROR_OUT_OF_MEMORY;
    *ph = (CUevent)e;
    return CUDA_SUCCESS;
}
static CUresult sim_eventRecord(CUevent ev, CUstream s) {
    (void)s;
    SimEvent *e = (SimEvent *)ev;
    if (!e) return CUDA_ERROR_INVALID_HANDLE;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    e->ms = ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
    e->recorded = 1;
    return CUDA_SUCCESS;
}
static CUresult sim_eventSynchronize(CUevent ev) { return ev ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE; }
static CUresult sim_eventElapsedTime(float *ms, CUevent a, CUevent b) {
    SimEvent *s = (SimEvent *)a, *e = (SimEvent *)b;
    if (!ms) return CUDA_ERROR_INVALID_VALUE;
    if (!s || !e || !s->recorded || !e->recorded) return CUDA_ERROR_INVALID_HANDLE;
    *ms = (float)(e->ms - s->ms);
    return CUDA_SUCCESS;
}
static CUresult sim_eventDestroy(CUevent ev) {
    free(ev);
    return CUDA_SUCCESS;
}

static CUresult sim_getErrorString(CUresult r, const char **s) {
    if (!s) return CUDA_ERROR_INVALID_VALUE;
    switch (r) {
    case CUDA_SUCCESS: *s = "no error"; break;
    case CUDA_ERROR_INVALID_VALUE: *s = "invalid argument"; break;
    case CUDA_ERROR_OUT_OF_MEMORY: *s = "out of memory"; break;
    case CUDA_ERROR_NOT_INITIALIZED: *s = "initialization error"; break;
    case CUDA_ERROR_NO_DEVICE: *s = "no CUDA-capable device is detected"; break;
    case CUDA_ERROR_INVALID_DEVICE: *s = "invalid device ordinal"; break;
    case CUDA_ERROR_INVALID_IMAGE: *s = "device kernel image is invalid"; break;
    case CUDA_ERROR_INVALID_CONTEXT: *s = "invalid device context"; break;
    case CUDA_ERROR_INVALID_HANDLE: *s = "invalid resource handle"; break;
    case CUDA_ERROR_NOT_FOUND: *s = "named symbol not found"; break;
    case CUDA_ERROR_NOT_READY: *s = "device not ready"; break;
    case CUDA_ERROR_ILLEGAL_ADDRESS: *s = "an illegal memory access was encountered"; break;
    case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES: *s = "too many resources requested for launch"; break;
    case CUDA_ERROR_LAUNCH_FAILED: *s = "unspecified launch failure"; break;
    case CUDA_ERROR_NOT_SUPPORTED: *s = "operation not supported"; break;
    case CUDA_ERROR_UNKNOWN: *s = "unknown error"; break;
    case CUDA_ERROR_ILLEGAL_STATE: *s = "the operation is not permitted in the current state"; break;
    case CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED: *s = "operation not permitted when stream is capturing"; break;
    case CUDA_ERROR_STREAM_CAPTURE_INVALIDATED: *s = "operation failed due to a previous error during capture"; break;
    case CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE: *s = "the graph update was not performed because it included changes which violated constraints specific to instantiated graph update"; break;
    default: *s = NULL; return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

/* ------------------------------------------------------------------ */

srt_status rt_driver_sim(RtDriver *d, int threads, int checked, char *err, size_t errlen) {
    if (!d) {
        if (err && errlen) snprintf(err, errlen, "rt_driver_sim: NULL driver table");
        return SRT_ERR_INVALID;
    }
    memset(d, 0, sizeof *d);
    d->name = "sim";
    d->backend = SRT_BACKEND_SIM;
    d->compile_module = sim_compile_module;
    d->init = sim_init;
    d->deviceGet = sim_deviceGet;
    d->deviceGetAttribute = sim_deviceGetAttribute;
    d->primaryCtxRetain = sim_primaryCtxRetain;
    d->primaryCtxRelease = sim_primaryCtxRelease;
    d->ctxSetCurrent = sim_ctxSetCurrent;
    d->moduleLoadData = sim_moduleLoadData;
    d->moduleUnload = sim_moduleUnload;
    d->moduleGetFunction = sim_moduleGetFunction;
    d->funcSetAttribute = sim_funcSetAttribute;
    d->memAlloc = sim_memAlloc;
    d->memFree = sim_memFree;
    d->memcpyHtoD = sim_memcpyHtoD;
    d->memcpyDtoH = sim_memcpyDtoH;
    d->memsetD8 = sim_memsetD8;
    d->launchKernel = sim_launchKernel;
    d->streamCreate = sim_streamCreate;
    d->streamDestroy = sim_streamDestroy;
    d->streamSynchronize = sim_streamSynchronize;
    d->eventCreate = sim_eventCreate;
    d->eventRecord = sim_eventRecord;
    d->eventSynchronize = sim_eventSynchronize;
    d->eventElapsedTime = sim_eventElapsedTime;
    d->eventDestroy = sim_eventDestroy;
    d->getErrorString = sim_getErrorString;
    d->tensorMapEncodeTiled = sim_tensorMapEncodeTiled;
    d->streamBeginCapture = sim_streamBeginCapture;
    d->streamEndCapture = sim_streamEndCapture;
    d->graphInstantiate = sim_graphInstantiate;
    d->graphExecUpdate = sim_graphExecUpdate;
    d->graphLaunch = sim_graphLaunch;
    d->graphExecDestroy = sim_graphExecDestroy;
    d->graphDestroy = sim_graphDestroy;
    d->blasCreate = sim_blasCreate;
    d->blasDestroy = sim_blasDestroy;
    d->blasSetStream = sim_blasSetStream;
    d->gemmEx = sim_gemmEx;
    d->gemmStridedBatchedEx = sim_gemmStridedBatchedEx;
    d->ltCreate = sim_ltCreate;
    d->ltDestroy = sim_ltDestroy;
    d->ltMatmulDescCreate = sim_ltMatmulDescCreate;
    d->ltMatmulDescDestroy = sim_ltMatmulDescDestroy;
    d->ltMatmulDescSetAttribute = sim_ltMatmulDescSetAttribute;
    d->ltMatrixLayoutCreate = sim_ltMatrixLayoutCreate;
    d->ltMatrixLayoutDestroy = sim_ltMatrixLayoutDestroy;
    d->ltMatmul = sim_ltMatmul;
    d->ltMatmulPreferenceCreate = sim_ltMatmulPreferenceCreate;
    d->ltMatmulPreferenceDestroy = sim_ltMatmulPreferenceDestroy;
    d->ltMatmulPreferenceSetAttribute = sim_ltMatmulPreferenceSetAttribute;
    d->ltMatmulAlgoGetHeuristic = sim_ltMatmulAlgoGetHeuristic;
    d->last_fault = sim_last_fault;
    d->call_counts = sim_call_counts;
    sim_configure(threads, checked);
    sim_clear_fault();
    return SRT_OK;
}
