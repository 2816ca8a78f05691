/*
 * sim_rewrite.c — the source pass the simulator applies to a .cu before the
 * host C++ compiler sees it (sim_compile.c), and the kernel scan the
 * `shortc sim` command uses (sim_run.c).
 *
 * CUDA's shared-memory declarations cannot be expressed by a prefix macro in
 * C++: `extern __shared__ float buf[];` names storage sized by the launch, and
 * a static `__shared__` array must live in per-block memory the simulator
 * owns (with a guard page after it) rather than in thread-local storage. So
 * each declaration of the forms
 *
 *   [extern] [qualifiers] __shared__ [qualifiers] TYPE NAME[dims]... ;
 *
 * (no initializer; several declarators `a[32], b[32]` are split into one
 * declaration each, sharing the type) is replaced, on the same line (line
 * numbers are kept), by the prelude's macros SHORTSIM_EXTERN_SHARED /
 * SHORTSIM_STATIC_SHARED (block scope) or their namespace-scope forms.
 * Static declarations are numbered in source order: number K is the K-th
 * slot of the block's static shared memory (shortsim_prelude.h). Anything
 * else keeps the prelude's `__shared__` macro (thread-local storage).
 * Comments, string and character literals and preprocessor lines are left
 * alone. Tokens are scanned, not parsed: the forms above are what CUDA code
 * uses; a declaration the pass does not recognise is left as written.
 */
#define _GNU_SOURCE
#include "sim.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RW_MAX_DEPTH 256
#define RW_MAX_TOKS 128

/* A token of the scanned source: [b, e) in the input. */
typedef struct RwTok {
    size_t b, e; /* byte range */
} RwTok;

/* Growing output buffer. */
typedef struct RwOut {
    char *s;    /* text (NUL-terminated while ok) */
    size_t n;   /* length */
    size_t cap; /* capacity */
    int oom;    /* an allocation failed */
} RwOut;

static void out_put(RwOut *o, const char *s, size_t n) {
    if (o->oom) return;
    if (o->n + n + 1 > o->cap) {
        size_t cap = (o->cap ? o->cap * 2 : 4096) + n;
        char *ns = realloc(o->s, cap);
        if (!ns) {
            o->oom = 1;
            return;
        }
        o->s = ns;
        o->cap = cap;
    }
    memcpy(o->s + o->n, s, n);
    o->n += n;
    o->s[o->n] = 0;
}
__attribute__((format(printf, 2, 3))) static void out_fmt(RwOut *o, const char *fmt, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (k < 0 || (size_t)k >= sizeof buf) o->oom = 1;
    else out_put(o, buf, (size_t)k);
}

static int is_id0(char c) { return isalpha((unsigned char)c) || c == '_'; }
static int is_id(char c) { return isalnum((unsigned char)c) || c == '_'; }

/* The end of the comment, literal or preprocessor line starting at i, or i
 * when none starts there. at_line_start: only blanks since the last newline. */
static size_t skip_inert(const char *s, size_t n, size_t i, int at_line_start) {
    if (s[i] == '/' && i + 1 < n && s[i + 1] == '/') {
        while (i < n && s[i] != '\n') i++;
        return i;
    }
    if (s[i] == '/' && i + 1 < n && s[i + 1] == '*') {
        const char *e = memmem(s + i + 2, n - i - 2, "*/", 2); /* s need not be NUL-terminated */
        return e ? (size_t)(e - s) + 2 : n;
    }
    if (s[i] == '"' || s[i] == '\'') {
        char q = s[i++];
        while (i < n && s[i] != q && s[i] != '\n') i += s[i] == '\\' && i + 1 < n ? 2 : 1;
        return i < n ? i + 1 : n;
    }
    if (s[i] == '#' && at_line_start) {
        while (i < n && s[i] != '\n') i += s[i] == '\\' && i + 1 < n ? 2 : 1;
        return i;
    }
    return i;
}

/* Next token at or after *pos (skipping blanks, comments, literals and
 * preprocessor lines); 0 at the end. */
