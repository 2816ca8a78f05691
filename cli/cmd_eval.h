/*
 * cmd_eval.h — `shortc eval` (cmd_eval.c) and the mode options run shares with it.
 */
#ifndef SHORTC_CMD_EVAL_H
#define SHORTC_CMD_EVAL_H

#include "run_common.h"

int eval_main(int argc, char **argv);
/* True when ra names a mode (--mode, --stride or --overlap). */
bool args_name_mode(const RunArgs *ra);
/* ra's --mode, --stride and --overlap as runtime options (the mode defaults to nonoverlapping, or to
 * sliding with --stride and windows with --overlap). Prints the error and returns false. */
bool eval_options_from_args(const RunArgs *ra, srt_eval_options *o);
/* A model's own way through a text when ra names no mode (docs/usage.md): a recurrent model's windows
 * overlapping by its overlap (also for --mode windows without --overlap; docs/attention/recurrence.md),
 * cached segments for a model that carries state across segments (a PIA cache, Transformer-XL memories),
 * nonoverlapping segments otherwise. */
void model_mode_defaults(const RunArgs *ra, const srt_model_info *mi, srt_eval_options *o);

/* The progress report's clock. */
typedef struct Progress {
    double t0;          /* when the work started (ms) */
    double last;        /* when the last line was printed (ms; --progress without a terminal) */
    const char *what;   /* the command, in the lines */
} Progress;

/* The progress callback of ra for a long command (p: its state, kept by the caller): a bar with an ETA
 * when stderr is a terminal (unless --quiet), a line every 2 s with --progress otherwise, else none
 * (*fn NULL). */
void progress_attach(const RunArgs *ra, const char *what, Progress *p, srt_progress_fn *fn, void **ud);

#endif
