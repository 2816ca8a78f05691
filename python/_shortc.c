/*
 * _shortc.c — the CPython extension under the `shortc` package (python/shortc/__init__.py): a thin layer over
 * runtime/include/shortrt.h, built against the stable ABI (Py_LIMITED_API 3.9, one abi3 wheel).
 *
 * The runtime does the work; this file converts arguments, releases the GIL around every runtime call and
 * turns a failing status into an exception carrying the runtime's message. Arrays cross as (address, bytes)
 * pairs that the Python layer takes from NumPy arrays it keeps alive for the call: the 3.9 limited API has no
 * buffer protocol. Every size is checked here against what the runtime will write or read.
 *
 * Threads (docs/runtime.md: an object belongs to one context and one thread at a time): each Model owns its
 * context and a mutex; every call on the model, its sessions and its samplers holds that mutex with the GIL
 * released, so Python threads may share a model or its sessions and calls on distinct models run in parallel.
 * The failure's message (and compile position) is copied out before the mutex is released.
 */
#define Py_LIMITED_API 0x03090000
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "shortrt.h"

/* A failure copied out of a context while its mutex was held. */
typedef struct Failure {
    srt_status status;  /* the runtime's status */
    char msg[8192];     /* srt_last_error */
    char file[1024];    /* srt_last_error_location's file ("" when the failure has none) */
    int line, column;   /* its position (1-based) */
} Failure;

/* The module's exception types (set at import). */
static PyObject *Error_type;        /* shortc.Error(RuntimeError): a runtime failure; .status names it */
static PyObject *CompileError_type; /* shortc.CompileError(Error): the compiler rejected the .arch */

/* Copies ctx's failure into *f (called with the model's mutex held). */
static void failure_capture(srt_context *ctx, srt_status st, Failure *f) {
    f->status = st;
    snprintf(f->msg, sizeof f->msg, "%s", srt_last_error(ctx));
    const char *file = NULL;
    f->line = f->column = 0;
    f->file[0] = 0;
    if (srt_last_error_location(ctx, &file, &f->line, &f->column)) snprintf(f->file, sizeof f->file, "%s", file);
}

/* The source line and caret lines of the first diagnostic of msg: the lines after its first, up to the next
 * diagnostic (a line starting at column 0 that is not a caret line). */
static PyObject *caret_of(const char *msg) {
    const char *p = strchr(msg, '\n');
    if (!p) return PyUnicode_FromString("");
    const char *start = ++p, *end = p;
    for (int lines = 0; *end && lines < 2; lines++) {
        const char *nl = strchr(end, '\n');
        end = nl ? nl + 1 : end + strlen(end);
    }
    while (end > start && end[-1] == '\n') end--;
    return PyUnicode_DecodeUTF8(start, end - start, "replace");
}

/* Sets attr on exc to value (stealing value); 0 on success. */
static int set_attr(PyObject *exc, const char *attr, PyObject *value) {
    if (!value) return -1;
    int r = PyObject_SetAttrString(exc, attr, value);
    Py_DECREF(value);
    return r;
}

/* Raises f as shortc.CompileError (with file, line, column, caret) or shortc.Error; returns NULL. */
static PyObject *raise_failure(const Failure *f) {
    PyObject *type = f->file[0] ? CompileError_type : Error_type;
    PyObject *msg = PyUnicode_DecodeUTF8(f->msg, (Py_ssize_t)strlen(f->msg), "replace"); /* paths need not be UTF-8 */
    PyObject *exc = msg ? PyObject_CallFunctionObjArgs(type, msg, NULL) : NULL;
    Py_XDECREF(msg);
    if (!exc) return NULL;
    int bad = set_attr(exc, "status", PyUnicode_FromString(srt_status_name(f->status)));
    if (!bad && f->file[0]) {
        bad = set_attr(exc, "file", PyUnicode_DecodeFSDefault(f->file)) ||
              set_attr(exc, "line", PyLong_FromLong(f->line)) || set_attr(exc, "column", PyLong_FromLong(f->column)) ||
              set_attr(exc, "caret", caret_of(f->msg));
    }
    if (!bad) PyErr_SetObject(type, exc);
    Py_DECREF(exc);
    return NULL;
}

/* ------------------------------------------------------------------ */
/* Model                                                               */
/* ------------------------------------------------------------------ */

/* A runtime model and the context it alone uses. */
typedef struct ModelObject {
    PyObject_HEAD
    srt_context *ctx;       /* its context (last error, allocator) */
    srt_model *model;       /* the opened model */
    pthread_mutex_t lock;   /* held around every runtime call on ctx, the model and its sessions */
    int lock_ready;         /* lock was initialised */
    int vocab;              /* logits width */
    int segment;            /* most tokens per forward */
} ModelObject;

/* Runs STMT (setting srt_status st) with the GIL released and the model's mutex held, capturing a failure. */
#define LOCKED(mo, f, STMT)                                      \
    do {                                                         \
        Py_BEGIN_ALLOW_THREADS pthread_mutex_lock(&(mo)->lock);  \
        STMT;                                                    \
        if (st != SRT_OK) failure_capture((mo)->ctx, st, (f));   \
        pthread_mutex_unlock(&(mo)->lock);                       \
        Py_END_ALLOW_THREADS                                     \
    } while (0)

static PyObject *Model_type;

static void Model_dealloc(PyObject *self) {
    ModelObject *mo = (ModelObject *)self;
    srt_model_close(mo->model); /* its sessions are gone: each Session holds a reference to its model */
    srt_context_destroy(mo->ctx);
    if (mo->lock_ready) pthread_mutex_destroy(&mo->lock);
    PyTypeObject *tp = Py_TYPE(self);
    freefunc tp_free = (freefunc)PyType_GetSlot(tp, Py_tp_free);
    tp_free(self);
    Py_DECREF(tp);
}

/* A new empty Model object with its context and mutex. */
static ModelObject *model_new(void) {
    allocfunc tp_alloc = (allocfunc)PyType_GetSlot((PyTypeObject *)Model_type, Py_tp_alloc);
    ModelObject *mo = (ModelObject *)tp_alloc((PyTypeObject *)Model_type, 0);
    if (!mo) return NULL;
    if (pthread_mutex_init(&mo->lock, NULL) != 0) {
        Py_DECREF(mo);
        return (ModelObject *)PyErr_Format(PyExc_RuntimeError, "pthread_mutex_init failed");
    }
    mo->lock_ready = 1;
    if (srt_context_create(&mo->ctx, NULL, NULL) != SRT_OK) {
        Py_DECREF(mo);
        return (ModelObject *)PyErr_NoMemory();
    }
    return mo;
}