static int next_tok(const char *s, size_t n, size_t *pos, RwTok *t) {
    size_t i = *pos;
    for (;;) {
        while (i < n && isspace((unsigned char)s[i])) i++;
        if (i >= n) return 0;
        size_t ls = i;
        while (ls > 0 && (s[ls - 1] == ' ' || s[ls - 1] == '\t')) ls--;
        size_t j = skip_inert(s, n, i, ls == 0 || s[ls - 1] == '\n');
        if (j == i) break;
        if (s[i] == '"' || s[i] == '\'') { /* literals are tokens */
            t->b = i;
            t->e = *pos = j;
            return 1;
        }
        i = j;
    }
    t->b = i;
    if (is_id(s[i])) { /* identifiers and numbers (pp-numbers: 1.5e-3f, 0x1F) */
        int num = !is_id0(s[i]);
        while (i < n && (is_id(s[i]) || (num && (s[i] == '.' || ((s[i] == '+' || s[i] == '-') &&
                                                                 (s[i - 1] == 'e' || s[i - 1] == 'E'))))))
            i++;
    } else if (s[i] == ':' && i + 1 < n && s[i + 1] == ':') {
        i += 2;
    } else {
        i++;
    }
    t->e = *pos = i;
    return 1;
}

static int tok_is(const char *s, const RwTok *t, const char *w) {
    size_t l = strlen(w);
    return t->e - t->b == l && memcmp(s + t->b, w, l) == 0;
}

/* One recognised declaration: token indexes into a RwTok array. */
typedef struct RwDecl {
    int is_extern;  /* extern __shared__ */
    int name;       /* the declarator's name */
    int dims;       /* first '[' of the dimensions, or -1 */
    int end;        /* the ';' */
    char align[32]; /* N of __align__(N) / aligned(N), or "" */
} RwDecl;

/* Parses the declaration tokens t[0..nt) (from its first token to ';');
 * 0 when it is not one of the recognised forms. */
static int parse_decl(const char *s, const RwTok *t, int nt, RwDecl *d) {
    memset(d, 0, sizeof *d);
    d->dims = -1;
    d->end = nt - 1;
    int depth = 0, last_id = -1, first_br = -1;
    for (int i = 0; i < nt - 1; i++) {
        char c = s[t[i].b];
        if (c == '(' || c == '[') {
            if (c == '[' && depth == 0 && first_br < 0) first_br = i;
            depth++;
        } else if (c == ')' || c == ']') {
            depth--;
        } else if (depth == 0 && (c == '=' || c == ',' || c == '{' || c == '}' || c == '&')) {
            return 0; /* initializer, several declarators (split_decls), a reference */
        } else if (depth == 0 && first_br < 0 && is_id0(c) && !tok_is(s, &t[i], "__shared__") &&
                   !tok_is(s, &t[i], "__align__") && !tok_is(s, &t[i], "__attribute__")) {
            last_id = i;
        }
        if ((tok_is(s, &t[i], "__align__") || tok_is(s, &t[i], "aligned")) && i + 2 < nt &&
            s[t[i + 1].b] == '(') {
            size_t l = t[i + 2].e - t[i + 2].b;
            if (l < sizeof d->align && isdigit((unsigned char)s[t[i + 2].b])) {
                memcpy(d->align, s + t[i + 2].b, l);
                d->align[l] = 0;
            }
        }
        if (tok_is(s, &t[i], "extern")) d->is_extern = 1;
        if (depth < 0) return 0;
    }
    if (depth != 0 || last_id < 0) return 0;
    d->name = last_id;
    d->dims = first_br;
    if (d->dims >= 0 && d->dims != d->name + 1) return 0; /* e.g. float (*p)[4] */
    if (d->is_extern && (d->dims < 0 || s[t[d->dims + 1].b] != ']')) return 0; /* extern needs [] */
    return 1;
}

/* Copies the type tokens of d (everything but storage class, __shared__,
 * alignment and the declarator) into o. */
static void put_type(RwOut *o, const char *s, const RwTok *t, const RwDecl *d) {
    for (int i = 0; i < d->name; i++) {
        if (tok_is(s, &t[i], "extern") || tok_is(s, &t[i], "static") || tok_is(s, &t[i], "__shared__")) continue;
        if (tok_is(s, &t[i], "__align__") || tok_is(s, &t[i], "__attribute__")) { /* skip its parentheses */
            int depth = 0;
            for (i++; i < d->name; i++) {
                if (s[t[i].b] == '(') depth++;
                else if (s[t[i].b] == ')' && --depth == 0) break;
            }
            continue;
        }
        out_put(o, " ", 1);
        out_put(o, s + t[i].b, t[i].e - t[i].b);
    }
}

