/*
 * sim_compile.c — compile_module for the simulator: the emitted .cu,
 * unchanged, plus a generated trampoline unit, built by the host C++
 * compiler into a shared object and kept in the artifact cache.
 *
 * The compiler is $SHORTC_SIM_CXX if set, else the C++ compiler CMake
 * found (SHORTC_CXX); it runs through posix_spawn (no shell; common/proc.c),
 * is killed after $SHORTC_SIM_COMPILE_TIMEOUT seconds (default 300: a source
 * that includes a FIFO cannot hang the run), and its diagnostics become the
 * error message. A build directory left in the cache by a killed process is
 * removed by a later build once it is older than any compile can run. The cache key hashes the source
 * (for a request with include directories whose source has #include: the
 * preprocessed text, so an edited header is a new key), the kernel names,
 * the command line, the compiler's --version text, the arch and the
 * simulator's own headers (shortsim_prelude.h, shortsim_abi.h), which the
 * library embeds (sim_headers.c) and writes next to the .cu. All paths are
 * absolute: the compiler runs inside the build directory.
 *
 * A cached object is used only when its bytes match the meta's hash and it
 * is a whole ELF file for this host (rt_elf_check); exec.c asks again with
 * rebuild set when a cached object fails to load. Without a usable cache
 * (unsafe or unwritable directory) or when storing fails, the object is
 * built in a private mkdtemp directory and loaded from there; the runtime
 * removes it once loaded (rt_compiled_release) and out->note says why.
 */
#define _GNU_SOURCE
#include "proc.h"
#include "rt_driver.h"
#include "sim.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef SHORTC_CXX
#define SHORTC_CXX "c++"
#endif

#define MAX_ARGS 64
/* Default time limit of one host compiler run, seconds ($SHORTC_SIM_COMPILE_TIMEOUT). */
#define SIM_COMPILE_TIMEOUT_S 300

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

/* Why run_cmd returned -1: the log could not be created, or the program not started. */
typedef enum RunFail {
    RUN_FAIL_LOG,   /* out_path could not be opened (errno says why) */
    RUN_FAIL_SPAWN, /* the program could not be started (errno says why) */
} RunFail;

/* The host compiler's time limit in milliseconds: $SHORTC_SIM_COMPILE_TIMEOUT seconds, default 300. */
static long compile_timeout_ms(void) {
    const char *s = getenv("SHORTC_SIM_COMPILE_TIMEOUT");
    char *end;
    long v = s && *s ? strtol(s, &end, 10) : 0;
    return (s && *s && !*end && v > 0 && v <= 86400 ? v : SIM_COMPILE_TIMEOUT_S) * 1000L;
}

/* Runs argv in directory cwd (NULL: ours) with stdout and stderr into out_path (opened here,
 * before the child changes directory), killed after compile_timeout_ms (*timed_out); returns
 * the exit status, or -1 with errno and *why. */
static int run_cmd(const char *const *argv, const char *cwd, const char *out_path, RunFail *why, bool *timed_out) {
    int fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        *why = RUN_FAIL_LOG;
        return -1;
    }
    ProcRun r = {.argv = argv, .cwd = cwd, .out_fd = fd, .timeout_ms = compile_timeout_ms()};
    int rc = proc_run(&r);
    int e = errno;
    close(fd);
    if (timed_out) *timed_out = r.timed_out;
    *why = RUN_FAIL_SPAWN;
    errno = e;
    return rc;
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
        RunFail why;
        if (run_cmd(av, NULL, tmpl, &why, NULL) == 0) C.version = rt_read_all(tmpl, NULL);
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

/* The build directory and the files in it. */
typedef struct Build {
    char dir[1100];      /* absolute path of the private build directory ("" until made) */
    char cu_name[160];   /* the source's file name, <model>.cu */
    const char *names[5];/* every file the build may leave, for rm_tree_flat */
    char p_so[1400];     /* absolute path of the object */
    char p_log[1400];    /* absolute path of the compiler's log */
} Build;

static const char main_name[] = "shortsim_main.cpp", so_name[] = "kernels.so", log_name[] = "compile.log",
                  pre_name[] = "preprocessed.ii";

/* Removes the files of directory name in dirfd (flat: a build directory), then it. */
static void remove_flat_dir(int dirfd, const char *name) {
    int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0) close(fd);
        return;
    }
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) unlinkat(fd, e->d_name, 0);
    closedir(d);
    unlinkat(dirfd, name, AT_REMOVEDIR);
}

/* Removes the cache's tmp-sim-* build directories that no compile can still be using: untouched
 * for longer than two compiler runs at the time limit (a killed process leaves its own behind). */
