/*
 * sim_graph.c — the simulator's streams and CUDA graphs: stream capture
 * (cuStreamBeginCapture / cuStreamEndCapture), cuGraphInstantiate,
 * cuGraphExecUpdate, cuGraphLaunch and the destroy calls.
 *
 * A stream is a SimStream. While it captures, every operation issued on it
 * (a kernel launch, a cuBLAS or cuBLASLt GEMM whose handle or call names the
 * stream) is recorded as a node instead of running: a replay function and a
 * position-independent copy of everything it reads at issue time (kernel
 * argument values, GEMM parameters, the cuBLASLt descriptors' contents), as
 * the driver copies a kernel node's parameters. A graph is the nodes in issue
 * order; instantiating copies them; updating an instantiated graph from a
 * graph of the same shape (as many nodes, each of the same kind) replaces
 * its nodes' parameters, any other graph is refused with
 * CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE and leaves it unchanged; a launch
 * replays the nodes in order and stops at the first that fails. An operation the simulator cannot record (a kernel
 * parameter of unknown size) fails with CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED
 * and invalidates the capture, as does synchronizing the capturing stream;
 * ending an invalidated capture returns CUDA_ERROR_STREAM_CAPTURE_INVALIDATED
 * and no graph.
 */
#include "sim.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* One recorded operation. */
typedef struct SimNode {
    SimNodeRun run;       /* replays it */
    void *payload;        /* what run reads (malloc'd, position-independent) */
    size_t size;          /* bytes of payload */
} SimNode;

/* A captured graph, and (the same layout) an instantiated one. */
typedef struct SimGraph {
    SimNode *nodes;       /* in issue order */
    int n;                /* count */
    int cap;              /* capacity */
} SimGraph;

/* A stream. */
typedef struct SimStream {
    SimGraph *capture;    /* the graph being captured (NULL when not capturing) */
    int invalidated;      /* the capture hit an operation it could not record */
} SimStream;

static RtCallCounts counts;

void sim_count_call(int what) {
    switch (what) {
    case SIM_CALL_LAUNCH: __atomic_add_fetch(&counts.launches, 1, __ATOMIC_RELAXED); break;
    case SIM_CALL_GEMM: __atomic_add_fetch(&counts.gemms, 1, __ATOMIC_RELAXED); break;
    case SIM_CALL_LT_DESC: __atomic_add_fetch(&counts.lt_descs, 1, __ATOMIC_RELAXED); break;
    case SIM_CALL_LT_HEURISTIC: __atomic_add_fetch(&counts.lt_heuristics, 1, __ATOMIC_RELAXED); break;
    default: break;
    }
}

void sim_call_counts(RtCallCounts *out) {
    out->launches = __atomic_load_n(&counts.launches, __ATOMIC_RELAXED);
    out->gemms = __atomic_load_n(&counts.gemms, __ATOMIC_RELAXED);
    out->captures = __atomic_load_n(&counts.captures, __ATOMIC_RELAXED);
    out->graph_launches = __atomic_load_n(&counts.graph_launches, __ATOMIC_RELAXED);
    out->graph_nodes_run = __atomic_load_n(&counts.graph_nodes_run, __ATOMIC_RELAXED);
    out->lt_descs = __atomic_load_n(&counts.lt_descs, __ATOMIC_RELAXED);
    out->lt_heuristics = __atomic_load_n(&counts.lt_heuristics, __ATOMIC_RELAXED);
}

static void graph_free(SimGraph *g) {
    if (!g) return;
    for (int i = 0; i < g->n; i++) free(g->nodes[i].payload);
    free(g->nodes);
    free(g);
}

int sim_capturing(CUstream stream) {
    const SimStream *s = (const SimStream *)stream;
    return s && s->capture;
}

CUresult sim_capture_add(CUstream stream, SimNodeRun run, void *payload, size_t size) {
    SimStream *s = (SimStream *)stream;
    SimGraph *g = s->capture;
    if (!payload || s->invalidated) {
        free(payload);
        s->invalidated = 1;
        return payload ? CUDA_ERROR_STREAM_CAPTURE_INVALIDATED : CUDA_ERROR_OUT_OF_MEMORY;
    }
    if (g->n == g->cap) {
        int cap = g->cap ? g->cap * 2 : 64;
        SimNode *nn = realloc(g->nodes, sizeof *nn * (size_t)cap);
        if (!nn) {
            free(payload);
            s->invalidated = 1;
            return CUDA_ERROR_OUT_OF_MEMORY;
        }
        g->nodes = nn;
        g->cap = cap;
    }
    g->nodes[g->n++] = (SimNode){.run = run, .payload = payload, .size = size};
    return CUDA_SUCCESS;
}

void sim_capture_invalidate(CUstream stream) {
    SimStream *s = (SimStream *)stream;
    if (s && s->capture) s->invalidated = 1;
}

/* ---- streams ----------------------------------------------------------- */

CUresult sim_streamCreate(CUstream *ph, unsigned flags) {
    (void)flags;
    if (!ph) return CUDA_ERROR_INVALID_VALUE;
    SimStream *s = calloc(1, sizeof *s);
    if (!s) return CUDA_ERROR_OUT_OF_MEMORY;
    *ph = (CUstream)s;
    return CUDA_SUCCESS;
}

CUresult sim_streamDestroy(CUstream stream) {
    SimStream *s = (SimStream *)stream;
    if (s) graph_free(s->capture);
    free(s);
    return CUDA_SUCCESS;
}

