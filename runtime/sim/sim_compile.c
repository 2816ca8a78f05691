/*
 * sim_compile.c — compile_module for the simulator: the emitted .cu,
 * unchanged, plus a generated trampoline unit, built by the host C++
 * compiler into a shared object and kept in the artifact cache.
 *
 * The compiler is $SHORTC_SIM_CXX if set, else the C++ compiler CMake
 * found (SHORTC_CXX); it runs through posix_spawn (no shell) and its
 * diagnostics become the error message. The cache key hashes the source,
 * the kernel names, the command line, the compiler's --version text, the
 * arch and the simulator's own headers (shortsim_prelude.h, shortsim_abi.h),
 * which the library embeds (sim_headers.c) and writes next to the .cu.
 *
 * A cached object is used only when its bytes match the meta's hash and it
 * is a whole ELF file for this host (rt_elf_check); exec.c asks again with
 * rebuild set when a cached object fails to load. Without a usable cache
 * (unsafe or unwritable directory) or when storing fails, the object is
 * built in a private mkdtemp directory and loaded from there; the runtime
 * removes it once loaded (rt_compiled_release) and out->note says why.
 */
#define _GNU_SOURCE
#include "rt_driver.h"
#include "sim.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#ifndef SHORTC_CXX
#define SHORTC_CXX "c++"
#endif

#define MAX_ARGS 64

static struct {
    pthread_once_t once;        /* init_flags runs once */
    const char *argv[MAX_ARGS]; /* [0] compiler, then flags; NULL-terminated */
    int argc;                   /* entries in argv */
    char *version;              /* compiler --version output */
} C = {.once = PTHREAD_ONCE_INIT};

static char *dupstr(const char *s) {
    char *d = strdup(s);
    return d ? d : (char *)"";
}

/* Runs argv in directory cwd (NULL: ours) with stdout and stderr into
 * out_path; returns the exit status (or -1). */
static int run_cmd(const char *const *argv, const char *cwd, const char *out_path) {
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    if (cwd) posix_spawn_file_actions_addchdir_np(&fa, cwd);
    posix_spawn_file_actions_addopen(&fa, 1, out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], &fa, NULL, (char *const *)argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
        errno = rc;
        return -1;
    }
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) return -1;
    if (WIFEXITED(st)) return WEXITSTATUS(st);
    return 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

static void init_flags(void) {
    const char *cxx = getenv("SHORTC_SIM_CXX");
    int n = 0;
    C.argv[n++] = dupstr(cxx && *cxx ? cxx : SHORTC_CXX);
    static const char *const fixed[] = {"-std=c++17", "-O2", "-fPIC", "-shared", "-fvisibility=hidden",
                                        "-fno-semantic-interposition", "-fno-strict-aliasing", "-fno-math-errno",
                                        "-ffp-contract=off", "-pthread", "-I."};
    for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++) C.argv[n++] = fixed[i];
    /* the toolkit's include directories, separated by ';' or ':' */
    char *inc = dupstr(rt_cuda_include_dirs()), *save = NULL;
    for (char *t = strtok_r(inc, ";:", &save); t && n < MAX_ARGS - 16; t = strtok_r(NULL, ";:", &save)) {
        char *f = malloc(strlen(t) + 3);
        if (!f) break;
        sprintf(f, "-I%s", t);
        C.argv[n++] = f;
    }
    free(inc);
    /* extra flags, e.g. SHORTSIM_CXXFLAGS="-g -O0" to debug a kernel */
    const char *extra = getenv("SHORTSIM_CXXFLAGS");
    if (extra && *extra) {
        char *e = dupstr(extra);
        save = NULL;
        for (char *t = strtok_r(e, " \t", &save); t && n < MAX_ARGS - 6; t = strtok_r(NULL, " \t", &save))
            C.argv[n++] = t;
    }
    C.argc = n;
    C.argv[n] = NULL;
    /* compiler identity for the cache key */
    char tmpl[] = "/tmp/shortsim-ver-XXXXXX";
    int fd = mkstemp(tmpl);
    if (fd >= 0) {
        close(fd);
        const char *av[] = {C.argv[0], "--version", NULL};
        if (run_cmd(av, NULL, tmpl) == 0) C.version = rt_read_all(tmpl, NULL);
        unlink(tmpl);
    }
    if (!C.version) C.version = dupstr("unknown compiler");
}

const char *const *sim_compile_flags(void) {
    pthread_once(&C.once, init_flags);
    return C.argv;
}

