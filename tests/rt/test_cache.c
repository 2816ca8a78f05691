/* The artifact cache: miss, store, hit, corrupt entries (truncated, flipped byte, missing meta) counted and
   replaced by the rebuild, and 4 processes racing on one key. */
#include "rt_test.h"
#include "rt_driver.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void) {
    char dir[256];
    if (!rt_test_mkdtemp(dir, sizeof dir, "cache")) return check_done("test_cache");
    char sub[320];
    snprintf(sub, sizeof sub, "%s/a/b/", dir);
    RtCache c;
    CHECK(rt_cache_init(&c, sub) == 0);
    CHECK(strcmp(c.dir + strlen(c.dir) - 4, "/a/b") == 0);

    char path[1200];
    const char data[] = "some artifact bytes\0with a nul";
    CHECK(rt_cache_lookup(&c, "k1", "bin", path, sizeof path) == 0);
    CHECK(c.misses == 1 && c.hits == 0 && c.corrupt == 0);
    CHECK(rt_cache_store(&c, "k1", "bin", data, sizeof data, path, sizeof path) == 0);
    CHECK(strstr(path, "/k1.bin") != NULL);
    char path2[1200];
    CHECK(rt_cache_lookup(&c, "k1", "bin", path2, sizeof path2) == 1);
    CHECK(strcmp(path, path2) == 0);
    CHECK(c.hits == 1);
    size_t n = 0;
    char *got = check_read_file(path2, &n);
    CHECK(got && n == sizeof data && memcmp(got, data, n) == 0);
    free(got);

    /* flipped byte: counted, left in place (another process may be using it), replaced by the rebuild */
    char meta[1300];
    snprintf(meta, sizeof meta, "%s.meta", path);
    rt_test_flip(path, 3);
    CHECK(rt_cache_lookup(&c, "k1", "bin", path2, sizeof path2) == 0);
    CHECK(c.corrupt == 1 && c.misses == 1);
    CHECK(access(path, F_OK) == 0 && access(meta, F_OK) == 0);
    CHECK(rt_cache_lookup(&c, "k1", "bin", path2, sizeof path2) == 0); /* still corrupt until rebuilt */
    CHECK(c.corrupt == 2);
    CHECK(rt_cache_store(&c, "k1", "bin", data, sizeof data, path, sizeof path) == 0);
    CHECK(rt_cache_lookup(&c, "k1", "bin", path2, sizeof path2) == 1);
    CHECK(c.hits == 2);

    /* truncated */
    CHECK(truncate(path, 5) == 0);
    CHECK(rt_cache_lookup(&c, "k1", "bin", path2, sizeof path2) == 0);
    CHECK(c.corrupt == 3);

    /* meta missing (crash between the renames, or another process's store in progress) */
    CHECK(rt_cache_store(&c, "k1", "bin", data, sizeof data, path, sizeof path) == 0);
    CHECK(unlink(meta) == 0);
    CHECK(rt_cache_lookup(&c, "k1", "bin", path2, sizeof path2) == 0);
    CHECK(c.corrupt == 4);
    CHECK(access(path, F_OK) == 0); /* not taken away */

    /* entry missing, meta present */
    CHECK(rt_cache_store(&c, "k1", "bin", data, sizeof data, path, sizeof path) == 0);
    CHECK(unlink(path) == 0);
    CHECK(rt_cache_lookup(&c, "k1", "bin", path2, sizeof path2) == 0);
    CHECK(c.corrupt == 5);

    /* garbage meta */
    CHECK(rt_cache_store(&c, "k1", "bin", data, sizeof data, path, sizeof path) == 0);
    rt_test_write(meta, "hello", 5);
    CHECK(rt_cache_lookup(&c, "k1", "bin", path2, sizeof path2) == 0);
    CHECK(c.corrupt == 6);

    /* rebuilt entry hits again; an empty entry is valid */
    CHECK(rt_cache_store(&c, "k1", "bin", data, sizeof data, path, sizeof path) == 0);
    CHECK(rt_cache_lookup(&c, "k1", "bin", path2, sizeof path2) == 1);
    CHECK(rt_cache_store(&c, "empty", "so", "", 0, path, sizeof path) == 0);
    CHECK(rt_cache_lookup(&c, "empty", "so", path2, sizeof path2) == 1);
    CHECK(c.hits == 4);

    /*
     * Concurrency: 4 processes each do 200 rounds of lookup, store on a miss
     * or corrupt entry, and a read of the entry they were given (standing in
     * for dlopen / cuModuleLoad), plus an unconditional store every other
     * round so renames race with lookups all the time. Every read must find
     * the complete artifact.
     */
    static char big[64 * 1024];
    for (size_t i = 0; i < sizeof big; i++) big[i] = (char)(i * 131 + 7);
    pid_t kids[4];
    for (int k = 0; k < 4; k++) {
        kids[k] = fork();
        if (kids[k] == 0) {
            RtCache cc;
            int bad = rt_cache_init(&cc, sub) != 0;
            char p1[1200];
            for (int r = 0; r < 200 && !bad; r++) {
                if (!rt_cache_lookup(&cc, "race", "so", p1, sizeof p1))
                    bad |= rt_cache_store(&cc, "race", "so", big, sizeof big, p1, sizeof p1) != 0;
                size_t m = 0;
                char *got2 = check_read_file(p1, &m);
                bad |= !got2 || m != sizeof big || memcmp(got2, big, m) != 0;
                free(got2);
                if (r % 2 == k % 2) bad |= rt_cache_store(&cc, "race", "so", big, sizeof big, p1, sizeof p1) != 0;
            }
            _exit(bad);
        }
        CHECK(kids[k] > 0);
    }
    for (int k = 0; k < 4; k++) {
        int status = 0;
        CHECK(kids[k] > 0 && waitpid(kids[k], &status, 0) == kids[k]);
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    CHECK(rt_cache_lookup(&c, "race", "so", path2, sizeof path2) == 1);

    /* no temporaries left behind */
    char cmd[600];
    snprintf(cmd, sizeof cmd, "ls -a %s | grep -c tmp > /dev/null", sub);
    CHECK(system(cmd) != 0);

    /* hash: FNV-1a reference values, chainable */
    CHECK(rt_hash64(RT_HASH_SEED, "", 0) == 0xcbf29ce484222325ull);
    CHECK(rt_hash64(RT_HASH_SEED, "a", 1) == 0xaf63dc4c8601ec8cull);
    CHECK(rt_hash64(rt_hash64(RT_HASH_SEED, "ab", 2), "c", 1) == rt_hash64(RT_HASH_SEED, "abc", 3));

    CHECK(rt_cache_init(&c, "") != 0);
    rt_test_rmdir(dir);
    return check_done("test_cache");
}
