/*
 * fuzz_file.h — for the libFuzzer targets whose reader takes a path: the
 * input written to one private file per process (removed at exit).
 */
#ifndef SHORTC_FUZZ_FILE_H
#define SHORTC_FUZZ_FILE_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static char fuzz_path[128]; /* the file of this process */

static void fuzz_file_remove(void) { unlink(fuzz_path); }

/* Writes size bytes of data to the process's file (suffix: its extension); returns its path. */
static const char *fuzz_file(const char *suffix, const void *data, size_t size) {
    if (!fuzz_path[0]) {
        const char *dir = getenv("TMPDIR");
        snprintf(fuzz_path, sizeof fuzz_path, "%s/shortc-fuzz-%ld.%s", dir && *dir ? dir : "/tmp", (long)getpid(),
                 suffix);
        atexit(fuzz_file_remove);
    }
    FILE *f = fopen(fuzz_path, "wb");
    if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f) != 0) abort();
    return fuzz_path;
}

#endif /* SHORTC_FUZZ_FILE_H */