/* backend name -> srt_backend; -1 with ValueError set otherwise. */
static int backend_from_name(const char *name) {
    static const struct { const char *name; srt_backend b; } names[] = {
        {"auto", SRT_BACKEND_AUTO}, {"ref", SRT_BACKEND_REF}, {"sim", SRT_BACKEND_SIM}, {"cuda", SRT_BACKEND_CUDA}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(name, names[i].name) == 0) return (int)names[i].b;
    PyErr_Format(PyExc_ValueError, "unknown backend '%s' (auto, ref, sim or cuda)", name);
    return -1;
}

static PyObject *model_open(const char *path, const char *source, Py_ssize_t source_len, const char *model_name,
                            const char *backend, int sim_threads, int sim_checked, const char *cache_dir,
                            int allow_nonfinite, int allow_unused);

/* _shortc.open(path, source, model_name, backend, sim_threads, sim_checked, cache_dir, allow_nonfinite, allow_unused) ->
 * Model: the .arch or .cu at path, or (source not None) the .arch text source named path. */
static PyObject *mod_open(PyObject *mod, PyObject *args) {
    (void)mod;
    PyObject *path_bytes;
    const char *model_name, *backend, *cache_dir, *source = NULL;
    Py_ssize_t source_len = 0;
    int sim_threads, sim_checked, allow_nonfinite, allow_unused;
    if (!PyArg_ParseTuple(args, "O&z#zsipzpp", PyUnicode_FSConverter, &path_bytes, &source, &source_len, &model_name,
                          &backend, &sim_threads, &sim_checked, &cache_dir, &allow_nonfinite, &allow_unused))
        return NULL;
    PyObject *r = model_open(PyBytes_AsString(path_bytes), source, source_len, model_name, backend, sim_threads,
                             sim_checked, cache_dir, allow_nonfinite, allow_unused);
    Py_DECREF(path_bytes);
    return r;
}

/* mod_open with its arguments converted. */
static PyObject *model_open(const char *path, const char *source, Py_ssize_t source_len, const char *model_name,
                            const char *backend, int sim_threads, int sim_checked, const char *cache_dir,
                            int allow_nonfinite, int allow_unused) {
    int b = backend_from_name(backend);
    if (b < 0) return NULL;
    srt_options opt;
    srt_options_init(&opt);
    opt.backend = (srt_backend)b;
    opt.model_name = model_name;
    opt.sim_threads = sim_threads;
    opt.sim_checked = sim_checked;
    opt.cache_dir = cache_dir;
    opt.allow_nonfinite_weights = allow_nonfinite;
    opt.allow_unused_weights = allow_unused;
    ModelObject *mo = model_new();
    if (!mo) return NULL;
    Failure *f = malloc(sizeof *f);
    if (!f) {
        Py_DECREF(mo);
        return PyErr_NoMemory();
    }
    srt_status st;
    LOCKED(mo, f, st = source ? srt_model_open_source(mo->ctx, path, source, (size_t)source_len, &opt, &mo->model)
                              : srt_model_open(mo->ctx, path, &opt, &mo->model));
    srt_model_info info;
    if (st == SRT_OK && srt_model_get_info(mo->model, &info) == SRT_OK) {
        mo->vocab = info.vocab;
        mo->segment = info.segment;
    }
    PyObject *r = st == SRT_OK ? (PyObject *)mo : raise_failure(f);
    free(f);
    if (!r) Py_DECREF(mo);
    return r;
}

/* Returns None, or raises f when st failed. */
static PyObject *status_result(srt_status st, const Failure *f) {
    if (st != SRT_OK) return raise_failure(f);
    Py_RETURN_NONE;
}

/* Model.load_weights(path): a safetensors file. */
static PyObject *Model_load_weights(PyObject *self, PyObject *args) {
    ModelObject *mo = (ModelObject *)self;
    PyObject *path_bytes;
    if (!PyArg_ParseTuple(args, "O&", PyUnicode_FSConverter, &path_bytes)) return NULL;
    const char *path = PyBytes_AsString(path_bytes);
    Failure f;
    srt_status st;
    LOCKED(mo, &f, st = srt_model_load_weights(mo->model, path));
    Py_DECREF(path_bytes);
    return status_result(st, &f);
}

/* Model.random_weights(seed): the seeded weights of the tests. */
static PyObject *Model_random_weights(PyObject *self, PyObject *args) {
    ModelObject *mo = (ModelObject *)self;
    unsigned long long seed;
    if (!PyArg_ParseTuple(args, "K", &seed)) return NULL;
    Failure f;
    srt_status st;
    LOCKED(mo, &f, st = srt_model_random_weights(mo->model, seed));
    return status_result(st, &f);
}

/* Fills t from one (name, dtype, address, nbytes, shape tuple) entry; shape storage at dims[8]. */
static int tensor_from_tuple(PyObject *item, srt_tensor *t, int64_t *dims) {
    const char *name, *dtype;
    unsigned long long addr, nbytes;
    PyObject *shape;
    if (!PyArg_ParseTuple(item, "ssKKO!", &name, &dtype, &addr, &nbytes, &PyTuple_Type, &shape)) return -1;
    Py_ssize_t rank = PyTuple_Size(shape);
    if (rank > 8) {
        PyErr_Format(PyExc_ValueError, "tensor '%s': rank %zd is more than 8", name, rank);
        return -1;
    }
    for (Py_ssize_t d = 0; d < rank; d++) {
        dims[d] = PyLong_AsLongLong(PyTuple_GetItem(shape, d));
        if (dims[d] == -1 && PyErr_Occurred()) return -1;
    }
    *t = (srt_tensor){.name = name, .dtype = dtype, .data = (const void *)(uintptr_t)addr, .nbytes = (size_t)nbytes,
                      .shape = dims, .rank = (int)rank};
    return 0;
}

