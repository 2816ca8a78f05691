/*
 * facts_cache.c — the static kernel facts of `shortc compare/report
 * --kernels` kept in the kernel cache (srt_cache_text_get/put, shortrt.h),
 * so that a second call on the same model does not run NVRTC and cuobjdump
 * again. The key is the .cu text and nvrtc_facts_config; the entry, one
 * ".facts" text file next to the cubins, is
 *
 *     shortc-facts 1
 *     n <functions>
 *     note <the SASS note, or nothing>
 *     f <name> <entry> <arch> <regs> ... <PTX mix> <has_sass> <SASS mix>   (n lines)
 *     end
 *
 * Parsing is strict: a line that does not read whole, a count that
 * disagrees or a missing "end" makes the entry count as a miss.
 */
#include "facts_cache.h"
#include "nvrtc_facts.h"
#include "shortrt.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FACTS_MAGIC "shortc-facts 1\n"

/* The int fields of KernelFacts after its name and entry flag, in file order. */
static const size_t int_fields[] = {
    offsetof(KernelFacts, arch), offsetof(KernelFacts, regs), offsetof(KernelFacts, smem),
    offsetof(KernelFacts, barriers), offsetof(KernelFacts, spill_st), offsetof(KernelFacts, spill_ld),
    offsetof(KernelFacts, stack), offsetof(KernelFacts, mix.mma), offsetof(KernelFacts, mix.ffma),
    offsetof(KernelFacts, mix.hfma), offsetof(KernelFacts, mix.ld_global_32), offsetof(KernelFacts, mix.ld_global_64),
    offsetof(KernelFacts, mix.ld_global_128), offsetof(KernelFacts, mix.st_global_128),
    offsetof(KernelFacts, mix.ld_shared), offsetof(KernelFacts, mix.bar), offsetof(KernelFacts, sass.total),
    offsetof(KernelFacts, sass.mma), offsetof(KernelFacts, sass.ffma), offsetof(KernelFacts, sass.hfma),
    offsetof(KernelFacts, sass.ld_global_16), offsetof(KernelFacts, sass.ld_global_32),
    offsetof(KernelFacts, sass.ld_global_64), offsetof(KernelFacts, sass.ld_global_128),
    offsetof(KernelFacts, sass.cp_async), offsetof(KernelFacts, sass.ld_shared), offsetof(KernelFacts, sass.ldsm),
    offsetof(KernelFacts, sass.st_shared), offsetof(KernelFacts, sass.shfl), offsetof(KernelFacts, sass.bar),
    offsetof(KernelFacts, sass.ld_local), offsetof(KernelFacts, sass.st_local),
};
#define NINT (sizeof int_fields / sizeof int_fields[0])

static int *field(KernelFacts *f, size_t i) { return (int *)((char *)f + int_fields[i]); }

/* The entry's text (malloc'd), NULL when out of memory or when the facts do not fit its format. */
static char *facts_text(const KernelFacts *t, int n, const char *note) {
    size_t cap = 64 + strlen(note) + (size_t)n * (300 + NINT * 12);
    char *s = malloc(cap);
    if (!s || strchr(note, '\n')) {
        free(s);
        return NULL;
    }
    size_t at = (size_t)snprintf(s, cap, FACTS_MAGIC "n %d\nnote %s\n", n, note);
    for (int i = 0; i < n; i++) {
        KernelFacts f = t[i];
        if (!f.name[0] || strpbrk(f.name, " \t\n")) {
            free(s);
            return NULL;
        }
        at += (size_t)snprintf(s + at, cap - at, "f %s %d %d", f.name, (int)f.entry, (int)f.has_sass);
        for (size_t k = 0; k < NINT; k++) at += (size_t)snprintf(s + at, cap - at, " %d", *field(&f, k));
        at += (size_t)snprintf(s + at, cap - at, "\n");
    }
    snprintf(s + at, cap - at, "end\n");
    return s;
}

/* One "f ..." line into f; false unless it reads whole. */
static bool parse_line(const char *line, size_t len, KernelFacts *f) {
    char buf[1024];
    if (len >= sizeof buf) return false;
    memcpy(buf, line, len);
    buf[len] = '\0';
    memset(f, 0, sizeof *f);
    int entry, has_sass, used = 0;
    if (sscanf(buf, "f %255s %d %d%n", f->name, &entry, &has_sass, &used) != 3 || entry < 0 || entry > 1 ||
        has_sass < 0 || has_sass > 1)
        return false;
    f->entry = entry;
    f->has_sass = has_sass;
    for (size_t k = 0; k < NINT; k++) {
        int more = 0;
        if (sscanf(buf + used, " %d%n", field(f, k), &more) != 1) return false;
        used += more;
    }
    return buf[used] == '\0';
}

/* The facts of an entry's text into t (room for max) and note; the count, or -1 when it does not read. */
static int parse_facts(const char *s, KernelFacts *t, int max, char *note, size_t notelen) {
    int n = -1, used = 0;
    if (strncmp(s, FACTS_MAGIC, strlen(FACTS_MAGIC)) != 0) return -1;
    s += strlen(FACTS_MAGIC);
    if (sscanf(s, "n %d\n%n", &n, &used) != 1 || used == 0 || n < 0 || n > max || strncmp(s + used, "note ", 5) != 0)
        return -1;
    s += used + 5;
    const char *eol = strchr(s, '\n');
    if (!eol) return -1;
    snprintf(note, notelen, "%.*s", (int)(eol - s), s);
    s = eol + 1;
    for (int i = 0; i < n; i++) {
        eol = strchr(s, '\n');
        if (!eol || !parse_line(s, (size_t)(eol - s), &t[i])) return -1;
        s = eol + 1;
    }
    return strcmp(s, "end\n") == 0 ? n : -1;
}

/* The cache key: the facts' configuration and the source (malloc'd, *len bytes), NULL when out of memory. */
static char *facts_key(const char *cu, int arch, size_t *len) {
    char config[2048];
    nvrtc_facts_config(arch, config, sizeof config);
    size_t a = strlen(config), b = strlen(cu);
    char *key = malloc(a + b);
    if (!key) return NULL;
    memcpy(key, config, a);
    memcpy(key + a, cu, b);
    *len = a + b;
    return key;
}

int cached_kernel_facts(const char *cu, int arch, KernelFacts *t, int max, char *err, size_t errlen, char *note,
                        size_t notelen, bool *cached) {
    *cached = false;
    srt_context *ctx = NULL;
    size_t keylen = 0, len = 0;
    char *key = srt_context_create(&ctx, NULL, NULL) == SRT_OK ? facts_key(cu, arch, &keylen) : NULL;
    char *text = NULL;
    int n = -1;
    if (key && srt_cache_text_get(ctx, NULL, key, keylen, "facts", &text, &len) == SRT_OK && text &&
        strlen(text) == len)
        n = parse_facts(text, t, max, note, notelen);
    if (ctx) srt_free(ctx, text);
    *cached = n >= 0;
    if (n < 0) {
        memset(t, 0, (size_t)max * sizeof *t);
        n = nvrtc_kernel_facts(cu, arch, t, max, err, errlen, note, notelen);
        char *out = n >= 0 && key ? facts_text(t, n, note) : NULL;
        if (out) srt_cache_text_put(ctx, NULL, key, keylen, "facts", out, strlen(out)); /* a failed store costs the next call a compile */
        free(out);
    }
    free(key);
    srt_context_destroy(ctx);
    return n;
}