static void remove_stale_builds(const char *cache_dir) {
    DIR *d = opendir(cache_dir);
    if (!d) return;
    time_t stale = time(NULL) - (time_t)(2 * (compile_timeout_ms() / 1000) + 60);
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        struct stat st;
        if (strncmp(e->d_name, "tmp-sim-", 8) != 0 || fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
            continue;
        if (S_ISDIR(st.st_mode) && st.st_mtime < stale) remove_flat_dir(dirfd(d), e->d_name);
    }
    closedir(d);
}

/* Makes the private build directory (inside the cache directory, or in $TMPDIR) and writes the
 * source, the trampoline unit and the simulator's headers into it. */
static srt_status make_build(const RtCompileRequest *req, const char *cache_dir, int arch, Build *b, char *err,
                             size_t errlen) {
    char tmpl[1100];
    const char *tmpdir = getenv("TMPDIR");
    if (cache_dir) remove_stale_builds(cache_dir);
    if (cache_dir) snprintf(tmpl, sizeof tmpl, "%s/tmp-sim-XXXXXX", cache_dir);
    else snprintf(tmpl, sizeof tmpl, "%s/shortc-sim-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
    /* absolute: the compiler runs inside it, and the paths below must mean the same there */
    if (rt_abs_path(tmpl, b->dir, sizeof b->dir) != 0 || !mkdtemp(b->dir)) {
        snprintf(err, errlen, "sim compile: cannot create a directory %s: %s", tmpl, strerror(errno));
        b->dir[0] = 0;
        return SRT_ERR_IO;
    }
    char base[101]; /* at most 100 characters of the model's name */
    rt_cache_safe_name(req->name && *req->name ? req->name : "model", base, sizeof base);
    snprintf(b->cu_name, sizeof b->cu_name, "%s.cu", base);
    const char *names[] = {b->cu_name, main_name, so_name, log_name, pre_name};
    memcpy(b->names, names, sizeof names);
    char p_cu[1400], p_main[1400];
    snprintf(p_cu, sizeof p_cu, "%s/%s", b->dir, b->cu_name);
    snprintf(p_main, sizeof p_main, "%s/%s", b->dir, main_name);
    snprintf(b->p_so, sizeof b->p_so, "%s/%s", b->dir, so_name);
    snprintf(b->p_log, sizeof b->p_log, "%s/%s", b->dir, log_name);
    int ok = 1;
    FILE *f = fopen(p_cu, "wb");
    if (!f || fwrite(req->source, 1, req->len, f) != req->len) ok = 0;
    if (f && fclose(f) != 0) ok = 0;
    if (ok && (f = fopen(p_main, "w")) != NULL) {
        fprintf(f, "// generated by sim_compile.c: the emitted source, then one trampoline pair per kernel\n");
        fprintf(f, "#include \"%s\"\n", b->cu_name);
        for (int i = 0; i < req->nkernels; i++) fprintf(f, "SHORTSIM_KERNEL(%s)\n", req->kernel_names[i]);
        fprintf(f, "SHORTSIM_MODULE()\n");
        fprintf(f, "SHORTSIM_EXPORT const int shortsim_abi = SHORTSIM_ABI_VERSION;\n");
        fprintf(f, "SHORTSIM_EXPORT const int shortsim_arch = %d;\n", arch);
        if (fclose(f) != 0) ok = 0;
    } else ok = 0;
    if (ok && sim_headers_write(b->dir) == 0) return SRT_OK;
    snprintf(err, errlen, "sim compile: cannot write sources in %s", b->dir);
    rm_tree_flat(b->dir, b->names, 5, NULL);
    b->dir[0] = 0;
    return SRT_ERR_IO;
}

/* The compiler's command line: the flags, checked mode's, the request's, then extra (NULL-terminated). */
static void build_argv(const RtCompileRequest *req, const Build *b, const char **argv, char (*own)[1200], int nown,
                       const char *const *extra) {
    const char *const *argv0 = sim_compile_flags();
    int n = 0, k = 0;
    for (; argv0[n]; n++) argv[n] = argv0[n];
    for (int i = 0; sim_checked() && checked_flags[i]; i++) argv[n++] = checked_flags[i];
    if (req->sim_prelude) {
        argv[n++] = "-include";
        argv[n++] = "shortsim_prelude.h";
    }
    /* each directory twice: -iquote puts it before the toolkit's for #include "..." (as nvcc
     * searches the file's own directory first), -I makes it searched by #include <...> too */
    for (int i = 0; i < req->ninclude_dirs && k < nown - 2; i++) {
        snprintf(own[k], sizeof own[k], "-iquote%s", req->include_dirs[i]);
        argv[n++] = own[k++];
        snprintf(own[k], sizeof own[k], "-I%s", req->include_dirs[i]);
        argv[n++] = own[k++];
    }
    /* the build directory's name must not reach the object (debug info): the
     * same key builds the same bytes wherever it was built */
    snprintf(own[k], sizeof own[k], "-ffile-prefix-map=%s=.", b->dir);
    argv[n++] = own[k];
    for (int i = 0; extra[i]; i++) argv[n++] = extra[i];
    argv[n] = NULL;
}

#define MAX_INCLUDE_DIRS 16

/* Runs the compiler with extra (relative names in the build directory: diagnostics and __FILE__
 * say "<model>.cu"); SRT_OK when it exits 0, else the error with its log. */
static srt_status run_compiler(const RtCompileRequest *req, const Build *b, const char *const *extra, char *err,
                               size_t errlen) {
    const char *argv[MAX_ARGS + 2 * MAX_INCLUDE_DIRS + 24]; /* flags, checked flags, includes, extra */
    char own[2 * MAX_INCLUDE_DIRS + 1][1200];
    build_argv(req, b, argv, own, 2 * MAX_INCLUDE_DIRS + 1, extra);
    RunFail why;
    bool timed_out = false;
    int rc = run_cmd(argv, b->dir, b->p_log, &why, &timed_out);
    if (rc == 0) return SRT_OK;
    if (timed_out)
        snprintf(err, errlen, "sim compile: %s ran for more than %ld s on %s and was killed "
                 "(SHORTC_SIM_COMPILE_TIMEOUT sets the limit)", argv[0], compile_timeout_ms() / 1000, b->cu_name);
    else if (rc < 0 && why == RUN_FAIL_LOG)
        snprintf(err, errlen, "sim compile: cannot create the compiler's log %s: %s", b->p_log, strerror(errno));
    else if (rc < 0)
        snprintf(err, errlen, "sim compile: cannot run the host compiler %s: %s", argv[0], strerror(errno));
    else {
        size_t ln = 0;
        char *log = rt_read_all(b->p_log, &ln);
        snprintf(err, errlen, "sim compile: %s failed (exit %d) for %s:\n%s", argv[0], rc, b->cu_name, log ? log : "");
        free(log);
    }
    return SRT_ERR_COMPILE;
}

/* 1 when text has a #include directive (at a line's start, after blanks). */
static int has_include(const char *text, size_t len) {
    for (size_t i = 0; i < len; i++) {
        if (i > 0 && text[i - 1] != '\n') continue;
        size_t j = i;
        while (j < len && (text[j] == ' ' || text[j] == '\t')) j++;
        if (j >= len || text[j] != '#') continue;
        j++;
        while (j < len && (text[j] == ' ' || text[j] == '\t')) j++;
        if (len - j >= 7 && memcmp(text + j, "include", 7) == 0) return 1;
    }
    return 0;
}

/* The source's part of the cache key: its text, or, when it includes files from the request's
 * directories, the preprocessed text (what the compiler will see, so an edited header is a new key). */
static srt_status hash_source(const RtCompileRequest *req, const Build *b, uint64_t *h, char *err, size_t errlen) {
    if (!b->dir[0]) {
        *h = rt_hash64(*h, req->source, req->len);
        return SRT_OK;
    }
    const char *const extra[] = {"-E", "-fno-working-directory", "-o", pre_name, main_name, NULL};
    srt_status st = run_compiler(req, b, extra, err, errlen);
    if (st != SRT_OK) return st;
    char p_pre[1400];
    snprintf(p_pre, sizeof p_pre, "%s/%s", b->dir, pre_name);
    size_t n = 0;
    char *pre = rt_read_all(p_pre, &n);
    if (!pre) {
        snprintf(err, errlen, "sim compile: cannot read the preprocessed source %s", p_pre);
        return SRT_ERR_IO;
    }
    *h = rt_hash64(*h, pre, n);
    free(pre);
    unlink(p_pre);
    return SRT_OK;
}

/* The cache key of the request: source (hash_source), kernels, command line, compiler, arch, headers. */
static srt_status cache_key(const RtCompileRequest *req, const Build *b, int arch, char *key, size_t keylen,
                            char *err, size_t errlen) {
    const char *const *argv0 = sim_compile_flags();
    uint64_t h = RT_HASH_SEED;
    h = rt_hash64(h, "shortsim-so-2", 13);
    srt_status st = hash_source(req, b, &h, err, errlen);
    if (st != SRT_OK) return st;
    for (int i = 0; i < req->nkernels; i++) h = rt_hash64(h, req->kernel_names[i], strlen(req->kernel_names[i]) + 1);
    for (int i = 0; argv0[i]; i++) h = rt_hash64(h, argv0[i], strlen(argv0[i]) + 1);
    for (int i = 0; sim_checked() && checked_flags[i]; i++) h = rt_hash64(h, checked_flags[i], strlen(checked_flags[i]) + 1);
    h = rt_hash64(h, &req->sim_prelude, sizeof req->sim_prelude);
    for (int i = 0; i < req->ninclude_dirs; i++) h = rt_hash64(h, req->include_dirs[i], strlen(req->include_dirs[i]) + 1);
    h = rt_hash64(h, C.version, strlen(C.version));
    h = rt_hash64(h, &arch, sizeof arch);
    h = sim_headers_hash(h);
    snprintf(key, keylen, "sim-%016llx", (unsigned long long)h);
    return SRT_OK;
}

/* Appends a sentence to out->note ("; " between). */
static void note_append(RtCompiled *out, const char *text) {
    size_t n = strlen(out->note);
    snprintf(out->note + n, sizeof out->note - n, "%s%s", n ? "; " : "", text);
}

/* Hands the path of a cached or built object to out. */
static srt_status give_image(RtCompiled *out, const char *path) {
    out->image = strdup(path);
    if (!out->image) return SRT_ERR_NOMEM;
    out->image_len = strlen(path) + 1;
    return SRT_OK;
}

static srt_status compile_so(const RtCompileRequest *req, RtCompiled *out, char *err, size_t errlen) {
    char dummy[1];
    if (!err || !errlen) err = dummy, errlen = sizeof dummy;
    err[0] = 0;
    if (!req || !out || !req->source) {
        snprintf(err, errlen, "sim compile: NULL request");
        return SRT_ERR_INVALID;
    }
    memset(out, 0, sizeof *out);
    for (int i = 0; i < req->nkernels; i++)
        if (!is_ident(req->kernel_names[i])) {
            snprintf(err, errlen, "sim compile: kernel name `%s' is not an identifier",
                     req->kernel_names[i] ? req->kernel_names[i] : "(null)");
            return SRT_ERR_INVALID;
        }
    if (req->ninclude_dirs > MAX_INCLUDE_DIRS) {
        snprintf(err, errlen, "sim compile: more than %d include directories", MAX_INCLUDE_DIRS);
        return SRT_ERR_INVALID;
    }
    int arch = req->arch > 0 ? req->arch : 80;
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
    const char *build_in = have_cache ? cache.dir : NULL;
    Build b = {.dir = ""};
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    /* a source that includes files is keyed by its preprocessed text, which needs the build directory first */
    srt_status st = SRT_OK;
    if (req->ninclude_dirs > 0 && has_include(req->source, req->len)) st = make_build(req, build_in, arch, &b, err, errlen);
    char key[64], path[2048];
    if (st == SRT_OK) st = cache_key(req, &b, arch, key, sizeof key, err, errlen);
    if (st != SRT_OK) {
        if (b.dir[0]) rm_tree_flat(b.dir, b.names, 5, NULL);
        return st;
    }
    if (have_cache && req->rebuild) rt_cache_evict(&cache, key, "so");
    else if (have_cache && rt_cache_load(&cache, key, "so", check_host_elf, path, sizeof path, NULL, NULL)) {
        if (b.dir[0]) rm_tree_flat(b.dir, b.names, 5, NULL);
        out->cache_hit = 1;
        return give_image(out, path);
    }
    out->cache_corrupt = have_cache && cache.corrupt > 0;
    if (!b.dir[0] && (st = make_build(req, build_in, arch, &b, err, errlen)) != SRT_OK) return st;
    const char *const extra[] = {"-o", so_name, main_name, NULL};
    if ((st = run_compiler(req, &b, extra, err, errlen)) != SRT_OK) {
        rm_tree_flat(b.dir, b.names, 5, NULL);
        return st;
    }
    size_t so_len = 0;
    char *so = rt_read_all(b.p_so, &so_len);
    if (!so) {
        snprintf(err, errlen, "sim compile: the host compiler wrote no kernel object %s", b.p_so);
        rm_tree_flat(b.dir, b.names, 5, NULL);
        return SRT_ERR_IO;
    }
    int stored = have_cache && rt_cache_store(&cache, key, "so", so, so_len, path, sizeof path) == 0;
    int store_errno = errno;
    free(so);
    if (stored) rm_tree_flat(b.dir, b.names, 5, NULL);
    else {
        /* no cache, or a store that failed (a directory in the way, a full disk): load the object
         * from the build directory, which rt_compiled_release removes once it is loaded */
        if (have_cache) {
            char why[1400];
            snprintf(why, sizeof why, "kernel cache %s: cannot store the kernel object: %s", cache.dir,
                     strerror(store_errno));
            note_append(out, why);
        }
        rm_tree_flat(b.dir, b.names, 5, so_name);
        snprintf(path, sizeof path, "%s", b.p_so);
        if (!(out->private_dir = strdup(b.dir))) {
            unlink(b.p_so);
            rmdir(b.dir);
            return SRT_ERR_NOMEM;
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    out->compile_ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
    return give_image(out, path);
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
