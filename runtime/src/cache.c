/*
 * cache.c — the on-disk artifact cache (interface in rt_driver.h), with the
 * whole-file reader and the file-name sanitizer its users share.
 *
 * An entry is <dir>/<key>.<ext>; its sidecar <dir>/<key>.<ext>.meta holds
 *
 *     shortc-cache 1
 *     len <bytes>
 *     hash <16 hex digits>      (rt_hash64 of the entry's bytes)
 *
 * Both files are written to a temporary name in the same directory and
 * renamed into place, entry first, so a reader never sees a half-written
 * file under the final name. Concurrent processes may look up and store one
 * key at the same time:
 *
 *   - A lookup never removes anything. A missing or disagreeing meta, or an
 *     entry that does not hash to it, counts as corrupt (a crash between the
 *     two renames, a damaged file, or another process's store in progress);
 *     the caller rebuilds and stores, which replaces both files by rename.
 *   - A store removes nothing either (no old meta first, no entry after a
 *     failed meta write), so it never takes a file away from a process that
 *     has just validated or stored it.
 *   - A lookup validates the pair by hashing the entry's bytes against the
 *     meta, so a pair whose halves come from two different stores only
 *     validates if the bytes are identical, i.e. never a torn pair.
 *     Artifacts are deterministic for a key, so overwrites are harmless.
 *   - An entry that hashes right but fails its caller's structural check
 *     (rt_elf_check: a truncated shared object or a 100-byte "cubin") is
 *     corrupt too, and one that passes everything but still fails to load
 *     is evicted by its caller (rt_cache_evict) and rebuilt.
 *
 * The directory must be private, and stay the directory that was checked
 * (rt_cache_init), since another user who could change it could plant a
 * shared object that the simulator would load:
 *
 *   - It is opened once, by a walk from "/" through descriptors (openat with
 *     O_NOFOLLOW, missing components created 0700): symbolic links in its
 *     parents are resolved before the walk (realpath), so the walk meets
 *     none; one that appears meanwhile, or a link as the last component, is
 *     refused.
 *   - Each parent on the walk must be owned by root or the user and not
 *     writable by group or others, so that nobody else can rename or replace
 *     the next component. A group/world-writable parent is accepted only
 *     with the sticky bit (/tmp), where others may add names but cannot
 *     rename or remove ours; the component below it must then be ours (or
 *     root's) and closed to others, which the same rules require, and must
 *     not itself be another sticky open directory.
 *   - The directory itself (fstat on the descriptor) must be a directory
 *     owned by the user, not writable by group or others.
 *   - Every entry is then reached only through that descriptor (openat,
 *     renameat, unlinkat, fstatat; O_NOFOLLOW throughout), so swapping the
 *     directory or a parent for a symbolic link after the check changes
 *     nothing; the simulator loads a validated entry through
 *     /proc/self/fd/N of the descriptor its bytes were read from.
 *
 * Anything else is refused and the caller uses the fallback directory or
 * builds in a private temporary directory. Every file is read through
 * fileio.h (no FIFO or device, bounded by the meta's length).
 */
#define _GNU_SOURCE
#include "rt_driver.h"
#include "fileio.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

