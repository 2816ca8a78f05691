/* The shared object another user plants in tests/rt/race_cache.c: loading it leaves a mark. */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

__attribute__((constructor)) static void planted(void) {
    const char *mark = getenv("SHORTC_RACE_MARKER");
    int fd = mark ? open(mark, O_WRONLY | O_CREAT, 0644) : -1;
    if (fd >= 0) close(fd);
}
