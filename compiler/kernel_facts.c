/*
 * kernel_facts.c — static facts about compiled kernels (docs/cost-model.md,
 * "Static kernel facts"), read from what NVRTC hands back; no CUDA here, only
 * text:
 *
 *   ptxas_parse_log   registers, spills, stack, static shared memory and
 *                     barriers per function from a `--ptxas-options=-v` log
 *                     (also the NVRTC gate's reader, tests/tools/nvrtc_gate.c)
 *   ptx_count_mix     a static count of instruction kinds per kernel in the PTX
 *                     (tensor-core MMA, fp32 FMA, half FMA, global loads by width,
 *                     128-bit global stores,
 *                     shared loads, barriers)
 *   sass_count_mix    the same from the SASS (`cuobjdump -sass` of the cubin): what
 *                     the GPU runs, incl. LDSM, cp.async, shuffles and local memory
 *   occupancy_blocks  resident blocks per SM from the per-SM limits of a device
 */
#include "shortc.h"

#include <stdlib.h>
#include <string.h>

/* The entry for name at arch in t, added when absent; NULL when the table is full. */
static KernelFacts *facts_get(KernelFacts *t, int *n, int max, const char *name, int arch) {
    for (int i = 0; i < *n; i++)
        if (t[i].arch == arch && strcmp(t[i].name, name) == 0) return &t[i];
    if (*n >= max) return NULL;
    KernelFacts *f = &t[(*n)++];
    memset(f, 0, sizeof *f);
    snprintf(f->name, sizeof f->name, "%s", name);
    f->arch = arch;
    return f;
}

/* Copies the text between the first pair of single quotes after `key` into out. */
static bool quoted_after(const char *line, const char *key, char *out, size_t cap) {
    const char *p = strstr(line, key);
    if (!p) return false;
    p = strchr(p + strlen(key), '\'');
    if (!p) return false;
    const char *e = strchr(p + 1, '\'');
    if (!e || (size_t)(e - p - 1) >= cap) return false;
    memcpy(out, p + 1, (size_t)(e - p - 1));
    out[e - p - 1] = '\0';
    return true;
}

/* The integer just before `unit` in line ("512 bytes smem" -> 512); -1 if absent. */
static int number_before(const char *line, const char *unit) {
    const char *p = strstr(line, unit);
    if (!p) return -1;
    const char *q = p;
    while (q > line && q[-1] == ' ') q--;
    const char *e = q;
    while (q > line && q[-1] >= '0' && q[-1] <= '9') q--;
    if (q == e) return -1;
    return atoi(q);
}

/* The next line of *text into buf (truncated to cap - 1); false at the end. */
static bool next_line(const char **text, char *buf, size_t cap) {
    const char *s = *text;
    if (!*s) return false;
    const char *nl = strchr(s, '\n');
    size_t n = nl ? (size_t)(nl - s) : strlen(s);
    size_t k = n < cap - 1 ? n : cap - 1;
    memcpy(buf, s, k);
    buf[k] = '\0';
    *text = nl ? nl + 1 : s + n;
    return true;
}

/* One ptxas line applied to the table; false on a line that cannot be read. */
static bool ptxas_line(const char *buf, int arch, KernelFacts *t, int *n, int max, KernelFacts **cur, int *entries) {
    char name[256];
    if (strstr(buf, "Compiling entry function")) {
        if (!quoted_after(buf, "Compiling entry function", name, sizeof name)) return false;
        if (!(*cur = facts_get(t, n, max, name, arch))) return false;
        (*cur)->entry = true;
        (*entries)++;
    } else if (strstr(buf, "Function properties for ")) {
        snprintf(name, sizeof name, "%s", strstr(buf, "Function properties for ") + strlen("Function properties for "));
        if (!(*cur = facts_get(t, n, max, name, arch))) return false;
    } else if (strstr(buf, "bytes stack frame")) {
        if (!*cur) return false;
        int st = number_before(buf, "bytes stack frame");
        int ss = number_before(buf, "bytes spill stores");
        int sl = number_before(buf, "bytes spill loads");
        if (st < 0 || ss < 0 || sl < 0) return false;
        (*cur)->stack = st;
        (*cur)->spill_st = ss;
        (*cur)->spill_ld = sl;
    } else if (strstr(buf, "Used ") && strstr(buf, " registers")) {
        if (!*cur) return false;
        (*cur)->regs = atoi(strstr(buf, "Used ") + 5);
        int sm = number_before(buf, "bytes smem");
        int bars = number_before(buf, "barriers");
        (*cur)->smem = sm < 0 ? 0 : sm;
        (*cur)->barriers = bars < 0 ? 0 : bars;
    }
    return true;
}

