/*
 * modelpath.h — models by name and the model path (docs/usage.md, "Models
 * by name"): `shortc run gpt2_tiny` and `import "gpt2_small.arch"` from a
 * file anywhere find the bundled models along $SHORTC_PATH, then the
 * installed models (PREFIX/share/shortc/models).
 */
#ifndef SHORTC_MODELPATH_H
#define SHORTC_MODELPATH_H

#include <stdbool.h>

/* Sets the compiler's import search path to $SHORTC_PATH then the installed models directory
 * (shortc_set_import_path); call once at start-up. */
void cli_setup_model_path(void);
/* The file a model argument names: arg itself when it exists or holds a '/'; else the first of NAME and
 * NAME.arch here (NAME.arch only), then along the model path, then under models/ of the working directory
 * (a source checkout).
 * arg itself when none exists (its error is the reader's). The result is arg or static storage. */
const char *resolve_model_name(const char *arg);
/* False, with "no model 'arg'" printed, when arg was a bare name (no '/' or '.') that resolve_model_name
 * found nowhere (path is what it returned); true otherwise (a missing file is its reader's error). */
bool model_found(const char *path, const char *arg);

#endif /* SHORTC_MODELPATH_H */
