/*
 * sema.c — from parsed .arch files to a validated ModelSpec.
 *
 * 1. Files: the main file's imports are loaded and parsed once each
 *    (depth first, keyed by real path), relative to the importing file.
 *    Missing files and import cycles are errors at the `import` line. Any
 *    syntax or import error stops here.
 * 2. Models: every model of every loaded file gets each of its statements
 *    checked against the settings table below (signature, ranges, "did you
 *    mean"), producing one typed Setting per key; duplicate settings, duplicate
 *    model names, unknown parents and inheritance cycles are reported. Any
 *    error stops here.
 * 3. The requested model: its chain (root parent first) is merged setting
 *    by setting (a child's statement replaces the parent's whole statement),
 *    required settings and cross-setting rules are checked, and the `layer`
 *    blocks of each model in the chain are applied in order over the final
 *    layer count (a child's blocks win over its parent's; two blocks of the
 *    same model that give one layer different values are a conflict).
 *
 * Adding a setting: a Key, a row in `settings`, a check function, and a
 * line in build_spec(). Adding an attention kind needs nothing here: its
 * parameters come from its row of the kind table (attn_kinds.c).
 */
#define _DEFAULT_SOURCE   /* realpath */
#include "shortc.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ------------------------------------------------------------------ */
/* Settings                                                            */
/* ------------------------------------------------------------------ */

/* What a statement sets. Each tensor class's layout is a key of its own. */
typedef enum Key {
    K_VOCAB, K_D_MODEL, K_HEADS, K_HEAD_DIM, K_SEGMENT, K_LAYERS, K_FFN, K_NORM,
    K_POSITIONS, K_EMBEDDING, K_WEIGHTS, K_ATTENTION, K_MATH,
    K_RECURRENCE, /* the recurrence module (docs/attention/recurrence.md) */
    K_CACHE,      /* Shortformer's cache (docs/attention/pia.md) */
    K_MEMORY,     /* Transformer-XL memory rows, per layer (docs/attention/relative.md) */
    K_FINAL_NORM, /* whether a pre-norm model normalizes the last block's output (fairseq's no_decoder_final_norm) */
    K_BIAS,       /* whether the attention and FFN projections have biases (`bias off`: Llama) */
    K_BLOCK,      /* sequential or parallel attention and FFN (GPT-NeoX) */
    K_LAYOUT, /* + TensorClass */
    K_COUNT = K_LAYOUT + TC_COUNT
} Key;

/* A checked statement. Only the fields of its key are meaningful. */
typedef struct Setting {
    const AstStmt *stmt;   /* the statement; NULL when not set */
    Key key;               /* what it sets */
    long n;                /* integer settings, ffn width */
    Activation act;        /* ffn (the gate's activation when gated) */
    bool gated;            /* ffn: swiglu | geglu */
    NormKind norm;         /* norm */
    NormPlace place;       /* norm */
    double eps;            /* norm */
    PosKind pos;           /* positions */
    long max_pos;          /* positions (0: not given) */
    long kv_heads;         /* heads: `kv_heads G` (0: not given, G = H) */
    RopeSpec rope;         /* positions: `rope ...` (dims 0: head_dim) */
    bool tied;             /* embedding */
    AdaptiveSpec adaptive; /* embedding: adaptive=STYLE and its options */
    const AstValue *cutoffs_ast; /* embedding: the cutoffs list (for messages needing the vocab) */
    const AstValue *factor_ast;  /* embedding: the factor value, NULL when defaulted */
    WeightNaming naming;   /* weights */
    AttnSpec attn;         /* attention */
    LayoutSpec layout;     /* layout */
    bool tf32;             /* math: tf32 */
    bool final_off;        /* final_norm: off */
    bool bias_off;         /* bias: off */
    bool parallel;         /* block: parallel */
    RecurrenceSpec rec;    /* recurrence */
    const AstValue *insert_ast;  /* recurrence: the insert value (for the check against the layers) */
    const AstValue *overlap_ast; /* recurrence: the overlap value (for the check against the segment) */
    PiaStyle infused;      /* positions: `sinusoidal infused [style=...]` (PIA_NONE otherwise) */
    PiaStyle pos_style;    /* positions: `sinusoidal [style=...]`, the embedding's sinusoid (PIA_VASWANI default) */
} Setting;

typedef struct Sema Sema;
typedef struct SettingDef SettingDef;
typedef bool (*CheckFn)(Sema *S, const SettingDef *def, const AstStmt *st, Setting *out);

struct SettingDef {
    const char *name;    /* setting name in .arch */
    Key key;             /* K_LAYOUT for layout (the class picks the key) */
    CheckFn check;       /* signature check, fills a Setting */
    const char *usage;   /* shown in messages */
    bool per_layer;      /* may appear inside `layer` blocks */
    bool required;       /* a model must set it (itself or through a parent) */
    long max;            /* integer settings: upper bound */
};

static bool check_int(Sema *S, const SettingDef *def, const AstStmt *st, Setting *out);
static bool check_heads(Sema *S, const SettingDef *def, const AstStmt *st, Setting *out);
static bool check_ffn(Sema *S, const SettingDef *def, const AstStmt *st, Setting *out);
static bool check_norm(Sema *S, const SettingDef *def, const AstStmt *st, Setting *out);
static bool check_positions(Sema *S, const SettingDef *def, const AstStmt *st, Setting *out);
static bool check_embedding(Sema *S, const SettingDef *def, const AstStmt *st, Setting *out);
static bool check_weights(Sema *S, const SettingDef *def, const AstStmt *st, Setting *out);
static bool check_attention(Sema *S, const SettingDef *def, const AstStmt *st, Setting *out);
static bool check_layout(Sema *S, const SettingDef *def, const AstStmt *st, Setting *out);
static bool check_math(Sema *S, const SettingDef *def, const AstStmt *st, Setting *out);
static bool check_recurrence(Sema *S, const SettingDef *def, const AstStmt *st, Setting *out);
static bool check_cache(Sema *S, const SettingDef *def, const AstStmt *st, Setting *out);
static bool check_memory(Sema *S, const SettingDef *def, const AstStmt *st, Setting *out);
static bool check_final_norm(Sema *S, const SettingDef *def, const AstStmt *st, Setting *out);
static bool check_bias(Sema *S, const SettingDef *def, const AstStmt *st, Setting *out);
static bool check_block(Sema *S, const SettingDef *def, const AstStmt *st, Setting *out);

enum { MAX_DIM = 1 << 24, MAX_LAYERS = 4096 };

static const SettingDef settings[] = {
    {"vocab", K_VOCAB, check_int, "vocab INT", false, true, MAX_DIM},
    {"d_model", K_D_MODEL, check_int, "d_model INT", false, true, MAX_DIM},
    {"heads", K_HEADS, check_heads, "heads INT [kv_heads INT]", false, true, MAX_DIM},
    {"head_dim", K_HEAD_DIM, check_int, "head_dim INT", false, false, MAX_DIM},
    {"ffn", K_FFN, check_ffn, "ffn INT relu|gelu|gelu_tanh|silu|swiglu|geglu", false, true, MAX_DIM},
    {"norm", K_NORM, check_norm, "norm layernorm|rmsnorm|rms pre|post [eps=NUM]", false, false, 0},
    {"positions", K_POSITIONS, check_positions,
     "positions none | sinusoidal [max=INT] [style=vaswani|fairseq] | sinusoidal infused [style=fairseq|vaswani] | learned max=INT"
     " | rope theta=NUM [dims=INT] [pairs=halves|interleaved] [scaling=linear|dynamic|yarn|llama3 factor=NUM ...] | alibi",
     false, false, MAX_DIM},
    {"embedding", K_EMBEDDING, check_embedding, "embedding tied|untied [adaptive=fairseq|transformer_xl cutoffs=[INT,...] [factor=INT] [scale=NUM]]", false, false, 0},
    {"segment", K_SEGMENT, check_int, "segment INT", false, true, MAX_DIM},
    {"layers", K_LAYERS, check_int, "layers INT", false, true, MAX_LAYERS},
    {"attention", K_ATTENTION, check_attention, "attention KIND [key=NUM ...]", true, false, 0},
    {"weights", K_WEIGHTS, check_weights, "weights hf_gpt2|transformer_xl", false, false, 0},
    {"layout", K_LAYOUT, check_layout, "layout weights|activations|kv fp32|fp16|bf16 [ORDER]", false, false, 0},
    {"math", K_MATH, check_math, "math fp32|tf32", false, false, 0},
    {"recurrence", K_RECURRENCE, check_recurrence,
     "recurrence [insert=INT] [ffn=[INT,...]] [act=relu|gelu|gelu_tanh] [pool=mean|sum] [states=blocks|embed_blocks] "
     "[norm=1|0] [overlap=INT]", false, false, MAX_DIM},
    {"cache", K_CACHE, check_cache, "cache INT (tokens of earlier calls kept; needs positions sinusoidal infused)",
     false, false, MAX_DIM},
    {"memory", K_MEMORY, check_memory, "memory INT", true, false, MAX_DIM},
    {"final_norm", K_FINAL_NORM, check_final_norm, "final_norm on|off", false, false, 0},
    {"bias", K_BIAS, check_bias, "bias on|off", false, false, 0},
    {"block", K_BLOCK, check_block, "block sequential|parallel", false, false, 0},
};
enum { NSETTINGS = sizeof settings / sizeof settings[0] };

/* Where each key's statement is recorded in ModelSpec.where (-1: elsewhere). */
static const int key_setting_id[K_COUNT] = {
    [K_VOCAB] = SET_VOCAB, [K_D_MODEL] = SET_D_MODEL, [K_HEADS] = SET_HEADS,
    [K_HEAD_DIM] = SET_HEAD_DIM, [K_SEGMENT] = SET_SEGMENT, [K_LAYERS] = SET_LAYERS,
    [K_FFN] = SET_FFN, [K_NORM] = SET_NORM, [K_POSITIONS] = SET_POSITIONS,
    [K_EMBEDDING] = SET_EMBEDDING, [K_WEIGHTS] = SET_WEIGHTS, [K_ATTENTION] = SET_ATTENTION, [K_MATH] = SET_MATH,
    [K_RECURRENCE] = -1,
    [K_CACHE] = SET_CACHE,
    [K_MEMORY] = SET_MEMORY,
    [K_FINAL_NORM] = -1,
    [K_BIAS] = -1,
    [K_BLOCK] = -1,
    [K_LAYOUT + TC_WEIGHTS] = -1, [K_LAYOUT + TC_ACTIVATIONS] = -1, [K_LAYOUT + TC_KV] = -1,
};

static const char *const class_names[TC_COUNT] = {"weights", "activations", "kv"};

/* Storage dtypes a layout may name (i32 is for token ids only). */
static const DType storage_dtypes[] = {DT_F32, DT_F16, DT_BF16};
enum { NSTORAGE = sizeof storage_dtypes / sizeof storage_dtypes[0] };