/*
 * Reads ptxas -v lines:
 *   ptxas info    : Compiling entry function 'K' for 'sm_80'
 *   ptxas info    : Function properties for K
 *   ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
 *   ptxas info    : Used 32 registers, used 1 barriers, 16 bytes smem, 384 bytes cmem[0]
 */
int ptxas_parse_log(const char *log, int arch, KernelFacts *t, int *n, int max) {
    KernelFacts *cur = NULL;
    int entries = 0;
    char buf[1024];
    while (next_line(&log, buf, sizeof buf)) {
        if (strncmp(buf, "ptxas", 5) != 0) continue;
        if (!ptxas_line(buf, arch, t, n, max, &cur, &entries)) return -1;
    }
    return entries;
}

/* ------------------------------------------------------------------ */
/* PTX instruction mix                                                  */
/* ------------------------------------------------------------------ */

/* Bits per element of a PTX type suffix (".f32" -> 32); 0 when unknown. */
static int type_bits(const char *s) {
    static const struct { const char *sfx; int bits; } types[] = {
        {".f32", 32}, {".b32", 32}, {".u32", 32}, {".s32", 32}, {".f64", 64}, {".b64", 64}, {".u64", 64},
        {".s64", 64}, {".f16", 16}, {".b16", 16}, {".u16", 16}, {".s16", 16}, {".b8", 8},   {".u8", 8},
        {".s8", 8},   {".b128", 128},
    };
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (strstr(s, types[i].sfx)) return types[i].bits;
    return 0;
}

/* One PTX instruction (the line's first word onwards) counted into f. */
static void count_instruction(const char *ins, KernelFacts *f) {
    if (strncmp(ins, "mma.sync", 8) == 0 || strncmp(ins, "wmma.mma", 8) == 0 || strncmp(ins, "wgmma", 5) == 0)
        f->mix.mma++;
    else if (strncmp(ins, "fma.rn.f32", 10) == 0) f->mix.ffma++;
    else if (strncmp(ins, "fma.rn.f16", 10) == 0 || strncmp(ins, "fma.rn.bf16", 11) == 0) f->mix.hfma++;
    else if (strncmp(ins, "bar.sync", 8) == 0 || strncmp(ins, "barrier.sync", 12) == 0) f->mix.bar++;
    else if (strncmp(ins, "ld.shared", 9) == 0) f->mix.ld_shared++;
    else if (strncmp(ins, "st.global", 9) == 0) {
        size_t k = strcspn(ins, " \t");
        char word[96];
        snprintf(word, sizeof word, "%.*s", (int)(k < sizeof word ? k : sizeof word - 1), ins);
        if (strstr(word, ".v4") && type_bits(word) >= 32) f->mix.st_global_128++;
    } else if (strncmp(ins, "ld.global", 9) == 0) {
        char word[96];
        size_t k = strcspn(ins, " \t");
        snprintf(word, sizeof word, "%.*s", (int)(k < sizeof word ? k : sizeof word - 1), ins);
        int vec = strstr(word, ".v4") ? 4 : strstr(word, ".v2") ? 2 : 1;
        int bits = vec * type_bits(word);
        if (bits >= 128) f->mix.ld_global_128++;
        else if (bits == 64) f->mix.ld_global_64++;
        else f->mix.ld_global_32++;
    }
}