/* Model.load_tensors([(name, dtype, address, nbytes, shape), ...]): weights from memory the caller keeps. */
static PyObject *Model_load_tensors(PyObject *self, PyObject *args) {
    ModelObject *mo = (ModelObject *)self;
    PyObject *list;
    if (!PyArg_ParseTuple(args, "O!", &PyList_Type, &list)) return NULL;
    /* A tuple of the caller's items: the names must outlive the call made without the GIL, whatever other
     * threads do to the list meanwhile. */
    PyObject *items = PySequence_Tuple(list);
    if (!items) return NULL;
    Py_ssize_t n = PyTuple_Size(items);
    if (n > 1 << 20) {
        Py_DECREF(items);
        return PyErr_Format(PyExc_ValueError, "%zd tensors is too many", n);
    }
    srt_tensor *ts = calloc((size_t)(n ? n : 1), sizeof *ts);
    int64_t *dims = calloc((size_t)(n ? n : 1) * 8, sizeof *dims);
    Failure *f = malloc(sizeof *f);
    PyObject *r = NULL;
    if (!ts || !dims || !f) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) /* the strings stay alive: items holds the tuples */
        if (tensor_from_tuple(PyTuple_GetItem(items, i), &ts[i], &dims[i * 8]) != 0) goto done;
    srt_status st;
    LOCKED(mo, f, st = srt_model_load_tensors(mo->model, ts, (int)n));
    r = status_result(st, f);
done:
    Py_DECREF(items);
    free(ts);
    free(dims);
    free(f);
    return r;
}

/* Adds key: value (stealing value) to dict; -1 on failure. */
static int put(PyObject *dict, const char *key, PyObject *value) {
    if (!value) return -1;
    int r = PyDict_SetItemString(dict, key, value);
    Py_DECREF(value);
    return r;
}

/* Model.info() -> dict of srt_model_info. */
static PyObject *Model_info(PyObject *self, PyObject *noargs) {
    (void)noargs;
    ModelObject *mo = (ModelObject *)self;
    srt_model_info i;
    Failure f;
    srt_status st;
    LOCKED(mo, &f, st = srt_model_get_info(mo->model, &i));
    if (st != SRT_OK) return raise_failure(&f);
    PyObject *d = PyDict_New();
    if (!d) return NULL;
    if (put(d, "name", PyUnicode_FromString(i.name)) || put(d, "backend", PyUnicode_FromString(srt_backend_name(i.backend))) ||
        put(d, "vocab", PyLong_FromLong(i.vocab)) || put(d, "d_model", PyLong_FromLong(i.d_model)) ||
        put(d, "n_layers", PyLong_FromLong(i.n_layers)) || put(d, "segment", PyLong_FromLong(i.segment)) ||
        put(d, "nkernels", PyLong_FromLong(i.nkernels)) || put(d, "nlaunches", PyLong_FromLong(i.nlaunches)) ||
        put(d, "ngemms", PyLong_FromLong(i.ngemms)) || put(d, "weight_bytes", PyLong_FromSize_t(i.weight_bytes)) ||
        put(d, "activation_bytes", PyLong_FromSize_t(i.activation_bytes)) ||
        put(d, "state_bytes", PyLong_FromSize_t(i.state_bytes)) || put(d, "compile_ms", PyFloat_FromDouble(i.compile_ms)) ||
        put(d, "cache_hit", PyBool_FromLong(i.cache_hit)) || put(d, "cache_note", PyUnicode_FromString(i.cache_note)) ||
        put(d, "kv_cache", PyBool_FromLong(i.kv_cache)) || put(d, "max_positions", PyLong_FromLong(i.max_positions)) ||
        put(d, "recurrent", PyBool_FromLong(i.recurrent)) || put(d, "overlap", PyLong_FromLong(i.overlap)) ||
        put(d, "carries_state", PyBool_FromLong(i.carries_state)) || put(d, "memories", PyBool_FromLong(i.memories))) {
        Py_DECREF(d);
        return NULL;
    }
    return d;
}

/* Model.plan_json() -> str. */
static PyObject *Model_plan_json(PyObject *self, PyObject *noargs) {
    (void)noargs;
    ModelObject *mo = (ModelObject *)self;
    return PyUnicode_FromString(srt_model_plan_json(mo->model)); /* immutable after open */
}

static PyObject *Model_session(PyObject *self, PyObject *args);

static PyMethodDef Model_methods[] = {
    {"session", Model_session, METH_VARARGS, "session(batch) -> Session: srt_session_create."},
    {"load_weights", Model_load_weights, METH_VARARGS, "load_weights(path): weights from a safetensors file."},
    {"load_tensors", Model_load_tensors, METH_VARARGS,
     "load_tensors([(name, dtype, address, nbytes, shape), ...]): weights from memory (srt_model_load_tensors)."},
    {"random_weights", Model_random_weights, METH_VARARGS, "random_weights(seed): the tests' seeded weights."},
    {"info", Model_info, METH_NOARGS, "info() -> dict: srt_model_info."},
    {"plan_json", Model_plan_json, METH_NOARGS, "plan_json() -> str: the plan."},
    {NULL, NULL, 0, NULL},
};

static PyType_Slot Model_slots[] = {
    {Py_tp_dealloc, Model_dealloc},
    {Py_tp_methods, Model_methods},
    {Py_tp_doc, "A model opened by the runtime (shortc._shortc.open); use shortc.compile."},
    {0, NULL},
};

static PyType_Spec Model_spec = {"shortc._shortc.Model", sizeof(ModelObject), 0, Py_TPFLAGS_DEFAULT, Model_slots};

/* ------------------------------------------------------------------ */
/* Session                                                             */
/* ------------------------------------------------------------------ */

/* A runtime session of a Model (which it keeps alive). */
typedef struct SessionObject {
    PyObject_HEAD
    ModelObject *model;     /* the model (a strong reference) */
    srt_session *session;   /* the runtime session */
    int batch;              /* sequences it holds */
} SessionObject;

static PyObject *Session_type;

static void Session_dealloc(PyObject *self) {
    SessionObject *so = (SessionObject *)self;
    if (so->session) {
        if (pthread_mutex_trylock(&so->model->lock) != 0) { /* another thread runs the model: wait without the GIL */
            Py_BEGIN_ALLOW_THREADS pthread_mutex_lock(&so->model->lock);
            Py_END_ALLOW_THREADS
        }
        srt_session_destroy(so->session);
        pthread_mutex_unlock(&so->model->lock);
    }
    Py_XDECREF(so->model);
    PyTypeObject *tp = Py_TYPE(self);
    freefunc tp_free = (freefunc)PyType_GetSlot(tp, Py_tp_free);
    tp_free(self);
    Py_DECREF(tp);
}

