/* PLACEHOLDER: replaced wholesale by the owner of this file. */
#include "shortc.h"
ModelSpec *sema_model(Arena *a, Diag *d, AstFile *f, const char *name) { (void)a; (void)f; (void)name; diag_plain_error(d, "sema: placeholder"); return NULL; }
ModelSpec *shortc_load_model(Arena *a, Diag *d, const char *path, const char *name) { (void)a; (void)path; (void)name; diag_plain_error(d, "sema: placeholder"); return NULL; }
