/* PLACEHOLDER grammar: replaced wholesale by the owner of this file. */
%define api.pure full
%{
#include "shortc.h"
%}
%code { static int yylex(void *lval) { (void)lval; return 0; } static void yyerror(const char *m) { (void)m; } }
%define api.value.type {int}
%%
file: %empty ;
%%
AstFile *parse_source(Arena *a, Diag *d, Source *src) { (void)d; AstFile *f = arena_alloc(a, sizeof *f); f->src = src; return f; }