uint64_t rt_hash64(uint64_t h, const void *data, size_t len) {
    const unsigned char *p = data;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

void rt_cache_safe_name(const char *name, char *out, size_t len) {
    size_t j = 0;
    for (const char *c = name; *c && j + 1 < len; c++)
        out[j++] = ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_' || *c == '-')
                       ? *c
                       : '_';
    if (len) out[j] = 0;
}

void rt_fallback_cache_dir(char *buf, size_t len) { snprintf(buf, len, "/tmp/shortc-cache-%ld", (long)geteuid()); }

/* ---- opening the directory ------------------------------------------------------------ */

/* Why directory st, on the way to the cache, would let a user other than this one or root change
 * what the path names (NULL: it would not). A group- or world-writable directory is accepted only
 * with the sticky bit, where others can add names but not rename or remove ours, and then the
 * component below it must be ours or root's and closed (*sticky tells the next call). */
static const char *ancestor_problem(const struct stat *st, int sticky_above, int *sticky) {
    *sticky = 0;
    if (!S_ISDIR(st->st_mode)) return "is not a directory";
    if (st->st_uid != 0 && st->st_uid != geteuid()) return "is owned by another user";
    if (!(st->st_mode & (S_IWGRP | S_IWOTH))) return NULL;
    if (!(st->st_mode & S_ISVTX)) return "is writable by group or others without the sticky bit";
    if (sticky_above) return "is writable by others (sticky) inside another such directory";
    *sticky = 1;
    return NULL;
}

/* Why the cache directory itself (st) is not private to this user (NULL: it is). */
static const char *final_problem(const struct stat *st) {
    if (!S_ISDIR(st->st_mode)) return "it is not a directory";
    if (st->st_uid != geteuid()) return "it is owned by another user";
    if (st->st_mode & (S_IWGRP | S_IWOTH)) return "it is writable by group or others";
    if (geteuid() != 0 && (st->st_mode & (S_IWUSR | S_IXUSR)) != (S_IWUSR | S_IXUSR)) return "it is not writable";
    return NULL;
}

/* Opens directory name in at without following a symbolic link (O_PATH: search permission is
 * enough), creating it 0700 when missing; -1 with why when it is a link or not a directory. */
static int open_dir_at(int at, const char *name, const char **why) {
    const int fl = O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
    int fd = openat(at, name, fl);
    if (fd < 0 && errno == ENOENT && (mkdirat(at, name, 0700) == 0 || errno == EEXIST)) fd = openat(at, name, fl);
    if (fd >= 0) return fd;
    int e = errno;
    struct stat st;
    *why = fstatat(at, name, &st, AT_SYMLINK_NOFOLLOW) != 0 ? strerror(e)
           : S_ISLNK(st.st_mode)                          ? "is a symbolic link"
           : !S_ISDIR(st.st_mode)                         ? "is not a directory"
                                                          : strerror(e);
    return -1;
}

/* dir (absolute, no trailing slash) with symbolic links in its parent resolved: realpath of the
 * deepest existing ancestor, then the components the walk creates (no ".."); the last component is
 * kept as is, since a link there is refused. 0 on success, else -1 and errno (EINVAL: a bad name). */
static int canonical_dir(const char *dir, char *out, size_t len) {
    const char *base = strrchr(dir, '/') + 1;
    char prefix[1024], real[PATH_MAX] = "/";
    size_t cut = (size_t)(base - 1 - dir); /* the parent is dir[0, cut) */
    errno = EINVAL;
    if (!*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0 || cut >= sizeof prefix) return -1;
    memcpy(prefix, dir, cut);
    prefix[cut] = 0;
    while (cut > 0 && !realpath(prefix, real)) {
        char *slash = strrchr(prefix, '/');
        if (errno != ENOENT) return -1;
        errno = EINVAL;
        if (strcmp(slash + 1, "..") == 0) return -1;
        cut = (size_t)(slash - prefix);
        *slash = 0;
    }
    if (cut == 0) snprintf(real, sizeof real, "/");
    size_t n = 0;
    const char *parts[2] = {strcmp(real, "/") == 0 ? "" : real, dir + cut};
    for (int k = 0; k < 2; k++)
        for (const char *p = parts[k]; *p; p++) /* "//" in the unresolved part becomes "/" */
            if (!(*p == '/' && n > 0 && out[n - 1] == '/')) {
                if (n + 1 >= len) return -1;
                out[n++] = *p;
            }
    out[n] = 0;
    return 0;
}

/* Walks canonical path c->dir from "/" through descriptors, checking each ancestor
 * (ancestor_problem) and the directory itself (final_problem); c->fd on success, else c->why. */
static int open_private_dir(RtCache *c) {
    char walk[1024];
    snprintf(walk, sizeof walk, "%s", c->dir);
    int at = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC), sticky = 0;
    char *comp = walk + 1; /* the component opened next, in directory at */
    for (;;) {
        char *slash = strchr(comp, '/');
        struct stat st;
        const char *bad = at < 0 || fstat(at, &st) != 0 ? strerror(errno) : ancestor_problem(&st, sticky, &sticky);
        if (bad) {
            comp[-1] = 0; /* walk names at ("" for "/") */
            snprintf(c->why, sizeof c->why, "parent directory %s %s", walk[0] ? walk : "/", bad);
            if (at >= 0) close(at);
            return -1;
        }
        if (slash) *slash = 0;
        int fd = open_dir_at(at, comp, &bad);
        close(at);
        if (fd < 0) {
            snprintf(c->why, sizeof c->why, "%s%s %s", slash ? "parent directory " : "it", slash ? walk : "", bad);
            return -1;
        }
        at = fd;
        if (!slash) break;
        *slash = '/';
        comp = slash + 1;
    }
    struct stat st;
    const char *bad = fstat(at, &st) != 0 ? strerror(errno) : final_problem(&st);
    if (bad) {
        snprintf(c->why, sizeof c->why, "%s", bad);
        close(at);
        return -1;
    }
    c->fd = at;
    return 0;
}