/* The dimensions "[...][...]" of d (none for a scalar) into o. */
static void put_dims(RwOut *o, const char *s, const RwTok *t, const RwDecl *d) {
    if (d->dims < 0) return;
    for (int i = d->dims; i < d->end; i++) out_put(o, s + t[i].b, t[i].e - t[i].b);
}

/* Writes the replacement of declaration d. ns: at namespace scope. */
static void put_decl(RwOut *o, const char *s, const RwTok *t, const RwDecl *d, int ns, int index) {
    const char *name = s + t[d->name].b;
    int nl = (int)(t[d->name].e - t[d->name].b);
    if (d->is_extern) {
        out_fmt(o, "%s(%.*s,", ns ? "SHORTSIM_EXTERN_SHARED_NS" : "SHORTSIM_EXTERN_SHARED", nl, name);
        put_type(o, s, t, d);
        out_put(o, ");", 2);
        return;
    }
    out_fmt(o, "%s(%d, %s, %.*s, \"%.*s\",", ns ? "SHORTSIM_STATIC_SHARED_NS" : "SHORTSIM_STATIC_SHARED", index,
            d->align[0] ? d->align : "1", nl, name, nl, name);
    put_type(o, s, t, d);
    out_put(o, " ", 1);
    put_dims(o, s, t, d);
    out_put(o, ");", 2);
}

#define RW_MAX_DECLS 16 /* declarators in one declaration (`__shared__ float a[32], b[32];`) */

/* One declarator of a declaration, as a declaration of its own: the shared
 * type prefix, the declarator's tokens and the ';'. */
typedef struct RwSplit {
    RwTok toks[RW_MAX_TOKS]; /* the tokens */
    int nt;                  /* their count */
    RwDecl d;                /* parsed */
} RwSplit;

/* Splits the declaration t[0..nt) (ending in ';') at its top-level commas
 * into one declaration per declarator, each parsed by parse_decl; the count,
 * or 0 when any part is not a recognised form (a pointer or reference
 * declarator, an initializer: then the declaration is left alone). */
static int split_decls(const char *s, const RwTok *t, int nt, RwSplit *out) {
    int cuts[RW_MAX_DECLS + 1], ncut = 0, depth = 0;
    for (int i = 0; i < nt - 1; i++) {
        char c = s[t[i].b];
        depth += c == '(' || c == '[' ? 1 : c == ')' || c == ']' ? -1 : 0;
        if (depth == 0 && c == ',') {
            if (ncut == RW_MAX_DECLS - 1) return 0;
            cuts[ncut++] = i;
        }
    }
    cuts[ncut] = nt - 1; /* the ';' */
    /* the first declarator's own declaration gives the type prefix: tokens before its name */
    RwSplit *first = &out[0];
    first->nt = cuts[0] + 1;
    memcpy(first->toks, t, (size_t)cuts[0] * sizeof *t);
    first->toks[cuts[0]] = t[nt - 1];
    if (!parse_decl(s, first->toks, first->nt, &first->d)) return 0;
    int prefix = first->d.name;
    if (ncut > 0 && (prefix == 0 || !is_id(s[t[prefix - 1].e - 1]))) return 0; /* `float *a, b` */
    for (int k = 1; k <= ncut; k++) {
        RwSplit *sp = &out[k];
        int from = cuts[k - 1] + 1, len = cuts[k] - from;
        if (len <= 0 || prefix + len + 1 > RW_MAX_TOKS) return 0;
        memcpy(sp->toks, t, (size_t)prefix * sizeof *t);
        memcpy(sp->toks + prefix, t + from, (size_t)len * sizeof *t);
        sp->toks[prefix + len] = t[nt - 1];
        sp->nt = prefix + len + 1;
        if (!parse_decl(s, sp->toks, sp->nt, &sp->d) || sp->d.name != prefix) return 0;
    }
    return ncut + 1;
}

