/*
 * run_common.h — what the model-running commands share (cli/main.c: run,
 * generate, demo; cmd_eval.c: eval): their parsed flags, the open model, the
 * token inputs (--tokens ids, --text / --prompt through --tokenizer) and the
 * error printer. Defined in cli/main.c.
 */
#ifndef SHORTC_RUN_COMMON_H
#define SHORTC_RUN_COMMON_H

#include "shortrt.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The most prompts generate takes (a session's most sequences). */
#define GEN_MAX_PROMPTS 256

/* Which command's flags parse_run_args accepts. */
typedef enum RunCmd {
    RUN_CMD_RUN,       /* shortc run */
    RUN_CMD_GENERATE,  /* shortc generate */
    RUN_CMD_EVAL,      /* shortc eval */
} RunCmd;

typedef struct RunArgs {
    const char *model_path;    /* .arch or .cu (the model argument resolved: modelpath.h) */
    const char *model_arg;     /* the model argument as given */
    const char *model_name;    /* --model */
    const char *weights;       /* --weights */
    long long seed;            /* --random-weights (-1: none) */
    const char *tokens;        /* --tokens */
    const char *text;          /* --text FILE: UTF-8 text encoded with --tokenizer */
    const char *tokenizer;     /* --tokenizer: tokenizer.json, vocab.json (merges.txt beside it) or their directory */
    bool special_as_text;      /* --special-as-text: special added tokens in --text/--prompt are text */
    bool allow_empty;          /* tokenize: an empty --text/--prompt gives no ids (the others need a token) */
    const char *prompt;        /* generate --prompt TEXT (with --tokenizer): the first one; tokenize --prompt */
    const char *prompts[GEN_MAX_PROMPTS]; /* generate: every --prompt, each a sequence of the batch */
    int nprompts;              /* their count */
    const char *prompts_file;  /* generate --prompts FILE: a prompt per non-empty line (ids, or text with
                                  --tokenizer) */
    const char *logits;        /* --logits */
    const char *backend;       /* --backend */
    const char *mode;          /* --mode NAME (run, eval; NULL: run's consecutive segments, eval's nonoverlapping) */
    int stride;                /* --stride S (sliding; 0: not given) */
    int overlap;               /* --overlap K (windows; -1: not given) */
    bool json;                 /* eval, generate --json: one JSON object on stdout */
    int top;                   /* --top K: print top-K next tokens */
    int sim_threads;           /* --sim-threads */
    bool report;               /* --report */
    bool quiet;                /* --quiet: no progress, and no summary line (generate) on stderr */
    bool progress;             /* --progress: progress lines on stderr even when it is not a terminal */
    const char *save_weights;  /* --save-weights OUT.safetensors: the --random-weights written out */
    bool allow_nonfinite;      /* --allow-nonfinite-weights: accept NaN/Inf weights and logits */
    bool allow_unused;         /* --allow-unused: load a checkpoint holding tensors the model does not use */
    bool fold_tokens;          /* default prompt: ids are taken modulo the model's vocabulary */
    int chunk;                 /* --chunk K: tokens per call through the session's state (0: a segment per call) */
    bool mem_zeros;            /* --mem-init zeros: Transformer-XL memories start with their rows zero (HF) */
    int max_new;               /* generate --max-new N: tokens to generate */
    double temperature;        /* generate --temperature (0: greedy) */
    int top_k;                 /* generate --top-k (0: all) */
    double top_p;              /* generate --top-p (1: all) */
    long long sample_seed;     /* generate --seed of the sampler */
    long long eos;             /* generate --eos ID (-1: none) */
} RunArgs;

/* The defaults of every field that is not zero. */
#define RUN_ARGS_INIT {.seed = -1, .overlap = -1, .max_new = -1, .top_p = 1.0, .eos = -1}

/* An open model on the runtime, with its facts (run, generate, eval). */
typedef struct OpenModel {
    srt_context *ctx;          /* the runtime context */
    srt_model *m;              /* the model, weights loaded */
    srt_session *s;            /* one session (batch 1) */
    srt_model_info mi;         /* facts about the model */
} OpenModel;

double now_ms(void);
/* Parses cmd's flags from argv[2..]; prints the error and returns false. */
bool parse_run_args(int argc, char **argv, RunCmd cmd, RunArgs *ra);
/* The input token ids: --tokens, --text or --prompt (encoded with --tokenizer); returns the count (0 only
 * with ra->allow_empty) or -1 (message printed). *out is malloc'd. */
int load_run_tokens(const RunArgs *ra, int32_t **out);
/* The whole file at path (NUL-terminated, malloc'd; *len bytes) or NULL with "cannot read WHAT 'path': why"
 * printed. */
char *read_text_file(const char *path, const char *what, size_t *len);
/* Whitespace-separated token ids of text[len] (what names it in messages); returns the count or -1 (message
 * printed; none is an error too). *out is malloc'd. */
int parse_tokens(const char *what, const char *text, size_t len, int32_t **out);
/* True when every token is in the model's vocabulary; else prints the first one outside with its index. */
bool tokens_in_vocab(const RunArgs *ra, const int32_t *tokens, int ntokens, const srt_model_info *mi);
bool open_model(const RunArgs *ra, OpenModel *om);
void close_model(OpenModel *om);
void print_lib_error(srt_status st, const char *msg);
/* false (message printed, nothing written) when a logit of rows first_row.. (nrows x vocab) is NaN or
 * infinite. */
bool logits_finite(const float *logits, int64_t first_row, int nrows, int vocab);
/* false (message printed) when an output names the same file as an input or another output. */
bool run_outputs_apart(const RunArgs *ra, const char *const *outs, int nouts);

#endif
