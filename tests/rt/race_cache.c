/*
 * race_cache.c SHORTC KERNEL.cu INPUT.npy PLANTED.so — the kernel cache
 * against a second user racing it (issue 26 item 2). As root, user nobody
 * (the attacker) swaps the victim's cache directory for a symbolic link to
 * a directory holding a planted object under the victim's key, with a
 * matching meta, by renameat2(RENAME_EXCHANGE) in a loop, while root (the
 * victim) runs `shortc sim` on that cache again and again. The planted
 * object's constructor must never run:
 *
 *   - open:   the cache's parent is world-writable without the sticky bit
 *             (the exchange succeeds all the time): the directory is refused
 *             and the run uses the fallback cache;
 *   - sticky: the parent is world-writable and sticky (like /tmp): the
 *             kernel refuses every exchange, and the victim uses its cache.
 *
 * Without root (no second user) the test is skipped (exit 77).
 */
#define _GNU_SOURCE
#include "rt_test.h"
#include "rt_driver.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define RUNS 25

static const char *shortc, *kernel, *input, *planted;
static char base[64];

/* Runs `shortc sim` as the victim on cache, with the planted object's marker; its exit status. */
static int victim_run(const char *cache, const char *log) {
    char env_cache[600], env_mark[200], arg[400];
    snprintf(env_cache, sizeof env_cache, "SHORTC_CACHE=%s", cache);
    snprintf(env_mark, sizeof env_mark, "SHORTC_RACE_MARKER=%s/pwned", base);
    snprintf(arg, sizeof arg, "buf:%s", input);
    char *envp[] = {env_cache, env_mark, "PATH=/usr/local/bin:/usr/bin:/bin", NULL};
    const char *argv[] = {shortc, "sim", kernel, "--kernel", "bump", "--grid", "1", "--block", "4", "--arg", arg, NULL};
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    pid_t pid;
    int rc = posix_spawn(&pid, shortc, &fa, NULL, (char *const *)argv, envp);
    posix_spawn_file_actions_destroy(&fa);
    int st = 0;
    if (rc != 0 || waitpid(pid, &st, 0) != pid) return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/* The name of the one sim-*.so entry in dir (the victim's key). */
static int find_entry(const char *dir, char *name, size_t len) {
    DIR *d = opendir(dir);
    struct dirent *e;
    int found = 0;
    while (d && (e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);
        if (strncmp(e->d_name, "sim-", 4) == 0 && n > 3 && strcmp(e->d_name + n - 3, ".so") == 0) {
            snprintf(name, len, "%.*s", (int)(n - 3), e->d_name);
            found = 1;
        }
    }
    if (d) closedir(d);
    return found;
}

static volatile sig_atomic_t stop;
static void on_term(int sig) { (void)sig; stop = 1; }

/* The attacker: as uid/gid nobody, plants a link to evil next to the victim's cache and exchanges the
 * two names until SIGTERM; writes the number of exchanges that succeeded to out. */
static void attacker(const struct passwd *pw, const char *dir, const char *evil, int out) {
    signal(SIGTERM, on_term);
    sigset_t term;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    sigprocmask(SIG_UNBLOCK, &term, NULL); /* blocked by play() until the handler is in place */
    if (setgroups(0, NULL) != 0 || setgid(pw->pw_gid) != 0 || setuid(pw->pw_uid) != 0) _exit(2);
    char cache[300], link[300];
    snprintf(cache, sizeof cache, "%s/cache", dir);
    snprintf(link, sizeof link, "%s/evil", dir);
    if (symlink(evil, link) != 0) _exit(3);
    long swaps = 0;
    while (!stop)
        if (renameat2(AT_FDCWD, cache, AT_FDCWD, link, RENAME_EXCHANGE) == 0) swaps++;
    if (write(out, &swaps, sizeof swaps) != sizeof swaps) _exit(4);
    _exit(0);
}

/* One scenario: the victim's cache below a parent of the given mode, the attacker racing it.
 * Returns the attacker's successful exchanges (-1 on a setup failure). */
static long play(const struct passwd *pw, const char *tag, mode_t mode, const char *evil) {
    char dir[200], cache[300], log[300], mark[200];
    snprintf(dir, sizeof dir, "%s/%s", base, tag);
    snprintf(cache, sizeof cache, "%s/cache", dir);
    snprintf(log, sizeof log, "%s/%s.log", base, tag);
    snprintf(mark, sizeof mark, "%s/pwned", base);
    CHECK(mkdir(dir, 0700) == 0 && chmod(dir, mode) == 0 && mkdir(cache, 0700) == 0);
    int fds[2];
    CHECK(pipe(fds) == 0);
    sigset_t term, old;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    sigprocmask(SIG_BLOCK, &term, &old);
    pid_t pid = fork();
    if (pid == 0) attacker(pw, dir, evil, fds[1]);
    sigprocmask(SIG_SETMASK, &old, NULL);
    close(fds[1]);
    int failed_runs = 0;
    for (int i = 0; i < RUNS && access(mark, F_OK) != 0; i++) failed_runs += victim_run(cache, log) != 0;
    kill(pid, SIGTERM);
    long swaps = -1;
    int st = 0;
    CHECK(read(fds[0], &swaps, sizeof swaps) == sizeof swaps);
    CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
    close(fds[0]);
    if (access(mark, F_OK) == 0) {
        fprintf(stderr, "%s: the planted object ran as the victim (see %s)\n", tag, log);
        check_failures++;
    }
    CHECK(failed_runs == 0);
    printf("%s: %d runs, %ld exchanges by the attacker\n", tag, RUNS, swaps);
    return swaps;
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: race_cache SHORTC KERNEL.cu INPUT.npy PLANTED.so\n");
        return 2;
    }
    shortc = argv[1], kernel = argv[2], input = argv[3], planted = argv[4];
    struct passwd *pw = getpwnam("nobody");
    if (geteuid() != 0 || !pw || pw->pw_uid == 0) {
        printf("skipped: playing the race needs root and a second user (nobody)\n");
        return 77;
    }
    snprintf(base, sizeof base, "/tmp/shortc_race.XXXXXX");
    CHECK(mkdtemp(base) != NULL && chmod(base, 0755) == 0);
    /* the victim's key: one run into a private cache */
    char ref[200], key[128], evil[200], log[200], path[1200];
    snprintf(ref, sizeof ref, "%s/ref", base);
    snprintf(log, sizeof log, "%s/ref.log", base);
    CHECK(victim_run(ref, log) == 0);
    CHECK(find_entry(ref, key, sizeof key));
    /* the planted pair under that key, with a matching meta, in a directory the link points to */
    size_t n = 0;
    char *so = check_read_file(planted, &n);
    RtCache c;
    snprintf(evil, sizeof evil, "%s/evil", base);
    CHECK(so && rt_cache_init(&c, evil) == 0 && rt_cache_store(&c, key, "so", so, n, path, sizeof path) == 0);
    rt_cache_close(&c);
    free(so);
    CHECK(chmod(evil, 0755) == 0);
    CHECK(play(pw, "open", 0777, evil) > 0); /* the race was really played */
    CHECK(play(pw, "sticky", 01777, evil) == 0); /* the kernel refused every exchange */
    snprintf(path, sizeof path, "%s/sticky/cache/%s.so", base, key);
    CHECK(access(path, F_OK) == 0); /* ... and the victim used its cache there */
    if (check_failures == 0) {
        char cmd[200];
        snprintf(cmd, sizeof cmd, "rm -rf %s", base);
        CHECK(system(cmd) == 0);
    }
    return check_done("race_cache");
}
