/*
 * nvrtc_facts.c — compiles an emitted .cu with NVRTC for one architecture
 * and reads the static facts of its kernels: ptxas -v (registers, spills,
 * shared memory, barriers), the PTX instruction mix and, when cuobjdump is
 * there (cli/sass_tool.c), the SASS instruction mix of the cubin; all parsed
 * by compiler/kernel_facts.c. NVRTC runs on the host; no driver is loaded.
 * NVRTC itself is dlopened on first use (common/dynlib.c; $SHORTC_LIBNVRTC
 * names another), so the other commands never load it. The CUDA headers are
 * looked up in $SHORTC_CUDA_INCLUDE, else the toolkit the build found.
 */
#include "nvrtc_facts.h"
#include "dynlib.h"
#include "sass_tool.h"

#include <stdio.h>
#include <stdlib.h>

#ifndef SHORTC_CUDA_INCLUDE
#define SHORTC_CUDA_INCLUDE "/usr/local/cuda/include"
#endif

/* NVRTC, loaded on first use; NULL with a message naming the library in err. */
static const NvrtcApi *nvrtc(char *err, size_t errlen) { return dynlib_nvrtc(getenv("SHORTC_LIBNVRTC"), err, errlen); }

/* The program's log or PTX (malloc'd, NUL-terminated), NULL when NVRTC has none. */
static char *program_text(const NvrtcApi *nv, nvrtcProgram prog, bool ptx) {
    size_t len = 0;
    if ((ptx ? nv->getPTXSize(prog, &len) : nv->getProgramLogSize(prog, &len)) != NVRTC_SUCCESS) return NULL;
    char *s = malloc(len + 1);
    if (!s) return NULL;
    s[0] = '\0';
    if (len && (ptx ? nv->getPTX(prog, s) : nv->getProgramLog(prog, s)) != NVRTC_SUCCESS) {
        free(s);
        return NULL;
    }
    s[len] = '\0';
    return s;
}

/* The SASS mix of the program's cubin into t (n entries at arch); a note on why not otherwise. */
static void add_sass(const NvrtcApi *nv, nvrtcProgram prog, int arch, KernelFacts *t, int n, char *note, size_t notelen) {
    char tool[1024], err[1024];
    size_t len = 0;
    if (!sass_tool_find(tool, sizeof tool)) {
        snprintf(note, notelen, "SASS mix not shown: %s", sass_tool_missing);
        return;
    }
    char *cubin = nv->getCUBINSize(prog, &len) == NVRTC_SUCCESS && len ? malloc(len) : NULL;
    char *text = cubin && nv->getCUBIN(prog, cubin) == NVRTC_SUCCESS ? sass_disassemble(tool, cubin, len, err, sizeof err)
                                                                       : NULL;
    if (!cubin) snprintf(note, notelen, "SASS mix not shown: NVRTC gave no cubin for sm_%d", arch);
    else if (!text) snprintf(note, notelen, "SASS mix not shown: %s", err);
    else if (sass_count_mix(text, arch, t, n) < 0) snprintf(note, notelen, "SASS mix not shown: %s listed no function", tool);
    free(text);
    free(cubin);
}

/* The CUDA include directory NVRTC is given. */
static const char *cuda_include(void) {
    const char *inc = getenv("SHORTC_CUDA_INCLUDE");
    return inc && *inc ? inc : SHORTC_CUDA_INCLUDE;
}

void nvrtc_facts_config(int arch, char *out, size_t len) {
    int major = 0, minor = 0;
    char tool[1024];
    const NvrtcApi *nv = nvrtc(tool, sizeof tool);
    if (!nv || nv->version(&major, &minor) != NVRTC_SUCCESS) major = minor = -1;
    if (!sass_tool_find(tool, sizeof tool)) snprintf(tool, sizeof tool, "none");
    snprintf(out, len, "sm_%d\nnvrtc %d.%d\ninclude %s\ncuobjdump %s\n", arch, major, minor, cuda_include(), tool);
}

int nvrtc_kernel_facts(const char *cu, int arch, KernelFacts *t, int max, char *err, size_t errlen, char *note,
                       size_t notelen) {
    if (notelen) note[0] = '\0';
    char arch_opt[64], inc_opt[1100];
    snprintf(arch_opt, sizeof arch_opt, "--gpu-architecture=sm_%d", arch);
    snprintf(inc_opt, sizeof inc_opt, "-I%s", cuda_include());
    const char *opts[] = {arch_opt, inc_opt, "--ptxas-options=-v"};
    const NvrtcApi *nv = nvrtc(err, errlen);
    if (!nv) return -1;
    nvrtcProgram prog;
    nvrtcResult r = nv->createProgram(&prog, cu, "model.cu", 0, NULL, NULL);
    if (r != NVRTC_SUCCESS) {
        snprintf(err, errlen, "NVRTC: %s", nv->getErrorString(r));
        return -1;
    }
    r = nv->compileProgram(prog, 3, opts);
    char *log = program_text(nv, prog, false);
    char *ptx = r == NVRTC_SUCCESS ? program_text(nv, prog, true) : NULL;
    int n = 0, entries = -1;
    if (r != NVRTC_SUCCESS) snprintf(err, errlen, "NVRTC compile for sm_%d failed: %s\n%s", arch, nv->getErrorString(r), log ? log : "");
    else if (!log || !ptx) snprintf(err, errlen, "NVRTC: out of memory");
    else if ((entries = ptxas_parse_log(log, arch, t, &n, max)) <= 0) {
        snprintf(err, errlen, "NVRTC sm_%d: no kernel in the ptxas report (unexpected log format?)", arch);
        entries = -1;
    } else {
        ptx_count_mix(ptx, t, n);
        add_sass(nv, prog, arch, t, n, note, notelen);
    }
    free(log);
    free(ptx);
    nv->destroyProgram(&prog);
    return entries < 0 ? -1 : n;
}
