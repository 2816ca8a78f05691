/* The artifact cache: miss, store, hit, corrupt entries (truncated, flipped byte, missing meta) counted and
   replaced by the rebuild, 4 processes racing on one key; only private directories are used (0700, owned,
   no symlink, not group/world-writable); an entry that is a FIFO or a link to /dev/zero is corrupt, not a
   hang; entries failing the ELF check are corrupt; eviction. Parents: each must be owned by root or the user
   and closed to group and others, or sticky above a private child; a symlink in a parent is resolved; once
   open, entries are reached through the directory's descriptor whatever its name leads to later. */
#include "rt_test.h"
#include "rt_driver.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* Only a private directory of this user is a cache: anything else could hold another user's shared object. */
static void test_private_dirs(const char *dir) {
    char p[400], link[400];
    RtCache c;
    snprintf(p, sizeof p, "%s/fresh/sub", dir);
    CHECK(rt_cache_init(&c, p) == 0);
    struct stat st;
    CHECK(stat(p, &st) == 0 && (st.st_mode & 0777) == 0700);
    snprintf(p, sizeof p, "%s/fresh", dir);
    CHECK(stat(p, &st) == 0 && (st.st_mode & 0777) == 0700);
    /* world-writable (another user made it, or planted files in it) */
    snprintf(p, sizeof p, "%s/open", dir);
    CHECK(mkdir(p, 0700) == 0 && chmod(p, 0777) == 0);
    CHECK(rt_cache_init(&c, p) != 0);
    CHECK_HAS(c.why, "writable by group or others");
    CHECK(chmod(p, 0770) == 0);
    CHECK(rt_cache_init(&c, p) != 0);
    CHECK(chmod(p, 0755) == 0);
    CHECK(rt_cache_init(&c, p) == 0);
    /* a symbolic link, even to a good directory */
    snprintf(link, sizeof link, "%s/link", dir);
    CHECK(symlink(p, link) == 0);
    CHECK(rt_cache_init(&c, link) != 0);
    CHECK_HAS(c.why, "symbolic link");
    /* owned by another user (only root can make one) */
    if (geteuid() == 0) {
        CHECK(chown(p, 65534, 65534) == 0);
        CHECK(rt_cache_init(&c, p) != 0);
        CHECK_HAS(c.why, "owned by another user");
        CHECK(chown(p, 0, 0) == 0);
    }
    /* rt_cache_open says why a directory was not used and falls back to the per-user one, checked too */
    char note[1600];
    CHECK(chmod(p, 0777) == 0);
    int r = rt_cache_open(&c, p, note, sizeof note);
    CHECK_HAS(note, "not used: it is writable by group or others");
    if (r == 0) CHECK(strstr(c.dir, "/tmp/shortc-cache-") == c.dir);
    CHECK(chmod(p, 0700) == 0);
    CHECK(rt_cache_open(&c, p, note, sizeof note) == 0 && note[0] == 0 && strcmp(c.dir, p) == 0);
}

