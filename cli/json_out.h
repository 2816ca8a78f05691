/* json_out.h — what the `--json` outputs of eval and generate share: strings written as JSON. */
#ifndef SHORTC_JSON_OUT_H
#define SHORTC_JSON_OUT_H

#include <stddef.h>
#include <stdio.h>

/* Writes s[len] as a JSON string (quoted; control characters, '"' and '\\' escaped; bytes >= 0x80 as they are). */
void json_write_string(FILE *f, const char *s, size_t len);

/* Writes v as a JSON number with the fewest digits that read back as exactly v (up to 17); a NaN or
 * infinity as null. */
void json_write_double(FILE *f, double v);

#endif
