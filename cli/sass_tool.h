/* sass_tool.h — SASS of an NVRTC cubin through NVIDIA's cuobjdump (sass_tool.c). */
#ifndef SHORTC_SASS_TOOL_H
#define SHORTC_SASS_TOOL_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Finds cuobjdump: $SHORTC_CUOBJDUMP, else `cuobjdump` on $PATH, else the
 * toolkit's bin directory, else the pip wheel nvidia-cuda-cuobjdump as
 * .ci/setup installs it (/opt/nvidia-sass/nvidia/cu13/bin). Writes the path
 * to out; false (out empty) when there is none.
 */
bool sass_tool_find(char *out, size_t cap);

/* The sentence to print when sass_tool_find finds nothing. */
extern const char sass_tool_missing[];

/*
 * `cuobjdump -sass` of the cubin bytes (malloc'd, NUL-terminated), through a
 * temporary file that is removed again; NULL with a message in err.
 */
char *sass_disassemble(const char *tool, const void *cubin, size_t len, char *err, size_t errlen);

#endif
