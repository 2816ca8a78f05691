/*
 * fileio.c — safe reading of input files and safe writing of outputs,
 * shared by the compiler, the runtime and the CLI (interface and rules in
 * fileio.h).
 */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE
#include "fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char not_regular[] = "not a regular file (a FIFO, socket or device)";
const char fio_too_large[] = "file is too large";
static const char is_directory[] = "Is a directory"; /* strerror(EISDIR)'s wording */

int fio_open_regular(const char *path, struct stat *st, const char **why) {
    return fio_openat_regular(AT_FDCWD, path, 0, st, why);
}

int fio_openat_regular(int dirfd, const char *path, int flags, struct stat *st, const char **why) {
    int fd = openat(dirfd, path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY | flags);
    if (fd < 0) {
        *why = strerror(errno);
        return -1;
    }
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        *why = strerror(errno);
        close(fd);
        return -1;
    }
    if (!S_ISREG(sb.st_mode)) {
        *why = S_ISDIR(sb.st_mode) ? is_directory : not_regular;
        close(fd);
        return -1;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0) {
        *why = strerror(errno);
        close(fd);
        return -1;
    }
    if (st) *st = sb;
    return fd;
}

/* Reads fd to its end into a malloc'd, NUL-terminated buffer of at most max bytes; the size from
 * fstat is only the first guess (procfs and sysfs files say 0). NULL with *why on failure. */
static char *read_to_eof(int fd, size_t guess, size_t max, size_t *len, const char **why) {
    size_t cap = guess < 4096 ? 4096 : guess, n = 0;
    if (cap > max) cap = max;
    char *buf = malloc(cap + 1);
    for (;;) {
        if (!buf) {
            *why = strerror(ENOMEM);
            return NULL;
        }
        if (n == cap) { /* full: one more byte than max means too large */
            char probe;
            ssize_t r = read(fd, &probe, 1);
            if (r < 0 && errno == EINTR) continue;
            if (r == 0) break;
            if (r < 0 || cap == max) {
                *why = r < 0 ? strerror(errno) : fio_too_large;
                free(buf);
                return NULL;
            }
            size_t ncap = cap > max / 2 ? max : cap * 2;
            char *nb = realloc(buf, ncap + 1);
            if (!nb) free(buf);
            buf = nb;
            if (buf) buf[n++] = probe;
            cap = ncap;
            continue;
        }
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            *why = strerror(errno);
            free(buf);
            return NULL;
        }
        if (r == 0) break;
        n += (size_t)r;
    }
    buf[n] = 0;
    if (len) *len = n;
    return buf;
}

char *fio_read_file(const char *path, size_t max, size_t *len, const char **why) {
    return fio_read_at(AT_FDCWD, path, 0, max, len, why);
}

char *fio_read_at(int dirfd, const char *path, int flags, size_t max, size_t *len, const char **why) {
    struct stat st;
    int fd = fio_openat_regular(dirfd, path, flags, &st, why);
    if (fd < 0) return NULL;
    char *buf = fio_read_fd(fd, &st, max, len, why);
    close(fd);
    return buf;
}

char *fio_read_fd(int fd, const struct stat *st, size_t max, size_t *len, const char **why) {
    if (st->st_size < 0 || (unsigned long long)st->st_size > max) {
        *why = fio_too_large;
        return NULL;
    }
    return read_to_eof(fd, (size_t)st->st_size, max, len, why);
}

static bool force_links; /* fio_set_force: a symbolic link as an output is replaced, not refused */

void fio_set_force(bool replace_links) { force_links = replace_links; }

const char fio_is_link[] = "a symbolic link (outputs never follow one; --force replaces the link itself)";

/* What path names now, without following a symbolic link in its last component: *exists false for
 * nothing; a link is refused unless force_links (then it is the file replaced). false with *why. */
static bool output_kind(const char *path, struct stat *st, bool *exists, const char **why) {
    *exists = false;
    if (lstat(path, st) != 0) {
        if (errno == ENOENT) return true;
        *why = strerror(errno);
        return false;
    }
    *exists = true;
    if (S_ISLNK(st->st_mode) && !force_links) {
        *why = fio_is_link;
        return false;
    }
    return true;
}

/* Opens a character device or FIFO for writing through; -1 with *why otherwise. */
static int open_through(const char *target, const struct stat *st, const char **why) {
    if (S_ISDIR(st->st_mode)) {
        *why = is_directory;
        return -1;
    }
    if (!S_ISCHR(st->st_mode) && !S_ISFIFO(st->st_mode)) {
        *why = "not a regular file, character device or FIFO";
        return -1;
    }
    /* non-blocking: a FIFO nobody reads fails (ENXIO) instead of hanging; never through a link
     * put in place since it was looked at */
    int fd = open(target, O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW);
    if (fd < 0) {
        *why = errno == ENXIO ? "a FIFO that nobody reads" : errno == ELOOP ? fio_is_link : strerror(errno);
        return -1;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0) {
        *why = strerror(errno);
        close(fd);
        return -1;
    }
    return fd;
}