/* Accepted dimension orders per tensor class, as the words of the .arch list. */
static const struct {
    TensorClass tc;          /* the class it applies to */
    DimOrder order;          /* the order */
    const char *words[3];    /* its dimension names, NULL-padded */
} orders[] = {
    {TC_WEIGHTS, ORD_IN_OUT, {"in", "out"}},
    {TC_WEIGHTS, ORD_OUT_IN, {"out", "in"}},
    {TC_ACTIVATIONS, ORD_TOKENS_CHANNELS, {"tokens", "channels"}},
    {TC_KV, ORD_TOKENS_HEADS_DIM, {"tokens", "heads", "dim"}},
    {TC_KV, ORD_HEADS_TOKENS_DIM, {"heads", "tokens", "dim"}},
};
enum { NORDERS = sizeof orders / sizeof orders[0] };

static const DimOrder default_order[TC_COUNT] = {ORD_IN_OUT, ORD_TOKENS_CHANNELS, ORD_HEADS_TOKENS_DIM};

/* ------------------------------------------------------------------ */
/* State                                                               */
/* ------------------------------------------------------------------ */

/* A `layer` block: its selector and what it sets. */
typedef struct Block {
    const AstStmt *stmt;   /* the ST_LAYER statement (selector and body) */
    Setting attn;          /* attn.stmt NULL: the block sets no attention */
    Setting memory;        /* memory.stmt NULL: the block sets no memory length */
} Block;

typedef struct ModelInfo ModelInfo;
struct ModelInfo {
    const AstModel *ast;   /* the parsed model */
    const Source *src;     /* file it is defined in */
    Setting set[K_COUNT];  /* model-level settings (stmt NULL: not set here) */
    Block *blocks;         /* layer blocks in order */
    int nblocks;           /* count */
    ModelInfo *parent;     /* resolved parent (NULL: root or unknown) */
    int walk;              /* stamp used by the cycle check */
};

enum { FILE_VISITING = 1, FILE_DONE = 2 };

typedef struct FileEntry {
    AstFile *ast;          /* the parsed file */
    char *real;            /* canonical path: the key for "parsed once" and cycles */
    int state;             /* 0, FILE_VISITING (its imports are being loaded) or FILE_DONE */
} FileEntry;

struct Sema {
    Arena *a;              /* owner of everything sema allocates */
    Diag *d;               /* where errors go */
    PtrVec entries;        /* every FileEntry seen */
    PtrVec order;          /* FileEntry in post-order: imports before importers */
    PtrVec stack;          /* FileEntry being visited, for cycle messages */
    ModelInfo *models;     /* all models of all files, in `order` */
    int nmodels;           /* count */
};

/* ------------------------------------------------------------------ */
/* Small helpers                                                       */
/* ------------------------------------------------------------------ */

/* Source text of a location, shortened for messages. */
static const char *text_of(Sema *S, Loc loc) {
    if (loc.file < 0 || loc.file >= S->d->nsources) return "";
    const Source *src = S->d->sources[loc.file];
    int n = loc.end - loc.begin;
    if (loc.begin < 0 || n < 0 || (size_t)loc.end > src->len) return "";
    if (n > 40) return arena_printf(S->a, "%.37s...", src->text + loc.begin);
    return arena_strndup(S->a, src->text + loc.begin, (size_t)n);
}

/* A string shortened for messages. */
static const char *clip(Sema *S, const char *s) {
    return strlen(s) > 80 ? arena_printf(S->a, "%.77s...", s) : s;
}

/* Builds "; did you mean 'x'?" (or "") for an unknown word. */
static const char *did_you_mean(Sema *S, const char *word, const char *const *cands, int n) {
    const char *s = diag_suggest(word, cands, n);
    return s ? arena_printf(S->a, "; did you mean '%s'?", s) : "";
}

/* "a, b or c" */
static const char *word_list(Sema *S, const char *const *words, int n) {
    const char *s = "";
    for (int i = 0; i < n; i++)
        s = arena_printf(S->a, "%s%s%s", s, i == 0 ? "" : i == n - 1 ? " or " : ", ", words[i]);
    return s;
}

static Loc stmt_end(const AstStmt *st) { return (Loc){st->loc.file, st->loc.end - 1, st->loc.end}; }

/* Name of the statement's setting as used in messages ("layout kv" for layouts). */
static const char *key_name(Sema *S, Key k) {
    if (k >= K_LAYOUT) return arena_printf(S->a, "layout %s", class_names[k - K_LAYOUT]);
    for (int i = 0; i < NSETTINGS; i++)
        if (settings[i].key == k) return settings[i].name;
    return "?";
}

static bool same_attn(const AttnSpec *x, const AttnSpec *y) {
    if (x->kind != y->kind || x->nparams != y->nparams) return false;
    for (int i = 0; i < x->nparams; i++)
        if (strcmp(x->params[i].key, y->params[i].key) != 0 || x->params[i].value != y->params[i].value)
            return false;
    return true;
}

/* The parameter `key` of a (NULL when the kind has none). */
static AttnParam *attn_param(AttnSpec *a, const char *key) {
    for (int i = 0; i < a->nparams; i++)
        if (strcmp(a->params[i].key, key) == 0) return &a->params[i];
    return NULL;
}

/*
 * Window ramps (`attention dilated size=A size_last=B`, docs/language.md): layer l of the model's N gets
 * size round(A + (B - A) l / (N - 1)) (A when N is 1), wherever the statement stands, so blocks that restate
 * the ramp with other parameters stay on it; size_last is then 0 (resolved).
 */
static void resolve_ramps(Sema *S, ModelSpec *s) {
    for (int l = 0; l < s->n_layers; l++) {
        AttnSpec *a = &s->layers[l].attn;
        AttnParam *last = attn_param(a, "size_last"), *size = attn_param(a, "size");
        if (!last || last->value == 0 || !size) continue;
        if (last->value != floor(last->value) || last->value < 1 || last->value > (1 << 20)) {
            diag_error(S->d, a->loc, "attention '%s': size_last=%g must be a whole number in [1, %d] (0: no ramp)",
                       attn_kind_name(a->kind), last->value, 1 << 20);
            for (int k = l; k < s->n_layers; k++) /* reported once */
                if ((last = attn_param(&s->layers[k].attn, "size_last"))) last->value = 0;
            return;
        }
        int n = s->n_layers;
        if (n > 1) size->value = floor(size->value + (last->value - size->value) * l / (n - 1) + 0.5);
        last->value = 0;
    }
}

/* Types every layer's attention parameters (attn_spec_type) against the model's heads; the first bad one is
 * reported at its statement. */
static void type_attention(Sema *S, ModelSpec *s) {
    for (int l = 0; l < s->n_layers; l++) {
        char err[256];
        if (!attn_spec_type(&s->layers[l].attn, s->n_heads, err, sizeof err)) {
            diag_error(S->d, s->layers[l].attn.loc, "%s (layer %d)", err, l);
            return;
        }
    }
}

static bool line_break_between(Sema *S, Loc a, Loc b) {
    if (a.file < 0 || a.file != b.file) return false;
    const char *t = S->d->sources[a.file]->text;
    for (int i = a.end; i < b.begin; i++)
        if (t[i] == '\n') return true;
    return false;
}

/* ------------------------------------------------------------------ */
/* Argument checks                                                     */
/* ------------------------------------------------------------------ */

/* Argument i, or an error naming what is missing. */
static const AstValue *arg(Sema *S, const SettingDef *def, const AstStmt *st, int i, const char *what) {
    if (i < st->nargs) return st->args[i];
    diag_error(S->d, stmt_end(st), "'%s' needs %s %s (usage: %s)", st->name, strchr("aeiou", what[0]) ? "an" : "a",
               what, def->usage);
    return NULL;
}

/* No arguments after the first n. An identifier on a new line is most likely a forgotten ';'. */
static bool no_more(Sema *S, const SettingDef *def, const AstStmt *st, int n) {
    if (st->nargs <= n) return true;
    const AstValue *v = st->args[n];
    Loc prev = n > 0 ? st->args[n - 1]->loc : st->name_loc;
    if (v->kind == AV_IDENT && line_break_between(S, prev, v->loc))
        diag_error(S->d, (Loc){prev.file, prev.end, prev.end}, "missing ';'");
    else
        diag_error(S->d, v->loc, "too many arguments for '%s' (usage: %s)", st->name, def->usage);
    return false;
}

static bool int_value(Sema *S, const AstValue *v, const char *what, long lo, long hi, long *out) {
    if (v->kind != AV_INT) {
        diag_error(S->d, v->loc, "%s needs an integer, found '%s'", what, text_of(S, v->loc));
        return false;
    }
    if (v->ival < lo || v->ival > hi) {
        diag_error(S->d, v->loc, "%s must be between %ld and %ld, found %ld", what, lo, hi, v->ival);
        return false;
    }
    *out = v->ival;
    return true;
}

static bool num_value(Sema *S, const AstValue *v, const char *what, double *out) {
    if (v->kind != AV_INT && v->kind != AV_NUM) {
        diag_error(S->d, v->loc, "%s needs a number, found '%s'", what, text_of(S, v->loc));
        return false;
    }
    *out = v->num;
    return true;
}

/* Argument i must be one of words; returns its index or -1 (reported). */
static int word_arg(Sema *S, const SettingDef *def, const AstStmt *st, int i, const char *what,
                    const char *const *words, int n) {
    const AstValue *v = arg(S, def, st, i, what);
    if (!v) return -1;
    if (v->kind == AV_IDENT)
        for (int k = 0; k < n; k++)
            if (strcmp(v->str, words[k]) == 0) return k;
    const char *hint = v->kind == AV_IDENT ? did_you_mean(S, v->str, words, n) : "";
    diag_error(S->d, v->loc, "unknown %s '%s'%s (expected %s)", what, text_of(S, v->loc), hint,
               word_list(S, words, n));
    return -1;
}

/*
 * key=value options from argument `first` on. keys[k] is an accepted key;
 * vals[k] receives its value (NULL: not given). Anything else is reported,
 * naming the owner ("'norm'") and what a key is called ("option").
 */
static bool options(Sema *S, const SettingDef *def, const AstStmt *st, int first, const char *owner,
                    const char *noun, const char *const *keys, int nkeys, const AstValue **vals) {
    bool ok = true;
    for (int k = 0; k < nkeys; k++) vals[k] = NULL;
    for (int i = first; i < st->nargs; i++) {
        const AstValue *v = st->args[i];
        if (v->kind != AV_KEYVAL) return no_more(S, def, st, i);
        int k = 0;
        while (k < nkeys && strcmp(v->str, keys[k]) != 0) k++;
        Loc key_loc = {v->loc.file, v->loc.begin, v->loc.begin + (int)strlen(v->str)};
        if (k == nkeys) {
            if (nkeys == 0)
                diag_error(S->d, key_loc, "%s takes no %ss (usage: %s)", owner, noun, def->usage);
            else
                diag_error(S->d, key_loc, "%s has no %s '%s'%s (%ss: %s)", owner, noun, v->str,
                           did_you_mean(S, v->str, keys, nkeys), noun, word_list(S, keys, nkeys));
            ok = false;
        } else if (vals[k]) {
            diag_error(S->d, key_loc, "%s '%s' is given twice", noun, v->str);
            diag_note(S->d, vals[k]->loc, "first given here");
            ok = false;
        } else {
            vals[k] = v;
        }
    }
    for (int k = 0; k < nkeys; k++)
        if (vals[k]) vals[k] = vals[k]->kv;   /* from key=value to the value */
    return ok;
}

