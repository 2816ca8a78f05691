/*
 * arch.y — grammar of .arch model descriptions (docs/language.md).
 *
 *   file     := (import | model)*            imports must precede models
 *   import   := 'import' STRING ';'
 *   model    := 'model' IDENT [':' IDENT] '{' stmt* '}'
 *   stmt     := IDENT value* ';'             a setting
 *             | 'layer' selector '{' stmt* '}'
 *   value    := INT | NUMBER | IDENT | STRING | IDENT '=' value | '[' [value (',' value)*] ']'
 *   selector := 'all' | INT (',' INT)* | 'every' INT ['from' INT]
 *             | 'first' INT | 'last' INT | 'interleaved' INT
 *
 * Settings are generic (a name and values): their meaning and every check
 * on them is in compiler/sema.c, so new settings, kinds and keys never
 * change this file. Selector words are ordinary identifiers checked here.
 *
 * A pure (reentrant) parser driven by the reentrant scanner of arch.l,
 * which also holds parse_source(). Locations are byte ranges (Loc).
 *
 * Errors: the scanner reports bad characters, literals and nesting itself
 * and returns YYerror, which starts recovery without a second message.
 * Recovery resynchronises at ';' (the statement is dropped) or at '}' (the
 * rest of the block is dropped), and at the top level at the next
 * 'import'/'model', so one run reports many errors. Nothing exits.
 *
 * Memory: every semantic value is arena-allocated (or a PtrVec whose
 * storage is in the arena) and freed with the arena, so no %destructor is
 * needed for the values bison discards during error recovery.
 */
%define api.pure full
%define api.location.type {Loc}
%define parse.error custom
%locations
%expect 0
%param {yyscan_t scanner}
%parse-param {ParseState *ps}

%code requires {
#include "ast.h"
#ifndef YY_TYPEDEF_YY_SCANNER_T
#define YY_TYPEDEF_YY_SCANNER_T
typedef void *yyscan_t;
#endif

/* State shared by the scanner (as its extra data) and the parser. */
typedef struct ParseState {
    Arena *arena;        /* owner of the AST */
    Diag *diag;          /* error counter and printer */
    Source *src;         /* the file being parsed */
    AstFile *file;       /* result */
    int pos;             /* byte offset of the scanner */
    int prev_end;        /* end of the token before the latest one */
    int last_end;        /* end of the latest token */
    int list_depth;      /* open '[' in the current statement */
    int block_depth;     /* open '{' */
    bool depth_reported; /* a nesting error was already reported for this run */
    bool seen_model;     /* a model was parsed (imports must come first) */
} ParseState;

/* Ranges cover their first to their last symbol; empty rules sit at the end of the previous one. */
#define YYLLOC_DEFAULT(Cur, Rhs, N)                                  \
    do {                                                             \
        if (N) {                                                     \
            (Cur).file = YYRHSLOC(Rhs, 1).file;                      \
            (Cur).begin = YYRHSLOC(Rhs, 1).begin;                    \
            (Cur).end = YYRHSLOC(Rhs, N).end;                        \
        } else {                                                     \
            (Cur).file = YYRHSLOC(Rhs, 0).file;                      \
            (Cur).begin = (Cur).end = YYRHSLOC(Rhs, 0).end;          \
        }                                                            \
    } while (0)
}

%code provides {
int yylex(YYSTYPE *lval, YYLTYPE *lloc, yyscan_t scanner);
}

%code {
#include <string.h>

static void yyerror(YYLTYPE *loc, yyscan_t scanner, ParseState *ps, const char *msg);
static bool import_path_ok(ParseState *ps, const char *path, Loc loc);
static AstSelector *selector_words(ParseState *ps, Loc all, const char *w1, Loc l1, const long *n,
                                   const char *w2, Loc l2, const long *from);
}

%union {
    const char *str;
    long ival;
    double num;
    AstValue *val;
    AstStmt *stmt;
    AstModel *model;
    AstSelector *sel;
    PtrVec vec;
}

%token IMPORT "import" MODEL "model" LAYER "layer"
%token <str> IDENT "identifier" STRING "string"
%token <ival> INT "integer"
%token <num> NUMBER "number"

%type <val> value
%type <vec> values items stmts body
%type <stmt> stmt
%type <model> model
%type <sel> selector indices

%%

file
    : %empty
    | file item
    ;

item
    : IMPORT STRING ';' {
        if (ps->seen_model)
            diag_error(ps->diag, @1, "imports must come before the first model");
        if (import_path_ok(ps, $2, @2)) ast_file_add_import(ps->arena, ps->file, $2, @2);
      }
    | model            { ast_file_add_model(ps->arena, ps->file, $1); ps->seen_model = true; }
    | error            { /* tokens are skipped up to the next 'import' or 'model' */ }
    ;

model
    : MODEL IDENT body { $$ = ast_model(ps->arena, loc_span(@1, @2), $2, NULL, LOC_NONE, &$3); }
    | MODEL IDENT ':' IDENT body {
        $$ = ast_model(ps->arena, loc_span(@1, @2), $2, $4, @4, &$5);
      }
    | MODEL error body { $$ = NULL; }
    ;

