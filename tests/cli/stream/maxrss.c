/*
 * maxrss.c — runs a command and prints its peak resident set in KiB
 * (getrusage(RUSAGE_CHILDREN).ru_maxrss) on stdout; exits with its status
 * (tests/cli/stream.sh bounds `shortc run`'s memory with it).
 *
 *   maxrss COMMAND [ARGS...]
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: maxrss COMMAND [ARGS...]\n");
        return 2;
    }
    pid_t pid = fork();
    if (pid < 0) return 2;
    if (pid == 0) {
        execvp(argv[1], argv + 1);
        perror(argv[1]);
        _exit(127);
    }
    int status;
    if (waitpid(pid, &status, 0) < 0) return 2;
    struct rusage ru;
    if (getrusage(RUSAGE_CHILDREN, &ru) != 0) return 2;
    printf("%ld\n", ru.ru_maxrss);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
