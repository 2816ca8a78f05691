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
 * (unsafe or unwritable directory) the object is built in a private
 * directory under $TMPDIR instead; out->note says why.
 *
 * Every file is reached through a descriptor: the cache's (cache.c), the
 * build directory's (made with mkdirat, checked with fstat, the compiler
 * started in it with fchdir) and the object's own. The object handed out is
 * the path /proc/self/fd/N of the descriptor its bytes were validated (a
 * hit) or built from, so what dlopen maps is that file whatever the
 * directory names lead to by then; the build directory is removed before
 * the object is loaded.
 */
#define _GNU_SOURCE
#include "proc.h"
#include "rt_driver.h"
#include "sim.h"
#include "fileio.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
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
#define SIM_COMPILE_TIMEOUT_MAX_S 86400 /* the largest $SHORTC_SIM_COMPILE_TIMEOUT taken */

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

/* The host compiler's time limit in milliseconds: $SHORTC_SIM_COMPILE_TIMEOUT seconds, default 300. */
static long compile_timeout_ms(void) {
    const char *s = getenv("SHORTC_SIM_COMPILE_TIMEOUT");
    char *end;
    long v = s && *s ? strtol(s, &end, 10) : 0;
    return (s && *s && !*end && v > 0 && v <= SIM_COMPILE_TIMEOUT_MAX_S ? v : SIM_COMPILE_TIMEOUT_S) * 1000L;
}

/* Runs argv in directory cwd_fd (-1: ours) with stdout and stderr into out_fd, its process group
 * killed after compile_timeout_ms (*timed_out); returns the exit status, or -1 with errno when
 * the program could not be started. */