#define RW_PREV 16 /* tokens remembered before a '{' */

/* 1 when the tokens before a '{' (prev, newest first) open a namespace:
 * `namespace [A[::B...]] {` or `extern "C" {`. */
static int opens_namespace(const char *s, const RwTok *prev) {
    if (prev[0].e > prev[0].b && s[prev[0].b] == '"' && tok_is(s, &prev[1], "extern")) return 1;
    for (int i = 0; i < RW_PREV && prev[i].e > prev[i].b; i++) {
        if (tok_is(s, &prev[i], "namespace")) return 1;
        if (!is_id0(s[prev[i].b]) && !tok_is(s, &prev[i], "::")) return 0;
    }
    return 0;
}

static void push_prev(RwTok *prev, RwTok t) {
    memmove(prev + 1, prev, (RW_PREV - 1) * sizeof *prev);
    prev[0] = t;
}

#define RW_MAX_NS_EXTERN 16 /* namespace-scope `extern __shared__` names replaced in later uses */

/* A namespace-scope `extern __shared__ T name[];`: later uses of name become
 * `(shortsim::dyn_smem<T>())`, a plain pointer (reinterpret_cast, arithmetic
 * and indexing work as on the GPU; one object at namespace scope cannot stand
 * for every block's memory). */
typedef struct RwNsExtern {
    char name[64];  /* the declared name */
    char type[192]; /* its element type as written */
} RwNsExtern;

/* Records declaration d (a namespace-scope extern) in v; 0 when it does not fit (then left as the object form). */
static int note_ns_extern(RwNsExtern *v, int *nv, const char *s, const RwTok *t, const RwDecl *d) {
    size_t nl = t[d->name].e - t[d->name].b;
    if (*nv == RW_MAX_NS_EXTERN || nl >= sizeof v->name) return 0;
    RwOut ty = {0};
    put_type(&ty, s, t, d);
    int ok = !ty.oom && ty.s && ty.n < sizeof v->type;
    if (ok) {
        memcpy(v[*nv].name, s + t[d->name].b, nl);
        v[*nv].name[nl] = 0;
        memcpy(v[*nv].type, ty.s, ty.n + 1);
        (*nv)++;
    }
    free(ty.s);
    return ok;
}

/* The recorded extern that token t uses (not a member `x.name`, `x->name` or a qualified `a::name`), or NULL. */
static const RwNsExtern *uses_ns_extern(const char *s, const RwTok *t, const RwTok *prev, const RwNsExtern *v, int nv) {
    if (!is_id0(s[t->b]) || (prev[0].e > prev[0].b && (tok_is(s, &prev[0], ".") || tok_is(s, &prev[0], "::") ||
                                                       (tok_is(s, &prev[0], ">") && tok_is(s, &prev[1], "-")))))
        return NULL;
    for (int i = 0; i < nv; i++)
        if (t->e - t->b == strlen(v[i].name) && memcmp(s + t->b, v[i].name, t->e - t->b) == 0) return &v[i];
    return NULL;
}

/* Brace kinds: namespace scope (namespace, extern "C" blocks) or anything else. */
enum { RW_NS, RW_BLOCK };