/* Every parent up to "/" is checked: none may let another user rename the next component. */
static void test_parents(const char *dir) {
    char p[400], c1[700], want[600];
    RtCache c;
    /* group- or world-writable without the sticky bit: refused, naming the parent */
    snprintf(p, sizeof p, "%s/par", dir);
    CHECK(mkdir(p, 0700) == 0 && chmod(p, 0777) == 0);
    snprintf(c1, sizeof c1, "%s/cache", p);
    CHECK(rt_cache_init(&c, c1) != 0);
    snprintf(want, sizeof want, "parent directory %s is writable by group or others without the sticky bit", p);
    CHECK_HAS(c.why, want);
    CHECK(chmod(p, 0770) == 0);
    CHECK(rt_cache_init(&c, c1) != 0);
    CHECK_HAS(c.why, "without the sticky bit");
    /* sticky (like /tmp): others cannot rename our private child, so it is accepted */
    CHECK(chmod(p, 01777) == 0);
    CHECK(rt_cache_init(&c, c1) == 0);
    rt_cache_close(&c);
    /* but not with an open child below it, nor a sticky open one (others could add names in it) */
    snprintf(c1, sizeof c1, "%s/sub", p);
    CHECK(mkdir(c1, 0700) == 0 && chmod(c1, 01777) == 0);
    snprintf(want, sizeof want, "%s/sub/cache", p);
    CHECK(rt_cache_init(&c, want) != 0);
    CHECK_HAS(c.why, "inside another such directory");
    CHECK(chmod(c1, 0755) == 0);
    CHECK(rt_cache_init(&c, want) == 0);
    rt_cache_close(&c);
    /* owned by another user (only root can make one) */
    if (geteuid() == 0) {
        snprintf(p, sizeof p, "%s/theirs", dir);
        snprintf(c1, sizeof c1, "%s/cache", p);
        CHECK(mkdir(p, 0755) == 0 && mkdir(c1, 0700) == 0 && chown(p, 65534, 65534) == 0);
        CHECK(rt_cache_init(&c, c1) != 0);
        snprintf(want, sizeof want, "parent directory %s is owned by another user", p);
        CHECK_HAS(c.why, want);
    }
    /* a symbolic link in a parent is resolved before the walk; c.dir is the real path */
    snprintf(p, sizeof p, "%s/real", dir);
    CHECK(mkdir(p, 0755) == 0);
    snprintf(c1, sizeof c1, "%s/linkp", dir);
    CHECK(symlink(p, c1) == 0);
    snprintf(c1, sizeof c1, "%s/linkp/new/cache", dir);
    CHECK(rt_cache_init(&c, c1) == 0);
    snprintf(want, sizeof want, "%s/new/cache", p);
    CHECK(strcmp(c.dir, want) == 0);
    rt_cache_close(&c);
    /* open: swapping the directory for a symlink changes nothing, entries stay in the directory opened */
    char moved[600], other[600], path[1200];
    snprintf(other, sizeof other, "%s/other", dir);
    snprintf(moved, sizeof moved, "%s/moved", p);
    CHECK(mkdir(other, 0700) == 0);
    CHECK(rt_cache_init(&c, want) == 0);
    CHECK(rename(want, moved) == 0 && symlink(other, want) == 0);
    CHECK(rt_cache_store(&c, "k", "so", "abc", 3, path, sizeof path) == 0);
    CHECK(rt_cache_lookup(&c, "k", "so", path, sizeof path) == 1);
    snprintf(path, sizeof path, "%s/k.so", moved);
    CHECK(access(path, F_OK) == 0);
    snprintf(path, sizeof path, "%s/k.so", other);
    CHECK(access(path, F_OK) != 0);
    rt_cache_close(&c);
    CHECK(rt_cache_init(&c, want) != 0);
    CHECK_HAS(c.why, "it is a symbolic link");
    /* entries that are symbolic links are never followed */
    CHECK(rt_cache_init(&c, moved) == 0);
    snprintf(path, sizeof path, "%s/k.so", moved);
    snprintf(c1, sizeof c1, "%s/k2.so", other);
    CHECK(rename(path, c1) == 0 && symlink(c1, path) == 0);
    CHECK(rt_cache_lookup(&c, "k", "so", path, sizeof path) == 0 && c.corrupt == 1);
    rt_cache_close(&c);
}

/* The default directory: below an existing absolute $HOME other than "/", else the fallback (never
 * $HOME itself created); a relative directory is made absolute (the compiler runs elsewhere). */
static void test_default_and_relative(const char *dir) {
    char *old_cache = getenv("SHORTC_CACHE") ? strdup(getenv("SHORTC_CACHE")) : NULL;
    char *old_home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
    char got[1024], fallback[64], want[400];
    rt_fallback_cache_dir(fallback, sizeof fallback);
    unsetenv("SHORTC_CACHE");
    setenv("HOME", dir, 1);
    rt_default_cache_dir(got, sizeof got);
    snprintf(want, sizeof want, "%s/.cache/shortc", dir);
    CHECK(strcmp(got, want) == 0);
    const char *bad_homes[] = {"/", "//", "relative/home", "/nonexistent-home-of-shortc-tests"};
    for (int i = 0; i < 4; i++) {
        setenv("HOME", bad_homes[i], 1);
        rt_default_cache_dir(got, sizeof got);
        CHECK(strcmp(got, fallback) == 0);
    }
    /* relative: absolute against the working directory */
    char cwd[1024];
    RtCache c;
    CHECK(getcwd(cwd, sizeof cwd) != NULL && chdir(dir) == 0);
    CHECK(rt_cache_init(&c, "rel/cache") == 0);
    snprintf(want, sizeof want, "%s/rel/cache", dir);
    CHECK(strcmp(c.dir, want) == 0);
    CHECK(chdir(cwd) == 0);
    if (old_cache) setenv("SHORTC_CACHE", old_cache, 1);
    if (old_home) setenv("HOME", old_home, 1);
    else unsetenv("HOME");
    free(old_cache);
    free(old_home);
}