int rt_abs_path(const char *path, char *out, size_t len) {
    if (!path || !*path || !len) return -1;
    if (path[0] == '/') return snprintf(out, len, "%s", path) < (int)len ? 0 : -1;
    char cwd[4096];
    if (!getcwd(cwd, sizeof cwd)) return -1;
    int n = snprintf(out, len, "%s%s%s", cwd, strcmp(cwd, "/") == 0 ? "" : "/", path);
    return n >= 0 && (size_t)n < len ? 0 : -1;
}

int rt_cache_init(RtCache *c, const char *dir) {
    memset(c, 0, sizeof *c);
    c->fd = -1;
    /* absolute, so that the compiler's working directory (a build directory) does not change what it names */
    char abs[1024];
    if (rt_abs_path(dir, abs, sizeof abs) != 0) {
        snprintf(c->why, sizeof c->why, "no usable directory name");
        return -1;
    }
    /* strip trailing slashes (keep "/") */
    size_t n = strlen(abs);
    while (n > 1 && abs[n - 1] == '/') abs[--n] = 0;
    snprintf(c->dir, sizeof c->dir, "%s", abs);
    if (canonical_dir(abs, c->dir, sizeof c->dir) != 0) {
        snprintf(c->why, sizeof c->why, errno == EINVAL ? "no usable directory name" : "cannot resolve it: %s",
                 strerror(errno));
        return -1;
    }
    return open_private_dir(c);
}

void rt_cache_close(RtCache *c) {
    if (c->fd >= 0) close(c->fd);
    c->fd = -1;
}

int rt_cache_open(RtCache *c, const char *dir, char *note, size_t notelen) {
    if (notelen) note[0] = 0;
    if (rt_cache_init(c, dir) == 0) return 0;
    char first[2400];
    snprintf(first, sizeof first, "kernel cache %s not used: %s", dir ? dir : "(none)", c->why);
    char fallback[64];
    rt_fallback_cache_dir(fallback, sizeof fallback);
    if (strcmp(c->dir, fallback) == 0) { /* dir was the fallback already: no second try */
        snprintf(note, notelen, "%s", first);
        return -1;
    }
    if (rt_cache_init(c, fallback) == 0) {
        snprintf(note, notelen, "%s; using %s", first, fallback);
        return 0;
    }
    snprintf(note, notelen, "%s; %s not used either: %s", first, fallback, c->why);
    return -1;
}

/* The entry's file name in the directory (name) and its path for messages; -1 when too long or
 * not a plain name. */