char *sim_rewrite_shared(const char *s, size_t n, size_t *out_len, int *nstatic) {
    RwOut o = {0};
    RwSplit *parts = malloc(RW_MAX_DECLS * sizeof *parts); /* 34 KiB: not on the stack */
    RwNsExtern *ext = malloc(RW_MAX_NS_EXTERN * sizeof *ext);
    int next = 0;
    if (!parts || !ext) {
        free(parts);
        free(ext);
        return NULL;
    }
    unsigned char kinds[RW_MAX_DEPTH];
    int depth = 0, index = 0;
    RwTok prev[RW_PREV]; /* the last tokens, newest first */
    memset(prev, 0, sizeof prev);
    size_t copied = 0, pos = 0, decl_start = 0;
    RwTok t;
    while (next_tok(s, n, &pos, &t)) {
        char c = s[t.b];
        if (c == '{') {
            int ns = (depth == 0 || (depth <= RW_MAX_DEPTH && kinds[depth - 1] == RW_NS)) && opens_namespace(s, prev);
            if (depth < RW_MAX_DEPTH) kinds[depth] = ns ? RW_NS : RW_BLOCK;
            depth++;
        } else if (c == '}') {
            if (depth > 0) depth--;
        }
        if (c == ';' || c == '{' || c == '}') decl_start = t.e;
        if (tok_is(s, &t, "__shared__")) {
            /* collect the declaration's tokens from its start to ';' */
            RwTok toks[RW_MAX_TOKS];
            int nt = 0;
            size_t p2 = decl_start;
            RwTok u;
            while (nt < RW_MAX_TOKS && next_tok(s, n, &p2, &u)) {
                toks[nt++] = u;
                if (s[u.b] == ';' || s[u.b] == '{' || s[u.b] == '}') break;
            }
            int ns = depth == 0 || (depth <= RW_MAX_DEPTH && kinds[depth - 1] == RW_NS);
            int np = nt > 0 && s[toks[nt - 1].b] == ';' ? split_decls(s, toks, nt, parts) : 0;
            for (int k = 0; k < np; k++) /* a namespace-scope scalar stays thread-local */
                if (!parts[k].d.is_extern && parts[k].d.dims < 0 && ns) np = 0;
            if (np > 0) {
                out_put(&o, s + copied, toks[0].b - copied);
                for (int k = 0; k < np; k++) {
                    if (ns && parts[k].d.is_extern) note_ns_extern(ext, &next, s, parts[k].toks, &parts[k].d);
                    put_decl(&o, s, parts[k].toks, &parts[k].d, ns, parts[k].d.is_extern ? -1 : index);
                    if (!parts[k].d.is_extern) index++;
                }
                for (size_t i = toks[0].b; i < toks[nt - 1].e; i++) /* keep the line count */
                    if (s[i] == '\n') out_put(&o, "\n", 1);
                copied = pos = decl_start = toks[nt - 1].e;
                push_prev(prev, toks[nt - 1]);
                continue;
            }
        }
        const RwNsExtern *use = uses_ns_extern(s, &t, prev, ext, next);
        if (use) {
            out_put(&o, s + copied, t.b - copied);
            out_fmt(&o, "(shortsim::dyn_smem<%s>())", use->type);
            copied = t.e;
        }
        push_prev(prev, t);
    }
    out_put(&o, s + copied, n - copied);
    free(parts);
    free(ext);
    if (o.oom || !o.s) {
        free(o.s);
        return NULL;
    }
    if (out_len) *out_len = o.n;
    if (nstatic) *nstatic = index;
    return o.s;
}

/* Adds name (len bytes) after the namespace prefix qual to v, or counts one more body for it
 * (templ: it is a template kernel); -1 when out of memory. */
static int add_kernel(char ***v, int **defs, int *nv, const char *qual, const char *name, size_t len, int body,
                      int templ) {
    size_t ql = strlen(qual);
    for (int i = 0; i < *nv; i++) /* a declaration, then the definition; or an overload */
        if (strlen((*v)[i]) == ql + len && !memcmp((*v)[i], qual, ql) && !memcmp((*v)[i] + ql, name, len)) {
            (*defs)[i] += body;
            if (templ) (*defs)[i] |= SIM_KERNEL_TEMPLATE;
            return 0;
        }
    char *nm = malloc(ql + len + 1);
    char **nv2 = nm ? realloc(*v, (size_t)(*nv + 1) * sizeof **v) : NULL;
    if (nv2) *v = nv2;
    int *nd2 = nv2 ? realloc(*defs, (size_t)(*nv + 1) * sizeof **defs) : NULL;
    if (!nd2) {
        free(nm);
        return -1;
    }
    *defs = nd2;
    memcpy(nm, qual, ql);
    memcpy(nm + ql, name, len);
    nm[ql + len] = 0;
    (*v)[*nv] = nm;
    (*defs)[*nv] = body | (templ ? SIM_KERNEL_TEMPLATE : 0);
    (*nv)++;
    return 0;
}

