/*
 * pass_buffers.c — the activation arena plan (docs/ir.md, "buffers").
 *
 * The tokens input, every live activation, non-persistent KV values and the
 * logits share one arena. A value is live from the node that defines it
 * (the tokens: from before the first node) through its last consuming node
 * (the logits: through the end of the program). Values are placed in order
 * of their first node, first-fit at the lowest 256-byte-aligned offset that
 * does not overlap any value still live, sized at T = segment. A node's
 * output never shares bytes with its inputs (their ranges meet at the node).
 */
#include "shortc.h"

#include <stdlib.h>

enum { ALIGN = 256 };

typedef struct Slot {
    int value;     /* value id */
    int start;     /* first node */
    int end;       /* last node */
    size_t off;    /* placed offset */
    size_t size;   /* aligned size */
} Slot;

static int by_start(const void *a, const void *b) {
    const Slot *x = a, *y = b;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    return x->value < y->value ? -1 : x->value > y->value;
}

static int by_offset(const void *a, const void *b) {
    const Slot *x = *(Slot *const *)a, *y = *(Slot *const *)b;
    return x->off < y->off ? -1 : x->off > y->off;
}

bool pass_buffers(Graph *g, Diag *d) {
    int T = g->spec->segment;
    Slot *slots = calloc((size_t)g->nvalues + 1, sizeof *slots);
    Slot **active = calloc((size_t)g->nvalues + 1, sizeof *active);
    if (!slots || !active) {
        free(slots);
        free(active);
        diag_plain_error(d, "buffers: out of memory");
        return false;
    }
    /* last uses */
    for (int i = 0; i < g->nvalues; i++) g->values[i]->last_use = -1;
    for (int i = 0; i < g->nnodes; i++) {
        const Node *n = g->nodes[i];
        if (n->dead) continue;
        for (int k = 0; k < n->nin; k++) g->values[n->in[k]]->last_use = i;
    }
    int ns = 0;
    for (int i = 0; i < g->nvalues; i++) {
        Value *v = g->values[i];
        v->buffer = -1;
        v->offset = 0;
        v->bytes = 0;
        if (!ir_value_in_arena(g, v)) continue;
        v->bytes = ir_numel(v, T) * (size_t)dtype_size(v->dtype);
        Slot *s = &slots[ns++];
        s->value = i;
        ir_live_range(g, v, &s->start, &s->end);
        s->size = (v->bytes + ALIGN - 1) / ALIGN * ALIGN;
    }
    qsort(slots, (size_t)ns, sizeof *slots, by_start);
    int na = 0;
    size_t peak = 0, naive = 0;
    for (int i = 0; i < ns; i++) {
        Slot *s = &slots[i];
        /* retire values whose last use is before this value's first node */
        int k = 0;
        for (int j = 0; j < na; j++)
            if (active[j]->end >= s->start) active[k++] = active[j];
        na = k;
        qsort(active, (size_t)na, sizeof *active, by_offset);
        size_t off = 0;
        for (int j = 0; j < na; j++) {
            if (active[j]->off >= off + s->size) break; /* the gap before active[j] fits */
            size_t e = active[j]->off + active[j]->size;
            if (e > off) off = e;
        }
        s->off = off;
        active[na++] = s;
        if (off + s->size > peak) peak = off + s->size;
        naive += s->size;
        Value *v = g->values[s->value];
        v->buffer = i;
        v->offset = off;
    }
    g->arena_bytes = peak;
    g->naive_bytes = naive;
    free(slots);
    free(active);
    g->stage = "buffers";
    return true;
}
