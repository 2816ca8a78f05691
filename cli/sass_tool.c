/*
 * sass_tool.c — the SASS (what the GPU runs) of a cubin that NVRTC made,
 * through NVIDIA's cuobjdump. The toolkit image has none; NVIDIA publishes it
 * as the PyPI wheel nvidia-cuda-cuobjdump, which .ci/setup installs. Used by
 * `shortc compare --kernels` (cli/nvrtc_facts.c) and tests/tools/nvrtc_gate.
 * The text is counted by sass_count_mix (compiler/kernel_facts.c).
 */
#define _GNU_SOURCE /* mkstemps */
#include "sass_tool.h"

#include "proc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef SHORTC_CUDA_BIN
#define SHORTC_CUDA_BIN "/usr/local/cuda/bin"
#endif
/* Where .ci/setup installs the nvidia-cuda-cuobjdump wheel (pip --target). */
#define SASS_WHEEL_BIN "/opt/nvidia-sass/nvidia/cu13/bin"

const char sass_tool_missing[] =
    "no cuobjdump found ($SHORTC_CUOBJDUMP, $PATH, " SHORTC_CUDA_BIN ", " SASS_WHEEL_BIN
    "); install it with `bash .ci/setup` (PyPI wheel nvidia-cuda-cuobjdump)";

/* True when dir/name is an executable file; its path in out. */
static bool try_dir(const char *dir, size_t dlen, const char *name, char *out, size_t cap) {
    if (dlen == 0 || (size_t)snprintf(out, cap, "%.*s/%s", (int)dlen, dir, name) >= cap) return false;
    return access(out, X_OK) == 0;
}

bool sass_tool_find(char *out, size_t cap) {
    const char *env = getenv("SHORTC_CUOBJDUMP");
    if (env && *env) {
        bool ok = access(env, X_OK) == 0 && (size_t)snprintf(out, cap, "%s", env) < cap;
        if (!ok && cap) out[0] = '\0';
        return ok;
    }
    const char *path = getenv("PATH");
    for (const char *p = path; p && *p;) {
        size_t k = strcspn(p, ":");
        if (try_dir(p, k, "cuobjdump", out, cap)) return true;
        p += k + (p[k] == ':');
    }
    const char *dirs[] = {SHORTC_CUDA_BIN, SASS_WHEEL_BIN};
    for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++)
        if (try_dir(dirs[i], strlen(dirs[i]), "cuobjdump", out, cap)) return true;
    if (cap) out[0] = '\0';
    return false;
}

/* Writes the cubin to a new temporary file; its path in path (cap >= 64). */
static bool write_temp(const void *cubin, size_t len, char *path, size_t cap, char *err, size_t errlen) {
    const char *dir = getenv("TMPDIR");
    snprintf(path, cap, "%s/shortc-sass-XXXXXX.cubin", dir && *dir ? dir : "/tmp");
    int fd = mkstemps(path, 6);
    if (fd < 0) {
        snprintf(err, errlen, "cannot create a temporary file for the cubin: %s", strerror(errno));
        return false;
    }
    const char *p = cubin;
    size_t left = len;
    while (left > 0) {
        ssize_t w = write(fd, p, left);
        if (w <= 0) {
            snprintf(err, errlen, "cannot write the cubin to %s: %s", path, strerror(errno));
            close(fd);
            unlink(path);
            return false;
        }
        p += w;
        left -= (size_t)w;
    }
    close(fd);
    return true;
}

char *sass_disassemble(const char *tool, const void *cubin, size_t len, char *err, size_t errlen) {
    char path[1024];
    if (!write_temp(cubin, len, path, sizeof path, err, errlen)) return NULL;
    /* an argument vector: neither the tool's path nor $TMPDIR's ever meets a shell */
    const char *argv[] = {tool, "-sass", path, NULL};
    ProcRun r = {.argv = argv, .out_fd = -1, .out_max = (size_t)1 << 30, .timeout_ms = 600000};
    int rc = proc_run(&r);
    unlink(path);
    if (!r.out || rc != 0) {
        snprintf(err, errlen, "%s -sass failed (%s %d)%s%.500s", tool, r.timed_out ? "killed after 600 s, status" : "status",
                 rc, r.out ? ": " : "", r.out ? r.out : "");
        free(r.out);
        return NULL;
    }
    return r.out;
}