static int run_cmd(const char *const *argv, int cwd_fd, int out_fd, bool *timed_out) {
    ProcRun r = {.argv = argv, .cwd_fd = cwd_fd >= 0 ? &cwd_fd : NULL, .out_fd = out_fd,
                 .timeout_ms = compile_timeout_ms()};
    int rc = proc_run(&r);
    if (timed_out) *timed_out = r.timed_out;
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
    FILE *f = tmpfile(); /* unnamed: read back through its descriptor */
    if (f) {
        const char *av[] = {C.argv[0], "--version", NULL};
        struct stat st;
        const char *why;
        if (run_cmd(av, -1, fileno(f), NULL) == 0 && lseek(fileno(f), 0, SEEK_SET) == 0 && fstat(fileno(f), &st) == 0)
            C.version = fio_read_fd(fileno(f), &st, 1 << 20, NULL, &why);
        fclose(f);
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

/* The build directory and the files in it, all reached through its descriptor. */
typedef struct Build {
    char dir[1100];      /* absolute path of the private build directory ("" until made): messages and
                            -ffile-prefix-map only, never opened */
    int fd;              /* the directory (O_PATH), -1 until made */
    int parent;          /* the directory holding it: the cache's descriptor or one opened on $TMPDIR */
    int own_parent;      /* 1 when parent was opened here (closed by rm_build) */
    char name[40];       /* its name in parent */
    char cu_name[160];   /* the source's file name, <model>.cu */
    const char *names[5];/* every file the build may leave, for rm_build */
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
 * for longer than two compiler runs at the time limit (a killed process leaves its own behind).
 * Reached through the cache's descriptor, like every other entry. */
static void remove_stale_builds(int cache_fd) {
    int fd = openat(cache_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0) close(fd);
        return;
    }
    /* the longest limit any process may set, not ours: a shorter one must not reap another's live build */
    time_t stale = time(NULL) - (time_t)(2 * SIM_COMPILE_TIMEOUT_MAX_S + 60);
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        struct stat st;
        if (strncmp(e->d_name, "tmp-sim-", 8) != 0 || fstatat(cache_fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
            continue;
        if (S_ISDIR(st.st_mode) && st.st_mtime < stale) remove_flat_dir(cache_fd, e->d_name);
    }
    closedir(d);
}

/* Removes the build directory with its files and closes its descriptors. */
static void rm_build(Build *b) {
    if (b->fd < 0) return;
    for (int i = 0; i < 5; i++) unlinkat(b->fd, b->names[i], 0);
    sim_headers_remove(b->fd);
    close(b->fd);
    b->fd = -1;
    unlinkat(b->parent, b->name, AT_REMOVEDIR);
    if (b->own_parent) close(b->parent);
    b->dir[0] = 0;
}

/* Makes a fresh directory prefix-XXXXXX (0700) in b->parent, named below parent_path, and opens it;
 * it must be ours and closed to others (fstat on the descriptor). 0 on success, else -1 and errno. */
static int make_dir_at(Build *b, const char *parent_path, const char *prefix) {
    static const char digits[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    for (int tries = 0; tries < 100; tries++) {
        unsigned char r[6];
        if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r) return -1;
        int n = snprintf(b->name, sizeof b->name, "%s-", prefix);
        for (int i = 0; i < 6; i++) b->name[n + i] = digits[r[i] % (sizeof digits - 1)];
        b->name[n + 6] = 0;
        if (mkdirat(b->parent, b->name, 0700) != 0) {
            if (errno == EEXIST) continue;
            return -1;
        }
        struct stat st;
        b->fd = openat(b->parent, b->name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (b->fd < 0 || fstat(b->fd, &st) != 0 || st.st_uid != geteuid() || (st.st_mode & 077)) {
            if (b->fd >= 0) close(b->fd);
            b->fd = -1;
            unlinkat(b->parent, b->name, AT_REMOVEDIR); /* nothing left behind */
            errno = EPERM;
            return -1;
        }
        snprintf(b->dir, sizeof b->dir, "%s/%s", parent_path, b->name);
        return 0;
    }
    errno = EEXIST;
    return -1;
}

/* The trampoline unit: the emitted source, then one trampoline pair per kernel (malloc'd, *len). */
static char *main_unit(const RtCompileRequest *req, const Build *b, int arch, size_t *len) {
    char *text = NULL;
    FILE *f = open_memstream(&text, len);
    if (!f) return NULL;
    fprintf(f, "// generated by sim_compile.c: the emitted source, then one trampoline pair per kernel\n");
    fprintf(f, "#include \"%s\"\n", b->cu_name);
    for (int i = 0; i < req->nkernels; i++) fprintf(f, "SHORTSIM_KERNEL(%s)\n", req->kernel_names[i]);
    fprintf(f, "SHORTSIM_MODULE()\n");
    fprintf(f, "SHORTSIM_EXPORT const int shortsim_abi = SHORTSIM_ABI_VERSION;\n");
    fprintf(f, "SHORTSIM_EXPORT const int shortsim_arch = %d;\n", arch);
    if (fclose(f) != 0) {
        free(text);
        return NULL;
    }
    return text;
}

/* Makes the private build directory (inside the cache directory, or in $TMPDIR) and writes the
 * source, the trampoline unit and the simulator's headers into it. */
static srt_status make_build(const RtCompileRequest *req, const RtCache *cache, int arch, Build *b, char *err,
                             size_t errlen) {
    char parent[1100];
    const char *tmpdir = getenv("TMPDIR");
    b->own_parent = !cache;
    if (cache) remove_stale_builds(cache->fd);
    if (cache) b->parent = cache->fd, snprintf(parent, sizeof parent, "%s", cache->dir);
    else if (rt_abs_path(tmpdir && *tmpdir ? tmpdir : "/tmp", parent, sizeof parent) != 0) parent[0] = 0;
    else b->parent = open(parent, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if ((!cache && (!parent[0] || b->parent < 0)) || make_dir_at(b, parent, cache ? "tmp-sim" : "shortc-sim") != 0) {
        snprintf(err, errlen, "sim compile: cannot create a directory in %s: %s", parent, strerror(errno));
        if (b->own_parent && b->parent >= 0) close(b->parent);
        return SRT_ERR_IO;
    }
    char base[101]; /* at most 100 characters of the model's name */
    rt_cache_safe_name(req->name && *req->name ? req->name : "model", base, sizeof base);
    snprintf(b->cu_name, sizeof b->cu_name, "%s.cu", base);
    const char *names[] = {b->cu_name, main_name, so_name, log_name, pre_name};
    memcpy(b->names, names, sizeof names);
    size_t mlen = 0;
    char *main_text = main_unit(req, b, arch, &mlen);
    int ok = main_text && rt_write_at(b->fd, b->cu_name, req->source, req->len) == 0 &&
             rt_write_at(b->fd, main_name, main_text, mlen) == 0 && sim_headers_write(b->fd) == 0;
    free(main_text);
    if (ok) return SRT_OK;
    snprintf(err, errlen, "sim compile: cannot write sources in %s", b->dir);
    rm_build(b);
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
    int log = openat(b->fd, log_name, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (log < 0) {
        snprintf(err, errlen, "sim compile: cannot create the compiler's log %s/%s: %s", b->dir, log_name,
                 strerror(errno));
        return SRT_ERR_IO;
    }
    bool timed_out = false;
    int rc = run_cmd(argv, b->fd, log, &timed_out);
    close(log);
    if (rc == 0) return SRT_OK;
    if (timed_out)
        snprintf(err, errlen, "sim compile: %s ran for more than %ld s on %s and was killed "
                 "(SHORTC_SIM_COMPILE_TIMEOUT sets the limit)", argv[0], compile_timeout_ms() / 1000, b->cu_name);
    else if (rc < 0)
        snprintf(err, errlen, "sim compile: cannot run the host compiler %s: %s", argv[0], strerror(errno));
    else {
        const char *why;
        char *log = fio_read_at(b->fd, log_name, O_NOFOLLOW, RT_FILE_MAX, NULL, &why);
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
    if (b->fd < 0) {
        *h = rt_hash64(*h, req->source, req->len);
        return SRT_OK;
    }
    const char *const extra[] = {"-E", "-fno-working-directory", "-o", pre_name, main_name, NULL};
    srt_status st = run_compiler(req, b, extra, err, errlen);
    if (st != SRT_OK) return st;
    size_t n = 0;
    const char *why;
    char *pre = fio_read_at(b->fd, pre_name, O_NOFOLLOW, RT_FILE_MAX, &n, &why);
    if (!pre) {
        snprintf(err, errlen, "sim compile: cannot read the preprocessed source %s/%s: %s", b->dir, pre_name, why);
        return SRT_ERR_IO;
    }
    *h = rt_hash64(*h, pre, n);
    free(pre);
    unlinkat(b->fd, pre_name, 0);
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

/* Hands the object open on fd to out, as the path /proc/self/fd/N that dlopen maps: the file
 * whose bytes were validated or built, whatever its directory's name now leads to. */
static srt_status give_image(RtCompiled *out, int fd) {
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    out->image = strdup(path);
    if (!out->image) {
        close(fd);
        return SRT_ERR_NOMEM;
    }
    out->image_len = strlen(path) + 1;
    out->image_fd = fd;
    out->own_fd = 1;
    return SRT_OK;
}

/* Builds the object in b (made here when the key did not need it) and stores it in the cache;
 * *fd: the built object, open. */
static srt_status build_so(const RtCompileRequest *req, RtCompiled *out, RtCache *cache, const char *key, int arch,
                           Build *b, int *fd, char *err, size_t errlen) {
    srt_status st = SRT_OK;
    if (b->fd < 0 && (st = make_build(req, cache, arch, b, err, errlen)) != SRT_OK) return st;
    const char *const extra[] = {"-o", so_name, main_name, NULL};
    if ((st = run_compiler(req, b, extra, err, errlen)) != SRT_OK) return st;
    struct stat sb;
    const char *why = "";
    size_t so_len = 0;
    *fd = fio_openat_regular(b->fd, so_name, O_NOFOLLOW, &sb, &why);
    char *so = *fd >= 0 ? fio_read_fd(*fd, &sb, RT_FILE_MAX, &so_len, &why) : NULL;
    if (!so) {
        snprintf(err, errlen, "sim compile: the host compiler wrote no kernel object %s/%s: %s", b->dir, so_name, why);
        if (*fd >= 0) close(*fd);
        return SRT_ERR_IO;
    }
    char path[1400];
    /* a store that fails (a directory in the way, a full disk) costs only the cache: the object is
     * loaded from its descriptor either way */
    if (cache && rt_cache_store(cache, key, "so", so, so_len, path, sizeof path) != 0) {
        char note[1400];
        snprintf(note, sizeof note, "kernel cache %s: cannot store the kernel object: %s", cache->dir, strerror(errno));
        note_append(out, note);
    }
    free(so);
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
    /* An unusable or unsafe cache directory costs only the cache: the object is
     * built in a private temporary directory. */
    RtCache cache;
    int have_cache = rt_cache_open(&cache, dir, out->note, sizeof out->note) == 0;
    Build b = {.fd = -1, .parent = -1};
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    /* a source that includes files is keyed by its preprocessed text, which needs the build directory first */
    srt_status st = SRT_OK;
    if (req->ninclude_dirs > 0 && has_include(req->source, req->len))
        st = make_build(req, have_cache ? &cache : NULL, arch, &b, err, errlen);
    char key[64], path[2048];
    int fd = -1;
    if (st == SRT_OK) st = cache_key(req, &b, arch, key, sizeof key, err, errlen);
    if (st == SRT_OK && have_cache && req->rebuild) rt_cache_evict(&cache, key, "so");
    else if (st == SRT_OK && have_cache && rt_cache_load_fd(&cache, key, "so", check_host_elf, path, sizeof path, &fd))
        out->cache_hit = 1;
    out->cache_corrupt = have_cache && cache.corrupt > 0;
    if (st == SRT_OK && !out->cache_hit)
        st = build_so(req, out, have_cache ? &cache : NULL, key, arch, &b, &fd, err, errlen);
    rm_build(&b);
    if (have_cache) rt_cache_close(&cache);
    if (st != SRT_OK) return st;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (!out->cache_hit) out->compile_ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
    return give_image(out, fd);
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
