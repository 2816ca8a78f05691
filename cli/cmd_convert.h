/* cmd_convert.h — `shortc convert`: the checkpoint converter (tools/convert_checkpoint.py) as a subcommand. */
#ifndef SHORTC_CMD_CONVERT_H
#define SHORTC_CMD_CONVERT_H

/* Runs the converter with argv[2..] (its own options; exit code: the converter's, or 1/3 when it cannot run). */
int convert_main(int argc, char **argv);

#endif