static int is_ident(const char *s) {
    if (!s || !*s) return 0;
    for (const char *p = s; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_' || (p > s && *p >= '0' && *p <= '9')))
            return 0;
    return 1;
}

/* Removes the build directory's files but keep (NULL: none), and the directory itself unless it still holds keep. */
static void rm_tree_flat(const char *dir, const char *const *names, int n, const char *keep) {
    char p[2048];
    for (int i = 0; i < n; i++) {
        if (keep && strcmp(names[i], keep) == 0) continue;
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        unlink(p);
    }
    sim_headers_remove(dir);
    if (!keep) rmdir(dir);
}

/* The ELF machine of the host the objects are built for. */
#if defined(__x86_64__)
#define HOST_ELF_MACHINE EM_X86_64
#elif defined(__aarch64__)
#define HOST_ELF_MACHINE EM_AARCH64
#else
#error "the simulator supports x86-64 and aarch64 hosts"
#endif

/* A cached kernel object must be a whole host ELF file: dlopen of a truncated one dies of SIGBUS. */
static int check_host_elf(const void *data, size_t len) { return rt_elf_check(data, len, HOST_ELF_MACHINE); }

/* Flags added in checked mode: the prelude's exact shared-memory placement,
 * line tables so faults name their source line (sim_lines.c), and a call to
 * the prelude's __asan_* hooks before every load and store (no stack or
 * global redzones: only the calls), which check each access byte for byte. */
static const char *const checked_flags[] = {"-DSHORTSIM_CHECKED",
                                            "-g1",
                                            "-fsanitize=kernel-address",
                                            "--param=asan-instrumentation-with-call-threshold=0",
                                            "--param=asan-stack=0",
                                            "--param=asan-globals=0",
                                            NULL};

static srt_status compile_so(const RtCompileRequest *req, RtCompiled *out, char *err, size_t errlen) {
    if (err && errlen) err[0] = 0;
    if (!req || !out || !req->source) {
        if (err && errlen) snprintf(err, errlen, "sim compile: NULL request");
        return SRT_ERR_INVALID;
    }
    memset(out, 0, sizeof *out);
    for (int i = 0; i < req->nkernels; i++)
        if (!is_ident(req->kernel_names[i])) {
            if (err && errlen) snprintf(err, errlen, "sim compile: kernel name `%s' is not an identifier",
                                        req->kernel_names[i] ? req->kernel_names[i] : "(null)");
            return SRT_ERR_INVALID;
        }
    const char *const *argv0 = sim_compile_flags();
    int arch = req->arch > 0 ? req->arch : 80;

    /* cache key */
    uint64_t h = RT_HASH_SEED;
    h = rt_hash64(h, "shortsim-so-1", 13);
    h = rt_hash64(h, req->source, req->len);
    for (int i = 0; i < req->nkernels; i++) h = rt_hash64(h, req->kernel_names[i], strlen(req->kernel_names[i]) + 1);
    for (int i = 0; argv0[i]; i++) h = rt_hash64(h, argv0[i], strlen(argv0[i]) + 1);
    for (int i = 0; sim_checked() && checked_flags[i]; i++) h = rt_hash64(h, checked_flags[i], strlen(checked_flags[i]) + 1);
    h = rt_hash64(h, C.version, strlen(C.version));
    h = rt_hash64(h, &arch, sizeof arch);
    h = sim_headers_hash(h);
    char key[64];
    snprintf(key, sizeof key, "sim-%016llx", (unsigned long long)h);

    const char *dir = req->cache_dir;
    char defdir[1024];
    if (!dir || !*dir) {
        rt_default_cache_dir(defdir, sizeof defdir);
        dir = defdir;
    }
    /* An unusable or unsafe cache directory costs only the cache: the object still
     * needs a file to dlopen, so it is built in a private temporary directory. */
    RtCache cache;
    int have_cache = rt_cache_open(&cache, dir, out->note, sizeof out->note) == 0;
    char path[2048];
    if (have_cache && req->rebuild) rt_cache_evict(&cache, key, "so");
    else if (have_cache && rt_cache_load(&cache, key, "so", check_host_elf, path, sizeof path, NULL, NULL)) {
        out->image = strdup(path);
        if (!out->image) return SRT_ERR_NOMEM;
        out->image_len = strlen(path) + 1;
        out->cache_hit = 1;
        return SRT_OK;
    }
    out->cache_corrupt = have_cache && cache.corrupt > 0;

    /* build in a private temporary directory inside the cache directory, or in $TMPDIR */
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    char tmp[1100];
    const char *tmpdir = getenv("TMPDIR");
    if (have_cache) snprintf(tmp, sizeof tmp, "%s/tmp-sim-XXXXXX", cache.dir);
    else snprintf(tmp, sizeof tmp, "%s/shortc-sim-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
    if (!mkdtemp(tmp)) {
        if (err && errlen) snprintf(err, errlen, "sim compile: cannot create a directory %s: %s", tmp, strerror(errno));
        return SRT_ERR_IO;
    }
    char base[101]; /* at most 100 characters of the model's name */
    rt_cache_safe_name(req->name && *req->name ? req->name : "model", base, sizeof base);
    char cu_name[160], main_name[] = "shortsim_main.cpp", so_name[] = "kernels.so", log_name[] = "compile.log";
    snprintf(cu_name, sizeof cu_name, "%s.cu", base);
    const char *names[] = {cu_name, main_name, so_name, log_name};
    char p_cu[1400], p_main[1400], p_so[1400], p_log[1400];
    snprintf(p_cu, sizeof p_cu, "%s/%s", tmp, cu_name);
    snprintf(p_main, sizeof p_main, "%s/%s", tmp, main_name);
    snprintf(p_so, sizeof p_so, "%s/%s", tmp, so_name);
    snprintf(p_log, sizeof p_log, "%s/%s", tmp, log_name);

    srt_status st = SRT_OK;
    FILE *f = fopen(p_cu, "wb");
    if (!f || fwrite(req->source, 1, req->len, f) != req->len) st = SRT_ERR_IO;
    if (f && fclose(f) != 0) st = SRT_ERR_IO;
    if (st == SRT_OK) {
        f = fopen(p_main, "w");
        if (!f) st = SRT_ERR_IO;
        else {
            fprintf(f, "// generated by sim_compile.c: the emitted source, then one trampoline pair per kernel\n");
            fprintf(f, "#include \"%s\"\n", cu_name);
            for (int i = 0; i < req->nkernels; i++) fprintf(f, "SHORTSIM_KERNEL(%s)\n", req->kernel_names[i]);
            fprintf(f, "SHORTSIM_MODULE()\n");
            fprintf(f, "SHORTSIM_EXPORT const int shortsim_abi = SHORTSIM_ABI_VERSION;\n");
            fprintf(f, "SHORTSIM_EXPORT const int shortsim_arch = %d;\n", arch);
            if (fclose(f) != 0) st = SRT_ERR_IO;
        }
    }
    if (st == SRT_OK && sim_headers_write(tmp) != 0) st = SRT_ERR_IO;
    if (st != SRT_OK) {
        if (err && errlen) snprintf(err, errlen, "sim compile: cannot write sources in %s", tmp);
        rm_tree_flat(tmp, names, 4, NULL);
        return st;
    }
    const char *argv[MAX_ARGS + 11];
    int n = 0;
    for (; argv0[n]; n++) argv[n] = argv0[n];
    for (int i = 0; sim_checked() && checked_flags[i]; i++) argv[n++] = checked_flags[i];
    /* the build directory's name must not reach the object (debug info): the
     * same key builds the same bytes wherever it was built */
    char prefix_map[1200];
    snprintf(prefix_map, sizeof prefix_map, "-ffile-prefix-map=%s=.", tmp);
    argv[n++] = prefix_map;
    /* relative names in the build directory: diagnostics and __FILE__ say "<model>.cu" */
    argv[n++] = "-o";
    argv[n++] = so_name;
    argv[n++] = main_name;
    argv[n] = NULL;
    int rc = run_cmd(argv, tmp, p_log);
    if (rc != 0) {
        size_t ln = 0;
        char *log = rt_read_all(p_log, &ln);
        if (err && errlen) {
            if (rc < 0)
                snprintf(err, errlen, "sim compile: cannot run the host compiler %s: %s", argv[0], strerror(errno));
            else
                snprintf(err, errlen, "sim compile: %s failed (exit %d) for %s:\n%s", argv[0], rc, cu_name,
                         log ? log : "");
        }
        free(log);
        rm_tree_flat(tmp, names, 4, NULL);
        return SRT_ERR_COMPILE;
    }
    size_t so_len = 0;
    char *so = rt_read_all(p_so, &so_len);
    if (!so) {
        if (err && errlen) snprintf(err, errlen, "sim compile: the host compiler wrote no kernel object %s", p_so);
        rm_tree_flat(tmp, names, 4, NULL);
        return SRT_ERR_IO;
    }
    int stored = have_cache && rt_cache_store(&cache, key, "so", so, so_len, path, sizeof path) == 0;
    int store_errno = errno;
    free(so);
    if (stored) rm_tree_flat(tmp, names, 4, NULL);
    else {
        /* no cache, or a store that failed (a directory in the way, a full disk): load the object
         * from the build directory, which rt_compiled_release removes once it is loaded */
        if (have_cache)
            snprintf(out->note, sizeof out->note, "kernel cache %s: cannot store the kernel object: %s", cache.dir,
                     strerror(store_errno));
        rm_tree_flat(tmp, names, 4, so_name);
        snprintf(path, sizeof path, "%s", p_so);
        if (!(out->private_dir = strdup(tmp))) {
            unlink(p_so);
            rmdir(tmp);
            return SRT_ERR_NOMEM;
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    out->image = strdup(path);
    if (!out->image) return SRT_ERR_NOMEM;
    out->image_len = strlen(path) + 1;
    out->compile_ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
    return SRT_OK;
}

srt_status sim_compile_module(const RtCompileRequest *req, RtCompiled *out, char *err, size_t errlen) {
    if (!req || !req->source) return compile_so(req, out, err, errlen); /* reports the bad request */
    RtCompileRequest rw = *req; /* the source after the shared-memory pass (sim_rewrite.c) */
    rw.source = sim_rewrite_shared(req->source, req->len, &rw.len, NULL);
    if (!rw.source) {
        if (err && errlen) snprintf(err, errlen, "sim compile: out of memory");
        return SRT_ERR_NOMEM;
    }
    srt_status st = compile_so(&rw, out, err, errlen);
    free((char *)rw.source);
    return st;
}