static int entry_names(const RtCache *c, const char *key, const char *ext, char *name, size_t namelen, char *path,
                       size_t pathlen) {
    int n = snprintf(name, namelen, "%s.%s", key, ext);
    if (n < 0 || (size_t)n >= namelen || strchr(name, '/') || c->fd < 0) return -1;
    n = snprintf(path, pathlen, "%s/%s", c->dir, name);
    return n < 0 || (size_t)n >= pathlen ? -1 : 0;
}

/* Whole-file reader shared by the cache, the NVRTC path and the simulator's compile (rt_driver.h). */
char *rt_read_all(const char *path, size_t *len) {
    const char *why;
    return fio_read_file(path, RT_FILE_MAX, len, &why);
}

/* Entry name's bytes in c when they match the sidecar meta and pass check; NULL otherwise. With
 * fd, the entry's descriptor (the file whose bytes were validated) is handed over too. */
static char *entry_valid(const RtCache *c, const char *name, const char *meta, int (*check)(const void *, size_t),
                         size_t *len, int *fd) {
    const char *why;
    char *m = fio_read_at(c->fd, meta, O_NOFOLLOW, 256, NULL, &why);
    if (!m) return NULL;
    unsigned long long want_len = 0, want_hash = 0;
    int ok = sscanf(m, "shortc-cache 1\nlen %llu\nhash %llx", &want_len, &want_hash) == 2;
    free(m);
    if (!ok || want_len > RT_FILE_MAX) return NULL;
    struct stat st;
    int efd = fio_openat_regular(c->fd, name, O_NOFOLLOW, &st, &why);
    char *data = efd >= 0 ? fio_read_fd(efd, &st, (size_t)want_len, len, &why) : NULL;
    if (data && (*len != want_len || rt_hash64(RT_HASH_SEED, data, *len) != (uint64_t)want_hash ||
                 (check && !check(data, *len)))) {
        free(data);
        data = NULL;
    }
    if (data && fd) *fd = efd;
    else if (efd >= 0) close(efd);
    return data;
}

/* rt_cache_load with the entry's descriptor (fd not NULL) as well. */
static int load_entry(RtCache *c, const char *key, const char *ext, int (*check)(const void *, size_t), char *path,
                      size_t pathlen, void **data, size_t *len, int *fd) {
    char name[300], meta[320];
    if (data) *data = NULL;
    if (fd) *fd = -1;
    if (entry_names(c, key, ext, name, sizeof name, path, pathlen) != 0) return 0;
    snprintf(meta, sizeof meta, "%s.meta", name);
    struct stat st;
    int have_entry = fstatat(c->fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
    int have_meta = fstatat(c->fd, meta, &st, AT_SYMLINK_NOFOLLOW) == 0;
    if (!have_entry && !have_meta) {
        c->misses++;
        return 0;
    }
    size_t n = 0;
    char *bytes = have_entry && have_meta ? entry_valid(c, name, meta, check, &n, fd) : NULL;
    if (bytes) {
        c->hits++;
        if (data) {
            *data = bytes;
            *len = n;
        } else free(bytes);
        return 1;
    }
    /* left in place: the caller's store replaces both (see the top of the file) */
    c->corrupt++;
    return 0;
}

int rt_cache_load(RtCache *c, const char *key, const char *ext, int (*check)(const void *, size_t), char *path,
                  size_t pathlen, void **data, size_t *len) {
    return load_entry(c, key, ext, check, path, pathlen, data, len, NULL);
}

int rt_cache_load_fd(RtCache *c, const char *key, const char *ext, int (*check)(const void *, size_t), char *path,
                     size_t pathlen, int *fd) {
    return load_entry(c, key, ext, check, path, pathlen, NULL, NULL, fd);
}

int rt_cache_lookup(RtCache *c, const char *key, const char *ext, char *path, size_t pathlen) {
    return rt_cache_load(c, key, ext, NULL, path, pathlen, NULL, NULL);
}

void rt_cache_evict(RtCache *c, const char *key, const char *ext) {
    char name[300], meta[320], path[1400];
    if (entry_names(c, key, ext, name, sizeof name, path, sizeof path) != 0) return;
    snprintf(meta, sizeof meta, "%s.meta", name);
    unlinkat(c->fd, meta, 0);
    unlinkat(c->fd, name, 0);
}

/* 1 when [off, off + size) lies within len bytes. */
static int in_file(uint64_t off, uint64_t size, size_t len) { return off <= len && size <= len - off; }

int rt_elf_check(const void *data, size_t len, int machine) {
    const unsigned char *f = data;
    if (len < sizeof(Elf64_Ehdr)) return 0;
    Elf64_Ehdr eh;
    memcpy(&eh, f, sizeof eh);
    if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != machine)
        return 0;
    if (eh.e_phnum && (eh.e_phentsize != sizeof(Elf64_Phdr) ||
                       !in_file(eh.e_phoff, (uint64_t)eh.e_phnum * sizeof(Elf64_Phdr), len)))
        return 0;
    for (int i = 0; i < eh.e_phnum; i++) {
        Elf64_Phdr ph;
        memcpy(&ph, f + eh.e_phoff + (size_t)i * sizeof ph, sizeof ph);
        if (!in_file(ph.p_offset, ph.p_filesz, len)) return 0;
    }
    if (eh.e_shnum == 0) return eh.e_phnum > 0;
    if (eh.e_shentsize != sizeof(Elf64_Shdr) || !in_file(eh.e_shoff, (uint64_t)eh.e_shnum * sizeof(Elf64_Shdr), len))
        return 0;
    for (int i = 0; i < eh.e_shnum; i++) {
        Elf64_Shdr sh;
        memcpy(&sh, f + eh.e_shoff + (size_t)i * sizeof sh, sizeof sh);
        if (sh.sh_type != SHT_NOBITS && !in_file(sh.sh_offset, sh.sh_size, len)) return 0;
    }
    return 1;
}