/* Model.session(batch) -> Session. */
static PyObject *Model_session(PyObject *self, PyObject *args) {
    ModelObject *mo = (ModelObject *)self;
    int batch;
    if (!PyArg_ParseTuple(args, "i", &batch)) return NULL;
    allocfunc tp_alloc = (allocfunc)PyType_GetSlot((PyTypeObject *)Session_type, Py_tp_alloc);
    SessionObject *so = (SessionObject *)tp_alloc((PyTypeObject *)Session_type, 0);
    if (!so) return NULL;
    Py_INCREF(mo);
    so->model = mo;
    so->batch = batch;
    Failure f;
    srt_status st;
    LOCKED(mo, &f, st = srt_session_create(mo->model, batch, &so->session));
    if (st != SRT_OK) {
        Py_DECREF(so);
        return raise_failure(&f);
    }
    return (PyObject *)so;
}

/* Checks that a buffer of got bytes is the want bytes the runtime will use; 0 if so, -1 with ValueError. */
static int check_bytes(const char *what, unsigned long long got, unsigned long long want) {
    if (got == want) return 0;
    PyErr_Format(PyExc_ValueError, "%s: %llu bytes given, %llu needed", what, got, want);
    return -1;
}

/* Session.forward(ids_addr, ntokens, out_addr, out_nbytes, first_row): srt_forward_rows. */
static PyObject *Session_forward(PyObject *self, PyObject *args) {
    SessionObject *so = (SessionObject *)self;
    unsigned long long ids, out, out_nbytes;
    int n, first_row;
    if (!PyArg_ParseTuple(args, "KiKKi", &ids, &n, &out, &out_nbytes, &first_row)) return NULL;
    if (n < 1 || first_row < 0 || first_row >= n)
        return PyErr_Format(PyExc_ValueError, "forward: %d tokens, first row %d", n, first_row);
    if (check_bytes("forward: out", out_nbytes, (unsigned long long)(n - first_row) * so->model->vocab * 4)) return NULL;
    Failure *f = malloc(sizeof *f);
    if (!f) return PyErr_NoMemory();
    srt_status st;
    LOCKED(so->model, f, st = srt_forward_rows(so->session, (const int32_t *)(uintptr_t)ids, n, first_row,
                                               (float *)(uintptr_t)out));
    PyObject *r = status_result(st, f);
    free(f);
    return r;
}

/* Session.forward_batch(ids_addr, ntokens, out_addr, out_nbytes): every sequence of the session continues with
 * ntokens tokens (ids [batch, ntokens] int32) into out [batch, ntokens, vocab] (srt_forward_batch). */
static PyObject *Session_forward_batch(PyObject *self, PyObject *args) {
    SessionObject *so = (SessionObject *)self;
    unsigned long long ids, out, out_nbytes;
    int n;
    if (!PyArg_ParseTuple(args, "KiKK", &ids, &n, &out, &out_nbytes)) return NULL;
    int B = so->batch, V = so->model->vocab;
    if (n < 0) return PyErr_Format(PyExc_ValueError, "forward: %d tokens", n);
    if (check_bytes("forward: out", out_nbytes, (unsigned long long)B * n * V * 4)) return NULL;
    const int32_t **tok = calloc((size_t)B, sizeof *tok);
    int *ns = calloc((size_t)B, sizeof *ns);
    float **rows = calloc((size_t)B, sizeof *rows);
    Failure *f = malloc(sizeof *f);
    PyObject *r = NULL;
    if (!tok || !ns || !rows || !f) {
        PyErr_NoMemory();
    } else {
        for (int b = 0; b < B; b++) {
            tok[b] = (const int32_t *)(uintptr_t)ids + (size_t)b * n;
            ns[b] = n;
            rows[b] = (float *)(uintptr_t)out + (size_t)b * n * V;
        }
        srt_status st;
        LOCKED(so->model, f, st = srt_forward_batch(so->session, tok, ns, rows));
        r = status_result(st, f);
    }
    free(tok);
    free(ns);
    free(rows);
    free(f);
    return r;
}

/* Session.reset(). */
static PyObject *Session_reset(PyObject *self, PyObject *noargs) {
    (void)noargs;
    SessionObject *so = (SessionObject *)self;
    Failure f;
    srt_status st;
    LOCKED(so->model, &f, st = srt_session_reset(so->session));
    return status_result(st, &f);
}

/* Session.position(b) -> int. */
static PyObject *Session_position(PyObject *self, PyObject *args) {
    SessionObject *so = (SessionObject *)self;
    int b;
    if (!PyArg_ParseTuple(args, "i", &b)) return NULL;
    if (b < 0 || b >= so->batch) return PyErr_Format(PyExc_IndexError, "sequence %d of a batch of %d", b, so->batch);
    int pos;
    Py_BEGIN_ALLOW_THREADS pthread_mutex_lock(&so->model->lock);
    pos = srt_session_position_of(so->session, b);
    pthread_mutex_unlock(&so->model->lock);
    Py_END_ALLOW_THREADS
    return PyLong_FromLong(pos);
}

/* Fills o from (mode, stride, overlap, window); -1 with an exception otherwise. */
static int eval_options(const char *mode, int stride, int overlap, int window, srt_eval_options *o) {
    srt_eval_options_init(o);
    if (srt_mode_from_name(mode, &o->mode) != SRT_OK) {
        PyErr_Format(PyExc_ValueError, "unknown mode '%s' (nonoverlapping, sliding, windows, tokenwise or cached)", mode);
        return -1;
    }
    o->stride = stride;
    o->overlap = overlap;
    o->window = window;
    return 0;
}

/* Session.eval(kind, ids_addr, n, out_addr, out_nbytes, mode, stride, overlap, window): kind "nll"
 * (srt_eval_nll: n - 1 floats) or "logits" (srt_eval_logits: n x vocab floats). */
