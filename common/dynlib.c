/*
 * dynlib.c — libraries loaded at run time (dynlib.h): the first of a list of
 * names, and NVRTC's entry points, loaded once per process.
 */
#define _GNU_SOURCE
#include "dynlib.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

void *dynlib_open_first(const char *const *names, size_t n, char *why, size_t whylen) {
    void *lib = NULL;
    if (whylen) why[0] = '\0';
    for (size_t i = 0; i < n && !lib; i++) {
        lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        const char *e = lib ? NULL : dlerror();
        if (e && whylen && !why[0]) snprintf(why, whylen, "%s", e);
    }
    return lib;
}

/* ------------------------------------------------------------------ */
/* NVRTC                                                               */
/* ------------------------------------------------------------------ */

static NvrtcApi nvrtc;          /* the table, valid once nvrtc_loaded */
static bool nvrtc_loaded;       /* set under nvrtc_lock after a complete load */
static pthread_mutex_t nvrtc_lock = PTHREAD_MUTEX_INITIALIZER;

/* Where NVRTC is looked for without an override, in order. */
static const char *const nvrtc_names[] = {
    DYNLIB_NVRTC_NAME, "libnvrtc.so",
    "/usr/local/cuda/lib64/" DYNLIB_NVRTC_NAME, "/usr/local/cuda/lib64/libnvrtc.so",
    "/usr/local/cuda/targets/x86_64-linux/lib/" DYNLIB_NVRTC_NAME, "/usr/local/cuda/targets/x86_64-linux/lib/libnvrtc.so",
};

/* Fills nvrtc from lib; the name of the first missing entry point, or NULL. */
static const char *nvrtc_bind(void *lib) {
    const char *missing = NULL;
#define BIND(field, sym)                                     \
    do {                                                     \
        *(void **)&nvrtc.field = dlsym(lib, #sym);           \
        if (!nvrtc.field && !missing) missing = #sym;        \
    } while (0)
    BIND(version, nvrtcVersion);
    BIND(getErrorString, nvrtcGetErrorString);
    BIND(createProgram, nvrtcCreateProgram);
    BIND(compileProgram, nvrtcCompileProgram);
    BIND(destroyProgram, nvrtcDestroyProgram);
    BIND(getProgramLogSize, nvrtcGetProgramLogSize);
    BIND(getProgramLog, nvrtcGetProgramLog);
    BIND(getPTXSize, nvrtcGetPTXSize);
    BIND(getPTX, nvrtcGetPTX);
    BIND(getCUBINSize, nvrtcGetCUBINSize);
    BIND(getCUBIN, nvrtcGetCUBIN);
    BIND(getNumSupportedArchs, nvrtcGetNumSupportedArchs);
    BIND(getSupportedArchs, nvrtcGetSupportedArchs);
#undef BIND
    return missing;
}

/* Loads NVRTC into nvrtc (called under the lock); false with a message in why. */
static bool nvrtc_load(const char *path, char *why, size_t whylen) {
    bool given = path && *path;
    const char *const *names = given ? &path : nvrtc_names;
    size_t n = given ? 1 : sizeof nvrtc_names / sizeof *nvrtc_names;
    char err[512];
    void *lib = dynlib_open_first(names, n, err, sizeof err);
    if (!lib) {
        if (given) snprintf(why, whylen, "NVRTC (%s, as SHORTC_LIBNVRTC names it) cannot be loaded: %s", path, err);
        else snprintf(why, whylen, "NVRTC (" DYNLIB_NVRTC_NAME ") not found: %s; looked in the dynamic linker's search "
                      "path, /usr/local/cuda/lib64 and /usr/local/cuda/targets/x86_64-linux/lib; install CUDA 13's "
                      "NVRTC or set SHORTC_LIBNVRTC to the library's path", err);
        return false;
    }
    const char *missing = nvrtc_bind(lib);
    if (missing) {
        snprintf(why, whylen, "NVRTC (%s) lacks %s (too old an NVRTC?)", given ? path : DYNLIB_NVRTC_NAME, missing);
        dlclose(lib);
        return false;
    }
    /* the file it came from, for messages and tests */
    Dl_info info;
    const char *file = dladdr(*(void **)&nvrtc.version, &info) && info.dli_fname ? info.dli_fname : "libnvrtc";
    snprintf(nvrtc.path, sizeof nvrtc.path, "%s", file);
    return true;
}

const NvrtcApi *dynlib_nvrtc(const char *path, char *why, size_t whylen) {
    pthread_mutex_lock(&nvrtc_lock);
    bool ok = nvrtc_loaded || (nvrtc_loaded = nvrtc_load(path, why, whylen));
    pthread_mutex_unlock(&nvrtc_lock);
    return ok ? &nvrtc : NULL;
}
