/*
 * modelpath.c — models by name along the model path (modelpath.h).
 */
#include "modelpath.h"

#include "datadir.h"
#include "shortc.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* $SHORTC_PATH, then the installed models directory, colon-separated (the compiler keeps the pointer). */
static char model_path[8192];

void cli_setup_model_path(void) {
    const char *env = getenv("SHORTC_PATH");
    char installed[4096];
    bool have = shortc_data_dir("models", installed, sizeof installed);
    int n = snprintf(model_path, sizeof model_path, "%s%s%s", env ? env : "", env && *env && have ? ":" : "",
                     have ? installed : "");
    if (n < 0 || (size_t)n >= sizeof model_path) snprintf(model_path, sizeof model_path, "%s", have ? installed : "");
    shortc_set_import_path(model_path);
}

static bool is_file(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* dir/name and dir/name.arch into buf; true when one is a file. */
static bool try_dir(const char *dir, size_t dirlen, const char *name, char *buf, size_t len) {
    static const char *const suffixes[] = {"", ".arch"};
    for (int i = 0; i < 2; i++) {
        int n = snprintf(buf, len, "%.*s/%s%s", (int)dirlen, dir, name, suffixes[i]);
        if (n > 0 && (size_t)n < len && is_file(buf)) return true;
    }
    return false;
}

const char *resolve_model_name(const char *arg) {
    static char found[4096];
    struct stat st;
    if (!*arg || strchr(arg, '/') || stat(arg, &st) == 0 || strcmp(arg, "-") == 0) return arg;
    if (try_dir(".", 1, arg, found, sizeof found)) return found + 2; /* NAME.arch in the working directory */
    const char *dirs = model_path;
    for (const char *d = dirs; *d;) {
        size_t n = strcspn(d, ":");
        if (n > 0 && try_dir(d, n, arg, found, sizeof found)) return found;
        d += n;
        if (*d == ':') d++;
    }
    return try_dir("models", 6, arg, found, sizeof found) ? found : arg;
}

bool model_found(const char *path, const char *arg) {
    struct stat st;
    if (stat(path, &st) == 0 || strchr(arg, '/') || strchr(arg, '.') || strcmp(arg, "-") == 0) return true;
    fprintf(stderr, "shortc: error: no model '%s': neither a file nor %s.arch here, along $SHORTC_PATH, among the "
                    "installed models or under models/\n", arg, arg);
    return false;
}