static PyObject *Session_eval(PyObject *self, PyObject *args) {
    SessionObject *so = (SessionObject *)self;
    const char *kind, *mode;
    unsigned long long ids, out, out_nbytes;
    long long n;
    int stride, overlap, window;
    if (!PyArg_ParseTuple(args, "sKLKKsiii", &kind, &ids, &n, &out, &out_nbytes, &mode, &stride, &overlap, &window))
        return NULL;
    int nll = strcmp(kind, "nll") == 0;
    if (!nll && strcmp(kind, "logits") != 0) return PyErr_Format(PyExc_ValueError, "eval kind '%s'", kind);
    if (n < (nll ? 2 : 1)) return PyErr_Format(PyExc_ValueError, "%s needs at least %d tokens, given %lld", kind, nll ? 2 : 1, n);
    unsigned long long want = nll ? (unsigned long long)(n - 1) * 4 : (unsigned long long)n * so->model->vocab * 4;
    if (check_bytes(kind, out_nbytes, want)) return NULL;
    srt_eval_options o;
    if (eval_options(mode, stride, overlap, window, &o)) return NULL;
    Failure *f = malloc(sizeof *f);
    if (!f) return PyErr_NoMemory();
    const int32_t *tok = (const int32_t *)(uintptr_t)ids;
    srt_status st;
    LOCKED(so->model, f, st = nll ? srt_eval_nll(so->session, &o, tok, n, (float *)(uintptr_t)out)
                                  : srt_eval_logits(so->session, &o, tok, n, (float *)(uintptr_t)out));
    PyObject *r = status_result(st, f);
    free(f);
    return r;
}

/* srt_generate with a sampler of cfg per sequence (the model's mutex held). */
static srt_status generate(SessionObject *so, const srt_sampling *cfg, srt_gen_seq *seqs, int max_new, long long eos) {
    ModelObject *mo = so->model;
    srt_status st = SRT_OK;
    int made = 0;
    for (; made < so->batch && st == SRT_OK; made++) st = srt_sampler_create(mo->ctx, cfg, mo->vocab, &seqs[made].sampler);
    if (st == SRT_OK) st = srt_generate(so->session, seqs, so->batch, max_new, eos, NULL, NULL);
    for (int b = 0; b < made; b++) srt_sampler_destroy(seqs[b].sampler);
    return st;
}

/* Session.generate([(prompt_addr, n), ...], out_addr, max_new, temperature, top_k, top_p, seed, eos) -> [count, ...]:
 * one prompt per sequence of the session; sequence b's new ids at out + b * max_new (int32). */
static PyObject *Session_generate(PyObject *self, PyObject *args) {
    SessionObject *so = (SessionObject *)self;
    PyObject *prompts;
    unsigned long long out, seed;
    int max_new, top_k;
    double temperature, top_p;
    long long eos;
    if (!PyArg_ParseTuple(args, "O!KididKL", &PyList_Type, &prompts, &out, &max_new, &temperature, &top_k, &top_p,
                          &seed, &eos))
        return NULL;
    if (PyList_Size(prompts) != so->batch)
        return PyErr_Format(PyExc_ValueError, "generate: %zd prompts for a session of %d sequences",
                            PyList_Size(prompts), so->batch);
    if (max_new < 0) return PyErr_Format(PyExc_ValueError, "generate: max_new %d", max_new);
    srt_gen_seq *seqs = calloc((size_t)so->batch, sizeof *seqs);
    Failure *f = malloc(sizeof *f);
    PyObject *r = NULL;
    if (!seqs || !f) {
        PyErr_NoMemory();
        goto done;
    }
    for (int b = 0; b < so->batch; b++) {
        unsigned long long addr;
        if (!PyArg_ParseTuple(PyList_GetItem(prompts, b), "Ki", &addr, &seqs[b].nprompt)) goto done;
        seqs[b].prompt = (const int32_t *)(uintptr_t)addr;
        seqs[b].out = (int32_t *)(uintptr_t)out + (size_t)b * (size_t)max_new;
    }
    srt_sampling cfg;
    srt_sampling_init(&cfg);
    cfg.temperature = temperature;
    cfg.top_k = top_k;
    cfg.top_p = top_p;
    cfg.seed = seed;
    srt_status st;
    LOCKED(so->model, f, st = generate(so, &cfg, seqs, max_new, eos));
    if (st != SRT_OK) {
        raise_failure(f);
        goto done;
    }
    if (!(r = PyList_New(so->batch))) goto done;
    for (int b = 0; b < so->batch; b++) {
        PyObject *n = PyLong_FromLong(seqs[b].ngen);
        if (!n) {
            Py_CLEAR(r);
            goto done;
        }
        PyList_SetItem(r, b, n);
    }
done:
    free(seqs);
    free(f);
    return r;
}

static PyMethodDef Session_methods[] = {
    {"forward", Session_forward, METH_VARARGS, "forward(ids_addr, n, out_addr, out_nbytes, first_row): srt_forward_rows."},
    {"forward_batch", Session_forward_batch, METH_VARARGS, "forward_batch(ids_addr, n, out_addr, out_nbytes): srt_forward_batch."},
    {"reset", Session_reset, METH_NOARGS, "reset(): srt_session_reset."},
    {"position", Session_position, METH_VARARGS, "position(b) -> int: srt_session_position_of."},
    {"eval", Session_eval, METH_VARARGS, "eval(kind, ids_addr, n, out_addr, out_nbytes, mode, stride, overlap, window)."},
    {"generate", Session_generate, METH_VARARGS,
     "generate([(prompt_addr, n), ...], out_addr, max_new, temperature, top_k, top_p, seed, eos) -> [count, ...]."},
    {NULL, NULL, 0, NULL},
};

static PyType_Slot Session_slots[] = {
    {Py_tp_dealloc, Session_dealloc},
    {Py_tp_methods, Session_methods},
    {Py_tp_doc, "A runtime session (shortc._shortc.Model.session); use shortc.Model.session."},
    {0, NULL},
};

static PyType_Spec Session_spec = {"shortc._shortc.Session", sizeof(SessionObject), 0, Py_TPFLAGS_DEFAULT,
                                   Session_slots};

/* ------------------------------------------------------------------ */
/* Tokenizer                                                           */
/* ------------------------------------------------------------------ */

/* A BPE tokenizer with its own context. */
typedef struct TokenizerObject {
    PyObject_HEAD
    srt_context *ctx;       /* its context */
    srt_tokenizer *tok;     /* the tokenizer */
    pthread_mutex_t lock;   /* held around every runtime call */
    int lock_ready;         /* lock was initialised */
} TokenizerObject;

static PyObject *Tokenizer_type;

static void Tokenizer_dealloc(PyObject *self) {
    TokenizerObject *to = (TokenizerObject *)self;
    srt_tokenizer_close(to->tok);
    srt_context_destroy(to->ctx);
    if (to->lock_ready) pthread_mutex_destroy(&to->lock);
    PyTypeObject *tp = Py_TYPE(self);
    freefunc tp_free = (freefunc)PyType_GetSlot(tp, Py_tp_free);
    tp_free(self);
    Py_DECREF(tp);
}

