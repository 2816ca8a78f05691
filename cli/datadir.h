/*
 * datadir.h — where the `shortc` command finds its installed data (the
 * bundled models under PREFIX/share/shortc), from the executable's own
 * location, so that an installed or relocated tree works from any directory.
 */
#ifndef SHORTC_DATADIR_H
#define SHORTC_DATADIR_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Writes the path of rel (e.g. "models/gpt2_small.arch") inside the data
 * directory into buf and returns true when that file exists. The data
 * directory is $SHORTC_DATA_DIR if set and non-empty, else SHORTC_DATA_REL
 * (share/shortc relative to the installed bin/) from the directory of
 * /proc/self/exe. False (buf unspecified) when there is none, e.g. when
 * running from a build tree.
 */
bool shortc_data_path(const char *rel, char *buf, size_t len);
/* shortc_data_path for a directory (e.g. "models"): true when it exists. */
bool shortc_data_dir(const char *rel, char *buf, size_t len);

#endif /* SHORTC_DATADIR_H */