CUresult sim_streamSynchronize(CUstream stream) {
    if (sim_capturing(stream)) {
        sim_capture_invalidate(stream);
        sim_set_fault("cuStreamSynchronize: the stream is capturing a graph");
        return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    }
    return CUDA_SUCCESS; /* every operation completes before it returns */
}

/* ---- capture ----------------------------------------------------------- */

CUresult sim_streamBeginCapture(CUstream stream, CUstreamCaptureMode mode) {
    (void)mode;
    SimStream *s = (SimStream *)stream;
    if (!s) {
        sim_set_fault("cuStreamBeginCapture: the legacy stream cannot capture");
        return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    }
    if (s->capture) {
        sim_set_fault("cuStreamBeginCapture: the stream is already capturing");
        return CUDA_ERROR_ILLEGAL_STATE;
    }
    if (!(s->capture = calloc(1, sizeof *s->capture))) return CUDA_ERROR_OUT_OF_MEMORY;
    s->invalidated = 0;
    __atomic_add_fetch(&counts.captures, 1, __ATOMIC_RELAXED);
    return CUDA_SUCCESS;
}

CUresult sim_streamEndCapture(CUstream stream, CUgraph *graph) {
    SimStream *s = (SimStream *)stream;
    if (!graph) return CUDA_ERROR_INVALID_VALUE;
    *graph = NULL;
    if (!s || !s->capture) {
        sim_set_fault("cuStreamEndCapture: the stream is not capturing");
        return CUDA_ERROR_ILLEGAL_STATE;
    }
    SimGraph *g = s->capture;
    s->capture = NULL;
    if (s->invalidated) {
        graph_free(g);
        s->invalidated = 0;
        return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    }
    *graph = (CUgraph)g;
    return CUDA_SUCCESS;
}

/* ---- graphs ------------------------------------------------------------ */

CUresult sim_graphInstantiate(CUgraphExec *exec, CUgraph graph, unsigned long long flags) {
    (void)flags;
    const SimGraph *g = (const SimGraph *)graph;
    if (!exec || !g) return CUDA_ERROR_INVALID_VALUE;
    SimGraph *x = calloc(1, sizeof *x);
    if (!x) return CUDA_ERROR_OUT_OF_MEMORY;
    x->nodes = calloc(g->n > 0 ? (size_t)g->n : 1, sizeof *x->nodes);
    if (!x->nodes) {
        free(x);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    x->cap = g->n;
    for (; x->n < g->n; x->n++) {
        const SimNode *src = &g->nodes[x->n];
        void *copy = malloc(src->size ? src->size : 1);
        if (!copy) {
            graph_free(x);
            return CUDA_ERROR_OUT_OF_MEMORY;
        }
        memcpy(copy, src->payload, src->size);
        x->nodes[x->n] = (SimNode){.run = src->run, .payload = copy, .size = src->size};
    }
    *exec = (CUgraphExec)x;
    return CUDA_SUCCESS;
}

CUresult sim_graphExecUpdate(CUgraphExec exec, CUgraph graph, CUgraphExecUpdateResultInfo *info) {
    SimGraph *x = (SimGraph *)exec;
    const SimGraph *g = (const SimGraph *)graph;
    if (!x || !g) return CUDA_ERROR_INVALID_VALUE;
    if (info) *info = (CUgraphExecUpdateResultInfo){.result = CU_GRAPH_EXEC_UPDATE_SUCCESS};
    bool same = x->n == g->n;
    for (int i = 0; same && i < g->n; i++) same = x->nodes[i].run == g->nodes[i].run;
    if (!same) {
        if (info) info->result = CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
        return CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
    }
    /* copy every payload first, so that running out of memory leaves the graph as it was */
    void **copies = calloc(g->n > 0 ? (size_t)g->n : 1, sizeof *copies);
    bool ok = copies != NULL;
    for (int i = 0; ok && i < g->n; i++) ok = (copies[i] = malloc(g->nodes[i].size ? g->nodes[i].size : 1)) != NULL;
    if (!ok) {
        for (int i = 0; copies && i < g->n; i++) free(copies[i]);
        free(copies);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    for (int i = 0; i < g->n; i++) {
        memcpy(copies[i], g->nodes[i].payload, g->nodes[i].size);
        free(x->nodes[i].payload);
        x->nodes[i].payload = copies[i];
        x->nodes[i].size = g->nodes[i].size;
    }
    free(copies);
    return CUDA_SUCCESS;
}

CUresult sim_graphLaunch(CUgraphExec exec, CUstream stream) {
    const SimGraph *x = (const SimGraph *)exec;
    if (!x) return CUDA_ERROR_INVALID_VALUE;
    if (sim_capturing(stream)) {
        sim_capture_invalidate(stream);
        sim_set_fault("cuGraphLaunch: the simulator does not capture graph launches");
        return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    }
    __atomic_add_fetch(&counts.graph_launches, 1, __ATOMIC_RELAXED);
    for (int i = 0; i < x->n; i++) {
        CUresult r = x->nodes[i].run(x->nodes[i].payload);
        __atomic_add_fetch(&counts.graph_nodes_run, 1, __ATOMIC_RELAXED);
        if (r != CUDA_SUCCESS) return r;
    }
    return CUDA_SUCCESS;
}

CUresult sim_graphExecDestroy(CUgraphExec exec) {
    graph_free((SimGraph *)exec);
    return CUDA_SUCCESS;
}

CUresult sim_graphDestroy(CUgraph graph) {
    graph_free((SimGraph *)graph);
    return CUDA_SUCCESS;
}