/* An entry (with a meta claiming a length) that is a FIFO or a link to /dev/zero is corrupt, never a hang. */
static void test_special_entries(const char *dir) {
    char p[400], path[1200], meta[1300];
    snprintf(p, sizeof p, "%s/special", dir);
    RtCache c;
    CHECK(rt_cache_init(&c, p) == 0);
    CHECK(rt_cache_store(&c, "fifo", "so", "abc", 3, path, sizeof path) == 0);
    CHECK(unlink(path) == 0 && mkfifo(path, 0600) == 0);
    CHECK(rt_cache_lookup(&c, "fifo", "so", path, sizeof path) == 0);
    CHECK(rt_cache_store(&c, "zero", "so", "abc", 3, path, sizeof path) == 0);
    CHECK(unlink(path) == 0 && symlink("/dev/zero", path) == 0);
    CHECK(rt_cache_lookup(&c, "zero", "so", path, sizeof path) == 0);
    /* a meta that is a FIFO */
    CHECK(rt_cache_store(&c, "mfifo", "so", "abc", 3, path, sizeof path) == 0);
    snprintf(meta, sizeof meta, "%s.meta", path);
    CHECK(unlink(meta) == 0 && mkfifo(meta, 0600) == 0);
    CHECK(rt_cache_lookup(&c, "mfifo", "so", path, sizeof path) == 0);
    CHECK(c.corrupt == 3);
    /* eviction removes both files */
    CHECK(rt_cache_store(&c, "gone", "so", "abc", 3, path, sizeof path) == 0);
    rt_cache_evict(&c, "gone", "so");
    snprintf(meta, sizeof meta, "%s.meta", path);
    CHECK(access(path, F_OK) != 0 && access(meta, F_OK) != 0);
    CHECK(rt_cache_lookup(&c, "gone", "so", path, sizeof path) == 0 && c.misses == 1);
}

static int host_elf(const void *d, size_t n) {
    return rt_elf_check(d, n, ((const Elf64_Ehdr *)d)->e_machine == EM_X86_64 ? EM_X86_64 : EM_AARCH64);
}

/* rt_elf_check: this test's own executable passes; cut short, or for another machine, it does not; an entry
 * whose hash matches but fails the check is corrupt and its bytes are not handed out. */
static void test_elf_check(const char *dir) {
    size_t n = 0;
    char *self = check_read_file("/proc/self/exe", &n);
    CHECK(self && n > sizeof(Elf64_Ehdr));
    if (!self) return;
    int machine = ((const Elf64_Ehdr *)self)->e_machine;
    CHECK(rt_elf_check(self, n, machine));
    CHECK(!rt_elf_check(self, n, EM_CUDA));
    CHECK(!rt_elf_check(self, n / 2, machine));
    CHECK(!rt_elf_check(self, 100, machine));
    char p[400], path[1200];
    snprintf(p, sizeof p, "%s/elf", dir);
    RtCache c;
    CHECK(rt_cache_init(&c, p) == 0);
    CHECK(rt_cache_store(&c, "half", "so", self, n / 2, path, sizeof path) == 0);
    void *data = NULL;
    size_t len = 0;
    CHECK(rt_cache_load(&c, "half", "so", host_elf, path, sizeof path, &data, &len) == 0 && data == NULL);
    CHECK(c.corrupt == 1);
    CHECK(rt_cache_store(&c, "whole", "so", self, n, path, sizeof path) == 0);
    CHECK(rt_cache_load(&c, "whole", "so", host_elf, path, sizeof path, &data, &len) == 1);
    CHECK(data && len == n && memcmp(data, self, n) == 0);
    free(data);
    free(self);
}

int main(void) {
    char dir[256];
    if (!rt_test_mkdtemp(dir, sizeof dir, "cache")) return check_done("test_cache");
    char sub[320];
    snprintf(sub, sizeof sub, "%s/a/b/", dir);
    RtCache c;
    CHECK(rt_cache_init(&c, sub) == 0);
    CHECK(strcmp(c.dir + strlen(c.dir) - 4, "/a/b") == 0);
    test_default_and_relative(dir);

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
    test_private_dirs(dir);
    test_parents(dir);
    test_special_entries(dir);
    test_elf_check(dir);
    rt_test_rmdir(dir);
    return check_done("test_cache");
}
