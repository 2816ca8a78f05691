/*
 * plan_schema.h — the plan's schema, defined once (docs/plan.md): every
 * object of the plan, its fields, their JSON types and which are required.
 *
 * The writer (compiler/plan.c) checks what it wrote against it, the reader
 * (runtime/src/plan_load.c) rejects a plan that does not conform (after its
 * own checks of values, ranges and references), and the checker
 * (compiler/check.c, `shortc --check FILE.cu`) reports non-conforming plans.
 */
#ifndef SHORTC_PLAN_SCHEMA_H
#define SHORTC_PLAN_SCHEMA_H

#include <stdbool.h>
#include <stddef.h>

struct cJSON;

/* The plan's "format" and the "version" this code writes and reads. */
#define SHORTC_PLAN_FORMAT "shortc-plan"
#define SHORTC_PLAN_VERSION 2
#define SHORTC_PLAN_VERSION_TEXT "2" /* the same, in messages */

/* The kinds of object in a plan. */
typedef enum PlanObject {
    PO_NONE,        /* not an object (a field's element kind when it has none) */
    PO_ROOT,        /* the document */
    PO_CONFIG,      /* "config": the model's hyper-parameters */
    PO_LOGITS,      /* "logits": a REF with dtype and shape */
    PO_BUFFER,      /* an element of "buffers" */
    PO_WEIGHT,      /* an element of "weights" */
    PO_SCALAR,      /* an element of "scalars": a run-time scalar (T, P, fill, B) and its range */
    PO_CONSTANT,    /* an element of "constants": a compile-time table uploaded once per model */
    PO_STATE,       /* an element of "state" */
    PO_PROGRAM,     /* an element of "programs": named steps for a range of T */
    PO_KERNEL,      /* an element of "kernels" */
    PO_LAUNCH,      /* a step with "op": "launch" */
    PO_GEMM,        /* a step with "op": "gemm" */
    PO_DIM,         /* a DIM written as an object: {"t", "p", "fill", "b", "c", "div"} */
    PO_REF_ARENA,   /* REF {"arena": OFFSET} */
    PO_REF_WEIGHT,  /* REF {"weight": I, "offset": B} */
    PO_REF_STATE,   /* REF {"state": I, "offset": B} */
    PO_REF_CONST,   /* REF {"const": I, "offset": B} */
    PO_ARG_INT,     /* kernel argument {"int": DIM} */
    PO_ARG_FLOAT,   /* kernel argument {"float": x} */
    PO_LOSS,        /* "loss": where the "loss" program reads its targets and writes its per-row losses */
    PO_SAMPLE,      /* "sample": where the "sample" program reads its parameters and writes the token drawn */
    PO_DERIVED,     /* an element of "derived": a model-level tensor the "load" program computes from the weights */
    PO_REF_DERIVED, /* REF {"derived": I, "offset": B} */
    PO_BATCH,       /* "batch": the decode program's batched steps (most sequences, where their table lies) */
    PO_COUNT        /* number of kinds (not a kind) */
} PlanObject;

/* JSON types of a field (or of an array's elements). */
typedef enum PlanType {
    PT_INT,         /* an integral number */
    PT_NUMBER,      /* any number */
    PT_STRING,      /* a string */
    PT_BOOL,        /* true or false */
    PT_DIM,         /* an integer or a PO_DIM object */
    PT_REF,         /* one of the PO_REF_* objects (told apart by their first key) */
    PT_ARG,         /* a REF, a PO_ARG_INT or a PO_ARG_FLOAT */
    PT_STEP,        /* a PO_LAUNCH or PO_GEMM (told apart by "op") */
    PT_OBJECT,      /* an object of the field's kind */
    PT_ARRAY,       /* an array of the field's elem type (objects: of its kind) */
} PlanType;

/* One field of one kind of object. */
typedef struct PlanField {
    PlanObject obj;     /* the object it belongs to */
    const char *key;    /* its name */
    PlanType type;      /* its JSON type */
    PlanType elem;      /* PT_ARRAY: the type of the elements */
    PlanObject kind;    /* PT_OBJECT, or PT_ARRAY of PT_OBJECT: the object kind */
    bool required;      /* must be present */
} PlanField;

