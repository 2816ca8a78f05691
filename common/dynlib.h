/*
 * dynlib.h — libraries shortc loads at run time with dlopen instead of
 * linking them (dynlib.c): a generic "first of these names that loads", and
 * NVRTC's entry points, so neither `shortc` nor libshortrt has a DT_NEEDED
 * on libnvrtc and both start without it; NVRTC is loaded when a kernel is
 * first compiled for a GPU (the cuda backend, srt_nvrtc_compile,
 * `shortc report --kernels`). The runtime's driver and cuBLAS tables
 * (runtime/src/backend_cuda.c) are loaded the same way.
 *
 * Nothing here reads the environment: callers pass an override path (the
 * runtime and the CLI pass $SHORTC_LIBNVRTC, as the runtime does
 * $SHORTC_LIBCUDA for the driver).
 */
#ifndef SHORTC_DYNLIB_H
#define SHORTC_DYNLIB_H

#include <nvrtc.h>
#include <stddef.h>

/* dlopens (RTLD_NOW | RTLD_LOCAL) the first of names (n entries) that loads; NULL with the first failure in why. */
void *dynlib_open_first(const char *const *names, size_t n, char *why, size_t whylen);

/* The NVRTC entry points shortc uses (each the function of the same name in nvrtc.h). */
typedef struct NvrtcApi {
    char path[512];                                              /* what was loaded: a file or library name */
    __typeof__(&nvrtcVersion) version;                           /* nvrtcVersion */
    __typeof__(&nvrtcGetErrorString) getErrorString;             /* nvrtcGetErrorString */
    __typeof__(&nvrtcCreateProgram) createProgram;               /* nvrtcCreateProgram */
    __typeof__(&nvrtcCompileProgram) compileProgram;             /* nvrtcCompileProgram */
    __typeof__(&nvrtcDestroyProgram) destroyProgram;             /* nvrtcDestroyProgram */
    __typeof__(&nvrtcGetProgramLogSize) getProgramLogSize;       /* nvrtcGetProgramLogSize */
    __typeof__(&nvrtcGetProgramLog) getProgramLog;               /* nvrtcGetProgramLog */
    __typeof__(&nvrtcGetPTXSize) getPTXSize;                     /* nvrtcGetPTXSize */
    __typeof__(&nvrtcGetPTX) getPTX;                             /* nvrtcGetPTX */
    __typeof__(&nvrtcGetCUBINSize) getCUBINSize;                 /* nvrtcGetCUBINSize */
    __typeof__(&nvrtcGetCUBIN) getCUBIN;                         /* nvrtcGetCUBIN */
    __typeof__(&nvrtcGetNumSupportedArchs) getNumSupportedArchs; /* nvrtcGetNumSupportedArchs */
    __typeof__(&nvrtcGetSupportedArchs) getSupportedArchs;       /* nvrtcGetSupportedArchs */
} NvrtcApi;

/* The library name NVRTC is looked for under first (CUDA 13). */
#define DYNLIB_NVRTC_NAME "libnvrtc.so.13"

/*
 * NVRTC, loaded on the first successful call and kept for the process
 * (thread-safe). path (a file or a library name) is the only candidate when
 * non-empty; otherwise libnvrtc.so.13, then libnvrtc.so, through the dynamic
 * linker's search (LD_LIBRARY_PATH, the caller's runpath, ld.so.cache), then
 * in the CUDA toolkit's library directories (/usr/local/cuda/lib64,
 * /usr/local/cuda/targets/x86_64-linux/lib). NULL with a message naming the
 * library and where it was looked for in why when none loads or one lacks
 * an entry point; a later call tries again.
 */
const NvrtcApi *dynlib_nvrtc(const char *path, char *why, size_t whylen);

#endif
