/*
 * nvrtc_facts.c — compiles an emitted .cu with NVRTC for one architecture
 * and reads the static facts of its kernels: ptxas -v (registers, spills,
 * shared memory, barriers), the PTX instruction mix and, when cuobjdump is
 * there (cli/sass_tool.c), the SASS instruction mix of the cubin; all parsed
 * by compiler/kernel_facts.c. NVRTC runs on the host; no driver is loaded.
 * The CUDA headers are looked up in $SHORTC_CUDA_INCLUDE, else the toolkit
 * the build found.
 */
#include "nvrtc_facts.h"
#include "sass_tool.h"

#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef SHORTC_CUDA_INCLUDE
#define SHORTC_CUDA_INCLUDE "/usr/local/cuda/include"
#endif

/* The program's log or PTX (malloc'd, NUL-terminated), NULL when NVRTC has none. */
static char *program_text(nvrtcProgram prog, bool ptx) {
    size_t len = 0;
    if ((ptx ? nvrtcGetPTXSize(prog, &len) : nvrtcGetProgramLogSize(prog, &len)) != NVRTC_SUCCESS) return NULL;
    char *s = malloc(len + 1);
    if (!s) return NULL;
    s[0] = '\0';
    if (len && (ptx ? nvrtcGetPTX(prog, s) : nvrtcGetProgramLog(prog, s)) != NVRTC_SUCCESS) {
        free(s);
        return NULL;
    }
    s[len] = '\0';
    return s;
}

/* The SASS mix of the program's cubin into t (n entries at arch); a note on why not otherwise. */
static void add_sass(nvrtcProgram prog, int arch, KernelFacts *t, int n, char *note, size_t notelen) {
    char tool[1024], err[1024];
    size_t len = 0;
    if (!sass_tool_find(tool, sizeof tool)) {
        snprintf(note, notelen, "SASS mix not shown: %s", sass_tool_missing);
        return;
    }
    char *cubin = nvrtcGetCUBINSize(prog, &len) == NVRTC_SUCCESS && len ? malloc(len) : NULL;
    char *text = cubin && nvrtcGetCUBIN(prog, cubin) == NVRTC_SUCCESS ? sass_disassemble(tool, cubin, len, err, sizeof err)
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
    if (nvrtcVersion(&major, &minor) != NVRTC_SUCCESS) major = minor = -1;
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
    nvrtcProgram prog;
    nvrtcResult r = nvrtcCreateProgram(&prog, cu, "model.cu", 0, NULL, NULL);
    if (r != NVRTC_SUCCESS) {
        snprintf(err, errlen, "NVRTC: %s", nvrtcGetErrorString(r));
        return -1;
    }
    r = nvrtcCompileProgram(prog, 3, opts);
    char *log = program_text(prog, false);
    char *ptx = r == NVRTC_SUCCESS ? program_text(prog, true) : NULL;
    int n = 0, entries = -1;
    if (r != NVRTC_SUCCESS) snprintf(err, errlen, "NVRTC compile for sm_%d failed: %s\n%s", arch, nvrtcGetErrorString(r), log ? log : "");
    else if (!log || !ptx) snprintf(err, errlen, "NVRTC: out of memory");
    else if ((entries = ptxas_parse_log(log, arch, t, &n, max)) <= 0) {
        snprintf(err, errlen, "NVRTC sm_%d: no kernel in the ptxas report (unexpected log format?)", arch);
        entries = -1;
    } else {
        ptx_count_mix(ptx, t, n);
        add_sass(prog, arch, t, n, note, notelen);
    }
    free(log);
    free(ptx);
    nvrtcDestroyProgram(&prog);
    return entries < 0 ? -1 : n;
}
