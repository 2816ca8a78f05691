/* cmd_mask.h — `shortc mask`: the boolean attention masks a model uses (cmd_mask.c). */
#ifndef SHORTC_CMD_MASK_H
#define SHORTC_CMD_MASK_H

#include <stdbool.h>

/* argv[1] is "mask"; returns the process exit status. */
int mask_main(int argc, char **argv);

/* Integer flag value, decimal, in [lo, hi]; prints the error (main.c). */
bool parse_flag_int(const char *flag, const char *s, long long lo, long long hi, long long *out);

#endif
