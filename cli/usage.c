/*
 * usage.c — every subcommand's usage text in one table (usage.h): `shortc
 * --help` prints all their synopses, `shortc CMD --help` and `shortc help
 * CMD` one command's synopsis and options. An unknown option is answered
 * with the nearest option of that command's usage (the options are read off
 * the text itself, so the suggestion cannot drift from the help), never with
 * the whole usage.
 */
#include "usage.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* One subcommand's help. */
typedef struct CmdUsage {
    const char *name;      /* the subcommand ("compile": the default, shortc FILE.arch) */
    const char *synopsis;  /* its usage lines, as `shortc --help` shows them */
    const char *options;   /* its options explained (`shortc CMD --help` only); "" when the synopsis says all */
} CmdUsage;

static const CmdUsage commands[] = {
    {"compile",
     "usage: shortc FILE.arch [-o OUT.cu] [--model NAME] [--plan-out FILE] [--force]\n"
     "                        [--dump-spec] [--dump-ir[=PASS]] [--no-fuse] [--check] [--time]\n"
     "       shortc --check FILE.cu\n",
     "  -o OUT.cu        write the CUDA (with its embedded plan); '-' is stdout\n"
     "  --model NAME     the model of the file to compile (default: its last)\n"
     "  --plan-out FILE  also write the plan as JSON\n"
     "  --dump-spec      print the resolved model; --dump-ir[=PASS] the IR after PASS (lower shapes layouts fuse\n"
     "                   dedup buffers all every; docs/ir.md)\n"
     "  --no-fuse        skip the fusion pass;  --check  libclang check, errors mapped to .arch lines\n"
     "  --time           per-stage milliseconds on stderr\n"
     "FILE.arch may be a bundled model's name (gpt2_tiny): see 'Models by name' in docs/usage.md.\n"},
    {"run",
     "       shortc run MODEL.arch|MODEL.cu [--backend ref|sim|cuda|auto] [--model NAME]\n"
     "                  (--weights FILE.safetensors | --random-weights SEED [--save-weights OUT.safetensors])\n"
     "                  [--tokens FILE | --text FILE --tokenizer T] [--logits OUT.npy] [--top K] [--report]\n"
     "                  [--sim-threads N] [--allow-nonfinite-weights] [--allow-unused] [--chunk K] [--force]\n"
     "                  [--progress] [--quiet]\n"
     "                  [--mode nonoverlapping|sliding|windows|tokenwise|cached] [--stride S | --overlap K]\n"
     "                  [--mem-init empty|zeros]   (also eval, generate: Transformer-XL memories' start)\n",
     "  --tokens FILE    token ids (whitespace-separated text, or a .npy of integers); '-' is stdin, a pipe or\n"
     "                   FIFO is read (at most 64 MiB)\n"
     "  --text FILE      UTF-8 text encoded with --tokenizer T (tokenizer.json, vocab.json or their directory)\n"
     "  --logits OUT.npy every token's logits row, streamed; '-' is stdout (then no --top or --report)\n"
     "  --save-weights OUT.safetensors  with --random-weights: write the seeded weights\n"
     "  --allow-unused   load a checkpoint holding tensors the model does not use (refused by default, listing them)\n"
     "  --chunk K        feed each segment K tokens per call through the session's state\n"
     "  --mode M         score with windows of the segment (docs/usage.md); --stride S sliding, --overlap K windows\n"
     "  --progress       progress lines on stderr even when it is not a terminal;  --quiet  none\n"
     "Without --tokens a fixed 10-token prompt is used (ids modulo the vocabulary).\n"},
    {"eval",
     "       shortc eval MODEL (--weights FILE | --random-weights SEED) (--tokens FILE | --text FILE --tokenizer T)\n"
     "                  [--mode M] [--stride S | --overlap K] [--json] [--backend B] [--model NAME]\n"
     "                  [--progress] [--quiet]\n",
     "  --tokens FILE    token ids (text or .npy); '-' is stdin, a pipe or FIFO is read (at most 64 MiB)\n"
     "  --json           one JSON object (schema shortc.eval/1) instead of the text line\n"
     "  --progress       a progress line every few seconds on stderr when it is not a terminal (a bar on one)\n"
     "  --quiet          no progress at all\n"
     "Also --sim-threads N, --allow-nonfinite-weights, --allow-unused, --mem-init empty|zeros, --save-weights OUT\n"
     "(as run).\n"},
    {"generate",
     "       shortc generate MODEL.arch|MODEL.cu (--weights FILE | --random-weights SEED)\n"
     "                  (--tokens PROMPT | --prompt TEXT... --tokenizer T | --prompts FILE) --max-new N\n"
     "                  [--backend B] [--model NAME] [--json] [--progress]\n"
     "                  [--temperature X] [--top-k K] [--top-p P] [--seed N] [--eos ID] [--report] [--quiet]\n",
     "  --prompts FILE   one prompt per non-empty line (ids, or text with --tokenizer); '-' is stdin\n"
     "  --json           one JSON object (schema shortc.generate/1): each sequence's ids (and text)\n"
     "  --quiet          no summary line on stderr;  --progress  a line every few seconds while generating\n"
     "Also --sim-threads N, --allow-nonfinite-weights, --allow-unused, --mem-init empty|zeros, --save-weights OUT\n"
     "(as run).\n"},
    {"train",
     "       shortc train MODEL.arch --data TOKENS --seq L --batch B --steps N --save OUT.safetensors\n"
     "                  [--init W.safetensors | --seed SEED] [--optimizer adamw|sgd] [--lr X] [--weight-decay W]\n"
     "                  [--momentum M] [--warmup S] [--schedule constant|cosine|inverse-sqrt] [--clip X]\n"
     "                  [--freeze GLOB]... [--backend ref] [--model NAME] [--json] [--quiet]\n",
     "  --data TOKENS    token ids (text or .npy), cut into consecutive sequences of L; step k takes the next B\n"
     "  --init W         start from these weights (default: seeded random weights, --seed, default 0)\n"
     "  --lr X           peak learning rate (default 1e-3); --warmup S linear warm-up steps, then --schedule\n"
     "  --clip X         clip the gradients to global L2 norm X (default: none)\n"
     "  --freeze GLOB    keep the weights whose names match fixed (repeatable)\n"
     "  --json           one JSON object per step (loss, lr, grad_norm, tokens/s) instead of the text line\n"
     "Runs on the reference backend only for now (docs/training.md).\n"},
    {"grad",
     "       shortc grad MODEL.arch (--weights W | --random-weights SEED) --tokens T --out G.safetensors\n"
     "                  [--seq L] [--backend ref] [--model NAME] [--json]\n",
     "  --out G          the gradient of the mean next-token cross-entropy under every weight's name\n"
     "  --seq L          cut the tokens into sequences of L (default: one sequence of them all)\n"},
    {"tokenize",
     "       shortc tokenize --tokenizer T (--text FILE | --prompt TEXT | --decode --tokens FILE)\n"
     "                  [--special-as-text]\n",
     "  --text FILE      UTF-8 text to ids (space-separated, on stdout; an empty text: an empty line); '-' is stdin\n"
     "  --special-as-text  special tokens (<|endoftext|>, <s>) in the text are text, not their ids\n"
     "                   (also run, eval, generate)\n"
     "  --decode --tokens FILE  ids back to text; '-' is stdin\n"
     "T is a tokenizer.json (BPE as HF tokenizers runs it; docs/tokenizer.md), a vocab.json (merges.txt beside\n"
     "it) or their directory.\n"},
    {"cmp",
     "       shortc cmp A.npy B.npy [--atol X] [--rtol Y]\n",
     "Exit status 0 when every element is within atol + rtol * |B|, 1 when one is not.\n"},
    {"demo",
     "       shortc demo [MODEL.arch] [--backend B] [--tokens FILE]\n",
     "The README's main job: compile MODEL (default gpt2_small) to CUDA, NVRTC for sm_80, run it with seeded\n"
     "weights and print a report.\n"},
    {"version", "       shortc --version\n", ""},
    {"sim",
     "       shortc sim FILE.cu --kernel NAME --grid X[,Y,Z] --block X[,Y,Z] [--smem BYTES] [--unchecked]\n"
     "                  [--sim-threads N] [-I DIR]... [--force]\n"
     "                  --arg buf:IN.npy[:OUT.npy] | i32:V | u32:V | f32:V ...   (one per parameter)\n",
     "One kernel of FILE.cu on the CPU simulator (docs/simulator.md); --checked is the default.\n"},
    {"compare",
     "       shortc compare A.arch [B.arch ...] [--variants FILE.arch] [--device NAME] [--window W]\n"
     "                  [--stride S] [--overlap K] [--kernels sm_XX] [--json | --csv] [--svg OUT.svg [--force]]\n",
     "  --device NAME   roofline device: h100-sxm (default), a100-sxm, l4\n"
     "  --window W      tokens per forward (default: each model's segment)\n"
     "  --json | --csv  machine-readable output ('-' or nothing: stdout)\n"
     "Figures follow docs/cost-model.md; times are roofline estimates, not measurements.\n"},
    {"report",
     "       shortc report MODEL.arch [--model NAME] [same options as compare]\n",
     "  --device NAME --window W --stride S --overlap K --kernels sm_XX --json --csv --svg OUT.svg --force\n"},
    {"mask",
     "       shortc mask MODEL.arch --tokens N [-o MASKS.npy [--force]] [--ascii [--layer L] [--head H]] [--model NAME]\n",
     "  -o MASKS.npy    bool [layers, heads, N, N] ('-': stdout); --ascii draws one layer's head\n"},
    {"convert",
     "       shortc convert [converter options...]   (tools/convert_checkpoint.py, installed)\n",
     "Runs the checkpoint converter with python3; 'shortc convert --help' prints its options.\n"},
    {"help", "       shortc help [CMD]\n", ""},
};

