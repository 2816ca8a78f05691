/*
 * shortrt.h — the one public header of libshortrt, the shortc runtime.
 *
 * A host program opens a model (an emitted .cu with its embedded plan, or an
 * .arch compiled on the fly), loads weights, creates a session and runs
 * forward passes over segments of tokens. Three backends execute a model:
 *
 *   SRT_BACKEND_REF   the reference interpreter over the compiler's IR (.arch only)
 *   SRT_BACKEND_SIM   the plan executed through the CPU SIMT simulator and its cuBLAS
 *   SRT_BACKEND_CUDA  the plan executed through libcuda + libcublas (NVRTC-compiled)
 *   SRT_BACKEND_AUTO  CUDA when a driver and device are present, else SIM
 *
 * Rules (as in Lua's C API): every call returns a status; the library never
 * exits, aborts or prints; srt_last_error() says what went wrong; memory
 * comes from the host allocator given at context creation (or malloc).
 */
#ifndef SHORTRT_H
#define SHORTRT_H

#include <stddef.h>
#include <stdint.h>

#include "shortrt_version.h" /* SHORTRT_VERSION_MAJOR, _MINOR, _PATCH, _STRING (generated) */

#ifdef __cplusplus
extern "C" {
#endif

typedef enum srt_status {
    SRT_OK = 0,
    SRT_ERR_INVALID,      /* bad argument (NULL, out of range, wrong state) */
    SRT_ERR_IO,           /* file missing, unreadable or truncated */
    SRT_ERR_FORMAT,       /* malformed .cu plan, safetensors, tokens, .arch */
    SRT_ERR_WEIGHTS,      /* missing tensor, wrong shape or dtype */
    SRT_ERR_NO_DEVICE,    /* cuda backend asked for but no driver or GPU */
    SRT_ERR_COMPILE,      /* NVRTC or host compiler failed for the simulator */
    SRT_ERR_DRIVER,       /* a CUDA driver / cuBLAS call failed */
    SRT_ERR_SIM,          /* simulator fault: divergent barrier, out of bounds, limits */
    SRT_ERR_NOMEM,        /* the host allocator returned NULL */
    SRT_ERR_UNSUPPORTED,  /* the backend cannot run this model */
} srt_status;

typedef enum srt_backend {
    SRT_BACKEND_AUTO = 0,
    SRT_BACKEND_REF,
    SRT_BACKEND_SIM,
    SRT_BACKEND_CUDA,
} srt_backend;

/* Host allocator hook: realloc semantics (ptr NULL = malloc, size 0 = free). */
typedef void *(*srt_alloc_fn)(void *ud, void *ptr, size_t old_size, size_t new_size);

typedef struct srt_context srt_context;   /* allocator, last error, caches */
typedef struct srt_model srt_model;       /* plan + compiled kernels + weights */
typedef struct srt_session srt_session;   /* per-stream state and activations */

typedef struct srt_options {
    srt_backend backend;      /* which backend (AUTO by default) */
    const char *cache_dir;    /* kernel cache directory; NULL: $SHORTC_CACHE or ~/.cache/shortc (used only when
                                 private to the user: 0700, owned, no symlink; see srt_model_info.cache_note) */
    int sim_threads;          /* simulator worker threads; 0 = number of cores */
    int sim_checked;          /* simulator bounds/limits checks (1 by default) */
    const char *model_name;   /* which model of an .arch file; NULL = the last */
    int allow_nonfinite_weights; /* 1: accept NaN/Inf weight values (refused by default, naming the tensor) */
    int allow_unused_weights; /* 1: load a checkpoint that holds tensors the model does not use (refused by default,
                                 listing them: a checkpoint of another model, docs/runtime.md "Weight checks") */
} srt_options;

/* The linked library's version, "MAJOR.MINOR.PATCH" (SHORTRT_VERSION_STRING when it was built). */
const char *srt_version(void);

/* Fills defaults. */
void srt_options_init(srt_options *opt);

/* Context: alloc may be NULL (malloc/free). */
srt_status srt_context_create(srt_context **out, srt_alloc_fn alloc, void *ud);
void srt_context_destroy(srt_context *ctx);
/* Message of the last failure on this context (never NULL). */
const char *srt_last_error(const srt_context *ctx);
/* Where the last failure's first compile error is, when that failure was an .arch the compiler rejected
 * (srt_model_open, srt_model_open_source): *file (owned by the context, valid until its next failure), 1-based
 * *line and *column, and 1; otherwise *file NULL, 0 and 0, and 0. Any pointer may be NULL. */
int srt_last_error_location(const srt_context *ctx, const char **file, int *line, int *column);
const char *srt_status_name(srt_status s);
const char *srt_backend_name(srt_backend b);

/* Opens an emitted .cu (plan embedded) or an .arch (compiled on the fly). */
srt_status srt_model_open(srt_context *ctx, const char *path, const srt_options *opt, srt_model **out);
/* srt_model_open of an .arch given as text[len] (not NUL-terminated), named name in diagnostics (NULL:
 * "<source>"); its imports resolve from name's directory. */
srt_status srt_model_open_source(srt_context *ctx, const char *name, const char *text, size_t len,
                                 const srt_options *opt, srt_model **out);
void srt_model_close(srt_model *m);

/* Weights: a safetensors file, or seeded random weights (same generator as the tests). The file is checked
 * against the model (SRT_ERR_WEIGHTS): every weight present in its shape, no tensor the model does not use
 * (unless srt_options.allow_unused_weights), and a config.json beside it (a HuggingFace checkpoint) stating the
 * model's layers, heads, width, vocabulary and tying (docs/runtime.md, "Weight checks"). */
srt_status srt_model_load_weights(srt_model *m, const char *safetensors_path);
srt_status srt_model_random_weights(srt_model *m, uint64_t seed);
/* One weight tensor in the caller's memory (srt_model_load_tensors). */
typedef struct srt_tensor {
    const char *name;       /* the weight's name, as in a safetensors file ("transformer." prefix optional) */
    const char *dtype;      /* safetensors' name of its element type: "F32", "F16" or "BF16" */
    const void *data;       /* its elements in C order */
    size_t nbytes;          /* bytes at data: the product of shape times the element size */
    const int64_t *shape;   /* rank sizes */
    int rank;               /* 0 to 8 */
} srt_tensor;
/* Weights from tensors[n] in memory, bound exactly as the tensors of a safetensors file
 * (srt_model_load_weights); the data is read during the call only. */
srt_status srt_model_load_tensors(srt_model *m, const srt_tensor *tensors, int n);
/* Writes the weights srt_model_random_weights(m, seed) draws as an F32 safetensors file (the file shapes and
 * names srt_model_load_weights reads back to the same values); written atomically, a symbolic link refused. */
srt_status srt_model_save_random_weights(srt_model *m, uint64_t seed, const char *path);

/* Facts about the model and its plan. */
typedef struct srt_model_info {
    const char *name;          /* model name */
    srt_backend backend;       /* backend actually used */
    int vocab;                 /* logits width */
    int d_model;               /* width */
    int n_layers;              /* layers */
    int segment;               /* max tokens per forward */
    int nkernels;              /* distinct kernels */
    int nlaunches;             /* kernel launches per forward */
    int ngemms;                /* GEMM calls per forward */
    size_t weight_bytes;       /* device bytes of weights */
    size_t activation_bytes;   /* activation arena bytes */
    size_t state_bytes;        /* per-session state (caches, memories) */
    double compile_ms;         /* NVRTC / host compile time (0 on a cache hit) */
    int cache_hit;             /* kernels came from the on-disk cache */
    const char *cache_note;    /* why the kernel cache was not used or not written (an unsafe or unwritable
                                  directory; kernels were then built in a private temporary directory),
                                  "" if it was: the library never prints, callers may show it as a warning */
    int stateful;              /* 1: a session keeps its sequence, so each srt_forward continues it (every
                                  backend today) */
    int kv_cache;              /* 1: a continuing forward computes only the new tokens against cached keys and
                                  values (every backend on an emitted plan: ref in the interpreter, sim and cuda
                                  in the plan's state); 0: it re-runs the sequence so far (a plan without
                                  persistent state), which limits a sequence to one segment */
    int max_positions;         /* positions a session holds before it must be reset (with a KV cache: the
                                  model's position limit, e.g. GPT-2's learned positions; otherwise the segment) */
    int recurrent;             /* 1: a recurrence module (docs/attention/recurrence.md): each srt_forward is one
                                  window at positions 0..T-1 that reads and updates the session's h_prev */
    int overlap;               /* recurrent models: the overlap K of their windows (mode windows' default) */
    int carries_state;         /* 1: a session keeps a bounded window of earlier tokens across any number of
                                  calls (Shortformer's cache: at each segment's end its last `cache` tokens;
                                  Transformer-XL's memories: each layer's last `memory` inputs), so it
                                  never needs a reset and mode 'cached' runs a whole text through it */
    int memories;              /* 1: the state is Transformer-XL memories (docs/attention/relative.md): positions
                                  accumulate up to max_positions, each layer keeps its last `memory` inputs */
    size_t derived_bytes;      /* tensors computed from the weights once per weights load by the plan's load
                                  program and shared by every session (Shortformer's positional tables); not in
                                  state_bytes */
    int load_runs;             /* times they were computed: once per srt_model_load_weights /
                                  srt_model_random_weights that succeeded (0 for a model without them) */
} srt_model_info;
srt_status srt_model_get_info(const srt_model *m, srt_model_info *info);
/* One tensor of the state a session keeps between forwards (per sequence): a KV cache, a Transformer-XL
 * memory, the recurrence's h_prev (docs/runtime.md). */
typedef struct srt_state_info {
    const char *name;          /* its name in the plan, e.g. "kv.0", "pia.1", "mem.3", "rec" (owned by the model) */
    const char *role;          /* "kv_cache", "layer_input", "memory" or "recurrent" */
    const char *dtype;         /* "fp32", "fp16" or "bf16" */
    int capacity;              /* rows (positions) it holds */
    int keep;                  /* a sliding cache: rows kept when a segment ends (Shortformer's L'); -1 otherwise */
    size_t bytes;              /* bytes per sequence at capacity; the entries sum to srt_model_info.state_bytes */
} srt_state_info;
/* How many state tensors a session of the model keeps (0 for a stateless plan). */
int srt_model_state_count(const srt_model *m);
/* Entry i (0 to srt_model_state_count(m) - 1) into *out. */
srt_status srt_model_state_get(const srt_model *m, int i, srt_state_info *out);
/* The plan as JSON text (owned by the model). */
const char *srt_model_plan_json(const srt_model *m);

/*
 * Sessions: batch is the number of sequences the session holds (1 to 256), each with its own state and
 * position; a session of more than one is run with srt_forward_batch. On sim and cuda, the sequences of one
 * call that continue with one token run as one batched decode step (a row each, up to the plan's "batch"
 * max per step) where the plan has one; the others run one after another through the plan. Either way each
 * sequence gets what it gets alone.
 */
srt_status srt_session_create(srt_model *m, int batch, srt_session **out);
/* Sequences the session holds. */
int srt_session_batch(const srt_session *s);
void srt_session_destroy(srt_session *s);
/* Clears caches, memories and recurrence state: the next forward starts a new sequence at position 0. */
srt_status srt_session_reset(srt_session *s);
/* How a session's Transformer-XL memories start, after srt_session_create and after every reset. */
typedef enum srt_mem_init {
    SRT_MEM_INIT_EMPTY = 0,   /* no rows: the first segment sees only itself (the original code; the default) */
    SRT_MEM_INIT_ZEROS = 1,   /* HF TransfoXL's init_mems: each layer's memory holds its capacity of zero rows,
                                 which the first segments attend to; the position starts at the largest memory */
} srt_mem_init;
/* Sets how the session's memories start and resets it (docs/attention/relative.md); SRT_ERR_UNSUPPORTED for a
 * model without memories. */
srt_status srt_session_set_mem_init(srt_session *s, srt_mem_init init);
/* Bytes of state the session keeps between forwards (its KV caches at capacity). */
size_t srt_session_state_bytes(const srt_session *s);
/* Positions the session has consumed: the position of the next forward's first token (0 after a
 * reset). */
int srt_session_position(const srt_session *s);
/* The same for sequence b of a batch session (srt_session_position is sequence 0's). */
int srt_session_position_of(const srt_session *s, int b);
/* Bytes the session's forwards have copied from the device to the host so far (logits rows, losses, sampled
 * token ids; every sequence of a batch session): what evaluation and decoding cost in transfers. 0 on the ref
 * backend, whose results never leave the host. */
size_t srt_session_bytes_to_host(const srt_session *s);
/* What a session has asked of the device since it was created (sim and cuda; every sequence of a batch
 * session; all 0 on the ref backend): counted by the runtime at its driver calls, so the simulator's figures
 * are the ones a GPU would see. Take two snapshots and subtract for one call or one decode step. */
typedef struct srt_call_counts {
    long long launches;        /* kernel launches made one by one (those inside a replayed graph are not) */
    long long gemms;           /* cuBLAS / cuBLASLt GEMM calls made one by one */
    long long graph_launches;  /* CUDA graph launches (each replays a whole program) */
    long long syncs;           /* host waits for the session's stream */
    long long copies;          /* copies between host and device (token ids, parameters, results) */
    long long bytes;           /* bytes those copies moved, both directions */
} srt_call_counts;
srt_status srt_session_call_counts(const srt_session *s, srt_call_counts *out);

/* Per-step device time (docs/runtime.md, "Profiling"): with profiling on, a sim or cuda session runs its
 * programs step by step (no CUDA graph), with an event recorded before and after each step, and sums each
 * plan step's elapsed time over its runs. Switching it on (again) clears the sums; off frees the events.
 * The ref backend has no steps: SRT_ERR_UNSUPPORTED. On sim the times are the simulator's, not a GPU's. */
srt_status srt_session_set_profiling(srt_session *s, int on);
/* One plan step's timing since profiling was switched on. */
typedef struct srt_step_time {
    const char *kernel;   /* the kernel it launches, or "gemm" (owned by the model) */
    int line;             /* the .arch line it comes from (0 if unknown) */
    int layer;            /* the layer, or -1 */
    double ms;            /* device milliseconds, summed over its runs */
    int runs;             /* how many times it ran */
} srt_step_time;
/* The number of plan steps of s's model (0 on the ref backend). */
int srt_session_step_count(const srt_session *s);
/* Step i (0 to srt_session_step_count(s) - 1) into *out. */
srt_status srt_session_step_time(const srt_session *s, int i, srt_step_time *out);

/*
 * Runs tokens[ntokens] (1 <= ntokens <= segment) -> logits [ntokens,
 * vocab] float32, row-major, written to the caller's buffer. The tokens
 * continue the session's sequence at srt_session_position: feeding a
 * sequence in several calls gives the logits of one call (with
 * info.kv_cache 0 by re-running the sequence so far). Going past
 * max_positions is SRT_ERR_UNSUPPORTED with a message; the session is then
 * unchanged.
 */
srt_status srt_forward(srt_session *s, const int32_t *tokens, int ntokens, float *logits);
/* srt_forward that copies only the logits rows first_row..ntokens-1 ((ntokens - first_row) x vocab) to
 * logits: decoding asks for the last row (first_row = ntokens - 1) and copies 1 x vocab, not T x vocab. */
srt_status srt_forward_rows(srt_session *s, const int32_t *tokens, int ntokens, int first_row, float *logits);
/*
 * Several sequences in one call: sequence b of the session continues with ntokens[b] tokens (0 to segment;
 * 0: it sits the call out) from tokens[b], writing ntokens[b] x vocab logits to logits[b]. Every sequence is
 * checked (token ids, lengths, position limits) before any runs; a check failing leaves the session as it
 * was. srt_forward and srt_forward_rows take only single-sequence sessions.
 */
srt_status srt_forward_batch(srt_session *s, const int32_t *const *tokens, const int *ntokens, float *const *logits);

/* srt_forward_rows that returns, instead of the rows first_row..ntokens-1, their losses:
 * nll[i] = -log softmax(row first_row + i)[targets[i]] (natural log; targets[ntokens - first_row], a
 * negative target gives 0). The logits stay where they are: on sim and cuda the plan's loss program
 * computes the losses on the device and only these ntokens - first_row floats are copied back. */
srt_status srt_forward_nll(srt_session *s, const int32_t *tokens, int ntokens, int first_row, const int32_t *targets,
                           float *nll);

/*
 * Inference modes over a sequence of any length (docs/runtime.md): windows of
 * L tokens (the model's segment unless srt_eval_options.window says fewer),
 * each run from a reset session, scoring only the rows after the previous
 * window's end, so that every token is scored exactly once.
 */
typedef enum srt_mode {
    SRT_MODE_NONOVERLAPPING = 0, /* consecutive windows of L tokens (the last may be shorter) */
    SRT_MODE_SLIDING,            /* window n ends at e_n = min(L + nS, N), starts at max(0, e_n - L) (stride S) */
    SRT_MODE_WINDOWS,            /* windows starting every L - K tokens (overlap K), the last one short */
    SRT_MODE_TOKENWISE,          /* nonoverlapping windows fed one token per call through the session's state */
    SRT_MODE_CACHED,             /* state carried across segments (models with a PIA cache or memories; none yet) */
} srt_mode;
const char *srt_mode_name(srt_mode m);
/* "nonoverlapping", "sliding", "windows", "tokenwise" or "cached"; SRT_ERR_INVALID otherwise. */
srt_status srt_mode_from_name(const char *name, srt_mode *out);
/* Called after each window: done of total rows scored. */
typedef void (*srt_progress_fn)(void *ud, int64_t done, int64_t total);
typedef struct srt_eval_options {
    srt_mode mode;            /* the mode (nonoverlapping by default) */
    int stride;               /* sliding: S, 1 to L (0: L); other modes: 0 */
    int overlap;              /* windows: K, 0 to L - 1; other modes: 0 */
    int window;               /* L, 1 to the model's segment (0: the segment) */
    srt_progress_fn progress; /* optional progress callback */
    void *progress_ud;        /* its first argument */
} srt_eval_options;
void srt_eval_options_init(srt_eval_options *o);
/* tokens[n] -> logits [n, vocab]: row i is the row o's mode scores token i with. The session is reset
 * before each window and after the last. */
srt_status srt_eval_logits(srt_session *s, const srt_eval_options *o, const int32_t *tokens, int64_t n, float *logits);
/* tokens[n] (n >= 2) -> nll[n - 1]: nll[i] = -log p(tokens[i + 1]) from row i of o's mode (srt_forward_nll). */
srt_status srt_eval_nll(srt_session *s, const srt_eval_options *o, const int32_t *tokens, int64_t n, float *nll);
/*
 * The rows of srt_eval_logits handed to a callback as they are computed, so that a caller keeps
 * O(window x vocab) floats instead of n x vocab: rows(ud, first_row, nrows, logits) receives rows
 * first_row .. first_row + nrows - 1 (nrows x vocab floats, valid during the call only), once per
 * window, in order, every row exactly once (first_row of a call is the previous call's end). A status
 * other than SRT_OK from rows stops the evaluation: the session is reset and that status returned
 * (the context's last error then says the callback stopped it).
 */
typedef srt_status (*srt_rows_fn)(void *ud, int64_t first_row, int nrows, const float *logits);
srt_status srt_eval_logits_stream(srt_session *s, const srt_eval_options *o, const int32_t *tokens, int64_t n,
                                  srt_rows_fn rows, void *ud);

/*
 * Sampling the next token from a logits row: greedy at temperature 0 (the
 * first largest logit), else a draw from softmax(logits / temperature) over
 * the top_k most likely tokens (0: all), narrowed to the smallest set whose
 * probability reaches top_p (nucleus). The draws come from a splitmix64
 * stream seeded with seed, so the same seed and logits give the same tokens.
 */
typedef struct srt_sampling {
    double temperature;   /* 0: greedy; > 0: softmax temperature */
    int top_k;            /* keep the k most likely tokens (0: all; 1: greedy) */
    double top_p;         /* nucleus mass, 0 < top_p <= 1 (1: all) */
    uint64_t seed;        /* the stream's seed */
} srt_sampling;
typedef struct srt_sampler srt_sampler;
/* Fills the defaults: greedy, top_k 0, top_p 1, seed 0. */
void srt_sampling_init(srt_sampling *c);
srt_status srt_sampler_create(srt_context *ctx, const srt_sampling *cfg, int vocab, srt_sampler **out);
/* The next token of logits[vocab] (finite values). */
srt_status srt_sampler_next(srt_sampler *s, const float *logits, int32_t *token);
void srt_sampler_destroy(srt_sampler *s);
/*
 * srt_forward that, instead of logits, draws the next token from the last row with the sampler (made for the
 * model's vocabulary): on sim and cuda the plan's sample program draws it on the device (templates/sample.cuh)
 * and only the token id comes back to the host; on ref srt_sampler_next draws from the row. Both run the same
 * algorithm on the same stream, so a seed gives the same tokens on every backend (the device does not check
 * that the logits are finite).
 */
srt_status srt_forward_sample(srt_session *s, const int32_t *tokens, int ntokens, srt_sampler *smp, int32_t *token);
/* srt_forward_batch with a draw per sequence: sequence b continues with ntokens[b] tokens (0: it sits the call
 * out, drawn[b] untouched) and draws drawn[b] with samplers[b], as srt_forward_sample. */
srt_status srt_forward_batch_sample(srt_session *s, const int32_t *const *tokens, const int *ntokens,
                                    srt_sampler *const *samplers, int32_t *drawn);

/* One sequence of srt_generate. */
typedef struct srt_gen_seq {
    const int32_t *prompt;  /* in: its prompt, continuing the sequence's state */
    int nprompt;            /* in: its length (>= 1) */
    srt_sampler *sampler;   /* in: its draws (made for the model's vocabulary; one per sequence) */
    int32_t *out;           /* in: room for max_new ids; out: the ids generated */
    int ngen;               /* out: how many */
    int eos;                /* out: 1 when it stopped at eos */
} srt_gen_seq;
/* What srt_generate's callback hears after each call (one step: every sequence not done advanced once). */
typedef struct srt_gen_step {
    int step;               /* 0, 1, ...: the calls made so far, less one */
    int batch;              /* sequences the call advanced */
    int prefill;            /* 1 when it fed some sequence prompt tokens */
    int64_t made;           /* tokens generated so far, every sequence */
    int64_t total;          /* at most: nseqs x max_new */
} srt_gen_step;
typedef void (*srt_gen_step_fn)(void *ud, const srt_gen_step *step);
/*
 * The generation loop of `shortc generate`: sequence b of s (nseqs = its batch) is fed its prompt in chunks of
 * at most a segment, then each drawn token, through srt_forward_batch_sample, until it has max_new tokens or
 * draws eos (-1: none; not kept); max_new 0 feeds the prompts and draws nothing. Only the call that feeds a prompt's last chunk and the later ones draw from
 * the sequence's sampler, so a seed gives the same tokens however the prompt is chunked. on_step (optional)
 * is called after each call (progress lines, per-step srt_session_call_counts). On a failure the sequences
 * hold what was generated before it.
 */
srt_status srt_generate(srt_session *s, srt_gen_seq *seqs, int nseqs, int max_new, int64_t eos,
                        srt_gen_step_fn on_step, void *ud);

/* Ahead-of-time NVRTC compile of emitted CUDA into the kernel cache (needs no GPU). NVRTC is loaded on first
 * use (docs/runtime.md, "Backends"); SRT_ERR_COMPILE naming the library when it cannot be. */
typedef struct srt_compile_info {
    double compile_ms;     /* NVRTC time (0 on a cache hit) */
    int cache_hit;         /* the cubin came from the cache */
    size_t image_bytes;    /* cubin size */
} srt_compile_info;
srt_status srt_nvrtc_compile(srt_context *ctx, const char *source, size_t len, int arch,
                             srt_compile_info *info);

/*
 * Small text entries of a caller in the kernel cache (docs/runtime.md "The kernel cache"):
 * shortc keeps the static kernel facts of `compare/report --kernels` there. The entry is named
 * by a hash of key (keylen bytes: everything the text depends on) and ext (1 to 15 lowercase
 * letters or digits), and stored and validated like the cubins: private directory, a length
 * and hash sidecar, atomic rename. cache_dir NULL: $SHORTC_CACHE or ~/.cache/shortc.
 * get: SRT_OK with *text (NUL-terminated, *len bytes; free with srt_free) on a valid entry,
 * SRT_OK with *text NULL on a missing or corrupt one (a put replaces it); SRT_ERR_IO when no
 * private cache directory can be had. put: SRT_OK, or SRT_ERR_IO when it cannot be stored.
 */
srt_status srt_cache_text_get(srt_context *ctx, const char *cache_dir, const char *key, size_t keylen,
                              const char *ext, char **text, size_t *len);
srt_status srt_cache_text_put(srt_context *ctx, const char *cache_dir, const char *key, size_t keylen,
                              const char *ext, const char *text, size_t len);

/*
 * The boolean attention masks of an .arch model (`shortc mask`; docs/attention/README.md): the file at path, or
 * text[text_len] named path when text is not NULL; model_name NULL: its last model. On a forward of ntokens
 * (1 to the model's segment) from position 0, *masks [*layers, *heads, ntokens, ntokens] (free with srt_free)
 * holds 1 where query i of head h in layer l sees key j, from the same pattern the interpreter and the emitted
 * kernels use. A rejected .arch is SRT_ERR_FORMAT with the compiler's diagnostics (srt_last_error_location).
 */
srt_status srt_mask(srt_context *ctx, const char *path, const char *text, size_t text_len, const char *model_name,
                    int ntokens, uint8_t **masks, int *layers, int *heads);

/* Options of srt_compare_json: those of `shortc compare`. */
typedef struct srt_cost_options {
    const char *device;   /* the roofline device, a name of `shortc compare --device` (NULL: "h100-sxm") */
    int window;           /* W, tokens per forward (0: each model's segment) */
    int stride;           /* the sliding mode's stride (0: W/2) */
    int overlap;          /* the windows mode's overlap K (-1: W/4; 0 is an overlap of 0) */
} srt_cost_options;
/*
 * The cost model of .arch models side by side: *json (free with srt_free) is the document
 * `shortc compare --json` prints (schema shortc.compare/1, docs/cost-model.md) for paths[n], each its last
 * model or models[i] when models is not NULL and models[i] is not. opt NULL: the defaults (overlap -1).
 * A rejected .arch is SRT_ERR_FORMAT with the compiler's diagnostics; an option a model cannot take
 * SRT_ERR_INVALID.
 */
srt_status srt_compare_json(srt_context *ctx, const char *const *paths, const char *const *models, int n,
                            const srt_cost_options *opt, char **json);

/*
 * .npy helpers (C order), for logits files and simulator buffers.
 * srt_npy_read* allocate *data with the context's allocator (free with srt_free).
 */
typedef enum srt_dtype {
    SRT_DTYPE_F32 = 0,    /* float32, '<f4' */
    SRT_DTYPE_I32,        /* int32, '<i4' */
    SRT_DTYPE_U32,        /* uint32, '<u4' */
} srt_dtype;
/* *dtype in: the dtype required, or (srt_dtype)-1 for any; out: the file's. */
srt_status srt_npy_read(srt_context *ctx, const char *path, srt_dtype *dtype, void **data,
                        int64_t *shape, int *rank /* in: capacity of shape, out: rank */);
srt_status srt_npy_write(srt_context *ctx, const char *path, srt_dtype dtype, const void *data,
                         const int64_t *shape, int rank);
/* The bytes srt_npy_write would write, in memory (*bytes: free with srt_free). */
srt_status srt_npy_encode(srt_context *ctx, srt_dtype dtype, const void *data, const int64_t *shape, int rank,
                          void **bytes, size_t *len);
/* The header alone of srt_npy_encode (magic, version, padded dict; *bytes: free with srt_free): a writer
 * that streams an array writes it, then shape's elements in C order (shortc run --logits). */
srt_status srt_npy_encode_header(srt_context *ctx, srt_dtype dtype, const int64_t *shape, int rank, void **bytes,
                                 size_t *len);
srt_status srt_npy_write_f32(srt_context *ctx, const char *path, const float *data,
                             const int64_t *shape, int rank);
srt_status srt_npy_read_f32(srt_context *ctx, const char *path, float **data,
                            int64_t *shape, int *rank /* in: capacity of shape, out: rank */);
void srt_free(srt_context *ctx, void *p);

/*
 * The simulator as a test bench (docs/simulator.md): runs one kernel of any
 * CUDA source on the CPU SIMT simulator. Each parameter is an argument in
 * order: a buffer (copied to a fresh device allocation before the launch and
 * back into data after a successful one) or a 4-byte scalar. A launch the
 * simulator rejects or that faults returns SRT_ERR_SIM with its report as
 * the context's last error; a kernel the source lacks, or arguments that do
 * not match its parameters, SRT_ERR_INVALID.
 */
typedef enum srt_sim_arg_kind {
    SRT_SIM_ARG_BUF = 0,  /* a device buffer (any pointer parameter) */
    SRT_SIM_ARG_I32,      /* an int parameter */
    SRT_SIM_ARG_U32,      /* an unsigned int parameter */
    SRT_SIM_ARG_F32,      /* a float parameter */
} srt_sim_arg_kind;
typedef struct srt_sim_arg {
    srt_sim_arg_kind kind;  /* which of the fields below is used */
    void *data;             /* BUF: host copy (read before, written after the launch) */
    size_t bytes;           /* BUF: its size (> 0) */
    int32_t i32;            /* I32: the value */
    uint32_t u32;           /* U32: the value */
    float f32;              /* F32: the value */
} srt_sim_arg;
typedef struct srt_sim_launch {
    const char *source;     /* the .cu text */
    size_t len;             /* its length */
    const char *name;       /* the file's path: diagnostics, and #include searches its directory (NULL: "kernel") */
    const char *kernel;     /* the __global__ function to run */
    unsigned grid[3];       /* gridDim */
    unsigned block[3];      /* blockDim */
    unsigned smem;          /* dynamic shared memory bytes */
    int checked;            /* exact bounds (see docs/simulator.md) */
    int threads;            /* simulator workers; 0 = number of cores */
    const char *cache_dir;  /* kernel cache; NULL: $SHORTC_CACHE or ~/.cache/shortc */
    srt_sim_arg *args;      /* one per kernel parameter, in order */
    int nargs;              /* their count */
    const char *const *include_dirs; /* directories #include searches after the file's own (-I), or NULL */
    int ninclude_dirs;      /* their count (at most 15) */
    char *cache_note;       /* out, optional: why the kernel cache was not used or not written ("" if it
                               was; like srt_model_info.cache_note), cache_note_len bytes; NULL: not wanted */
    size_t cache_note_len;  /* bytes at cache_note */
} srt_sim_launch;
srt_status srt_sim_run(srt_context *ctx, const srt_sim_launch *launch);

/*
 * Attention kinds as functions (docs/runtime.md "Attention kinds as functions"): out = softmax(scale q k^T +
 * mask) v with the mask of an attention kind of the kind table (docs/attention/README.md; seeded kinds draw
 * layer 0's pattern, the one `shortc mask` shows for a one-layer model), over q, k, v and out laid out
 * [batch, heads, tokens, head_dim] contiguously: causal prefill, queries = keys, positions 0..tokens-1. A query
 * that sees no key gets zeros. A plan holds the kind's checked parameters and its driver; srt_attention_run
 * renders the kernel (templates/attn_engine.cuh; attn_mma.cuh for fp16/bf16 with head_dim a multiple of 8)
 * once per token class (a power of two >= 64 that holds tokens), compiles it through the kernel cache
 * (the host compiler for sim, NVRTC for cuda) and keeps the module: later calls of that class only launch.
 * Kinds with state or position terms (relative) are refused: they are not functions of q, k and v.
 */
typedef struct srt_attention_param {
    const char *name;   /* a parameter of the kind (docs/attention/KIND.md), e.g. "size" */
    double value;       /* its value: a whole number in the parameter's range */
} srt_attention_param;
typedef struct srt_attention_desc {
    const char *kind;                   /* the kind's name ("causal", "window", ...; NULL: "causal") */
    const srt_attention_param *params;  /* its parameters (each at most once; the others take their defaults) */
    int nparams;                        /* entries of params */
    int heads;                          /* H, 1 to 1024 */
    int head_dim;                       /* D, 1 to 128 */
    const char *dtype;                  /* of q, k, v and out: "fp32", "fp16" or "bf16" (NULL: "fp32") */
    double scale;                       /* the scores' scale; 0: 1/sqrt(head_dim) */
    srt_backend backend;                /* SRT_BACKEND_SIM (host pointers) or SRT_BACKEND_CUDA (device pointers) */
    int device;                         /* cuda: the device ordinal (its primary context is used) */
    const char *cache_dir;              /* kernel cache; NULL: $SHORTC_CACHE or ~/.cache/shortc (as srt_options) */
    int sim_threads;                    /* simulator worker threads; 0 = number of cores */
    int sim_checked;                    /* simulator bounds/limits checks (1 by default) */
} srt_attention_desc;
typedef struct srt_attention_plan srt_attention_plan;
/* Fills the defaults: causal, fp32, scale 0, the simulator, checked. */
void srt_attention_desc_init(srt_attention_desc *d);
/* Checks d (an unknown kind or parameter, a value out of range, a refused kind: SRT_ERR_INVALID with the
 * messages the .arch front end gives) and opens its backend; compiles nothing yet. */
srt_status srt_attention_plan_create(srt_context *ctx, const srt_attention_desc *d, srt_attention_plan **out);
/* out[b, h, i] = attention of q[b, h, i] over k[b, h, j], v[b, h, j] for the keys j <= i the kind lets query i
 * of head h see, for batch >= 1 and tokens >= 1 (q, k, v, out: batch x heads x tokens x head_dim elements of the
 * plan's dtype; host memory on sim, device memory on cuda, where the call launches on the default stream and
 * waits for it). */
srt_status srt_attention_run(srt_attention_plan *p, int batch, int tokens, const void *q, const void *k,
                             const void *v, void *out);
/* Modules the plan has compiled (token classes used so far), and the compile time they took (0 on cache hits). */
int srt_attention_plan_modules(const srt_attention_plan *p, double *compile_ms);
void srt_attention_plan_destroy(srt_attention_plan *p);
/* One call: plan, run, destroy. */
srt_status srt_attention(srt_context *ctx, const srt_attention_desc *d, int batch, int tokens, const void *q,
                         const void *k, const void *v, void *out);

/*
 * BPE tokenizers as Hugging Face tokenizers runs them (docs/tokenizer.md): a
 * tokenizer.json (merges_path NULL) with its normalizers (Prepend, Replace, NFC),
 * pre-tokenizers (ByteLevel, Metaspace), byte fallback, decoders and added
 * tokens, or GPT-2's vocab.json with its merges.txt. A component it cannot
 * run is an error naming it. Text must be UTF-8; added and special tokens
 * (e.g. <|endoftext|>) are split out of it before BPE. Post-processors
 * (templates adding BOS/EOS) are not applied: the ids are HF's
 * encode(text, add_special_tokens=False). Arrays and strings returned are
 * freed with srt_free.
 */
typedef struct srt_tokenizer srt_tokenizer;
srt_status srt_tokenizer_open(srt_context *ctx, const char *path, const char *merges_path, srt_tokenizer **out);
void srt_tokenizer_close(srt_tokenizer *t);
/* Largest token id + 1. */
int srt_tokenizer_vocab_size(const srt_tokenizer *t);
/* text[len] -> *ids[*nids] (an empty text gives no ids; *ids may then be NULL). */
srt_status srt_tokenizer_encode(srt_tokenizer *t, const char *text, size_t len, int32_t **ids, size_t *nids);
/* Flags of srt_tokenizer_encode_with. */
enum {
    SRT_ENCODE_SPECIAL_AS_TEXT = 1, /* special added tokens in the text are text (HF's encode_special_tokens) */
};
/* srt_tokenizer_encode with flags (SRT_ENCODE_*; 0: srt_tokenizer_encode). */
srt_status srt_tokenizer_encode_with(srt_tokenizer *t, const char *text, size_t len, unsigned flags, int32_t **ids,
                                     size_t *nids);
/* ids[n] -> *text[*len] through the tokenizer's decoder (NUL-terminated; with ByteLevel the bytes need not be
 * UTF-8 when a token splits a character). */
srt_status srt_tokenizer_decode(srt_tokenizer *t, const int32_t *ids, size_t n, char **text, size_t *len);

/*
 * Training (docs/training.md): a trainer over an open model with loaded weights updates those weights in
 * place, one optimizer step per batch of token sequences; the gradients are the reference interpreter's
 * reverse mode, so for now a trainer needs SRT_BACKEND_REF (other backends: SRT_ERR_UNSUPPORTED). A model
 * with an op that has no backward yet (memories, recurrence, position-infused attention) is refused by
 * srt_trainer_create, the error naming the op and its .arch line.
 *
 * Ownership and threading: the trainer belongs to the caller (srt_trainer_free) and must be freed before its
 * model is closed; it copies the options (and the freeze patterns). One thread at a time may use a trainer,
 * and no forward of the same model may run during a step: a step rewrites the weights every session of the
 * model reads. Sessions opened on the model see the updated weights at their next forward.
 */
typedef enum srt_optimizer {
    SRT_OPT_ADAMW = 0,    /* torch.optim.AdamW: bias correction, decoupled weight decay */
    SRT_OPT_SGD,          /* torch.optim.SGD: weight decay added to the gradient, optional momentum (no dampening) */
} srt_optimizer;

typedef enum srt_schedule {
    SRT_SCHEDULE_CONSTANT = 0, /* lr after the warm-up */
    SRT_SCHEDULE_COSINE,       /* lr * (1 + cos(pi * (k - warmup) / (steps - warmup))) / 2 after the warm-up */
    SRT_SCHEDULE_INVERSE_SQRT, /* lr * sqrt(max(warmup, 1) / (k + 1)) after the warm-up (fairseq's) */
} srt_schedule;

typedef struct srt_train_options {
    srt_optimizer optimizer;   /* the update rule */
    double lr;                 /* peak learning rate */
    double beta1, beta2, eps;  /* AdamW's (torch defaults 0.9, 0.999, 1e-8) */
    double weight_decay;       /* AdamW: decoupled, p -= lr * wd * p; SGD: wd * p added to the gradient */
    double momentum;           /* SGD: momentum (0: none) */
    srt_schedule schedule;     /* learning-rate schedule after the warm-up */
    int warmup;                /* steps of linear warm-up: step k (from 0) uses lr * (k + 1) / warmup */
    int steps;                 /* the run's steps (the cosine schedule decays over them); > 0 */
    double clip;               /* clip the gradients to this global L2 norm (torch's clip_grad_norm_); 0: none */
    const char *const *freeze; /* fnmatch(3) patterns of weight names (as in the weight file) kept fixed */
    int nfreeze;               /* entries in freeze */
} srt_train_options;

/* What one step did. */
typedef struct srt_train_stats {
    int step;                  /* steps done, this one included */
    double loss;               /* mean next-token cross-entropy over the batch (nats), before the update */
    double lr;                 /* learning rate this step used */
    double grad_norm;          /* global L2 norm of the trainable weights' gradients, before clipping */
    int64_t tokens;            /* tokens the step read (batch * seq) */
} srt_train_stats;

typedef struct srt_trainer srt_trainer;
/* Defaults: AdamW, lr 1e-3, torch's betas and eps, no weight decay, constant schedule, no warm-up, no clipping. */
void srt_train_options_default(srt_train_options *o);
/* The learning rate of step k (from 0) under o. */
double srt_train_lr(const srt_train_options *o, int k);
/* A trainer over m (weights loaded; fp32 master copies of every trainable weight and the optimizer state). */
srt_status srt_trainer_create(srt_model *m, const srt_train_options *o, srt_trainer **out);
void srt_trainer_free(srt_trainer *t);
/* One optimizer step on tokens[batch * seq] (batch sequences of seq >= 2 tokens, seq at most the model's
 * segment): the loss is the mean cross-entropy over every next-token prediction; stats may be NULL. On an
 * error the weights are unchanged. */
srt_status srt_trainer_step(srt_trainer *t, const int32_t *tokens, int batch, int seq, srt_train_stats *stats);
/* The gradient of that loss without a step: grads[i] (the count floats of weight i of the trainer's list, in
 * its stored order; a tensor stored under two entries gets the gradient of all its uses in each) and the
 * loss; frozen weights get theirs too. */
srt_status srt_trainer_grad(srt_trainer *t, const int32_t *tokens, int batch, int seq, float **grads, double *loss);
/* srt_trainer_grad's gradients written as an F32 safetensors file under the weights' names and file layout. */
srt_status srt_trainer_save_grads(srt_trainer *t, const int32_t *tokens, int batch, int seq, const char *path,
                                  double *loss);
/* The trainer's weights: their count, and weight i's name (as in the weight file) and element count. */
int srt_trainer_weight_count(const srt_trainer *t);
srt_status srt_trainer_weight(const srt_trainer *t, int i, const char **name, size_t *count);
/* Writes the current weights as an F32 safetensors file under the model's weight names and file layout
 * (srt_model_load_weights reads it back); written atomically. */
srt_status srt_trainer_save(srt_trainer *t, const char *path);

#ifdef __cplusplus
}
#endif
#endif /* SHORTRT_H */