/* _shortc.tokenizer(path, merges_or_None) -> Tokenizer. */
static PyObject *mod_tokenizer(PyObject *mod, PyObject *args) {
    (void)mod;
    PyObject *path_b, *merges_b = NULL;
    if (!PyArg_ParseTuple(args, "O&|O&", PyUnicode_FSConverter, &path_b, PyUnicode_FSConverter, &merges_b)) return NULL;
    allocfunc tp_alloc = (allocfunc)PyType_GetSlot((PyTypeObject *)Tokenizer_type, Py_tp_alloc);
    TokenizerObject *to = (TokenizerObject *)tp_alloc((PyTypeObject *)Tokenizer_type, 0);
    PyObject *r = NULL;
    if (!to) goto done;
    if (pthread_mutex_init(&to->lock, NULL) != 0) {
        PyErr_Format(PyExc_RuntimeError, "pthread_mutex_init failed");
        goto done;
    }
    to->lock_ready = 1;
    if (srt_context_create(&to->ctx, NULL, NULL) != SRT_OK) {
        PyErr_NoMemory();
        goto done;
    }
    Failure f;
    srt_status st;
    const char *path = PyBytes_AsString(path_b), *merges = merges_b ? PyBytes_AsString(merges_b) : NULL;
    LOCKED(to, &f, st = srt_tokenizer_open(to->ctx, path, merges, &to->tok));
    if (st != SRT_OK) raise_failure(&f);
    else r = (PyObject *)to;
done:
    if (!r) Py_XDECREF(to);
    Py_DECREF(path_b);
    Py_XDECREF(merges_b);
    return r;
}

/* Tokenizer.encode(text: str, special_as_text: bool = False) -> bytes of int32 ids. */
static PyObject *Tokenizer_encode(PyObject *self, PyObject *args) {
    TokenizerObject *to = (TokenizerObject *)self;
    const char *text;
    Py_ssize_t len;
    int special_as_text = 0;
    if (!PyArg_ParseTuple(args, "s#|p", &text, &len, &special_as_text)) return NULL;
    int32_t *ids = NULL;
    size_t n = 0;
    Failure f;
    srt_status st;
    unsigned flags = special_as_text ? SRT_ENCODE_SPECIAL_AS_TEXT : 0;
    LOCKED(to, &f, st = srt_tokenizer_encode_with(to->tok, text, (size_t)len, flags, &ids, &n));
    if (st != SRT_OK) return raise_failure(&f);
    PyObject *r = PyBytes_FromStringAndSize((const char *)ids, (Py_ssize_t)(n * sizeof *ids));
    srt_free(to->ctx, ids);
    return r;
}

/* Tokenizer.decode(ids_addr, n) -> bytes. */
static PyObject *Tokenizer_decode(PyObject *self, PyObject *args) {
    TokenizerObject *to = (TokenizerObject *)self;
    unsigned long long ids;
    Py_ssize_t n;
    if (!PyArg_ParseTuple(args, "Kn", &ids, &n)) return NULL;
    if (n < 0) return PyErr_Format(PyExc_ValueError, "decode: %zd ids", n);
    char *text = NULL;
    size_t len = 0;
    Failure f;
    srt_status st;
    LOCKED(to, &f, st = srt_tokenizer_decode(to->tok, (const int32_t *)(uintptr_t)ids, (size_t)n, &text, &len));
    if (st != SRT_OK) return raise_failure(&f);
    PyObject *r = PyBytes_FromStringAndSize(text, (Py_ssize_t)len);
    srt_free(to->ctx, text);
    return r;
}

/* Tokenizer.vocab_size() -> int. */
static PyObject *Tokenizer_vocab_size(PyObject *self, PyObject *noargs) {
    (void)noargs;
    return PyLong_FromLong(srt_tokenizer_vocab_size(((TokenizerObject *)self)->tok)); /* immutable after open */
}

static PyMethodDef Tokenizer_methods[] = {
    {"encode", Tokenizer_encode, METH_VARARGS, "encode(text, special_as_text=False) -> bytes of int32 ids."},
    {"decode", Tokenizer_decode, METH_VARARGS, "decode(ids_addr, n) -> bytes."},
    {"vocab_size", Tokenizer_vocab_size, METH_NOARGS, "vocab_size() -> int."},
    {NULL, NULL, 0, NULL},
};

static PyType_Slot Tokenizer_slots[] = {
    {Py_tp_dealloc, Tokenizer_dealloc},
    {Py_tp_methods, Tokenizer_methods},
    {Py_tp_doc, "A byte-level BPE tokenizer (shortc._shortc.tokenizer); use shortc.Tokenizer."},
    {0, NULL},
};

static PyType_Spec Tokenizer_spec = {"shortc._shortc.Tokenizer", sizeof(TokenizerObject), 0, Py_TPFLAGS_DEFAULT,
                                     Tokenizer_slots};

/* ------------------------------------------------------------------ */
/* Attention kinds as functions (srt_attention_plan)                  */
/* ------------------------------------------------------------------ */

/* An attention plan with its own context and mutex (shortc.attention keeps one per kind, shape and backend). */
typedef struct {
    PyObject_HEAD
    srt_context *ctx;           /* its context */
    srt_attention_plan *plan;   /* the plan */
    pthread_mutex_t lock;       /* serialises runs (a plan belongs to one thread at a time) */
    int lock_ready;             /* lock was initialised */
    int heads, head_dim;        /* its shape */
    int elem;                   /* bytes per element */
} AttnPlanObject;

static PyObject *AttnPlan_type;

static void AttnPlan_dealloc(PyObject *self) {
    AttnPlanObject *po = (AttnPlanObject *)self;
    srt_attention_plan_destroy(po->plan);
    srt_context_destroy(po->ctx);
    if (po->lock_ready) pthread_mutex_destroy(&po->lock);
    PyTypeObject *tp = Py_TYPE(self);
    freefunc tp_free = (freefunc)PyType_GetSlot(tp, Py_tp_free);
    tp_free(self);
    Py_DECREF(tp);
}

/* Fills params[*n] from a tuple of (name, value) pairs (names kept alive by the tuple); -1 with an exception. */
static int attention_params(PyObject *items, srt_attention_param *params, int *n) {
    Py_ssize_t len = PyTuple_Size(items);
    if (len < 0) return -1;
    if (len > 8) {
        PyErr_Format(PyExc_ValueError, "attention: %zd parameters (at most 8)", len);
        return -1;
    }
    for (Py_ssize_t i = 0; i < len; i++)
        if (!PyArg_ParseTuple(PyTuple_GetItem(items, i), "sd", &params[i].name, &params[i].value)) return -1;
    *n = (int)len;
    return 0;
}

