/*
 * sim_lines.c — source lines for simulator faults: the instruction that
 * faulted, mapped to file:line of the kernel's .cu through the kernel
 * object's line tables (checked builds compile with -g1, sim_compile.c) by
 * addr2line from binutils, which the host compiler needs anyway. Runs only
 * when a fault is reported; without line tables or addr2line the message
 * simply has no line.
 */
#define _GNU_SOURCE
#include "proc.h"
#include "sim.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Runs addr2line for offset off of the object file (no shell, at most 10 s); its output into out. An
 * object loaded through /proc/self/fd/N (sim_compile.c) is passed to it as descriptor 3 or 4 of its own. */
static int run_addr2line(const char *file, uintptr_t off, char *out, size_t len) {
    char addr[32], child_file[32];
    int fd = -1, child_fd = 3;
    if (sscanf(file, "/proc/self/fd/%d", &fd) == 1 && fd >= 0) {
        child_fd = fd == 3 ? 4 : 3;
        snprintf(child_file, sizeof child_file, "/proc/self/fd/%d", child_fd);
        file = child_file;
    } else fd = -1;
    snprintf(addr, sizeof addr, "0x%lx", (unsigned long)off);
    const char *argv[] = {"addr2line", "-f", "-i", "-C", "-e", file, addr, NULL};
    ProcRun r = {.argv = argv, .out_fd = -1, .stderr_null = true, .out_max = len - 1, .timeout_ms = 10000, /* pairs */
                 .pass_fd = fd >= 0 ? &fd : NULL, .pass_as = child_fd};
    int rc = proc_run(&r);
    snprintf(out, len, "%s", r.out ? r.out : "");
    free(r.out);
    return rc == 0 ? 0 : -1;
}

/* 1 when location loc (FILE:LINE as addr2line prints it) is in the kernel's
 * own sources: not the simulator's headers (shortsim_*) nor a system or
 * toolkit header (absolute paths; the build directory's are relative). */
static int user_location(const char *loc) {
    const char *slash = strrchr(loc, '/');
    const char *base = slash ? slash + 1 : loc;
    return loc[0] != '/' && loc[0] != '?' && strncmp(base, "shortsim_", 9) != 0;
}

void sim_source_line(const void *pc, char *buf, size_t len) {
    if (!len) return;
    buf[0] = 0;
    Dl_info info;
    if (!pc || !dladdr(pc, &info) || !info.dli_fname || !info.dli_fbase) return;
    char out[4096];
    /* pc is a return address or the faulting instruction itself: either lies in the statement */
    if (run_addr2line(info.dli_fname, (uintptr_t)pc - (uintptr_t)info.dli_fbase, out, sizeof out) != 0) return;
    /* (function, FILE:LINE) pairs from the innermost inlined frame out: the
     * first one in the kernel's sources (an access inside the prelude's
     * atomicAdd names the kernel's call), else the innermost */
    char *fn = NULL, *loc = NULL, *p = out;
    while (*p) {
        char *f = p, *nl = strchr(p, '\n');
        if (!nl) break;
        *nl = 0;
        char *l = nl + 1, *end = strchr(l, '\n');
        if (end) *end = 0;
        p = end ? end + 1 : l + strlen(l);
        if (!fn) fn = f, loc = l;
        if (user_location(l)) {
            fn = f, loc = l;
            break;
        }
    }
    if (!fn) return;
    /* a kernel inlined into its trampoline (shortsim_abi.h) is named as the kernel */
    static const char *const tramps[] = {"shortsim_plain_", "shortsim_tramp_"};
    for (int i = 0; i < 2; i++)
        if (strncmp(fn, tramps[i], strlen(tramps[i])) == 0 && fn[strlen(tramps[i])]) fn += strlen(tramps[i]);
    char *disc = strstr(loc, " (discriminator");
    if (disc) *disc = 0;
    const char *slash = strrchr(loc, '/');
    if (slash) loc = (char *)slash + 1;
    size_t ll = strlen(loc);
    int no_line = loc[0] == '?' || (ll >= 2 && (strcmp(loc + ll - 2, ":0") == 0 || strcmp(loc + ll - 2, ":?") == 0));
    if (no_line && fn[0] == '?') return;
    if (no_line) snprintf(buf, len, "in %s", fn); /* no line tables: unchecked builds */
    else snprintf(buf, len, "%s in %s", loc, fn);
}