/* Creates a fresh temporary file next to target; -1 with *why. */
static int open_temp(FioOut *o, const char **why) {
    static unsigned counter;
    size_t n = strlen(o->target) + 64;
    if (!(o->tmp = malloc(n))) {
        *why = strerror(ENOMEM);
        return -1;
    }
    for (int attempt = 0; attempt < 100; attempt++) {
        snprintf(o->tmp, n, "%s.tmp.%ld.%u", o->target, (long)getpid(),
                 __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED));
        int fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd >= 0 || errno != EEXIST) {
            if (fd < 0) *why = strerror(errno);
            return fd;
        }
    }
    *why = "cannot create a temporary file";
    return -1;
}

bool fio_out_open(FioOut *o, const char *path, const char **why) {
    memset(o, 0, sizeof *o);
    o->fd = -1;
    struct stat st;
    bool exists;
    if (!output_kind(path, &st, &exists, why)) return false;
    if (!(o->target = strdup(path))) {
        *why = strerror(ENOMEM);
        return false;
    }
    if (!exists || S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)) {   /* a link only with --force */
        o->fd = open_temp(o, why);
        if (o->fd >= 0 && exists && S_ISREG(st.st_mode)) fchmod(o->fd, st.st_mode & 07777); /* the replacement keeps the file's mode */
    } else {
        o->fd = open_through(o->target, &st, why);
    }
    if (o->fd < 0) {
        free(o->tmp);
        free(o->target);
        memset(o, 0, sizeof *o);
        o->fd = -1;
        return false;
    }
    return true;
}

void fio_out_write(FioOut *o, const void *data, size_t len) {
    const char *p = data;
    while (len > 0 && !o->err && o->fd >= 0) {
        ssize_t w = write(o->fd, p, len);
        if (w < 0) {
            if (errno != EINTR) o->err = errno;
            continue;
        }
        p += w;
        len -= (size_t)w;
    }
}

static void out_free(FioOut *o) {
    free(o->tmp);
    free(o->target);
    memset(o, 0, sizeof *o);
    o->fd = -1;
}

bool fio_out_commit(FioOut *o, const char **why) {
    if (o->fd >= 0 && close(o->fd) != 0 && !o->err) o->err = errno;
    o->fd = -1;
    if (!o->err && o->tmp && rename(o->tmp, o->target) != 0) o->err = errno;
    if (o->err) {
        *why = strerror(o->err);
        if (o->tmp) unlink(o->tmp);
        out_free(o);
        return false;
    }
    out_free(o);
    return true;
}

void fio_out_abort(FioOut *o) {
    if (o->fd >= 0) close(o->fd);
    if (o->tmp) unlink(o->tmp);
    out_free(o);
}

bool fio_write_file(const char *path, const void *data, size_t len, const char **why) {
    FioOut o;
    if (!fio_out_open(&o, path, why)) return false;
    fio_out_write(&o, data, len);
    return fio_out_commit(&o, why);
}

bool fio_same_file(const char *a, const char *b) {
    struct stat sa, sb;
    if (!a || !b || stat(a, &sa) != 0 || stat(b, &sb) != 0) return false;
    return S_ISREG(sa.st_mode) && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* true for an output entry that names a file (not NULL, not stdout). */
static bool names_file(const char *p) { return p && strcmp(p, "-") != 0; }

/* true when a and b are one file to be replaced: the same regular file, or the same path of a
 * regular or absent file (a device or FIFO written twice replaces nothing). */
static bool one_file(const char *a, const char *b) {
    struct stat st;
    if (strcmp(a, b) == 0) return stat(a, &st) != 0 || S_ISREG(st.st_mode);
    return fio_same_file(a, b);
}

int fio_first_clash(const char *const *outs, int nouts, const char *const *ins, int nins, const char **clash) {
    for (int o = 0; o < nouts; o++) {
        if (!names_file(outs[o])) continue;
        for (int i = 0; i < nins; i++)
            if (ins[i] && one_file(outs[o], ins[i])) {
                *clash = ins[i];
                return o;
            }
        for (int e = 0; e < o; e++)
            if (names_file(outs[e]) && one_file(outs[o], outs[e])) {
                *clash = outs[e];
                return o;
            }
    }
    return -1;
}