/* Appends the name of the namespace that the '{' after prev opens ("" for extern "C") to qual. */
static void push_namespace(char *qual, size_t cap, const char *s, const RwTok *prev) {
    int k = 0; /* prev[k] is `namespace`; the tokens before it are names and "::" */
    while (k < RW_PREV && prev[k].e > prev[k].b && !tok_is(s, &prev[k], "namespace") &&
           (is_id0(s[prev[k].b]) || tok_is(s, &prev[k], "::")))
        k++;
    if (k == RW_PREV || !tok_is(s, &prev[k], "namespace")) return; /* extern "C" { */
    size_t ql = strlen(qual);
    if (k == 0) snprintf(qual + ql, cap - ql, "(anonymous namespace)::");
    for (int i = k - 1; i >= 0; i--) {
        ql = strlen(qual);
        snprintf(qual + ql, cap - ql, "%.*s%s", (int)(prev[i].e - prev[i].b), s + prev[i].b, i == 0 ? "::" : "");
    }
}

/* The parameter list's end: the token after the ')' matching the '(' just read. */
static int after_params(const char *s, size_t n, size_t *pos, RwTok *t) {
    int depth = 1;
    while (depth > 0 && next_tok(s, n, pos, t)) depth += s[t->b] == '(' ? 1 : s[t->b] == ')' ? -1 : 0;
    return next_tok(s, n, pos, t);
}

int sim_scan_kernels(const char *s, size_t n, char ***names, int **bodies) {
    char **v = NULL;
    int *defs = NULL;
    int nv = 0;
    size_t pos = 0;
    RwTok t;
    int after_global = 0; /* tokens since __global__ while looking for NAME ( */
    int templ = 0;        /* `template` seen since the last ';', '{' or '}' */
    RwTok last = {0, 0};
    RwTok prev[RW_PREV]; /* the last tokens, newest first (namespace names) */
    memset(prev, 0, sizeof prev);
    char qual[512] = "";          /* the enclosing namespaces, "a::b::" */
    unsigned short qlen[RW_MAX_DEPTH]; /* qual's length when each open brace was opened */
    int depth = 0;
    while (next_tok(s, n, &pos, &t)) {
        if (s[t.b] == '{') {
            if (depth < RW_MAX_DEPTH) qlen[depth] = (unsigned short)strlen(qual);
            if (opens_namespace(s, prev)) push_namespace(qual, sizeof qual, s, prev);
            depth++;
        } else if (s[t.b] == '}' && depth > 0 && --depth < RW_MAX_DEPTH) {
            qual[qlen[depth]] = 0;
        }
        push_prev(prev, t);
        if (tok_is(s, &t, "template")) templ = 1;
        else if (s[t.b] == ';' || s[t.b] == '{' || s[t.b] == '}') templ = 0;
        if (tok_is(s, &t, "__global__")) {
            after_global = 1;
            continue;
        }
        if (!after_global) continue;
        if (s[t.b] == '(' && (tok_is(s, &last, "__launch_bounds__") || tok_is(s, &last, "__attribute__") ||
                              tok_is(s, &last, "__align__"))) {
            after_global = 1; /* an annotation's parentheses, not the parameter list */
            int d = 1;
            while (d > 0 && next_tok(s, n, &pos, &t)) d += s[t.b] == '(' ? 1 : s[t.b] == ')' ? -1 : 0;
            last = t;
            continue;
        }
        if (s[t.b] == '(' && last.e > last.b && is_id0(s[last.b])) {
            RwTok end;
            int body = after_params(s, n, &pos, &end) && s[end.b] == '{';
            if (add_kernel(&v, &defs, &nv, qual, s + last.b, last.e - last.b, body, templ) != 0) {
                for (int i = 0; i < nv; i++) free(v[i]);
                free(v);
                free(defs);
                return -1;
            }
            after_global = 0;
            t = end; /* the '{' or ';' after the parameters: braces are counted */
            if (s[t.b] == '{') {
                if (depth < RW_MAX_DEPTH) qlen[depth] = (unsigned short)strlen(qual);
                depth++;
            }
            push_prev(prev, t);
        } else if (s[t.b] == ';' || s[t.b] == '{' || ++after_global > 64) {
            after_global = 0;
        }
        last = t;
    }
    *names = v;
    if (bodies) *bodies = defs;
    else free(defs);
    return nv;
}