body
    : '{' stmts '}'        { $$ = $2; }
    | '{' stmts error '}'  { $$ = $2; yyerrok; }
    ;

stmts
    : %empty           { memset(&$$, 0, sizeof $$); }
    | stmts stmt       { $$ = $1; if ($2) ptrvec_push(ps->arena, &$$, $2); }
    ;

stmt
    : IDENT values ';' { $$ = ast_setting(ps->arena, @$, $1, @1, &$2); }
    | LAYER selector body {
        $$ = $2 ? ast_layer(ps->arena, loc_span(@1, @2), $2, &$3) : NULL;
      }
    | LAYER error body { $$ = NULL; }
    | error ';'        { $$ = NULL; yyerrok; }
    ;

values
    : %empty           { memset(&$$, 0, sizeof $$); }
    | values value     { $$ = $1; ptrvec_push(ps->arena, &$$, $2); }
    ;

value
    : INT              { $$ = ast_int(ps->arena, @$, $1); }
    | NUMBER           { $$ = ast_num(ps->arena, @$, $1); }
    | IDENT            { $$ = ast_ident(ps->arena, @$, $1); }
    | STRING           { $$ = ast_string(ps->arena, @$, $1); }
    | IDENT '=' value  { $$ = ast_keyval(ps->arena, @$, $1, $3); }
    | '[' ']'          { $$ = ast_list(ps->arena, @$, NULL); }
    | '[' items ']'    { $$ = ast_list(ps->arena, @$, &$2); }
    ;

items
    : value            { memset(&$$, 0, sizeof $$); ptrvec_push(ps->arena, &$$, $1); }
    | items ',' value  { $$ = $1; ptrvec_push(ps->arena, &$$, $3); }
    ;

selector
    : IDENT                 { $$ = selector_words(ps, @$, $1, @1, NULL, NULL, LOC_NONE, NULL); }
    | IDENT INT             { $$ = selector_words(ps, @$, $1, @1, &$2, NULL, LOC_NONE, NULL); }
    | IDENT INT IDENT INT   { $$ = selector_words(ps, @$, $1, @1, &$2, $3, @3, &$4); }
    | indices               { $$ = $1; }
    ;

indices
    : INT {
        $$ = arena_alloc(ps->arena, sizeof *$$);
        if ($$) {
            *$$ = ast_selector(SEL_INDEX, @1, 0, -1);
            ast_selector_add_index(ps->arena, $$, $1, @1);
        }
      }
    | indices ',' INT {
        $$ = $1;
        if ($$) {
            $$->loc = loc_span($$->loc, @3);
            ast_selector_add_index(ps->arena, $$, $3, @3);
        }
      }
    ;

%%

static void yyerror(YYLTYPE *loc, yyscan_t scanner, ParseState *ps, const char *msg) {
    (void)scanner;
    diag_error(ps->diag, *loc, "%s", msg);
}

/* Selector words: name, whether it takes a count, and its AST kind. */
static const struct {
    const char *word;   /* selector word */
    bool count;         /* takes a count */
    AstSelKind kind;    /* AST kind */
} selector_table[] = {
    {"all", false, SEL_ALL},
    {"every", true, SEL_EVERY},
    {"first", true, SEL_FIRST},
    {"last", true, SEL_LAST},
    {"interleaved", true, SEL_INTERLEAVED},
};
enum { NSELECTORS = sizeof selector_table / sizeof selector_table[0] };

/*
 * Checks `all`, `every k [from o]`, `first n`, `last n`, `interleaved n`.
 * Returns NULL (after an error) when the words do not form a selector.
 */
static AstSelector *selector_words(ParseState *ps, Loc all, const char *w1, Loc l1, const long *n,
                                   const char *w2, Loc l2, const long *from) {
    int k = -1;
    for (int i = 0; i < NSELECTORS; i++)
        if (strcmp(w1, selector_table[i].word) == 0) k = i;
    if (k < 0) {
        const char *names[NSELECTORS];
        for (int i = 0; i < NSELECTORS; i++) names[i] = selector_table[i].word;
        const char *s = diag_suggest(w1, names, NSELECTORS);
        diag_error(ps->diag, l1,
                   "unknown layer selector '%.64s'%s%s%s (expected all, every, first, last, interleaved "
                   "or layer indices)", w1, s ? "; did you mean '" : "", s ? s : "", s ? "'?" : "");
        return NULL;
    }
    if (selector_table[k].count && !n) {
        diag_error(ps->diag, l1, "'%s' needs a count: layer %s N { ... }", w1, w1);
        return NULL;
    }
    if (!selector_table[k].count && n) {
        diag_error(ps->diag, all, "'%s' takes no count: layer %s { ... }", w1, w1);
        return NULL;
    }
    if (w2 && (selector_table[k].kind != SEL_EVERY || strcmp(w2, "from") != 0)) {
        if (selector_table[k].kind == SEL_EVERY)
            diag_error(ps->diag, l2, "expected 'from' after 'every %ld', found '%.64s'", *n, w2);
        else
            diag_error(ps->diag, l2, "unexpected '%.64s' after '%s %ld'", w2, w1, *n);
        return NULL;
    }
    if (from && *from < 0) {
        diag_error(ps->diag, l2, "'from' needs a layer index (0 or more), found %ld", *from);
        return NULL;
    }
    AstSelector *s = arena_alloc(ps->arena, sizeof *s);
    if (s) *s = ast_selector(selector_table[k].kind, all, n ? *n : 0, from ? *from : -1);
    return s;
}