int rt_write_at(int dirfd, const char *name, const void *data, size_t len) {
    int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) return -1;
    const char *p = data;
    size_t left = len;
    while (left > 0) {
        ssize_t w = write(fd, p, left);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) {
            int e = errno;
            close(fd);
            unlinkat(dirfd, name, 0);
            errno = e;
            return -1;
        }
        p += w;
        left -= (size_t)w;
    }
    if (close(fd) != 0) {
        unlinkat(dirfd, name, 0);
        return -1;
    }
    return 0;
}

/* Writes data to a fresh temporary file in the cache and renames it over final. */
static int write_atomic(const RtCache *c, const char *final, const void *data, size_t len) {
    static unsigned counter;
    char tmp[400];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld.%u.%ld", final, (long)getpid(), __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED),
             (long)time(NULL));
    if (rt_write_at(c->fd, tmp, data, len) != 0) return -1;
    if (renameat(c->fd, tmp, c->fd, final) != 0) {
        int e = errno;
        unlinkat(c->fd, tmp, 0);
        errno = e;
        return -1;
    }
    return 0;
}

int rt_cache_store(RtCache *c, const char *key, const char *ext, const void *data, size_t len,
                   char *path, size_t pathlen) {
    char name[300], meta[320], text[128];
    if (entry_names(c, key, ext, name, sizeof name, path, pathlen) != 0) {
        errno = ENAMETOOLONG;
        return -1;
    }
    snprintf(meta, sizeof meta, "%s.meta", name);
    int n = snprintf(text, sizeof text, "shortc-cache 1\nlen %llu\nhash %016" PRIx64 "\n", (unsigned long long)len,
                     rt_hash64(RT_HASH_SEED, data, len));
    /* entry, then meta; an entry left without its meta by a failure or crash reads as corrupt */
    if (write_atomic(c, name, data, len) != 0) return -1;
    return write_atomic(c, meta, text, (size_t)n) != 0 ? -1 : 0;
}

void rt_compiled_release(RtCompiled *c) {
    if (c->own_fd) close(c->image_fd);
    c->own_fd = 0;
    free(c->image);
    c->image = NULL;
}