void ptx_count_mix(const char *ptx, KernelFacts *t, int n) {
    KernelFacts *cur = NULL;
    char buf[1024];
    while (next_line(&ptx, buf, sizeof buf)) {
        const char *s = buf + strspn(buf, " \t");
        if (strncmp(s, ".entry ", 7) == 0 || strncmp(s, ".visible .entry ", 16) == 0) {
            const char *name = strstr(s, ".entry ") + 7;
            size_t len = strcspn(name, "( \t");
            cur = NULL;
            for (int i = 0; i < n; i++)
                if (t[i].entry && strlen(t[i].name) == len && strncmp(t[i].name, name, len) == 0) cur = &t[i];
        } else if (strstr(s, ".func ")) cur = NULL; /* device functions are not a kernel's own mix */
        else if (cur) {
            if (s[0] == '@') s += strcspn(s, " \t"), s += strspn(s, " \t"); /* predicate */
            count_instruction(s, cur);
        }
    }
}

/* ------------------------------------------------------------------ */
/* SASS instruction mix                                                 */
/* ------------------------------------------------------------------ */

/* True when the opcode `op` (NUL-terminated, modifiers included) has the dot-separated part `part`. */
static bool has_part(const char *op, const char *part) {
    size_t n = strlen(part);
    for (const char *p = strchr(op, '.'); p; p = strchr(p + 1, '.'))
        if (strncmp(p + 1, part, n) == 0 && (p[1 + n] == '.' || p[1 + n] == '\0')) return true;
    return false;
}

/* True when op is `base` or `base.`-something. */
static bool is_op(const char *op, const char *base) {
    size_t n = strlen(base);
    return strncmp(op, base, n) == 0 && (op[n] == '\0' || op[n] == '.');
}

/* One SASS instruction (opcode op of the listing line) counted into m. */
static void count_sass(const char *op, const char *line, SassMix *m) {
    if (is_op(op, "NOP")) return;
    m->total++;
    if (is_op(op, "HMMA") || is_op(op, "HGMMA") || is_op(op, "IMMA")) m->mma++;
    else if (is_op(op, "FFMA")) m->ffma++;
    else if (is_op(op, "HFMA2") && !strstr(line, "-RZ, RZ,")) m->hfma++; /* -RZ * RZ + c: a constant move */
    else if (is_op(op, "LDG")) {
        if (has_part(op, "128")) m->ld_global_128++;
        else if (has_part(op, "64")) m->ld_global_64++;
        else if (has_part(op, "U16") || has_part(op, "S16") || has_part(op, "U8") || has_part(op, "S8")) m->ld_global_16++;
        else m->ld_global_32++;
    } else if (is_op(op, "LDGSTS")) m->cp_async++;
    else if (is_op(op, "LDSM")) m->ldsm++;
    else if (is_op(op, "LDS")) m->ld_shared++;
    else if (is_op(op, "STS")) m->st_shared++;
    else if (is_op(op, "SHFL")) m->shfl++;
    else if (is_op(op, "BAR")) m->bar++;
    else if (is_op(op, "LDL")) m->ld_local++;
    else if (is_op(op, "STL")) m->st_local++;
}

/* The opcode of a SASS line into op: the line starts with the address as a
 * comment (hex digits between slash-star and star-slash), then an optional
 * predicate, then the opcode: `@!P0 LDG.E.128 R4, desc[UR4][R2.64] ;`.
 * False on other lines (encoding comments hold 0x..., not bare hex). */
static bool sass_opcode(const char *line, char *op, size_t cap) {
    const char *s = line + strspn(line, " \t");
    if (strncmp(s, "/*", 2) != 0) return false;
    const char *e = s + 2;
    while ((*e >= '0' && *e <= '9') || (*e >= 'a' && *e <= 'f')) e++;
    if (e == s + 2 || strncmp(e, "*/", 2) != 0) return false; /* an encoding comment, not an address */
    s = e + 2;
    s += strspn(s, " \t");
    if (*s == '@') s += strcspn(s, " \t"), s += strspn(s, " \t"); /* predicate */
    size_t k = strcspn(s, " \t;");
    if (k == 0 || k >= cap) return false;
    memcpy(op, s, k);
    op[k] = '\0';
    return true;
}

/* The address of a SASS line (the hex between slash-star and star-slash that starts it). */
static unsigned long sass_address(const char *line) { return strtoul(line + strspn(line, " \t") + 2, NULL, 16); }