static PyObject *attention_plan_made(srt_attention_desc *dp, const char *backend, PyObject *items,
                                     srt_attention_param *params);

/* _shortc.attention_plan(kind, [(name, value), ...], heads, head_dim, dtype, scale, backend, device, cache_dir,
 * sim_threads) -> AttentionPlan: srt_attention_plan_create. */
static PyObject *mod_attention_plan(PyObject *mod, PyObject *args) {
    (void)mod;
    srt_attention_desc d;
    srt_attention_desc_init(&d);
    PyObject *list;
    const char *backend;
    srt_attention_param params[8];
    if (!PyArg_ParseTuple(args, "sO!iisdsizi", &d.kind, &PyList_Type, &list, &d.heads, &d.head_dim, &d.dtype,
                          &d.scale, &backend, &d.device, &d.cache_dir, &d.sim_threads))
        return NULL;
    PyObject *items = PySequence_Tuple(list); /* the names outlive the call made without the GIL */
    if (!items) return NULL;
    PyObject *r = attention_plan_made(&d, backend, items, params);
    Py_DECREF(items);
    return r;
}

/* mod_attention_plan's work once the parameters' (name, value) pairs are in a tuple of their own. */
static PyObject *attention_plan_made(srt_attention_desc *dp, const char *backend, PyObject *items,
                                     srt_attention_param *params) {
    srt_attention_desc d = *dp;
    if (attention_params(items, params, &d.nparams) != 0) return NULL;
    d.params = params;
    int b = backend_from_name(backend);
    if (b < 0) return NULL;
    d.backend = (srt_backend)b;
    allocfunc tp_alloc = (allocfunc)PyType_GetSlot((PyTypeObject *)AttnPlan_type, Py_tp_alloc);
    AttnPlanObject *po = (AttnPlanObject *)tp_alloc((PyTypeObject *)AttnPlan_type, 0);
    Failure *f = malloc(sizeof *f);
    if (!po || !f || pthread_mutex_init(&po->lock, NULL) != 0) {
        Py_XDECREF(po);
        free(f);
        return PyErr_NoMemory();
    }
    po->lock_ready = 1;
    if (srt_context_create(&po->ctx, NULL, NULL) != SRT_OK) {
        Py_DECREF(po);
        free(f);
        return PyErr_NoMemory();
    }
    po->heads = d.heads;
    po->head_dim = d.head_dim;
    po->elem = strcmp(d.dtype, "fp32") == 0 ? 4 : 2;
    srt_status st;
    Py_BEGIN_ALLOW_THREADS /* the context is this object's own, not yet shared */
    st = srt_attention_plan_create(po->ctx, &d, &po->plan);
    if (st != SRT_OK) failure_capture(po->ctx, st, f);
    Py_END_ALLOW_THREADS
    PyObject *r = st == SRT_OK ? (PyObject *)po : raise_failure(f);
    free(f);
    if (!r) Py_DECREF(po);
    return r;
}

/* AttentionPlan.run(batch, tokens, q, k, v, out, nbytes): srt_attention_run on addresses (host or device) of
 * nbytes each, checked against batch x heads x tokens x head_dim elements. */
static PyObject *AttnPlan_run(PyObject *self, PyObject *args) {
    AttnPlanObject *po = (AttnPlanObject *)self;
    int batch, tokens;
    unsigned long long q, k, v, out, nbytes;
    if (!PyArg_ParseTuple(args, "iiKKKKK", &batch, &tokens, &q, &k, &v, &out, &nbytes)) return NULL;
    if (batch < 1 || tokens < 1)
        return PyErr_Format(PyExc_ValueError, "attention: batch %d and tokens %d must be >= 1", batch, tokens);
    unsigned long long want = (unsigned long long)batch * po->heads * tokens * po->head_dim * po->elem;
    if (nbytes != want)
        return PyErr_Format(PyExc_ValueError, "attention: %llu bytes per tensor, %llu expected", nbytes, want);
    if (!q || !k || !v || !out) return PyErr_Format(PyExc_ValueError, "attention: a NULL tensor address");
    Failure *f = malloc(sizeof *f);
    if (!f) return PyErr_NoMemory();
    srt_status st;
    LOCKED(po, f, st = srt_attention_run(po->plan, batch, tokens, (const void *)(uintptr_t)q, (const void *)(uintptr_t)k,
                                         (const void *)(uintptr_t)v, (void *)(uintptr_t)out));
    PyObject *r = status_result(st, f);
    free(f);
    return r;
}

/* AttentionPlan.modules() -> (token classes compiled, compile ms). */
static PyObject *AttnPlan_modules(PyObject *self, PyObject *noargs) {
    (void)noargs;
    AttnPlanObject *po = (AttnPlanObject *)self;
    double ms = 0;
    int n;
    Py_BEGIN_ALLOW_THREADS pthread_mutex_lock(&po->lock);
    n = srt_attention_plan_modules(po->plan, &ms);
    pthread_mutex_unlock(&po->lock);
    Py_END_ALLOW_THREADS
    return Py_BuildValue("id", n, ms);
}

static PyMethodDef AttnPlan_methods[] = {
    {"run", AttnPlan_run, METH_VARARGS, "run(batch, tokens, q, k, v, out, nbytes): srt_attention_run."},
    {"modules", AttnPlan_modules, METH_NOARGS, "modules() -> (int, float): srt_attention_plan_modules."},
    {NULL, NULL, 0, NULL},
};

static PyType_Slot AttnPlan_slots[] = {
    {Py_tp_dealloc, AttnPlan_dealloc},
    {Py_tp_methods, AttnPlan_methods},
    {Py_tp_doc, "An attention kind's plan (srt_attention_plan); made by shortc.attention."},
    {0, NULL},
};

static PyType_Spec AttnPlan_spec = {"shortc._shortc.AttentionPlan", sizeof(AttnPlanObject), 0, Py_TPFLAGS_DEFAULT,
                                    AttnPlan_slots};

/* ------------------------------------------------------------------ */
/* Module                                                              */
/* ------------------------------------------------------------------ */

