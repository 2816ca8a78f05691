/*
 * fileio.h — the one place where shortc (compiler, runtime and CLI) opens
 * files it reads and writes outputs. Shared so that every reader refuses
 * FIFOs, devices and directories without blocking and bounds what it reads,
 * and every output is written without replacing special files.
 *
 * Reading: fio_open_regular opens with O_NONBLOCK (a FIFO without a writer
 * cannot block the open), checks with fstat that it is a regular file and
 * clears O_NONBLOCK. fio_read_file reads such a file to its end (the size
 * fstat gives is only a first guess: procfs files say 0), refusing one
 * larger than a caller-given bound.
 *
 * Writing: an output whose path is absent or a regular file is written to
 * a temporary file in the same directory and renamed over it, so a failure
 * never leaves a half-written file. A symbolic link in the last component
 * is never followed: it is refused, or with fio_set_force (shortc's
 * --force) the link itself is replaced in the same way; its target is
 * never written. A character device (/dev/null, a terminal) or a FIFO with
 * a reader is written through (opened with O_NOFOLLOW); a directory,
 * socket, block device or reader-less FIFO is refused with a message.
 */
#ifndef SHORTC_FILEIO_H
#define SHORTC_FILEIO_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

/* Opens path read-only if it is a regular file. Returns the descriptor (close it), or -1 with
 * *why set to a static message ("No such file or directory", "is a directory", "not a regular file ..."). */
int fio_open_regular(const char *path, struct stat *st, const char **why);
/* fio_open_regular of path relative to directory dirfd (AT_FDCWD: the working directory), with extra
 * open flags (O_NOFOLLOW: a symbolic link is refused, never followed). */
int fio_openat_regular(int dirfd, const char *path, int flags, struct stat *st, const char **why);

/* Reads a whole regular file of at most max bytes into malloc'd memory, NUL-terminated (free()).
 * NULL with *why set on failure (never blocks, never reads more than max). len may be NULL. */
char *fio_read_file(const char *path, size_t max, size_t *len, const char **why);
/* The *why of fio_read_file for a file over max (compare the pointer to say what the limit is). */
extern const char fio_too_large[];
/* fio_read_file of path relative to dirfd, opened with fio_openat_regular's extra flags. */
char *fio_read_at(int dirfd, const char *path, int flags, size_t max, size_t *len, const char **why);
/* The rest of regular file fd (st: its fstat, as fio_openat_regular returns it), read as fio_read_file does. */
char *fio_read_fd(int fd, const struct stat *st, size_t max, size_t *len, const char **why);

/* An output file being written (see the top of the file). */
typedef struct FioOut {
    int fd;          /* descriptor written to (-1: closed) */
    char *target;    /* the path written (a copy; malloc'd) */
    char *tmp;       /* temporary file renamed over target on commit; NULL when written through */
    int err;         /* first errno of a failed write (0: none) */
} FioOut;

/* Whether an output that is a symbolic link is replaced (the link itself) instead of refused;
 * process-wide, off by default. */
void fio_set_force(bool replace_links);
/* The *why of fio_out_open for a symbolic link without fio_set_force. */
extern const char fio_is_link[];

/* Opens an output. false with *why set (a static message) when it cannot or must not be written. */
bool fio_out_open(FioOut *o, const char *path, const char **why);
/* Appends bytes; a failure is remembered and reported by fio_out_commit. */
void fio_out_write(FioOut *o, const void *data, size_t len);
/* Finishes: closes, and renames the temporary file into place. false with *why on any failure
 * (then nothing replaced the target). */
bool fio_out_commit(FioOut *o, const char **why);
/* Gives up: closes and removes the temporary file (the target is untouched). */
void fio_out_abort(FioOut *o);

/* true when both paths exist and name the same regular file (device and inode, links followed):
 * an output that would replace an input. */
bool fio_same_file(const char *a, const char *b);
/* The first output that would replace an input or another output (the same path of a regular or
 * absent file, or the same regular file by fio_same_file): its index in outs, with *clash the path it collides with; -1 when
 * every output stands apart. NULL entries and "-" (stdout) are skipped. */
int fio_first_clash(const char *const *outs, int nouts, const char *const *ins, int nins, const char **clash);
/* Writes one buffer to path as an output (open, write, commit). */
bool fio_write_file(const char *path, const void *data, size_t len, const char **why);

#endif /* SHORTC_FILEIO_H */
