/*
 * sim_headers.c — the simulator's headers (runtime/sim/shortsim_*.h) as the
 * library carries them. CMake embeds them at build time (templates/embed.cmake
 * into sim_headers_gen.c); sim_compile.c writes them next to every .cu it
 * compiles and hashes them into the cache key. No path to the source tree is
 * compiled in, so a relocated or installed libshortrt finds them always.
 */
#include "emit.h" /* ShortcTemplate, the layout embed.cmake generates */
#include "sim.h"

#include <stdio.h>

/* The generated table (sim_headers_gen.c). */
extern const ShortcTemplate shortsim_headers[];
extern const int shortsim_nheaders;

uint64_t sim_headers_hash(uint64_t h) {
    for (int i = 0; i < shortsim_nheaders; i++) {
        h = rt_hash64(h, shortsim_headers[i].name, strlen(shortsim_headers[i].name) + 1);
        h = rt_hash64(h, shortsim_headers[i].text, shortsim_headers[i].len);
    }
    return h;
}

int sim_headers_write(const char *dir) {
    char path[2048];
    for (int i = 0; i < shortsim_nheaders; i++) {
        if (snprintf(path, sizeof path, "%s/%s", dir, shortsim_headers[i].name) >= (int)sizeof path) return -1;
        FILE *f = fopen(path, "wb");
        if (!f) return -1;
        size_t n = fwrite(shortsim_headers[i].text, 1, shortsim_headers[i].len, f);
        if (fclose(f) != 0 || n != shortsim_headers[i].len) return -1;
    }
    return 0;
}

void sim_headers_remove(const char *dir) {
    char path[2048];
    for (int i = 0; i < shortsim_nheaders; i++)
        if (snprintf(path, sizeof path, "%s/%s", dir, shortsim_headers[i].name) < (int)sizeof path) remove(path);
}
