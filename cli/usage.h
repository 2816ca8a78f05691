/*
 * usage.h — the usage text of every `shortc` subcommand, `--help` and
 * `shortc help CMD`, did-you-mean for option and command names, and the
 * exit codes (docs/usage.md, "Exit codes"; docs/man/shortc.1).
 */
#ifndef SHORTC_USAGE_H
#define SHORTC_USAGE_H

#include <stdbool.h>
#include <stdio.h>

/* The exit codes of every subcommand. */
enum {
    SHORTC_EXIT_OK = 0,       /* success (cmp: the arrays agree) */
    SHORTC_EXIT_FAILURE = 1,  /* a failure while running: runtime, device, simulator, memory, an output that
                                 could not be written (cmp: the arrays differ) */
    SHORTC_EXIT_USAGE = 2,    /* the command line: an unknown option or command, a bad or missing flag value */
    SHORTC_EXIT_INPUT = 3,    /* bad input: a file missing, unreadable or malformed (.arch, tokens, weights,
                                 tokenizer, .npy), a token outside the vocabulary */
};

/* Records that the error being reported is bad input: shortc_exit_code turns a failure into SHORTC_EXIT_INPUT. */
void cli_bad_input(void);
/* The exit code of a command that returned rc: SHORTC_EXIT_INPUT for a failure (1) after cli_bad_input,
 * else rc. */
int shortc_exit_code(int rc);

/* The exit code of a command line that was refused: SHORTC_EXIT_INPUT when it named something missing
 * (cli_bad_input), else SHORTC_EXIT_USAGE. */
int cli_usage_failure(void);

/* The whole usage (every subcommand's synopsis and the notes), as `shortc --help` prints it. */
void cli_print_usage(FILE *f);
/* cmd's own usage (synopsis and options) to f; false when cmd is not a subcommand. "compile" is the
 * default command (shortc FILE.arch). */
bool cli_print_cmd_usage(const char *cmd, FILE *f);
/* True when an argument after the subcommand (argv[2..]) is --help or -h. */
bool cli_wants_help(int argc, char **argv);
/* `shortc help [CMD]`: the whole usage or CMD's to stdout (exit 0); an unknown CMD is a usage error. */
int cli_help_main(int argc, char **argv);
/* Prints "shortc: error: unknown option 'opt' for CMD" with the nearest option of cmd's usage
 * ("did you mean '--tokens'?") and where to find the usage. */
void cli_unknown_option(const char *cmd, const char *opt);
/* When word (argv[1], not a file) is close to a subcommand's name, prints "unknown command" with the
 * suggestion and returns true. */
bool cli_unknown_command(const char *word);

#endif /* SHORTC_USAGE_H */