/* ------------------------------------------------------------------ */
/* Setting checks                                                      */
/* ------------------------------------------------------------------ */

static bool check_int(Sema *S, const SettingDef *def, const AstStmt *st, Setting *out) {
    const AstValue *v = arg(S, def, st, 0, "value");
    return v && int_value(S, v, arena_printf(S->a, "'%s'", st->name), 1, def->max, &out->n) &&
           no_more(S, def, st, 1);
}

/* `heads H [kv_heads G]` (also `kv_heads=G`): G key/value heads shared by groups of H/G query heads (1:
 * multi-query). */
static bool check_heads(Sema *S, const SettingDef *def, const AstStmt *st, Setting *out) {
    const AstValue *v = arg(S, def, st, 0, "value");
    if (!v || !int_value(S, v, "'heads'", 1, def->max, &out->n)) return false;
    out->kv_heads = 0;
    if (st->nargs < 2) return true;
    static const char *const words[] = {"kv_heads"};
    bool keyval = st->args[1]->kind == AV_KEYVAL && strcmp(st->args[1]->str, "kv_heads") == 0;
    if (!keyval && word_arg(S, def, st, 1, "heads option", words, 1) < 0) return false;
    const AstValue *g = keyval ? st->args[1]->kv : arg(S, def, st, 2, "kv_heads count");
    if (!g || !int_value(S, g, "'kv_heads'", 1, out->n, &out->kv_heads)) return false;
    if (out->n % out->kv_heads != 0) {
        diag_error(S->d, g->loc, "kv_heads %ld does not divide heads %ld (each K/V head serves a whole group of query "
                   "heads)", out->kv_heads, out->n);
        return false;
    }
    return no_more(S, def, st, keyval ? 2 : 3);
}

/* ffn INT ACT: a plain activation, or a gated unit (swiglu: SiLU gate, geglu: erf-GELU gate; Shazeer 2020). */
static bool check_ffn(Sema *S, const SettingDef *def, const AstStmt *st, Setting *out) {
    static const char *const acts[] = {"relu", "gelu", "gelu_tanh", "silu", "swiglu", "geglu"};
    static const Activation act_of[] = {ACT_RELU, ACT_GELU, ACT_GELU_TANH, ACT_SILU, ACT_SILU, ACT_GELU};
    static const bool gated_of[] = {false, false, false, false, true, true};
    const AstValue *v = arg(S, def, st, 0, "width");
    if (!v || !int_value(S, v, "'ffn'", 1, def->max, &out->n)) return false;
    int k = word_arg(S, def, st, 1, "activation", acts, 6);
    if (k < 0) return false;
    out->act = act_of[k];
    out->gated = gated_of[k];
    return no_more(S, def, st, 2);
}

static bool check_norm(Sema *S, const SettingDef *def, const AstStmt *st, Setting *out) {
    static const char *const kinds[] = {"layernorm", "rmsnorm", "rms"}; /* rms: rmsnorm's short spelling */
    static const char *const places[] = {"pre", "post"};
    static const char *const keys[] = {"eps"};
    int k = word_arg(S, def, st, 0, "norm kind", kinds, 3);
    if (k < 0) return false;
    int p = word_arg(S, def, st, 1, "norm placement", places, 2);
    if (p < 0) return false;
    out->norm = k == 0 ? NORM_LAYERNORM : NORM_RMSNORM;
    out->place = p == 0 ? NORM_PRE : NORM_POST;
    out->eps = 1e-5;
    const AstValue *eps = NULL;
    if (!options(S, def, st, 2, "'norm'", "option", keys, 1, &eps)) return false;
    if (eps) {
        if (!num_value(S, eps, "'eps'", &out->eps)) return false;
        if (!(out->eps > 0) || out->eps >= 1) {
            diag_error(S->d, eps->loc, "eps must be greater than 0 and less than 1, found %s",
                       text_of(S, eps->loc));
            return false;
        }
    }
    return true;
}

/* A sinusoid style value `fairseq | vaswani` (absent: *out keeps its default); errors at the value. */
static bool style_value(Sema *S, const AstValue *style, PiaStyle *out) {
    static const char *const styles[] = {"fairseq", "vaswani"};
    if (!style) return true;
    for (int k = 0; k < 2 && style->kind == AV_IDENT; k++)
        if (strcmp(style->str, styles[k]) == 0) {
            *out = k == 0 ? PIA_FAIRSEQ : PIA_VASWANI;
            return true;
        }
    diag_error(S->d, style->loc, "unknown position style '%s'%s (expected %s)", text_of(S, style->loc),
               style->kind == AV_IDENT ? did_you_mean(S, style->str, styles, 2) : "", word_list(S, styles, 2));
    return false;
}

/* `positions sinusoidal infused [style=fairseq|vaswani]`: no positions on the embedding, infused into q and k. */
static bool infused_options(Sema *S, const SettingDef *def, const AstStmt *st, Setting *out) {
    static const char *const keys[] = {"style"};
    const AstValue *style = NULL;
    if (!options(S, def, st, 2, "'positions sinusoidal infused'", "option", keys, 1, &style)) return false;
    out->pos = POS_NONE;
    out->infused = PIA_FAIRSEQ;
    return style_value(S, style, &out->infused);
}

/* `cache INT`: 0 is allowed (nonoverlapping evaluation); the positions rule is checked in build_spec. */
static bool check_cache(Sema *S, const SettingDef *def, const AstStmt *st, Setting *out) {
    const AstValue *v = arg(S, def, st, 0, "value");
    return v && int_value(S, v, "'cache'", 0, def->max, &out->n) && no_more(S, def, st, 1);
}

/* A positive number option (absent: *out keeps its default); errors at the value. */
static bool positive_option(Sema *S, const AstValue *v, const char *what, double *out) {
    if (!v) return true;
    if (!num_value(S, v, what, out)) return false;
    if (!(*out > 0)) {
        diag_error(S->d, v->loc, "%s must be greater than 0, found %s", what, text_of(S, v->loc));
        return false;
    }
    return true;
}

/* Which rope options each scaling takes (bit k: rope_keys[k]); theta, dims, pairs and scaling always. */
enum { ROPE_K_THETA, ROPE_K_DIMS, ROPE_K_PAIRS, ROPE_K_SCALING, ROPE_K_FACTOR, ROPE_K_ORIG, ROPE_K_LOW, ROPE_K_HIGH,
       ROPE_K_BFAST, ROPE_K_BSLOW, ROPE_K_MSCALE, ROPE_NKEYS };
static const char *const rope_keys[ROPE_NKEYS] = {"theta", "dims", "pairs", "scaling", "factor", "original_max",
                                                  "low_freq", "high_freq", "beta_fast", "beta_slow", "mscale"};
static const unsigned rope_keys_of[] = {
    [ROPE_SCALE_NONE] = 0,
    [ROPE_SCALE_LINEAR] = 1u << ROPE_K_FACTOR,
    [ROPE_SCALE_DYNAMIC] = 1u << ROPE_K_FACTOR | 1u << ROPE_K_ORIG,
    [ROPE_SCALE_YARN] = 1u << ROPE_K_FACTOR | 1u << ROPE_K_ORIG | 1u << ROPE_K_BFAST | 1u << ROPE_K_BSLOW |
                        1u << ROPE_K_MSCALE,
    [ROPE_SCALE_LLAMA3] = 1u << ROPE_K_FACTOR | 1u << ROPE_K_ORIG | 1u << ROPE_K_LOW | 1u << ROPE_K_HIGH,
};

/* The scaling's options: factor >= 1 (required), original_max (required but for linear), the rest defaulted
 * as HF does (yarn beta_fast 32, beta_slow 1; llama3 low_freq 1, high_freq 4). */
static bool rope_scaling_options(Sema *S, const AstStmt *st, const AstValue *const *opt, RopeSpec *r) {
    const char *name = rope_scaling_name(r->scaling);
    for (int k = ROPE_K_FACTOR; k < ROPE_NKEYS; k++)
        if (opt[k] && !(rope_keys_of[r->scaling] >> k & 1)) {
            diag_error(S->d, opt[k]->loc, "'scaling=%s' takes no '%s'", name, rope_keys[k]);
            return false;
        }
    if (r->scaling == ROPE_SCALE_NONE) return true;
    if (!opt[ROPE_K_FACTOR]) {
        diag_error(S->d, stmt_end(st), "'scaling=%s' needs factor=NUM", name);
        return false;
    }
    if (!num_value(S, opt[ROPE_K_FACTOR], "'factor'", &r->factor)) return false;
    if (!(r->factor >= 1)) {
        diag_error(S->d, opt[ROPE_K_FACTOR]->loc, "'factor' must be at least 1, found %s",
                   text_of(S, opt[ROPE_K_FACTOR]->loc));
        return false;
    }
    if (r->scaling != ROPE_SCALE_LINEAR) {
        long orig = 0;
        if (!opt[ROPE_K_ORIG]) {
            diag_error(S->d, stmt_end(st), "'scaling=%s' needs original_max=INT (the pretraining context)", name);
            return false;
        }
        if (!int_value(S, opt[ROPE_K_ORIG], "'original_max'", 1, MAX_DIM, &orig)) return false;
        r->original_max = (int)orig;
    }
    r->beta_fast = 32;
    r->beta_slow = 1;
    r->low_freq = 1;
    r->high_freq = 4;
    if (!positive_option(S, opt[ROPE_K_BFAST], "'beta_fast'", &r->beta_fast) ||
        !positive_option(S, opt[ROPE_K_BSLOW], "'beta_slow'", &r->beta_slow) ||
        !positive_option(S, opt[ROPE_K_LOW], "'low_freq'", &r->low_freq) ||
        !positive_option(S, opt[ROPE_K_HIGH], "'high_freq'", &r->high_freq) ||
        !positive_option(S, opt[ROPE_K_MSCALE], "'mscale'", &r->mscale))
        return false;
    if (r->scaling == ROPE_SCALE_LLAMA3 && !(r->high_freq > r->low_freq)) {
        diag_error(S->d, opt[ROPE_K_HIGH] ? opt[ROPE_K_HIGH]->loc : stmt_end(st),
                   "'high_freq' (%g) must be greater than 'low_freq' (%g)", r->high_freq, r->low_freq);
        return false;
    }
    return true;
}

