/* The artifact cache: miss, store, hit, corrupt entries (truncated, flipped byte, missing meta) removed and counted. */
#include "rt_test.h"
#include "rt_driver.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(void) {
    char dir[256];
    if (!rt_test_mkdtemp(dir, sizeof dir, "cache")) return rt_test_done("test_cache");
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
    char *got = rt_test_read(path2, &n);
    CHECK(got && n == sizeof data && memcmp(got, data, n) == 0);
    free(got);

    /* flipped byte */
    rt_test_flip(path, 3);
    CHECK(rt_cache_lookup(&c, "k1", "bin", path2, sizeof path2) == 0);
    CHECK(c.corrupt == 1);
    CHECK(access(path, F_OK) != 0); /* removed */
    char meta[1300];
    snprintf(meta, sizeof meta, "%s.meta", path);
    CHECK(access(meta, F_OK) != 0);
    /* next lookup is a plain miss */
    CHECK(rt_cache_lookup(&c, "k1", "bin", path2, sizeof path2) == 0);
    CHECK(c.misses == 2 && c.corrupt == 1);

    /* truncated */
    CHECK(rt_cache_store(&c, "k1", "bin", data, sizeof data, path, sizeof path) == 0);
    CHECK(truncate(path, 5) == 0);
    CHECK(rt_cache_lookup(&c, "k1", "bin", path2, sizeof path2) == 0);
    CHECK(c.corrupt == 2);

    /* meta missing (crash between the renames) */
    CHECK(rt_cache_store(&c, "k1", "bin", data, sizeof data, path, sizeof path) == 0);
    CHECK(unlink(meta) == 0);
    CHECK(rt_cache_lookup(&c, "k1", "bin", path2, sizeof path2) == 0);
    CHECK(c.corrupt == 3);
    CHECK(access(path, F_OK) != 0);

    /* garbage meta */
    CHECK(rt_cache_store(&c, "k1", "bin", data, sizeof data, path, sizeof path) == 0);
    rt_test_write(meta, "hello", 5);
    CHECK(rt_cache_lookup(&c, "k1", "bin", path2, sizeof path2) == 0);
    CHECK(c.corrupt == 4);

    /* rebuilt entry hits again; an empty entry is valid */
    CHECK(rt_cache_store(&c, "k1", "bin", data, sizeof data, path, sizeof path) == 0);
    CHECK(rt_cache_lookup(&c, "k1", "bin", path2, sizeof path2) == 1);
    CHECK(rt_cache_store(&c, "empty", "so", "", 0, path, sizeof path) == 0);
    CHECK(rt_cache_lookup(&c, "empty", "so", path2, sizeof path2) == 1);
    CHECK(c.hits == 3);

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
    return rt_test_done("test_cache");
}