#define NCOMMANDS ((int)(sizeof commands / sizeof commands[0]))

static const char usage_notes[] =
    "\n"
    "PASS is one of: lower shapes layouts fuse dedup buffers all every (docs/ir.md).\n"
    "Without --tokens, run and demo use a fixed 10-token prompt (ids modulo the vocabulary).\n"
    "run takes any number of tokens: consecutive segments of the model's segment length, the state reset\n"
    "between them unless the model carries it (a cache, memories: mode cached; recurrent: windows), one\n"
    "logits row per token; --chunk K feeds each segment K tokens per call.\n"
    "Every backend continues a sequence from its KV cache (sim and cuda: the plan's state, one per session).\n"
    "--mode scores every token once with windows of the segment (docs/usage.md); T is a tokenizer.json,\n"
    "a vocab.json (merges.txt beside it) or their directory.\n"
    "A model may be named (gpt2_tiny): found along $SHORTC_PATH, then the installed models.\n"
    "An output that is a symbolic link is refused; --force replaces the link itself (never its target).\n"
    "Exit status: 0 ok, 1 failure while running, 2 usage, 3 bad input. 'shortc help CMD' for one command.\n";

static bool bad_input_seen;

void cli_bad_input(void) { bad_input_seen = true; }

int cli_usage_failure(void) { return bad_input_seen ? SHORTC_EXIT_INPUT : SHORTC_EXIT_USAGE; }