/* _shortc.mask(path, source, model_name, ntokens) -> (bytes, layers, heads): srt_mask. */
static PyObject *mod_mask(PyObject *mod, PyObject *args) {
    (void)mod;
    PyObject *path_bytes;
    const char *model_name, *source = NULL;
    Py_ssize_t source_len = 0;
    int ntokens;
    if (!PyArg_ParseTuple(args, "O&z#zi", PyUnicode_FSConverter, &path_bytes, &source, &source_len, &model_name,
                          &ntokens))
        return NULL;
    const char *path = PyBytes_AsString(path_bytes);
    srt_context *ctx = NULL;
    Failure *f = malloc(sizeof *f);
    if (!f || srt_context_create(&ctx, NULL, NULL) != SRT_OK) {
        free(f);
        Py_DECREF(path_bytes);
        return PyErr_NoMemory();
    }
    uint8_t *masks = NULL;
    int layers = 0, heads = 0;
    srt_status st;
    Py_BEGIN_ALLOW_THREADS /* the context is this call's own */
    st = srt_mask(ctx, path, source, (size_t)source_len, model_name, ntokens, &masks, &layers, &heads);
    if (st != SRT_OK) failure_capture(ctx, st, f);
    Py_END_ALLOW_THREADS
    PyObject *r = NULL;
    if (st != SRT_OK) {
        raise_failure(f);
    } else {
        size_t bytes = (size_t)layers * (size_t)heads * (size_t)ntokens * (size_t)ntokens;
        PyObject *b = PyBytes_FromStringAndSize((const char *)masks, (Py_ssize_t)bytes);
        if (b) r = Py_BuildValue("Nii", b, layers, heads);
    }
    srt_free(ctx, masks);
    srt_context_destroy(ctx);
    free(f);
    Py_DECREF(path_bytes);
    return r;
}

/* _shortc.compare([(path, model_or_None), ...], device_or_None, window, stride, overlap) -> str: srt_compare_json. */
static PyObject *mod_compare(PyObject *mod, PyObject *args) {
    (void)mod;
    PyObject *list;
    srt_cost_options o;
    if (!PyArg_ParseTuple(args, "O!ziii", &PyList_Type, &list, &o.device, &o.window, &o.stride, &o.overlap)) return NULL;
    Py_ssize_t n = PyList_Size(list);
    if (n < 1 || n > 4096) return PyErr_Format(PyExc_ValueError, "compare: %zd models (1 to 4096)", n);
    const char **paths = calloc((size_t)n, sizeof *paths), **models = calloc((size_t)n, sizeof *models);
    Failure *f = malloc(sizeof *f);
    srt_context *ctx = NULL;
    PyObject *r = NULL, *held = NULL;
    if (!paths || !models || !f || srt_context_create(&ctx, NULL, NULL) != SRT_OK) {
        PyErr_NoMemory();
        goto done;
    }
    if (!(held = PyList_New(n))) goto done;
    for (Py_ssize_t i = 0; i < n; i++) { /* the model names stay alive in list's tuples, the paths in held */
        PyObject *pb;
        if (!PyArg_ParseTuple(PyList_GetItem(list, i), "O&z", PyUnicode_FSConverter, &pb, &models[i])) goto done;
        PyList_SetItem(held, i, pb);
        paths[i] = PyBytes_AsString(pb);
    }
    char *json = NULL;
    srt_status st;
    Py_BEGIN_ALLOW_THREADS /* the context is this call's own */
    st = srt_compare_json(ctx, paths, models, (int)n, &o, &json);
    if (st != SRT_OK) failure_capture(ctx, st, f);
    Py_END_ALLOW_THREADS
    if (st != SRT_OK) raise_failure(f);
    else r = PyUnicode_FromString(json);
    srt_free(ctx, json);
done:
    Py_XDECREF(held);
    srt_context_destroy(ctx);
    free(paths);
    free(models);
    free(f);
    return r;
}

static PyObject *mod_version(PyObject *mod, PyObject *noargs) {
    (void)mod;
    (void)noargs;
    return PyUnicode_FromString(srt_version());
}

static PyMethodDef module_methods[] = {
    {"open", mod_open, METH_VARARGS,
     "open(path, source, model_name, backend, sim_threads, sim_checked, cache_dir, allow_nonfinite, allow_unused) -> Model."},
    {"tokenizer", mod_tokenizer, METH_VARARGS, "tokenizer(path, merges=None) -> Tokenizer."},
    {"compare", mod_compare, METH_VARARGS,
     "compare([(path, model), ...], device, window, stride, overlap) -> str: srt_compare_json."},
    {"mask", mod_mask, METH_VARARGS, "mask(path, source, model_name, ntokens) -> (bytes, layers, heads): srt_mask."},
    {"version", mod_version, METH_NOARGS, "version() -> str: srt_version()."},
    {"attention_plan", mod_attention_plan, METH_VARARGS,
     "attention_plan(kind, params, heads, head_dim, dtype, scale, backend, device, cache_dir, sim_threads) -> "
     "AttentionPlan: srt_attention_plan_create."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_shortc", "The shortc runtime (shortrt.h) for the shortc package.", -1, module_methods,
    NULL, NULL, NULL, NULL,
};

/* Adds a new object under name (stealing it); -1 on failure. */
static int add(PyObject *m, const char *name, PyObject *obj) {
    if (!obj) return -1;
    Py_INCREF(obj); /* the module keeps one reference, the static pointer the other */
    if (PyModule_AddObject(m, name, obj) != 0) {
        Py_DECREF(obj);
        return -1;
    }
    return 0;
}

PyMODINIT_FUNC PyInit__shortc(void) {
    PyObject *m = PyModule_Create(&module_def);
    if (!m) return NULL;
    Model_type = PyType_FromSpec(&Model_spec);
    Session_type = PyType_FromSpec(&Session_spec);
    Tokenizer_type = PyType_FromSpec(&Tokenizer_spec);
    AttnPlan_type = PyType_FromSpec(&AttnPlan_spec);
    Error_type = PyErr_NewExceptionWithDoc("shortc.Error", "A failure of the shortc runtime; .status names it.",
                                           PyExc_RuntimeError, NULL);
    CompileError_type = Error_type ? PyErr_NewExceptionWithDoc(
                                         "shortc.CompileError",
                                         "The compiler rejected the .arch: .file, .line, .column (1-based), .caret.",
                                         Error_type, NULL)
                                   : NULL;
    if (add(m, "Model", Model_type) || add(m, "Session", Session_type) || add(m, "Tokenizer", Tokenizer_type) ||
        add(m, "AttentionPlan", AttnPlan_type) ||
        add(m, "Error", Error_type) || add(m, "CompileError", CompileError_type)) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
