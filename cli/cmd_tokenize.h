/*
 * cmd_tokenize.h — `shortc tokenize` and the tokenizer helpers the
 * model-running commands use for --text and --prompt (cmd_tokenize.c).
 */
#ifndef SHORTC_CMD_TOKENIZE_H
#define SHORTC_CMD_TOKENIZE_H

#include "shortrt.h"

#include <stddef.h>
#include <stdint.h>

int tokenize_main(int argc, char **argv);
/* Opens --tokenizer PATH: a tokenizer.json, a vocab.json (merges.txt beside it) or a directory holding
 * either. Prints the error and returns NULL. */
srt_tokenizer *cli_tokenizer_open(srt_context *ctx, const char *path);
/* Encodes text[len] (a file's contents or a prompt, named by `what` in errors; flags SRT_ENCODE_*) into a
 * malloc'd array; returns the count (0 for a text of no tokens, *out then NULL) or -1 (message printed). */
int cli_encode(const char *tokenizer, unsigned flags, const char *what, const char *text, size_t len, int32_t **out);

#endif
