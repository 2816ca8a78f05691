/*
 * passes.c — runs the passes in order with ir_verify after lowering and
 * after each pass, and prints the IR for --dump-ir[=PASS] (docs/ir.md).
 */
#include "shortc.h"

#include <string.h>

typedef bool (*PassFn)(Graph *, Diag *);

static const struct {
    const char *name;
    PassFn fn;
} passes[] = {
    {"shapes", pass_shapes},
    {"layouts", pass_layouts},
    {"fuse", pass_fuse},
    {"dedup", pass_dedup},
    {"buffers", pass_buffers},
};
enum { NPASSES = sizeof passes / sizeof *passes };

static const char *const dump_names[] = {"lower", "shapes", "layouts", "fuse", "dedup", "buffers", "all", "every"};
enum { NDUMP = sizeof dump_names / sizeof *dump_names };

static void maybe_dump(const Graph *g, const Diag *d, const PassOptions *opt, const char *stage) {
    if (!opt || !opt->dump_after) return;
    if (strcmp(opt->dump_after, "every") == 0 || strcmp(opt->dump_after, stage) == 0) {
        FILE *out = opt->dump_to ? opt->dump_to : stdout;
        ir_print(out, g, d);
        if (strcmp(opt->dump_after, "every") == 0) fputc('\n', out);
    }
}

bool run_passes(Graph *g, Diag *d, const PassOptions *opt) {
    if (opt && opt->dump_after) {
        int k = 0;
        while (k < NDUMP && strcmp(opt->dump_after, dump_names[k]) != 0) k++;
        if (k == NDUMP) {
            const char *s = diag_suggest(opt->dump_after, dump_names, NDUMP);
            diag_plain_error(d, "unknown pass '%s' for --dump-ir%s%s%s (one of: lower shapes layouts fuse dedup buffers all every)",
                             opt->dump_after, s ? "; did you mean '" : "", s ? s : "", s ? "'?" : "");
            return false;
        }
    }
    int errors0 = d->errors;
    if (!g->stage) g->stage = "lower";
    if (!ir_verify(g, d)) return false;
    maybe_dump(g, d, opt, "lower");
    for (int i = 0; i < NPASSES; i++) {
        bool skip = passes[i].fn == pass_fuse && opt && opt->no_fuse; /* the graph stays unfused */
        if (!skip && (!passes[i].fn(g, d) || d->errors > errors0)) return false;
        g->stage = passes[i].name;
        if (!ir_verify(g, d)) return false;
        maybe_dump(g, d, opt, passes[i].name);
    }
    if (opt && opt->dump_after && strcmp(opt->dump_after, "all") == 0) {
        FILE *out = opt->dump_to ? opt->dump_to : stdout;
        ir_print(out, g, d);
    }
    return true;
}