/* The target of a branch line (its last `0x` operand before the `;`); false when it names none. */
static bool branch_target(const char *line, unsigned long *target) {
    const char *end = strchr(line, ';'), *hex = NULL;
    for (const char *p = strstr(line, "0x"); p && (!end || p < end); p = strstr(p + 2, "0x")) hex = p;
    if (!hex) return false;
    *target = strtoul(hex, NULL, 16);
    return true;
}

/* The main loop of one function's listing [text, end): among the spans [target, branch] of its backward
 * branches that hold an MMA, the one with the fewest instructions; its MMAs and other instructions into m. */
static void sass_main_loop(const char *text, const char *end, SassMix *m) {
    char buf[1024], op[64];
    int best = -1;
    const char *s = text;
    while (s < end && next_line(&s, buf, sizeof buf)) {
        unsigned long target;
        if (!sass_opcode(buf, op, sizeof op) || !is_op(op, "BRA") || !branch_target(buf, &target)) continue;
        unsigned long at = sass_address(buf);
        if (target > at) continue;
        int mma = 0, all = 0, local = 0;
        const char *r = text;
        while (r < end && next_line(&r, buf, sizeof buf)) {
            if (!sass_opcode(buf, op, sizeof op) || is_op(op, "NOP")) continue;
            unsigned long a = sass_address(buf);
            if (a < target || a > at) continue;
            all++;
            mma += is_op(op, "HMMA") || is_op(op, "HGMMA") || is_op(op, "IMMA");
            local += is_op(op, "LDL") || is_op(op, "STL");
        }
        if (mma > 0 && (best < 0 || all < best)) {
            best = all;
            m->loop_mma = mma;
            m->loop_other = all - mma;
            m->loop_local = local;
        }
    }
}

int sass_count_mix(const char *sass, int arch, KernelFacts *t, int n) {
    KernelFacts *cur = NULL;
    int found = 0, functions = 0;
    char buf[1024], op[64];
    const char *body = NULL; /* where cur's listing starts */
    for (const char *line = sass; next_line(&sass, buf, sizeof buf); line = sass) {
        const char *fn = strstr(buf, "Function : ");
        if (fn && cur) sass_main_loop(body, line, &cur->sass);
        if (fn) body = sass;
        if (fn) {
            fn += strlen("Function : ");
            size_t len = strcspn(fn, " \t\r");
            cur = NULL;
            functions++;
            for (int i = 0; i < n; i++)
                if (t[i].entry && t[i].arch == arch && strlen(t[i].name) == len && strncmp(t[i].name, fn, len) == 0)
                    cur = &t[i];
            if (cur) {
                memset(&cur->sass, 0, sizeof cur->sass);
                cur->has_sass = true;
                found++;
            }
        } else if (cur && sass_opcode(buf, op, sizeof op)) {
            if (strncmp(op, "BRA", 3) == 0 && strstr(buf, "BRA 0x") && cur->sass.total > 0) {
                /* the branch-to-self that pads the end of a function is not code */
                char self[32];
                const char *a = buf + strspn(buf, " \t") + 2;
                snprintf(self, sizeof self, "BRA 0x%x", (unsigned)strtoul(a, NULL, 16));
                if (strstr(buf, self)) continue;
            }
            count_sass(op, buf, &cur->sass);
        }
    }
    if (cur) sass_main_loop(body, sass, &cur->sass);
    return functions ? found : -1;
}

/* ------------------------------------------------------------------ */
/* Occupancy                                                            */
/* ------------------------------------------------------------------ */

int occupancy_blocks(const DeviceSpec *dev, int regs, int smem, int block_threads) {
    if (block_threads <= 0) return 0;
    int warps = (block_threads + 31) / 32;
    /* registers are allocated per warp in units of 256 */
    int regs_per_warp = ((regs > 0 ? regs : 1) * 32 + 255) / 256 * 256;
    int by_regs = dev->sm_regs / (regs_per_warp * warps);
    int by_warps = dev->sm_warps / warps;
    int by_smem = smem > 0 ? dev->sm_smem / smem : dev->sm_blocks;
    int b = dev->sm_blocks;
    if (by_regs < b) b = by_regs;
    if (by_warps < b) b = by_warps;
    if (by_smem < b) b = by_smem;
    return b;
}
