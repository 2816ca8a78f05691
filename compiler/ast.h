/*
 * ast.h — constructors for the AST declared in shortc.h. The grammar
 * (grammar/arch.y) builds nodes only through these; every node and every
 * array lives in the Arena, so nothing is ever freed one by one.
 */
#ifndef SHORTC_AST_H
#define SHORTC_AST_H

#include "shortc.h"

/* Joins two locations of the same file into one range. */
Loc loc_span(Loc a, Loc b);

AstValue *ast_int(Arena *a, Loc loc, long v);
AstValue *ast_num(Arena *a, Loc loc, double v);
AstValue *ast_ident(Arena *a, Loc loc, const char *s);
AstValue *ast_string(Arena *a, Loc loc, const char *s);
AstValue *ast_keyval(Arena *a, Loc loc, const char *key, AstValue *v);
/* items: a PtrVec of AstValue* (copied). */
AstValue *ast_list(Arena *a, Loc loc, const PtrVec *items);

/* args: PtrVec of AstValue*; body: PtrVec of AstStmt* (both copied). */
AstStmt *ast_setting(Arena *a, Loc loc, const char *name, Loc name_loc, const PtrVec *args);
AstStmt *ast_layer(Arena *a, Loc loc, const AstSelector *sel, const PtrVec *body);

/* Selectors. indices/locs: the listed layer indices of `layer 0, 3 { }`. */
AstSelector ast_selector(AstSelKind kind, Loc loc, long n, long from);
void ast_selector_add_index(Arena *a, AstSelector *s, long index, Loc loc);

AstModel *ast_model(Arena *a, Loc loc, const char *name, const char *parent, Loc parent_loc,
                    const PtrVec *stmts);
void ast_file_add_import(Arena *a, AstFile *f, const char *path, Loc loc);
void ast_file_add_model(Arena *a, AstFile *f, AstModel *m);

#endif /* SHORTC_AST_H */
