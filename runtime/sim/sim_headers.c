/*
 * sim_headers.c — the simulator's headers (runtime/sim/shortsim_*.h) as the
 * library carries them. CMake embeds them at build time (templates/embed.cmake
 * into sim_headers_gen.c); sim_compile.c writes them next to every .cu it
 * compiles and hashes them into the cache key. No path to the source tree is
 * compiled in, so a relocated or installed libshortrt finds them always.
 */
#include "emit.h" /* ShortcTemplate, the layout embed.cmake generates */
#include "sim.h"

#include <fcntl.h>
#include <unistd.h>

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

int sim_headers_write(int dirfd) {
    for (int i = 0; i < shortsim_nheaders; i++)
        if (rt_write_at(dirfd, shortsim_headers[i].name, shortsim_headers[i].text, shortsim_headers[i].len) != 0) return -1;
    return 0;
}

void sim_headers_remove(int dirfd) {
    for (int i = 0; i < shortsim_nheaders; i++) unlinkat(dirfd, shortsim_headers[i].name, 0);
}
