/*
 * cmd_convert.c — `shortc convert ARGS...` runs the checkpoint converter
 * (tools/convert_checkpoint.py, installed as share/shortc/tools/) with the
 * same arguments: its own usage, options and exit status. The script is
 * found in the installed data directory, else under tools/ of the working
 * directory (a source checkout); it runs with $SHORTC_PYTHON when set, else
 * with the python3 on PATH (it needs numpy, and torch for .pt input).
 */
#define _POSIX_C_SOURCE 200809L
#include "cmd_convert.h"

#include "datadir.h"
#include "usage.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The converter script's path into buf; false when there is none. */
static bool find_converter(char *buf, size_t len) {
    static const char rel[] = "tools/convert_checkpoint.py";
    if (shortc_data_path(rel, buf, len)) return true;
    struct stat st;
    if (stat(rel, &st) != 0 || !S_ISREG(st.st_mode) || strlen(rel) >= len) return false;
    strcpy(buf, rel);
    return true;
}

int convert_main(int argc, char **argv) {
    char script[4096];
    if (!find_converter(script, sizeof script)) {
        fprintf(stderr, "shortc: error: convert: tools/convert_checkpoint.py is neither installed (share/shortc/tools) "
                        "nor in the working directory\n");
        return SHORTC_EXIT_FAILURE;
    }
    const char *python = getenv("SHORTC_PYTHON");
    if (!python || !*python) python = "python3";
    char **args = calloc((size_t)argc + 2, sizeof *args);
    if (!args) {
        fprintf(stderr, "shortc: error: out of memory\n");
        return SHORTC_EXIT_FAILURE;
    }
    int n = 0;
    args[n++] = (char *)python;
    args[n++] = script;
    for (int i = 2; i < argc; i++) args[n++] = argv[i];
    args[n] = NULL;
    fflush(NULL);
    execvp(python, args);
    fprintf(stderr, "shortc: error: convert: cannot run '%s': %s (SHORTC_PYTHON names the python3 to use)\n", python,
            strerror(errno));
    free(args);
    return SHORTC_EXIT_FAILURE;
}
