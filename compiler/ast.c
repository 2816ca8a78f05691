/*
 * ast.c — AST constructors (see ast.h). Arrays handed over as PtrVec are
 * copied into exact-size arena arrays, so the AST never points into a
 * parser's growable vector.
 */
#include "ast.h"

#include <string.h>

Loc loc_span(Loc a, Loc b) {
    if (a.file < 0) return b;
    if (b.file < 0 || b.file != a.file) return a;
    Loc r = a;
    if (b.begin < r.begin) r.begin = b.begin;
    if (b.end > r.end) r.end = b.end;
    return r;
}

static AstValue *new_value(Arena *a, AstValueKind kind, Loc loc) {
    AstValue *v = arena_alloc(a, sizeof *v);
    if (!v) return NULL;
    v->kind = kind;
    v->loc = loc;
    return v;
}

/* Copies a PtrVec's items into an exact-size arena array; returns the count. */
static int copy_vec(Arena *a, const PtrVec *src, void ***dst) {
    *dst = NULL;
    if (!src || src->len == 0) return 0;
    void **items = arena_alloc(a, sizeof(void *) * (size_t)src->len);
    if (!items) return 0;
    memcpy(items, src->items, sizeof(void *) * (size_t)src->len);
    *dst = items;
    return src->len;
}

AstValue *ast_int(Arena *a, Loc loc, long x) {
    AstValue *v = new_value(a, AV_INT, loc);
    if (v) {
        v->ival = x;
        v->num = (double)x;
    }
    return v;
}

AstValue *ast_num(Arena *a, Loc loc, double x) {
    AstValue *v = new_value(a, AV_NUM, loc);
    if (v) v->num = x;
    return v;
}

AstValue *ast_ident(Arena *a, Loc loc, const char *s) {
    AstValue *v = new_value(a, AV_IDENT, loc);
    if (v) v->str = s;
    return v;
}

AstValue *ast_string(Arena *a, Loc loc, const char *s) {
    AstValue *v = new_value(a, AV_STRING, loc);
    if (v) v->str = s;
    return v;
}

AstValue *ast_keyval(Arena *a, Loc loc, const char *key, AstValue *val) {
    AstValue *v = new_value(a, AV_KEYVAL, loc);
    if (v) {
        v->str = key;
        v->kv = val;
    }
    return v;
}

AstValue *ast_list(Arena *a, Loc loc, const PtrVec *items) {
    AstValue *v = new_value(a, AV_LIST, loc);
    if (v) v->nitems = copy_vec(a, items, (void ***)&v->items);
    return v;
}

AstStmt *ast_setting(Arena *a, Loc loc, const char *name, Loc name_loc, const PtrVec *args) {
    AstStmt *s = arena_alloc(a, sizeof *s);
    if (!s) return NULL;
    s->kind = ST_SETTING;
    s->loc = loc;
    s->name = name;
    s->name_loc = name_loc;
    s->nargs = copy_vec(a, args, (void ***)&s->args);
    return s;
}

AstStmt *ast_layer(Arena *a, Loc loc, const AstSelector *sel, const PtrVec *body) {
    AstStmt *s = arena_alloc(a, sizeof *s);
    if (!s) return NULL;
    s->kind = ST_LAYER;
    s->loc = loc;
    s->name_loc = LOC_NONE;
    if (sel) s->sel = *sel;
    s->nbody = copy_vec(a, body, (void ***)&s->body);
    return s;
}

AstSelector ast_selector(AstSelKind kind, Loc loc, long n, long from) {
    AstSelector s;
    memset(&s, 0, sizeof s);
    s.kind = kind;
    s.loc = loc;
    s.n = n;
    s.from = from;
    return s;
}

/* Arrays grow by doubling whenever the count reaches a power of two. */
static bool at_capacity(int n) { return n == 0 || (n & (n - 1)) == 0; }

void ast_selector_add_index(Arena *a, AstSelector *s, long index, Loc loc) {
    if (s->nindices >= (1 << 20)) return;   /* the grammar cannot produce more in practice */
    if (at_capacity(s->nindices)) {
        size_t cap = s->nindices ? (size_t)s->nindices * 2 : 1;
        long *ix = arena_alloc(a, sizeof(long) * cap);
        Loc *lx = arena_alloc(a, sizeof(Loc) * cap);
        if (!ix || !lx) return;
        if (s->nindices) {
            memcpy(ix, s->indices, sizeof(long) * (size_t)s->nindices);
            memcpy(lx, s->index_locs, sizeof(Loc) * (size_t)s->nindices);
        }
        s->indices = ix;
        s->index_locs = lx;
    }
    s->indices[s->nindices] = index;
    s->index_locs[s->nindices] = loc;
    s->nindices++;
}

AstModel *ast_model(Arena *a, Loc loc, const char *name, const char *parent, Loc parent_loc,
                    const PtrVec *stmts) {
    AstModel *m = arena_alloc(a, sizeof *m);
    if (!m) return NULL;
    m->name = name;
    m->loc = loc;
    m->parent = parent;
    m->parent_loc = parent_loc;
    m->nstmts = copy_vec(a, stmts, (void ***)&m->stmts);
    return m;
}

void ast_file_add_import(Arena *a, AstFile *f, const char *path, Loc loc) {
    if (at_capacity(f->nimports)) {
        size_t cap = f->nimports ? (size_t)f->nimports * 2 : 1;
        AstImport *im = arena_alloc(a, sizeof *im * cap);
        if (!im) return;
        if (f->nimports) memcpy(im, f->imports, sizeof *im * (size_t)f->nimports);
        f->imports = im;
    }
    f->imports[f->nimports].path = path;
    f->imports[f->nimports].loc = loc;
    f->nimports++;
}

void ast_file_add_model(Arena *a, AstFile *f, AstModel *m) {
    if (!m) return;
    if (at_capacity(f->nmodels)) {
        size_t cap = f->nmodels ? (size_t)f->nmodels * 2 : 1;
        AstModel **ms = arena_alloc(a, sizeof *ms * cap);
        if (!ms) return;
        if (f->nmodels) memcpy(ms, f->models, sizeof *ms * (size_t)f->nmodels);
        f->models = ms;
    }
    f->models[f->nmodels++] = m;
}