/* `positions rope theta=NUM [dims=INT] [pairs=halves|interleaved] [scaling=KIND factor=NUM ...]`. */
static bool rope_options(Sema *S, const SettingDef *def, const AstStmt *st, Setting *out) {
    static const char *const pairs[] = {"halves", "interleaved"};
    static const char *const scalings[] = {"none", "linear", "dynamic", "yarn", "llama3"};
    const AstValue *opt[ROPE_NKEYS];
    if (!options(S, def, st, 1, "'positions rope'", "option", rope_keys, ROPE_NKEYS, opt)) return false;
    RopeSpec *r = &out->rope;
    *r = (RopeSpec){.theta = 10000, .factor = 1};
    if (!opt[ROPE_K_THETA]) {
        diag_error(S->d, stmt_end(st), "rotary positions need a base: positions rope theta=NUM (Llama: 10000)");
        return false;
    }
    if (!num_value(S, opt[ROPE_K_THETA], "'theta'", &r->theta)) return false;
    if (!(r->theta > 1)) {
        diag_error(S->d, opt[ROPE_K_THETA]->loc, "'theta' must be greater than 1, found %s",
                   text_of(S, opt[ROPE_K_THETA]->loc));
        return false;
    }
    long dims = 0;
    if (opt[ROPE_K_DIMS] && !int_value(S, opt[ROPE_K_DIMS], "'dims'", 2, def->max, &dims)) return false;
    if (dims % 2) {
        diag_error(S->d, opt[ROPE_K_DIMS]->loc, "'dims' must be even (channels rotate in pairs), found %ld", dims);
        return false;
    }
    r->dims = (int)dims;
    const char *const *words[] = {pairs, scalings};
    const int nwords[] = {2, 5}, which[] = {ROPE_K_PAIRS, ROPE_K_SCALING};
    int picked[2] = {0, 0};
    for (int w = 0; w < 2; w++) {
        const AstValue *v = opt[which[w]];
        if (!v) continue;
        picked[w] = -1;
        for (int k = 0; k < nwords[w] && v->kind == AV_IDENT; k++)
            if (strcmp(v->str, words[w][k]) == 0) picked[w] = k;
        if (picked[w] < 0) {
            diag_error(S->d, v->loc, "unknown %s '%s'%s (expected %s)", rope_keys[which[w]], text_of(S, v->loc),
                       v->kind == AV_IDENT ? did_you_mean(S, v->str, words[w], nwords[w]) : "",
                       word_list(S, words[w], nwords[w]));
            return false;
        }
    }
    r->interleaved = picked[0] == 1;
    r->scaling = (RopeScaling)picked[1];
    return rope_scaling_options(S, st, opt, r);
}

static bool check_positions(Sema *S, const SettingDef *def, const AstStmt *st, Setting *out) {
    static const char *const kinds[] = {"none", "sinusoidal", "learned", "rope", "alibi"};
    static const PosKind pos_of[] = {POS_NONE, POS_SINUSOIDAL, POS_LEARNED, POS_ROPE, POS_ALIBI};
    static const char *const keys[] = {"max", "style"};
    static const int nkeys_of[] = {0, 2, 1, 0, 0}; /* style only for sinusoidal */
    int k = word_arg(S, def, st, 0, "positions kind", kinds, 5);
    if (k < 0) return false;
    out->pos = pos_of[k];
    if (out->pos == POS_ROPE) return rope_options(S, def, st, out);
    if (out->pos == POS_SINUSOIDAL && st->nargs > 1 && st->args[1]->kind == AV_IDENT &&
        strcmp(st->args[1]->str, "infused") == 0)
        return infused_options(S, def, st, out);
    const AstValue *opt[2] = {NULL, NULL}; /* max, style */
    const char *owner = arena_printf(S->a, "'positions %s'", kinds[k]);
    if (!options(S, def, st, 1, owner, "option", keys, nkeys_of[k], opt)) return false;
    const AstValue *max = opt[0];
    if (max && !int_value(S, max, "'max'", 1, def->max, &out->max_pos)) return false;
    out->pos_style = PIA_VASWANI;
    if (!style_value(S, opt[1], &out->pos_style)) return false;
    if (out->pos == POS_LEARNED && !max) {
        diag_error(S->d, stmt_end(st), "learned positions need a table size: positions learned max=INT");
        return false;
    }
    return true;
}

/* cutoffs=[INT, ...]: 1..MAX_ADAPTIVE_CUTOFFS strictly increasing positive integers. */
static bool adaptive_cutoffs(Sema *S, const AstValue *v, AdaptiveSpec *a) {
    if (v->kind != AV_LIST || v->nitems < 1 || v->nitems > MAX_ADAPTIVE_CUTOFFS) {
        diag_error(S->d, v->loc, "'cutoffs' needs a list of 1 to %d integers, found '%s'", MAX_ADAPTIVE_CUTOFFS,
                   text_of(S, v->loc));
        return false;
    }
    a->ncutoffs = v->nitems;
    for (int i = 0; i < v->nitems; i++) {
        long c;
        if (!int_value(S, v->items[i], "a cutoff", 1, MAX_DIM, &c)) return false;
        if (i > 0 && c <= a->cutoffs[i - 1]) {
            diag_error(S->d, v->items[i]->loc, "cutoffs must be strictly increasing: %ld follows %d", c, a->cutoffs[i - 1]);
            return false;
        }
        a->cutoffs[i] = (int)c;
    }
    return true;
}

/* The adaptive options after `embedding tied|untied` (the vocab and d_model rules are in build_spec). */
static bool adaptive_options(Sema *S, const SettingDef *def, const AstStmt *st, Setting *out) {
    static const char *const keys[] = {"adaptive", "cutoffs", "factor", "scale"};
    static const char *const styles[] = {"fairseq", "transformer_xl"};
    const AstValue *v[4];
    if (!options(S, def, st, 1, "'embedding'", "option", keys, 4, v)) return false;
    AdaptiveSpec *a = &out->adaptive;
    memset(a, 0, sizeof *a);
    if (!v[0]) {
        for (int k = 1; k < 4; k++)
            if (v[k]) {
                diag_error(S->d, v[k]->loc, "'%s' needs an adaptive embedding (adaptive=fairseq|transformer_xl)", keys[k]);
                return false;
            }
        return true;
    }
    int style = -1;
    for (int k = 0; k < 2 && v[0]->kind == AV_IDENT; k++)
        if (strcmp(v[0]->str, styles[k]) == 0) style = k;
    if (style < 0) {
        diag_error(S->d, v[0]->loc, "unknown adaptive style '%s' (expected %s)", text_of(S, v[0]->loc), word_list(S, styles, 2));
        return false;
    }
    a->style = style == 0 ? ADAPTIVE_FAIRSEQ : ADAPTIVE_TXL;
    if (!v[1]) {
        diag_error(S->d, stmt_end(st), "an adaptive embedding needs its band boundaries: cutoffs=[INT,...]");
        return false;
    }
    if (!adaptive_cutoffs(S, v[1], a)) return false;
    long factor = 4;
    if (v[2] && !int_value(S, v[2], "'factor'", 1, MAX_DIM, &factor)) return false;
    a->factor = (int)factor;
    a->scale = 0; /* 0: sqrt(d_model), resolved in build_spec */
    if (v[3]) {
        if (!num_value(S, v[3], "'scale'", &a->scale)) return false;
        if (!(a->scale > 0)) {
            diag_error(S->d, v[3]->loc, "scale must be greater than 0, found %s", text_of(S, v[3]->loc));
            return false;
        }
    }
    out->cutoffs_ast = v[1];
    out->factor_ast = v[2];
    return true;
}

static bool check_embedding(Sema *S, const SettingDef *def, const AstStmt *st, Setting *out) {
    static const char *const kinds[] = {"tied", "untied"};
    int k = word_arg(S, def, st, 0, "embedding mode", kinds, 2);
    if (k < 0) return false;
    out->tied = k == 0;
    return adaptive_options(S, def, st, out);
}

/*
 * The adaptive rules that need the vocab and d_model: every cutoff below the
 * vocab, every band width d_model / factor^i a whole number.
 */
static void check_adaptive_sizes(Sema *S, const Setting *emb, ModelSpec *s) {
    AdaptiveSpec *a = &s->adaptive;
    if (a->style == ADAPTIVE_NONE) return;
    for (int i = 0; i < a->ncutoffs; i++)
        if (a->cutoffs[i] >= s->vocab) {
            diag_error(S->d, emb->cutoffs_ast->items[i]->loc, "cutoff %d is not below the vocabulary size %d",
                       a->cutoffs[i], s->vocab);
            diag_note(S->d, s->where[SET_VOCAB], "vocab set here");
            return;
        }
    long long w = s->d_model;
    for (int i = 1; i <= a->ncutoffs; i++) {
        if (w % a->factor != 0) {
            diag_error(S->d, emb->factor_ast ? emb->factor_ast->loc : emb->stmt->loc,
                       "band %d width: d_model %d / factor %d^%d is not a whole number", i, s->d_model, a->factor, i);
            return;
        }
        w /= a->factor;
    }
    if (a->scale == 0) a->scale = sqrt((double)s->d_model);
}

/* math fp32|tf32: how GEMMs on fp32 operands multiply (tf32: TF32 tensor cores, docs/language.md). */
static bool check_math(Sema *S, const SettingDef *def, const AstStmt *st, Setting *out) {
    static const char *const modes[] = {"fp32", "tf32"};
    int k = word_arg(S, def, st, 0, "math mode", modes, 2);
    if (k < 0) return false;
    out->tf32 = k == 1;
    return no_more(S, def, st, 1);
}

/* final_norm on|off: whether a pre-norm model's last block output goes through ln_f (docs/language.md). */
static bool check_final_norm(Sema *S, const SettingDef *def, const AstStmt *st, Setting *out) {
    static const char *const states[] = {"on", "off"};
    int k = word_arg(S, def, st, 0, "final_norm value", states, 2);
    if (k < 0) return false;
    out->final_off = k == 1;
    return no_more(S, def, st, 1);
}

/* bias on|off: whether the attention and FFN projections add bias vectors (docs/language.md). */
static bool check_bias(Sema *S, const SettingDef *def, const AstStmt *st, Setting *out) {
    static const char *const states[] = {"on", "off"};
    int k = word_arg(S, def, st, 0, "bias value", states, 2);
    if (k < 0) return false;
    out->bias_off = k == 1;
    return no_more(S, def, st, 1);
}

/* block sequential|parallel: the FFN reads the attention's output, or both read the block input (GPT-NeoX). */
static bool check_block(Sema *S, const SettingDef *def, const AstStmt *st, Setting *out) {
    static const char *const kinds[] = {"sequential", "parallel"};
    int k = word_arg(S, def, st, 0, "block kind", kinds, 2);
    if (k < 0) return false;
    out->parallel = k == 1;
    return no_more(S, def, st, 1);
}

/* Option k of a recurrence statement as one of words (index), or -1 (reported); absent: dflt. */
static int rec_word(Sema *S, const AstValue *v, const char *what, const char *const *words, int n, int dflt) {
    if (!v) return dflt;
    for (int k = 0; k < n && v->kind == AV_IDENT; k++)
        if (strcmp(v->str, words[k]) == 0) return k;
    if (v->kind == AV_INT && n == 2 && strcmp(words[0], "0") == 0 && (v->ival == 0 || v->ival == 1)) return (int)v->ival;
    diag_error(S->d, v->loc, "unknown %s '%s' (expected %s)", what, text_of(S, v->loc), word_list(S, words, n));
    return -1;
}