int shortc_exit_code(int rc) { return rc == SHORTC_EXIT_FAILURE && bad_input_seen ? SHORTC_EXIT_INPUT : rc; }

static const CmdUsage *find_command(const char *name) {
    for (int i = 0; i < NCOMMANDS; i++)
        if (strcmp(commands[i].name, name) == 0) return &commands[i];
    return NULL;
}

void cli_print_usage(FILE *f) {
    for (int i = 0; i < NCOMMANDS; i++) fputs(commands[i].synopsis, f);
    fputs(usage_notes, f);
}

bool cli_print_cmd_usage(const char *cmd, FILE *f) {
    const CmdUsage *c = find_command(cmd);
    if (!c) return false;
    const char *syn = c->synopsis;
    if (strncmp(syn, "       shortc", 13) == 0) fprintf(f, "usage:%s", syn + 6); /* the first line says "usage:" */
    else fputs(syn, f);
    if (*c->options) fprintf(f, "options:\n%s", c->options);
    fputs("Exit status: 0 ok, 1 failure while running, 2 usage, 3 bad input (docs/usage.md).\n", f);
    return true;
}

bool cli_wants_help(int argc, char **argv) {
    for (int i = 2; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) return true;
    return false;
}

/* Levenshtein distance of a and b (both short: option and command names), capped at 99. */
static int edit_distance(const char *a, const char *b) {
    size_t n = strlen(a), m = strlen(b);
    if (n > 63 || m > 63) return 99;
    int row[64];
    for (size_t j = 0; j <= m; j++) row[j] = (int)j;
    for (size_t i = 1; i <= n; i++) {
        int diag = row[0];
        row[0] = (int)i;
        for (size_t j = 1; j <= m; j++) {
            int up = row[j], best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best) best = up + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            diag = up;
            row[j] = best;
        }
    }
    return row[m];
}

