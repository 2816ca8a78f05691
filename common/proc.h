/*
 * proc.h — running an external program (the simulator's host compiler,
 * addr2line, cuobjdump) without a shell: an argument vector through
 * posix_spawn, so no byte of a path or an environment variable is ever
 * parsed as shell syntax (docs/security.md). The child runs in its own
 * process group with standard input from /dev/null; after a time limit the
 * whole group is killed (a compiler reading a FIFO through #include cannot
 * hang the caller).
 */
#ifndef SHORTC_PROC_H
#define SHORTC_PROC_H

#include <stdbool.h>
#include <stddef.h>

/* One run of a program. */
typedef struct ProcRun {
    const char *const *argv; /* program (searched in $PATH unless it has a '/') and arguments; NULL-terminated */
    const char *cwd;         /* directory to run it in; NULL: ours (or cwd_fd's) */
    const int *cwd_fd;       /* descriptor of the directory to run it in (fchdir), when cwd is NULL; NULL: ours */
    int out_fd;              /* its stdout and stderr go here; -1: captured into out */
    bool stderr_null;        /* its stderr goes to /dev/null instead (out holds stdout alone) */
    const int *pass_fd;      /* a descriptor of ours the child gets as pass_as (e.g. a file named by
                                /proc/self/fd/N here); NULL: none */
    int pass_as;             /* the child's number for *pass_fd (3 or more) */
    size_t out_max;          /* most bytes of captured output kept (the rest is read and dropped); 0: 1 MiB */
    long timeout_ms;         /* the process group is killed after this long; <= 0: no limit */
    char *out;               /* captured output, NUL-terminated (malloc'd; free it) when out_fd < 0 */
    size_t out_len;          /* its bytes */
    bool timed_out;          /* killed at the time limit */
} ProcRun;

/* Runs r->argv and waits for it. Returns its exit status (128 + the signal when one killed it,
 * e.g. at the time limit), or -1 with errno when it could not be started. */
int proc_run(ProcRun *r);

#endif /* SHORTC_PROC_H */