/* recurrence [insert=INT] [ffn=[INT,...]] ...: Yoshida et al.'s module, with the paper's defaults. */
static bool check_recurrence(Sema *S, const SettingDef *def, const AstStmt *st, Setting *out) {
    static const char *const keys[] = {"insert", "ffn", "act", "pool", "states", "norm", "overlap"};
    static const char *const acts[] = {"relu", "gelu", "gelu_tanh"};
    static const Activation act_of[] = {ACT_RELU, ACT_GELU, ACT_GELU_TANH};
    static const char *const pools[] = {"mean", "sum"}, *const states[] = {"blocks", "embed_blocks"};
    static const char *const flags[] = {"0", "1"};
    const AstValue *v[7];
    if (!options(S, def, st, 0, "'recurrence'", "option", keys, 7, v)) return false;
    RecurrenceSpec *r = &out->rec;
    *r = (RecurrenceSpec){.on = true, .insert = 2, .nhidden = 3, .hidden = {200, 200, 200}, .norm = true, .loc = st->loc};
    long n = 2;
    if (v[0] && !int_value(S, v[0], "'insert'", 1, MAX_LAYERS, &n)) return false;
    r->insert = (int)n;
    if (v[1]) {
        if (v[1]->kind != AV_LIST || v[1]->nitems > MAX_REC_FFN) {
            diag_error(S->d, v[1]->loc, "'ffn' needs a list of 0 to %d hidden widths, found '%s'", MAX_REC_FFN,
                       text_of(S, v[1]->loc));
            return false;
        }
        r->nhidden = v[1]->nitems;
        for (int i = 0; i < r->nhidden; i++) {
            if (!int_value(S, v[1]->items[i], "a hidden width", 1, def->max, &n)) return false;
            r->hidden[i] = (int)n;
        }
    }
    int a = rec_word(S, v[2], "activation", acts, 3, 0), p = rec_word(S, v[3], "pooling", pools, 2, 0);
    int k = rec_word(S, v[4], "hidden states", states, 2, 0), nm = rec_word(S, v[5], "norm flag", flags, 2, 1);
    if (a < 0 || p < 0 || k < 0 || nm < 0) return false;
    r->act = act_of[a];
    r->pool = p == 0 ? REC_POOL_MEAN : REC_POOL_SUM;
    r->states = k == 0 ? REC_STATES_BLOCKS : REC_STATES_EMBED;
    r->norm = nm == 1;
    n = 0;
    if (v[6] && !int_value(S, v[6], "'overlap'", 0, def->max, &n)) return false;
    r->overlap = (int)n;
    out->insert_ast = v[0];
    out->overlap_ast = v[6];
    return true;
}

/* The recurrence rules that need the layers and the segment: l_ins a layer, overlap < segment, pre-norm. */
static void check_recurrence_sizes(Sema *S, const Setting *rs, ModelSpec *s) {
    const RecurrenceSpec *r = &s->rec;
    if (!r->on) return;
    if (r->insert > s->n_layers) {
        diag_error(S->d, rs->insert_ast ? rs->insert_ast->loc : rs->stmt->loc,
                   "insert=%d is beyond the model's %d layers (l_ins counts layers from 1)", r->insert, s->n_layers);
        diag_note(S->d, s->where[SET_LAYERS], "layers set here");
    }
    if (r->overlap >= s->segment) {
        diag_error(S->d, rs->overlap_ast->loc, "overlap %d must be less than the window (segment %d)", r->overlap,
                   s->segment);
        diag_note(S->d, s->where[SET_SEGMENT], "segment set here");
    }
    int inputs = s->n_layers + (r->states == REC_STATES_EMBED) + 1 + 2 * (r->nhidden + 1);
    if (inputs + 2 > MAX_NODE_INPUTS) /* + the state and T: the update kernel's arguments */
        diag_error(S->d, rs->stmt->name_loc, "recurrence over %d layers with %d hidden layers needs %d kernel arguments, "
                   "more than the %d shortc supports", s->n_layers, r->nhidden, inputs + 2, MAX_NODE_INPUTS);
    if (s->norm_place != NORM_PRE || s->adaptive.style != ADAPTIVE_NONE)
        diag_error(S->d, rs->stmt->name_loc, "recurrence needs a pre-norm model with a plain embedding (GPT-2)");
}

/* memory INT: rows of earlier layer inputs a relative-attention layer keeps (0..2^24; 0: none). */
static bool check_memory(Sema *S, const SettingDef *def, const AstStmt *st, Setting *out) {
    const AstValue *v = arg(S, def, st, 0, "an integer");
    if (!v || !int_value(S, v, "'memory'", 0, def->max, &out->n)) return false;
    return no_more(S, def, st, 1);
}

static bool check_weights(Sema *S, const SettingDef *def, const AstStmt *st, Setting *out) {
    static const char *const schemes[] = {"hf_gpt2", "transformer_xl"};
    int k = word_arg(S, def, st, 0, "weight naming scheme", schemes, 2);
    if (k < 0) return false;
    out->naming = k == 1 ? NAMING_TXL : NAMING_HF_GPT2;
    return no_more(S, def, st, 1);
}

/*
 * attention KIND key=value... The accepted keys of a kind are the parameters
 * of its row of the kind table (attn_kinds.c): required, or with a default.
 * Parameters are stored sorted by key, defaults included; attn_spec_type
 * types and checks them once the layer's heads are known (build_spec).
 */
static bool check_attention(Sema *S, const SettingDef *def, const AstStmt *st, Setting *out) {
    const char *names[ATTN_COUNT];
    for (int i = 0; i < ATTN_COUNT; i++) names[i] = attn_kind_name((AttnKind)i);
    int k = word_arg(S, def, st, 0, "attention kind", names, ATTN_COUNT);
    if (k < 0) return false;

    const AttnKindRow *row = attn_kind_row((AttnKind)k);
    const char *keys[MAX_ATTN_PARAMS];
    int nkeys = attn_kind_nparams(row);
    for (int i = 0; i < nkeys; i++) keys[i] = row->params[i].name;
    const AstValue *vals[MAX_ATTN_PARAMS];
    const char *owner = arena_printf(S->a, "attention '%s'", names[k]);
    if (!options(S, def, st, 1, owner, "parameter", keys, nkeys, vals)) return false;

    AttnSpec *a = &out->attn;
    memset(a, 0, sizeof *a);
    a->kind = (AttnKind)k;
    a->loc = st->loc;
    bool ok = true;
    for (int i = 0; i < nkeys; i++) {
        double value;
        if (vals[i]) {
            if (!num_value(S, vals[i], arena_printf(S->a, "'%s'", keys[i]), &value)) {
                ok = false;
                continue;
            }
        } else if (row->params[i].def) {
            value = strtod(row->params[i].def, NULL);
        } else {
            diag_error(S->d, stmt_end(st), "attention '%s' needs '%s=NUM'", names[k], keys[i]);
            ok = false;
            continue;
        }
        int j = a->nparams++;
        while (j > 0 && strcmp(a->params[j - 1].key, keys[i]) > 0) {
            a->params[j] = a->params[j - 1];
            j--;
        }
        a->params[j].key = keys[i];
        a->params[j].value = value;
    }
    return ok;
}

static bool check_layout(Sema *S, const SettingDef *def, const AstStmt *st, Setting *out) {
    const char *dnames[NSTORAGE];
    for (int i = 0; i < NSTORAGE; i++) dnames[i] = dtype_name(storage_dtypes[i]);
    int c = word_arg(S, def, st, 0, "tensor class", class_names, TC_COUNT);
    if (c < 0) return false;
    int t = word_arg(S, def, st, 1, "dtype", dnames, NSTORAGE);
    if (t < 0) return false;
    out->key = K_LAYOUT + c;
    out->layout.dtype = storage_dtypes[t];
    out->layout.order = default_order[c];
    out->layout.loc = st->loc;
    if (st->nargs < 3) return true;

    const AstValue *v = st->args[2];
    const char *accepted[NORDERS];
    int naccepted = 0;
    for (int o = 0; o < NORDERS; o++) {
        if (orders[o].tc != (TensorClass)c) continue;
        int n = 0;
        while (n < 3 && orders[o].words[n]) n++;
        accepted[naccepted++] = dim_order_name(orders[o].order);
        if (v->kind != AV_LIST || v->nitems != n) continue;
        int i = 0;
        while (i < n && v->items[i]->kind == AV_IDENT && strcmp(v->items[i]->str, orders[o].words[i]) == 0) i++;
        if (i == n) {
            out->layout.order = orders[o].order;
            return no_more(S, def, st, 3);
        }
    }
    if (v->kind != AV_LIST)
        diag_error(S->d, v->loc, "expected a dimension order list for %s, like %s", class_names[c],
                   dim_order_name(default_order[c]));
    else
        diag_error(S->d, v->loc, "unsupported %s order %s (accepted: %s)", class_names[c], text_of(S, v->loc),
                   word_list(S, accepted, naccepted));
    return false;
}

/* ------------------------------------------------------------------ */
/* Files and imports                                                   */
/* ------------------------------------------------------------------ */

static FileEntry *find_entry(Sema *S, const char *real) {
    for (int i = 0; i < S->entries.len; i++) {
        FileEntry *e = S->entries.items[i];
        if (strcmp(e->real, real) == 0) return e;
    }
    return NULL;
}

static char *real_path(Sema *S, const char *path) {
    char *r = realpath(path, NULL);
    if (!r) return NULL;
    char *copy = arena_strdup(S->a, r);
    free(r);
    return copy;
}

/* Whether a path names a .arch file (the only kind an import reads). */
static bool arch_name(const char *path) {
    size_t n = strlen(path);
    return n > 5 && strcmp(path + n - 5, ".arch") == 0 && path[n - 6] != '/';
}

/* The model path of shortc_set_import_path (NULL: $SHORTC_PATH alone). */
static const char *import_search_dirs;

void shortc_set_import_path(const char *dirs) { import_search_dirs = dirs; }

/* Whether an import path may be looked up along the model path: relative, with no "." or ".." component
 * (so a search never climbs out of a model directory). */
