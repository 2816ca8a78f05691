/*
 * proc.c — external programs through posix_spawn with an argument vector,
 * a pipe for their output and a time limit on their process group (proc.h).
 */
#define _GNU_SOURCE
#include "proc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static long now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Milliseconds left before deadline (-1: no deadline; 0: passed). */
static int left_ms(long deadline) {
    if (deadline < 0) return -1;
    long d = deadline - now_ms();
    return d <= 0 ? 0 : d > 60000 ? 60000 : (int)d;
}

/* Starts the child: own process group, stdin /dev/null, stdout and stderr to fd. */
static int spawn(const ProcRun *r, int fd, int close_fd, pid_t *pid) {
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    posix_spawn_file_actions_init(&fa);
    posix_spawnattr_init(&at);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&at, 0);
    if (r->cwd) posix_spawn_file_actions_addchdir_np(&fa, r->cwd);
    else if (r->cwd_fd) posix_spawn_file_actions_addfchdir_np(&fa, *r->cwd_fd);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, fd, 1);
    if (r->stderr_null) posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    else posix_spawn_file_actions_adddup2(&fa, fd, 2);
    if (close_fd >= 0) posix_spawn_file_actions_addclose(&fa, close_fd);
    if (r->pass_fd) posix_spawn_file_actions_adddup2(&fa, *r->pass_fd, r->pass_as); /* last: nothing closes it after */
    int rc = posix_spawnp(pid, r->argv[0], &fa, &at, (char *const *)r->argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    return rc;
}

/* Reads the pipe to its end (or the deadline) into r->out, keeping at most out_max bytes. */
static void capture(ProcRun *r, int fd, long deadline) {
    size_t max = r->out_max ? r->out_max : (size_t)1 << 20, cap = 4096;
    r->out = malloc(cap + 1);
    r->out_len = 0;
    for (;;) {
        struct pollfd p = {fd, POLLIN, 0};
        int n = poll(&p, 1, left_ms(deadline));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;   /* the deadline: the caller kills the group */
        char buf[4096];
        ssize_t k = read(fd, buf, sizeof buf);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return;
        size_t keep = (size_t)k < max - r->out_len ? (size_t)k : max - r->out_len;
        if (r->out && r->out_len + keep > cap) {
            while (r->out_len + keep > cap) cap *= 2;
            char *o = realloc(r->out, cap + 1);
            if (!o) free(r->out);
            r->out = o;
        }
        if (r->out) memcpy(r->out + r->out_len, buf, keep);
        r->out_len += keep;
    }
}

/* Waits for pid until the deadline, then kills its process group; the status as proc_run returns it. */
static int reap(ProcRun *r, pid_t pid, long deadline) {
    int st;
    for (;;) {
        pid_t w = waitpid(pid, &st, deadline < 0 ? 0 : WNOHANG);
        if (w == pid) break;
        if (w < 0 && errno != EINTR) return -1;
        if (w == 0 && left_ms(deadline) == 0) {
            r->timed_out = true;
            kill(-pid, SIGKILL);
            deadline = -1;
            continue;
        }
        if (w == 0) nanosleep(&(struct timespec){0, 5000000}, NULL);
    }
    if (r->timed_out) kill(-pid, SIGKILL);   /* what the group left behind */
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

int proc_run(ProcRun *r) {
    r->out = NULL;
    r->out_len = 0;
    r->timed_out = false;
    long deadline = r->timeout_ms > 0 ? now_ms() + r->timeout_ms : -1;
    int fds[2] = {-1, -1};
    if (r->out_fd < 0 && pipe2(fds, O_CLOEXEC) != 0) return -1;
    pid_t pid;
    int rc = spawn(r, r->out_fd >= 0 ? r->out_fd : fds[1], fds[0], &pid);
    if (fds[1] >= 0) close(fds[1]);
    if (rc != 0) {
        if (fds[0] >= 0) close(fds[0]);
        errno = rc;
        return -1;
    }
    if (fds[0] >= 0) {
        capture(r, fds[0], deadline);
        if (left_ms(deadline) == 0) {   /* stopped reading at the deadline */
            r->timed_out = true;
            kill(-pid, SIGKILL);
        }
        close(fds[0]);
        if (r->out) r->out[r->out_len] = '\0';
        else r->out_len = 0;
    }
    return reap(r, pid, deadline);
}