/* A gemm step's "epilogue" (cuBLASLt, docs/plan.md): what is applied to the product in the GEMM. */
typedef enum PlanEpilogue {
    PLAN_EPI_NONE,           /* "none": plain GEMM (cublasGemmEx) */
    PLAN_EPI_BIAS,           /* "bias": + bias[row] (CUBLASLT_EPILOGUE_BIAS) */
    PLAN_EPI_RELU,           /* "relu" (CUBLASLT_EPILOGUE_RELU) */
    PLAN_EPI_BIAS_RELU,      /* "bias_relu": relu(x + bias) (CUBLASLT_EPILOGUE_RELU_BIAS) */
    PLAN_EPI_GELU_TANH,      /* "gelu_tanh": tanh-approximated GELU (CUBLASLT_EPILOGUE_GELU) */
    PLAN_EPI_BIAS_GELU_TANH, /* "bias_gelu_tanh" (CUBLASLT_EPILOGUE_GELU_BIAS) */
    PLAN_EPI_COUNT           /* number of epilogues (not one) */
} PlanEpilogue;

/* The plan name of an epilogue ("none", "bias", ...); "?" when out of range. */
const char *plan_epilogue_name(PlanEpilogue e);
/* The epilogue named s, or -1. */
int plan_epilogue_from_name(const char *s);
/* Whether an epilogue adds a bias (and the step then needs a "bias" REF). */
bool plan_epilogue_has_bias(PlanEpilogue e);

/* The schema: every field of every object, in document order. */
extern const PlanField plan_schema[];
extern const int plan_schema_nfields;

/* The field `key` of object kind obj, or NULL when the schema has none. */
const PlanField *plan_schema_field(PlanObject obj, const char *key);

/* What a JSON value is, for messages: "a number", "a string", ... ("nothing" for NULL). */
const char *plan_json_kind(const struct cJSON *j);

/* The keys of object kind obj in schema order, NULL-terminated, in out (max entries with the NULL). */
void plan_schema_keys(PlanObject obj, const char **out, int max);

/* Why a plan of this version cannot be read (version != SHORTC_PLAN_VERSION), in words. */
const char *plan_version_message(int version);

/* The steps array of the program called name (NULL: the first program); NULL when there is none. */
const struct cJSON *plan_program_steps(const struct cJSON *root, const char *name);

/* The program run once per weights load (after srt_model_load_weights / srt_model_random_weights): it
 * computes the "derived" tensors from the weights, and reads and writes nothing else (docs/plan.md). */
#define PLAN_LOAD_PROGRAM "load"
/* The program the runtime runs when a segment ends on a model whose caches slide (Shortformer's): each
 * cache keeps its last rows (docs/attention/pia.md); run with the finishing call's T and P. */
#define PLAN_SLIDE_PROGRAM "slide"

/*
 * The load program's rules, beyond the schema: a plan has "derived" entries exactly when it has a program
 * named "load"; that program runs T = 1 and its steps refer only to weights, constants and derived
 * tensors (it runs with no session: no arena, no state); every {"derived": I} of any step is in range.
 * Returns true, or false with "programs[i].steps[k]...: what is wrong" in why. plan_schema_check calls it.
 */
bool plan_load_program_check(const struct cJSON *root, char *why, size_t whylen);

/* The roles a state entry may have, in the order of the compiler's StateRole ("none", "kv_cache", ...). */
#define PLAN_NSTATE_ROLES 6
extern const char *const plan_state_roles[PLAN_NSTATE_ROLES];
#define PLAN_ROLE_KV_CACHE 1 /* the index of "kv_cache" in plan_state_roles */
#define PLAN_ROLE_MEMORY 3 /* the index of "memory" in plan_state_roles (a Transformer-XL memory ring) */
#define PLAN_ROLE_RECURRENT 4 /* the index of "recurrent" in plan_state_roles (a recurrence module's h_prev) */

/* The run-time scalars a DIM may use, in the order of SymDim's fields (their plan names). */
extern const char *const plan_scalar_names[4];

/*
 * Checks a parsed plan against the schema: every object has only its
 * fields, every required field, and values of the right JSON type. Returns
 * true, or false with "path: what is wrong" in why (e.g.
 * "steps[3].grid[0]: expected an integer or a DIM object, got a string").
 */
bool plan_schema_check(const struct cJSON *root, char *why, size_t whylen);

#endif /* SHORTC_PLAN_SCHEMA_H */