static bool searchable_import(const char *path) {
    if (path[0] == '/') return false;
    for (const char *p = path; *p;) {
        size_t n = strcspn(p, "/");
        if ((n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.')) return false;
        p += n;
        while (*p == '/') p++;
    }
    return true;
}

/* The first DIR/path along the model path (colon-separated dirs: shortc_set_import_path's, else
 * $SHORTC_PATH; empty entries skipped) that exists, or NULL. */
static const char *search_import(Sema *S, const char *path) {
    const char *dirs = import_search_dirs ? import_search_dirs : getenv("SHORTC_PATH");
    if (!dirs || !searchable_import(path)) return NULL;
    for (const char *d = dirs; *d;) {
        size_t n = strcspn(d, ":");
        if (n > 0) {
            const char *cand = arena_printf(S->a, "%.*s/%s", (int)n, d, path);
            struct stat st;
            if (stat(cand, &st) == 0) return cand;
        }
        d += n;
        if (*d == ':') d++;
    }
    return NULL;
}

/* `import` paths are relative to the importing file's directory; one not found there (relative, no "." or
 * ".." component) is looked up along the model path (docs/language.md, "Imports"). */
static const char *import_path(Sema *S, const char *importer, const char *path) {
    const char *slash = strrchr(importer, '/');
    if (path[0] == '/') return path;
    const char *local = slash ? arena_printf(S->a, "%.*s/%s", (int)(slash - importer), importer, path) : path;
    struct stat st;
    if (!arch_name(path) || stat(local, &st) == 0) return local; /* a non-.arch path is refused untouched */
    const char *found = search_import(S, path);
    return found ? found : local;
}

static void visit_file(Sema *S, FileEntry *fe) {
    fe->state = FILE_VISITING;
    ptrvec_push(S->a, &S->stack, fe);
    for (int i = 0; i < fe->ast->nimports; i++) {
        const AstImport *im = &fe->ast->imports[i];
        const char *path = import_path(S, fe->ast->src->path, im->path);
        struct stat st;
        char *real = NULL;
        if (!arch_name(path)) {   /* refused before the file is touched (docs/security.md) */
            diag_error(S->d, im->loc, "cannot import '%s': not a .arch file", clip(S, path));
            continue;
        }
        if (stat(path, &st) != 0 || !(real = real_path(S, path))) {
            int err = errno;
            diag_error(S->d, im->loc, "cannot import '%s': %s", clip(S, path), strerror(err));
            continue;
        }
        if (!arch_name(real)) {   /* a link to another kind of file */
            diag_error(S->d, im->loc, "cannot import '%s': it is '%s', not a .arch file", clip(S, path),
                       clip(S, real));
            continue;
        }
        if (!S_ISREG(st.st_mode)) {   /* a directory, or a device that might never end */
            diag_error(S->d, im->loc, "cannot import '%s': %s", clip(S, path),
                       S_ISDIR(st.st_mode) ? strerror(EISDIR) : "not a regular file");
            continue;
        }
        FileEntry *e = find_entry(S, real);
        if (e && e->state == FILE_VISITING) {
            const char *cycle = "";
            int from = S->stack.len - 1;
            while (from > 0 && S->stack.items[from] != e) from--;
            for (int k = from; k < S->stack.len; k++)
                cycle = arena_printf(S->a, "%s%s -> ", cycle, ((FileEntry *)S->stack.items[k])->ast->src->path);
            diag_error(S->d, im->loc, "import cycle: %s%s", cycle, e->ast->src->path);
            continue;
        }
        if (e) continue;   /* already parsed */
        Source *src = diag_load_file(S->d, path);
        if (!src) continue;
        e = arena_alloc(S->a, sizeof *e);
        e->real = real;
        e->ast = parse_source(S->a, S->d, src);
        ptrvec_push(S->a, &S->entries, e);
        visit_file(S, e);
    }
    S->stack.len--;
    fe->state = FILE_DONE;
    ptrvec_push(S->a, &S->order, fe);
}

/* ------------------------------------------------------------------ */
/* Models                                                              */
/* ------------------------------------------------------------------ */

static const SettingDef *find_setting(Sema *S, const AstStmt *st) {
    for (int i = 0; i < NSETTINGS; i++)
        if (strcmp(st->name, settings[i].name) == 0) return &settings[i];
    const char *names[NSETTINGS];
    for (int i = 0; i < NSETTINGS; i++) names[i] = settings[i].name;
    diag_error(S->d, st->name_loc, "unknown setting '%s'%s", text_of(S, st->name_loc),
               did_you_mean(S, st->name, names, NSETTINGS));
    return NULL;
}

/* Checks one setting statement into out; false (reported) if it is not valid. */
static bool check_statement(Sema *S, const AstStmt *st, bool in_layer, Setting *out) {
    const SettingDef *def = find_setting(S, st);
    if (!def) return false;
    if (in_layer && !def->per_layer) {
        diag_error(S->d, st->name_loc, "'%s' is model-wide and cannot be set per layer", st->name);
        return false;
    }
    memset(out, 0, sizeof *out);
    out->key = def->key;
    if (!def->check(S, def, st, out)) return false;
    out->stmt = st;
    return true;
}

/* Stores a checked setting, reporting a second one for the same key. */
static void store(Sema *S, Setting *slot, const Setting *s, const char *where) {
    if (slot->stmt) {
        diag_error(S->d, s->stmt->name_loc, "'%s' is set twice in %s", key_name(S, s->key), where);
        diag_note(S->d, slot->stmt->loc, "first set here");
        return;
    }
    *slot = *s;
}

static void check_model(Sema *S, ModelInfo *mi) {
    const AstModel *m = mi->ast;
    const char *where = arena_printf(S->a, "model '%s'", m->name);
    int nblocks = 0;
    for (int i = 0; i < m->nstmts; i++) nblocks += m->stmts[i]->kind == ST_LAYER;
    mi->blocks = nblocks ? arena_alloc(S->a, sizeof(Block) * (size_t)nblocks) : NULL;
    for (int i = 0; i < m->nstmts; i++) {
        const AstStmt *st = m->stmts[i];
        Setting s;
        if (st->kind == ST_SETTING) {
            if (check_statement(S, st, false, &s)) store(S, &mi->set[s.key], &s, where);
            continue;
        }
        Block *b = &mi->blocks[mi->nblocks++];
        b->stmt = st;
        for (int j = 0; j < st->nbody; j++) {
            const AstStmt *inner = st->body[j];
            if (inner->kind == ST_LAYER) {
                diag_error(S->d, inner->loc, "layer blocks cannot be nested");
                continue;
            }
            if (check_statement(S, inner, true, &s))
                store(S, s.key == K_MEMORY ? &b->memory : &b->attn, &s, "this layer block");
        }
    }
}

static ModelInfo *find_model(Sema *S, const char *name) {
    for (int i = 0; i < S->nmodels; i++)
        if (strcmp(S->models[i].ast->name, name) == 0) return &S->models[i];
    return NULL;
}

static const char **model_names(Sema *S) {
    const char **names = arena_alloc(S->a, sizeof(char *) * (size_t)(S->nmodels + 1));
    for (int i = 0; i < S->nmodels; i++) names[i] = S->models[i].ast->name;
    return names;
}

/* Duplicate names, parents, inheritance cycles. */
static void link_models(Sema *S) {
    for (int i = 0; i < S->nmodels; i++) {
        ModelInfo *mi = &S->models[i];
        ModelInfo *first = find_model(S, mi->ast->name);
        if (first != mi) {
            diag_error(S->d, mi->ast->loc, "model '%s' is defined twice", mi->ast->name);
            diag_note(S->d, first->ast->loc, "first defined here");
        }
        if (!mi->ast->parent) continue;
        mi->parent = find_model(S, mi->ast->parent);
        if (!mi->parent)
            diag_error(S->d, mi->ast->parent_loc, "unknown parent model '%s'%s", mi->ast->parent,
                       did_you_mean(S, mi->ast->parent, model_names(S), S->nmodels));
    }
    /* Walk each model's ancestry; a walk that meets itself is a cycle, reported at its first model. */
    for (int i = 0; i < S->nmodels; i++) {
        ModelInfo *mi = &S->models[i];
        ModelInfo *p = mi->parent;
        while (p && p != mi && p->walk != i + 1) {
            p->walk = i + 1;
            p = p->parent;
        }
        if (p != mi) continue;
        bool first = true;
        const char *path = mi->ast->name;
        for (p = mi->parent; p != mi; p = p->parent) {
            if (p < mi) first = false;
            path = arena_printf(S->a, "%s -> %s", path, p->ast->name);
        }
        if (first)
            diag_error(S->d, mi->ast->parent_loc, "model '%s' inherits from itself: %s -> %s", mi->ast->name, path,
                       mi->ast->name);
    }
}

/* ------------------------------------------------------------------ */
/* The requested model                                                 */
/* ------------------------------------------------------------------ */

/*
 * Marks the layers a selector picks (sel[i] = true), reporting indices and
 * counts that do not fit n layers. Returns false on error.
 */
static bool select_layers(Sema *S, const AstSelector *s, int n, bool *sel, const char *model,
                          const Setting *layers) {
    switch (s->kind) {
    case SEL_ALL:
        for (int i = 0; i < n; i++) sel[i] = true;
        return true;
    case SEL_INDEX: {
        bool ok = true, warned = false;
        for (int k = 0; k < s->nindices; k++) {
            long ix = s->indices[k];
            if (ix < 0 || ix >= n) {
                diag_error(S->d, s->index_locs[k], "layer index %ld is out of range: model '%s' has %d layer%s (0-%d)",
                           ix, model, n, n == 1 ? "" : "s", n - 1);
                diag_note(S->d, layers->stmt->loc, "layers set to %d here", n);
                ok = false;
            } else if (sel[ix]) {
                if (!warned) diag_warning(S->d, s->index_locs[k], "layer %ld is listed twice", ix);
                warned = true;
            } else {
                sel[ix] = true;
            }
        }
        return ok;
    }
    case SEL_EVERY: {
        if (s->n < 1) {
            diag_error(S->d, s->loc, "'every' needs a step of at least 1, found %ld", s->n);
            return false;
        }
        long from = s->from >= 0 ? s->from : s->n - 1;
        for (long i = from; i < n; i = s->n >= n ? n : i + s->n) sel[i] = true;
        return true;
    }
    case SEL_FIRST:
    case SEL_LAST:
    case SEL_INTERLEAVED: {
        const char *word = s->kind == SEL_FIRST ? "first" : s->kind == SEL_LAST ? "last" : "interleaved";
        if (s->n < 1 || s->n > n) {
            diag_error(S->d, s->loc, "'%s' needs a count between 1 and %d (the layers of model '%s'), found %ld",
                       word, n, model, s->n);
            if (s->n > n) diag_note(S->d, layers->stmt->loc, "layers set to %d here", n);
            return false;
        }
        for (long i = 0; i < s->n; i++) {
            long ix = s->kind == SEL_FIRST ? i : s->kind == SEL_LAST ? n - s->n + i : (i + 1) * n / s->n - 1;
            sel[ix] = true;
        }
        return true;
    }
    }
    return false;
}

/* The `memory` of one block on the layers it selected (two blocks of one model giving a layer different lengths conflict). */
static void apply_block_memory(Sema *S, const ModelInfo *mi, const Block *blk, const bool *sel, ModelSpec *spec,
                               const Setting **owner) {
    if (!blk->memory.stmt) return;
    bool reported = false;
    for (int i = 0; i < spec->n_layers; i++) {
        if (!sel[i]) continue;
        if (owner[i] && owner[i]->n != blk->memory.n) {
            if (!reported) {
                diag_error(S->d, blk->memory.stmt->loc, "conflicting memory for layer %d in model '%s'", i, mi->ast->name);
                diag_note(S->d, owner[i]->stmt->loc, "layer %d was given memory %ld here", i, owner[i]->n);
            }
            reported = true;
            continue;
        }
        owner[i] = &blk->memory;
        spec->layers[i].memory = (int)blk->memory.n;
        spec->layers[i].memory_loc = blk->memory.stmt->loc;
    }
}

/* Applies the layer blocks of one model of the chain (a conflict is two blocks of it disagreeing). */
static void apply_blocks(Sema *S, const ModelInfo *mi, ModelSpec *spec, const Setting *layers) {
    int n = spec->n_layers;
    const Setting **owner = arena_alloc(S->a, sizeof(Setting *) * (size_t)n);
    const Setting **mem_owner = arena_alloc(S->a, sizeof(Setting *) * (size_t)n);
    bool *sel = arena_alloc(S->a, (size_t)n);
    for (int b = 0; b < mi->nblocks; b++) {
        const Block *blk = &mi->blocks[b];
        memset(sel, 0, (size_t)n);
        if (!select_layers(S, &blk->stmt->sel, n, sel, spec->name, layers)) continue;
        int count = 0;
        for (int i = 0; i < n; i++) count += sel[i];
        if (count == 0) {
            diag_warning(S->d, blk->stmt->sel.loc, "this selector picks no layer of model '%s' (%d layers)",
                         spec->name, n);
            continue;
        }
        apply_block_memory(S, mi, blk, sel, spec, mem_owner);
        if (!blk->attn.stmt) continue;
        bool reported = false;
        for (int i = 0; i < n; i++) {
            if (!sel[i]) continue;
            if (owner[i] && !same_attn(&owner[i]->attn, &blk->attn.attn)) {
                if (!reported) {
                    diag_error(S->d, blk->attn.stmt->loc, "conflicting attention for layer %d in model '%s'", i,
                               mi->ast->name);
                    diag_note(S->d, owner[i]->stmt->loc, "layer %d was given a different attention here", i);
                }
                reported = true;
                continue;
            }
            owner[i] = &blk->attn;
            spec->layers[i].attn = blk->attn.attn;
        }
    }
}

/* The first layer whose attention is (relative) or is not (!relative) `relative`; -1 when none. */
static int layer_with_relative(const ModelSpec *s, bool relative) {
    for (int i = 0; i < s->n_layers; i++)
        if ((attn_kind_row(s->layers[i].attn.kind)->state == ATTN_STATE_MEMORY) == relative) return i;
    return -1;
}

/* Where a layer's attention was set: its statement, else the model's `attention`, else `layers`. */
static Loc attn_loc(const Setting *eff, const ModelSpec *s, int layer) {
    if (s->layers[layer].attn.loc.file >= 0) return s->layers[layer].attn.loc;
    return eff[K_ATTENTION].stmt ? eff[K_ATTENTION].stmt->loc : eff[K_LAYERS].stmt->loc;
}

/*
 * Transformer-XL rules (docs/attention/relative.md): relative attention on
 * every layer or none, only with `weights transformer_xl` (and that scheme only
 * with it), no absolute positions, an even d_model (the sinusoid's halves),
 * `memory` only on relative layers, `same_length=1` only with a memory.
 */
static void check_relative(Sema *S, const Setting *eff, const ModelSpec *s) {
    int rel = layer_with_relative(s, true), plain = layer_with_relative(s, false);
    for (int i = 0; i < s->n_layers; i++)
        if (s->layers[i].memory > 0 && attn_kind_row(s->layers[i].attn.kind)->state != ATTN_STATE_MEMORY) {
            diag_error(S->d, s->layers[i].memory_loc, "'memory' needs relative attention (layer %d has '%s')", i,
                       attn_kind_name(s->layers[i].attn.kind));
            return;
        }
    if (rel < 0) {
        if (s->naming == NAMING_TXL)
            diag_error(S->d, eff[K_WEIGHTS].stmt->loc,
                       "weights transformer_xl names the weights of relative attention; this model has none (use 'attention relative')");
        return;
    }
    if (plain >= 0) {
        diag_error(S->d, attn_loc(eff, s, plain), "layer %d has attention '%s', but relative attention must be used by every layer",
                   plain, attn_kind_name(s->layers[plain].attn.kind));
        diag_note(S->d, attn_loc(eff, s, rel), "layer %d has relative attention here", rel);
        return;
    }
    if (s->naming != NAMING_TXL) {
        diag_error(S->d, attn_loc(eff, s, rel), "relative attention needs 'weights transformer_xl' (its weights have no %s names)",
                   "hf_gpt2");
        if (eff[K_WEIGHTS].stmt) diag_note(S->d, eff[K_WEIGHTS].stmt->loc, "weights set here");
    }
    if (s->pos != POS_NONE)
        diag_error(S->d, eff[K_POSITIONS].stmt->loc, "relative attention takes no absolute positions (use 'positions none')");
    if (s->d_model % 2 != 0)
        diag_error(S->d, eff[K_D_MODEL].stmt->loc, "relative attention needs an even d_model (sin and cos halves), found %d",
                   s->d_model);
    for (int i = 0; i < s->n_layers; i++) {
        const AttnSpec *a = &s->layers[i].attn;
        if (a->prm.same_length && s->layers[i].memory == 0) {
            diag_error(S->d, attn_loc(eff, s, i), "same_length=1 needs a memory: layer %d has memory 0", i);
            return;
        }
    }
}

static void check_block_family(Sema *S, const Setting *eff, const ModelSpec *s);

/*
 * Rotary and ALiBi positions and grouped K/V heads (issue 22): rope's dims
 * default to head_dim and must fit it; none of them combines with the
 * modules whose tensors assume H full K/V heads at unrotated positions
 * (Transformer-XL's relative attention, the recurrence's extra key,
 * Shortformer's position-infused attention and cache).
 */
static void check_rope_and_groups(Sema *S, const Setting *eff, ModelSpec *s) {
    const AstStmt *pos = eff[K_POSITIONS].stmt;
    if (s->pos == POS_ROPE) {
        s->rope = eff[K_POSITIONS].rope;
        if (s->rope.dims == 0) s->rope.dims = s->head_dim;
        if (s->rope.dims > s->head_dim || s->rope.dims % 2) {
            diag_error(S->d, pos->loc, "rotary dims %d must be even and at most head_dim %d", s->rope.dims,
                       s->head_dim);
            return;
        }
        if (s->rope.scaling == ROPE_SCALE_DYNAMIC && s->rope.dims < 4) {
            diag_error(S->d, pos->loc, "dynamic scaling needs at least 4 rotary dims (its base grows by a power "
                       "dims/(dims-2)), found %d", s->rope.dims);
            return;
        }
    }
    bool rotary_or_alibi = s->pos == POS_ROPE || s->pos == POS_ALIBI, grouped = s->kv_heads != s->n_heads;
    if (!rotary_or_alibi && !grouped) return;
    const AstStmt *why = rotary_or_alibi ? pos : eff[K_HEADS].stmt;
    const char *what = rotary_or_alibi ? (s->pos == POS_ROPE ? "rotary positions" : "ALiBi positions")
                                       : "grouped K/V heads (kv_heads)";
    const AstStmt *other = s->rec.on ? eff[K_RECURRENCE].stmt : s->cache > 0 ? eff[K_CACHE].stmt
                         : s->infused != PIA_NONE ? pos : NULL;
    if (other) {
        diag_error(S->d, why->loc, "%s cannot be combined with %s", what,
                   s->rec.on ? "a recurrence" : s->cache > 0 ? "a cache" : "position-infused attention");
        if (other != why) diag_note(S->d, other->loc, "set here");
    }
    if (grouped && s->naming != NAMING_HF_GPT2)
        diag_error(S->d, eff[K_HEADS].stmt->loc, "%s need weights hf_gpt2 (relative attention has H K/V heads)", what);
}

static ModelSpec *build_spec(Sema *S, ModelInfo *target) {
    int errors = S->d->errors;
    /* the chain, root first */
    int depth = 0;
    for (ModelInfo *p = target; p; p = p->parent) depth++;
    ModelInfo **chain = arena_alloc(S->a, sizeof(ModelInfo *) * (size_t)depth);
    int k = depth;
    for (ModelInfo *p = target; p; p = p->parent) chain[--k] = p;

    Setting eff[K_COUNT];
    memset(eff, 0, sizeof eff);
    for (int i = 0; i < depth; i++)
        for (int key = 0; key < K_COUNT; key++)
            if (chain[i]->set[key].stmt) eff[key] = chain[i]->set[key];

    for (int i = 0; i < NSETTINGS; i++)
        if (settings[i].required && !eff[settings[i].key].stmt)
            diag_error(S->d, target->ast->loc, "model '%s' does not set '%s' (usage: %s)", target->ast->name,
                       settings[i].name, settings[i].usage);
    if (S->d->errors > errors) return NULL;

    ModelSpec *s = arena_alloc(S->a, sizeof *s);
    s->name = target->ast->name;
    s->parent = target->ast->parent;
    s->path = target->src->path;
    s->vocab = (int)eff[K_VOCAB].n;
    s->d_model = (int)eff[K_D_MODEL].n;
    s->n_heads = (int)eff[K_HEADS].n;
    s->kv_heads = eff[K_HEADS].kv_heads > 0 ? (int)eff[K_HEADS].kv_heads : s->n_heads;
    s->d_ff = (int)eff[K_FFN].n;
    s->act = eff[K_FFN].act;
    s->gated = eff[K_FFN].gated;
    s->no_bias = eff[K_BIAS].stmt && eff[K_BIAS].bias_off;
    s->parallel = eff[K_BLOCK].stmt && eff[K_BLOCK].parallel;
    s->segment = (int)eff[K_SEGMENT].n;
    s->n_layers = (int)eff[K_LAYERS].n;
    s->norm = eff[K_NORM].stmt ? eff[K_NORM].norm : NORM_LAYERNORM;
    s->norm_place = eff[K_NORM].stmt ? eff[K_NORM].place : NORM_PRE;
    s->eps = eff[K_NORM].stmt ? eff[K_NORM].eps : 1e-5;
    s->pos = eff[K_POSITIONS].stmt ? eff[K_POSITIONS].pos : POS_NONE;
    s->max_pos = (int)eff[K_POSITIONS].max_pos;
    s->tied = eff[K_EMBEDDING].stmt ? eff[K_EMBEDDING].tied : true;
    s->tf32 = eff[K_MATH].stmt && eff[K_MATH].tf32;
    s->no_final_norm = eff[K_FINAL_NORM].stmt && eff[K_FINAL_NORM].final_off;
    if (eff[K_FINAL_NORM].stmt && !s->no_final_norm && s->norm_place == NORM_POST) {
        diag_error(S->d, eff[K_FINAL_NORM].stmt->args[0]->loc, "'final_norm on' needs a pre-norm model (a post-norm model's "
                   "last block already ends in its norm)");
        diag_note(S->d, eff[K_NORM].stmt->loc, "norm set here");
    }
    s->infused = eff[K_POSITIONS].stmt ? eff[K_POSITIONS].infused : PIA_NONE;
    s->pos_style = s->pos == POS_SINUSOIDAL ? eff[K_POSITIONS].pos_style : PIA_VASWANI;
    s->cache = (int)eff[K_CACHE].n;
    if (s->cache > 0 && s->infused == PIA_NONE && s->cache % s->segment != 0) { /* Shortformer's ablation */
        diag_error(S->d, eff[K_CACHE].stmt->args[0]->loc, "a cache without position-infused attention must hold whole "
                   "segments (a multiple of the segment, %d): each segment's tokens restart at position 0 after "
                   "the cached ones", s->segment);
        if (eff[K_POSITIONS].stmt) diag_note(S->d, eff[K_POSITIONS].stmt->loc, "positions set here");
    }
    if (eff[K_EMBEDDING].stmt) s->adaptive = eff[K_EMBEDDING].adaptive;
    s->naming = NAMING_HF_GPT2;
    for (int key = 0; key < K_COUNT; key++)
        if (key_setting_id[key] >= 0) s->where[key_setting_id[key]] = eff[key].stmt ? eff[key].stmt->loc : LOC_NONE;
    for (int c = 0; c < TC_COUNT; c++) {
        const Setting *l = &eff[K_LAYOUT + c];
        s->layout[c] = l->stmt ? l->layout : (LayoutSpec){DT_F32, default_order[c], LOC_NONE};
    }

    if (eff[K_HEAD_DIM].stmt) {
        s->head_dim = (int)eff[K_HEAD_DIM].n;
    } else if (s->d_model % s->n_heads != 0) {
        diag_error(S->d, eff[K_HEADS].stmt->loc, "d_model %d is not divisible by heads %d (set head_dim to choose the head width)",
                   s->d_model, s->n_heads);
        diag_note(S->d, eff[K_D_MODEL].stmt->loc, "d_model set here");
    } else {
        s->head_dim = s->d_model / s->n_heads;
    }
    if ((long long)s->n_heads * s->head_dim > MAX_DIM) {
        diag_error(S->d, eff[K_HEAD_DIM].stmt->loc, "heads %d x head_dim %d is %lld, more than %d channels of attention",
                   s->n_heads, s->head_dim, (long long)s->n_heads * s->head_dim, MAX_DIM);
        diag_note(S->d, eff[K_HEADS].stmt->loc, "heads set here");
    }
    if (s->pos != POS_NONE && s->max_pos && s->segment > s->max_pos) {
        diag_error(S->d, eff[K_POSITIONS].stmt->loc, "segment %d exceeds %s positions max=%d", s->segment,
                   pos_kind_name(s->pos), s->max_pos);
        diag_note(S->d, eff[K_SEGMENT].stmt->loc, "segment set here");
    }

    check_adaptive_sizes(S, &eff[K_EMBEDDING], s);
    if (eff[K_RECURRENCE].stmt) s->rec = eff[K_RECURRENCE].rec;
    check_recurrence_sizes(S, &eff[K_RECURRENCE], s);

    AttnSpec base = {.kind = ATTN_CAUSAL, .loc = LOC_NONE};
    if (eff[K_ATTENTION].stmt) base = eff[K_ATTENTION].attn;
    s->layers = arena_alloc(S->a, sizeof(LayerSpec) * (size_t)s->n_layers);
    for (int i = 0; i < s->n_layers; i++) {
        s->layers[i].attn = base;
        s->layers[i].memory = (int)eff[K_MEMORY].n;
        s->layers[i].memory_loc = eff[K_MEMORY].stmt ? eff[K_MEMORY].stmt->loc : LOC_NONE;
    }
    for (int i = 0; i < depth; i++) apply_blocks(S, chain[i], s, &eff[K_LAYERS]);
    resolve_ramps(S, s);
    if (S->d->errors == errors) type_attention(S, s); /* as lowering did: only a model without other errors */
    bool cached = s->infused != PIA_NONE || s->cache > 0; /* Shortformer's cache, with PIA or without */
    const AstStmt *why = s->infused != PIA_NONE ? eff[K_POSITIONS].stmt : eff[K_CACHE].stmt;
    for (int i = 0; cached && i < s->n_layers; i++)
        if (s->layers[i].attn.kind != ATTN_CAUSAL) {
            diag_error(S->d, s->layers[i].attn.loc.file >= 0 ? s->layers[i].attn.loc : why->loc,
                       "%s is causal; layer %d has attention '%s'", s->infused != PIA_NONE ?
                       "position-infused attention" : "attention over a cache", i, attn_kind_name(s->layers[i].attn.kind));
            break;
        }
    if (cached && eff[K_RECURRENCE].stmt) { /* both would be the attention's third input */
        diag_error(S->d, eff[K_RECURRENCE].stmt->loc, "a recurrence cannot be combined with %s (its windows restart "
                   "positions; Shortformer's cache carries them)", s->infused != PIA_NONE ?
                   "position-infused attention" : "a cache");
        diag_note(S->d, why->loc, "%s set here", s->infused != PIA_NONE ? "positions" : "cache");
    }
    if ((s->infused == PIA_FAIRSEQ || (s->pos == POS_SINUSOIDAL && s->pos_style == PIA_FAIRSEQ)) && s->d_model < 4)
        diag_error(S->d, eff[K_POSITIONS].stmt->loc, "fairseq-style positions need d_model >= 4, found %d", s->d_model);
    if (eff[K_WEIGHTS].stmt) s->naming = eff[K_WEIGHTS].naming;
    if (S->d->errors == errors) check_relative(S, eff, s);
    check_block_family(S, eff, s);
    if (S->d->errors == errors) check_rope_and_groups(S, eff, s);

    return S->d->errors > errors ? NULL : s;
}

/*
 * The rules of the gated FFN, `bias off` and `block parallel`: GPT-2 naming only (Transformer-XL's layers have
 * their own names), a parallel block is pre-norm (each branch reads its own norm of the block input), and the
 * recurrence module reads c_attn's bias.
 */
static void check_block_family(Sema *S, const Setting *eff, const ModelSpec *s) {
    const AstStmt *why[3] = {s->gated ? eff[K_FFN].stmt : NULL, s->no_bias ? eff[K_BIAS].stmt : NULL,
                             s->parallel ? eff[K_BLOCK].stmt : NULL};
    static const char *const what[3] = {"a gated FFN", "'bias off'", "'block parallel'"};
    for (int i = 0; i < 3; i++) {
        if (!why[i]) continue;
        if (s->naming != NAMING_HF_GPT2) {
            diag_error(S->d, why[i]->loc, "%s needs weights hf_gpt2 (Transformer-XL's layers name their own tensors)",
                       what[i]);
            diag_note(S->d, eff[K_WEIGHTS].stmt->loc, "weights set here");
        }
        if (i == 1 && s->rec.on) {
            diag_error(S->d, why[i]->loc, "'bias off' cannot be combined with a recurrence (its extra key reads "
                       "c_attn's bias)");
            diag_note(S->d, eff[K_RECURRENCE].stmt->loc, "recurrence set here");
        }
        if (i == 2 && s->norm_place != NORM_PRE) {
            diag_error(S->d, why[i]->loc, "'block parallel' needs a pre-norm model (each branch normalizes the block "
                       "input)");
            diag_note(S->d, eff[K_NORM].stmt->loc, "norm set here");
        }
    }
}

/* ------------------------------------------------------------------ */
/* Entry points                                                        */
/* ------------------------------------------------------------------ */

ModelSpec *sema_model(Arena *a, Diag *d, AstFile *main_file, const char *model_name) {
    if (!main_file) return NULL;
    Sema S0 = {.a = a, .d = d}, *S = &S0;
    int errors = d->errors;

    FileEntry *root = arena_alloc(a, sizeof *root);
    root->ast = main_file;
    root->real = real_path(S, main_file->src->path);
    if (!root->real) root->real = arena_strdup(a, main_file->src->path);
    ptrvec_push(a, &S->entries, root);
    visit_file(S, root);
    if (d->errors > errors) return NULL;

    for (int i = 0; i < S->order.len; i++) S->nmodels += ((FileEntry *)S->order.items[i])->ast->nmodels;
    S->models = arena_alloc(a, sizeof(ModelInfo) * (size_t)(S->nmodels + 1));
    int n = 0;
    for (int i = 0; i < S->order.len; i++) {
        AstFile *f = ((FileEntry *)S->order.items[i])->ast;
        for (int j = 0; j < f->nmodels; j++) {
            S->models[n].ast = f->models[j];
            S->models[n].src = f->src;
            check_model(S, &S->models[n++]);
        }
    }
    link_models(S);
    if (d->errors > errors) return NULL;

    ModelInfo *target;
    if (model_name) {
        target = find_model(S, model_name);
        if (!target) {
            diag_plain_error(d, "no model named '%s' in %s%s", clip(S, model_name), main_file->src->path,
                             did_you_mean(S, model_name, model_names(S), S->nmodels));
            return NULL;
        }
    } else if (main_file->nmodels == 0) {
        diag_error(d, (Loc){main_file->src->id, 0, 0}, "no model is defined in this file");
        return NULL;
    } else {
        target = find_model(S, main_file->models[main_file->nmodels - 1]->name);
    }
    return build_spec(S, target);
}

/* Parses and checks a loaded source; the model named model_name (NULL: the last). */
static ModelSpec *load_source(Arena *a, Diag *d, Source *src, const char *model_name) {
    if (!src) return NULL;
    int errors = d->errors;
    AstFile *f = parse_source(a, d, src);
    if (d->errors > errors) return NULL;
    return sema_model(a, d, f, model_name);
}

ModelSpec *shortc_load_model(Arena *a, Diag *d, const char *path, const char *model_name) {
    return load_source(a, d, diag_load_file(d, path), model_name);
}

ModelSpec *shortc_load_model_text(Arena *a, Diag *d, const char *path, const char *text, size_t len,
                                  const char *model_name) {
    Source *src = diag_add_source(d, path, text, len);
    if (!src) diag_plain_error(d, "out of memory loading '%s'", path);
    return load_source(a, d, src, model_name);
}

int shortc_list_models(Arena *a, Diag *d, const char *path, const char ***names) {
    *names = NULL;
    Source *src = diag_load_file(d, path);
    if (!src) return -1;
    int errors = d->errors;
    AstFile *f = parse_source(a, d, src);
    if (d->errors > errors) return -1;
    const char **v = arena_alloc(a, sizeof *v * (size_t)(f->nmodels > 0 ? f->nmodels : 1));
    if (!v) {
        diag_plain_error(d, "out of memory");
        return -1;
    }
    for (int i = 0; i < f->nmodels; i++) v[i] = f->models[i]->name;
    *names = v;
    return f->nmodels;
}
