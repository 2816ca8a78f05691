/*
 * datadir.c — the installed data directory of `shortc` (datadir.h).
 *
 * Nothing of the source or build tree is compiled in: SHORTC_DATA_REL is
 * the path from the installed bindir to PREFIX/share/shortc (from
 * GNUInstallDirs), resolved against the running executable, so the whole
 * prefix can be moved.
 */
#define _GNU_SOURCE
#include "datadir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef SHORTC_DATA_REL
#define SHORTC_DATA_REL "../share/shortc"
#endif

/* The directory of the running executable into buf (no trailing '/'); false if unknown. */
static bool exe_dir(char *buf, size_t len) {
    ssize_t n = readlink("/proc/self/exe", buf, len - 1);
    if (n <= 0 || (size_t)n >= len - 1) return false;
    buf[n] = 0;
    char *slash = strrchr(buf, '/');
    if (!slash) return false;
    *slash = 0;
    return true;
}

static bool is_regular_file(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* rel inside the data directory into buf; false when it does not fit or there is no data directory. */
static bool data_join(const char *rel, char *buf, size_t len) {
    const char *env = getenv("SHORTC_DATA_DIR");
    int n;
    if (env && *env) {
        n = snprintf(buf, len, "%s/%s", env, rel);
    } else {
        char dir[4096];
        if (!exe_dir(dir, sizeof dir)) return false;
        n = snprintf(buf, len, "%s/%s/%s", dir, SHORTC_DATA_REL, rel);
    }
    return n > 0 && (size_t)n < len;
}

bool shortc_data_path(const char *rel, char *buf, size_t len) { return data_join(rel, buf, len) && is_regular_file(buf); }

bool shortc_data_dir(const char *rel, char *buf, size_t len) {
    struct stat st;
    return data_join(rel, buf, len) && stat(buf, &st) == 0 && S_ISDIR(st.st_mode);
}