/* Whether the option word (e.g. "--tokens") appears in text as a whole option. */
static bool text_has_option(const char *text, const char *opt) {
    size_t n = strlen(opt);
    for (const char *p = strstr(text, opt); p; p = strstr(p + 1, opt)) {
        bool start = p == text || !(isalnum((unsigned char)p[-1]) || p[-1] == '-');
        bool end = !(isalnum((unsigned char)p[n]) || p[n] == '-');
        if (start && end) return true;
    }
    return false;
}

/* The option of text (-x or --long-name) nearest to opt into best (size 64); its distance, 99 when none. */
static int nearest_option(const char *text, const char *opt, char *best) {
    int dist = 99;
    for (const char *p = text; *p; p++) {
        if (*p != '-' || (p > text && (isalnum((unsigned char)p[-1]) || p[-1] == '-'))) continue;
        const char *q = p + 1;
        if (*q == '-') q++;
        if (!isalpha((unsigned char)*q)) continue;
        while (isalnum((unsigned char)*q) || *q == '-') q++;
        char word[64];
        size_t n = (size_t)(q - p);
        if (n >= sizeof word) continue;
        memcpy(word, p, n);
        word[n] = 0;
        int d = edit_distance(opt, word);
        if (d < dist) dist = d, strcpy(best, word);
        p = q - 1;
    }
    return dist;
}

void cli_unknown_option(const char *cmd, const char *opt) {
    const CmdUsage *c = find_command(cmd);
    const char *name = strcmp(cmd, "compile") == 0 ? "shortc" : cmd;
    char best[64] = "";
    if (c && (text_has_option(c->synopsis, opt) || text_has_option(c->options, opt))) {
        fprintf(stderr, "shortc: error: %s: option '%s' needs a value\n", name, opt);
        return;
    }
    int d = c ? nearest_option(c->synopsis, opt, best) : 99;
    char other[64] = "";
    int d2 = c ? nearest_option(c->options, opt, other) : 99;
    if (d2 < d) d = d2, strcpy(best, other);
    int len = (int)strlen(opt);
    if (d <= (len < 6 ? 1 : len / 3))
        fprintf(stderr, "shortc: error: %s: unknown option '%s' (did you mean '%s'?); see 'shortc help %s'\n", name, opt,
                best, cmd);
    else fprintf(stderr, "shortc: error: %s: unknown option '%s'; see 'shortc help %s'\n", name, opt, cmd);
}

bool cli_unknown_command(const char *word) {
    int best = -1, dist = 99;
    for (int i = 0; i < NCOMMANDS; i++) {
        int d = edit_distance(word, commands[i].name);
        if (d < dist) dist = d, best = i;
    }
    if (best < 0 || dist > (strlen(word) < 5 ? 1 : 2)) return false;
    fprintf(stderr, "shortc: error: unknown command '%s' (did you mean '%s'?); see 'shortc --help'\n", word,
            commands[best].name);
    return true;
}

int cli_help_main(int argc, char **argv) {
    if (argc < 3) {
        cli_print_usage(stdout);
        return SHORTC_EXIT_OK;
    }
    if (strcmp(argv[2], "--help") == 0 || strcmp(argv[2], "-h") == 0) argv[2] = "help";
    if (argc > 3) {
        fprintf(stderr, "shortc: error: help takes one command\n");
        return SHORTC_EXIT_USAGE;
    }
    if (cli_print_cmd_usage(argv[2], stdout)) return SHORTC_EXIT_OK;
    if (!cli_unknown_command(argv[2]))
        fprintf(stderr, "shortc: error: unknown command '%s'; see 'shortc --help'\n", argv[2]);
    return SHORTC_EXIT_USAGE;
}