/*
 * An import path holds no control character (a tab, or \n or \t written as an escape): a path
 * is placed in comments of the generated source and in messages (docs/security.md). Reported at
 * the first one.
 */
static bool import_path_ok(ParseState *ps, const char *path, Loc loc) {
    bool bad = false;
    for (const unsigned char *p = (const unsigned char *)path; *p; p++) bad |= *p < 0x20 || *p == 0x7f;
    if (!bad) return true;
    const char *raw = ps->src->text;
    for (int i = loc.begin + 1; i < loc.end - 1; i++) {
        int w = raw[i] == '\\' ? 2 : 1;   /* an escape, or one byte as it is */
        unsigned char c = w == 2 ? (raw[i + 1] == 'n' ? '\n' : raw[i + 1] == 't' ? '\t' : 'x') : (unsigned char)raw[i];
        if (c < 0x20 || c == 0x7f) {
            Loc at = {loc.file, i, i + w};
            diag_error(ps->diag, at, "control character 0x%02x in an import path", c);
            return false;
        }
        i += w - 1;
    }
    diag_error(ps->diag, loc, "control character in an import path");
    return false;
}

/* How a token is named in "expected ..." lists. */
static const char *token_name(yysymbol_kind_t t) {
    switch (t) {
    case YYSYMBOL_YYEOF: return "end of file";
    case YYSYMBOL_IMPORT: return "'import'";
    case YYSYMBOL_MODEL: return "'model'";
    case YYSYMBOL_LAYER: return "'layer'";
    case YYSYMBOL_IDENT: return "a name";
    case YYSYMBOL_STRING: return "a string";
    case YYSYMBOL_INT: return "an integer";
    case YYSYMBOL_NUMBER: return "a number";
    default: return yysymbol_name(t);   /* "';'" and the like */
    }
}

/*
 * "unexpected 'x', expected A, B or C" at the offending token (the list is
 * left out when it is long), or "missing ';'" just after the previous token
 * when a ';' would do and the offending token starts a later line, is a
 * '}' or is the end of the file (a forgotten terminator).
 */
static int yyreport_syntax_error(const yypcontext_t *ctx, yyscan_t scanner, ParseState *ps) {
    (void)scanner;
    enum { SHOWN = 5 };   /* longer "expected" lists are left out */
    yysymbol_kind_t exp[YYNTOKENS];
    int nexp = yypcontext_expected_tokens(ctx, exp, YYNTOKENS);
    if (nexp < 0) nexp = 0;
    yysymbol_kind_t tok = yypcontext_token(ctx);
    Loc loc = *yypcontext_location(ctx);
    bool want_semi = false;
    for (int i = 0; i < nexp; i++)
        if (exp[i] == YYSYMBOL_YYEOF && nexp > 1) {
            /* "end of file" is never a useful suggestion next to others */
            exp[i--] = exp[--nexp];
        } else if (strcmp(yysymbol_name(exp[i]), "';'") == 0) {
            want_semi = true;
        }
    const char *t = ps->src->text;
    bool newline_between = false;
    for (int i = ps->prev_end; i < loc.begin && i < (int)ps->src->len; i++)
        if (t[i] == '\n') newline_between = true;
    bool closes = tok == YYSYMBOL_YYEOF || strcmp(yysymbol_name(tok), "'}'") == 0;
    if (want_semi && (newline_between || closes) && ps->prev_end > 0) {
        Loc at = {loc.file, ps->prev_end, ps->prev_end};
        diag_error(ps->diag, at, "missing ';'");
        return 0;
    }
    char what[80];
    if (tok == YYSYMBOL_YYEOF) {
        snprintf(what, sizeof what, "unexpected end of file");
    } else {
        int n = loc.end - loc.begin;
        snprintf(what, sizeof what, "unexpected '%.*s%s'", n > 32 ? 32 : n, t + loc.begin, n > 32 ? "..." : "");
    }
    if (nexp == 0 || nexp > SHOWN) {
        diag_error(ps->diag, loc, "%s", what);
        return 0;
    }
    char list[256] = "";
    for (int i = 0; i < nexp; i++) {
        size_t used = strlen(list);
        snprintf(list + used, sizeof list - used, "%s%s", i == 0 ? "" : i == nexp - 1 ? " or " : ", ",
                 token_name(exp[i]));
    }
    diag_error(ps->diag, loc, "%s, expected %s", what, list);
    return 0;
}
