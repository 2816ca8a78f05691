/*
 * cmd_generate.h — `shortc generate` (cmd_generate.c): greedy or sampled
 * continuation of one prompt or a batch of prompts.
 */
#ifndef SHORTC_CMD_GENERATE_H
#define SHORTC_CMD_GENERATE_H

/* argv[1] is "generate"; returns the exit status (errors printed). */
int generate_main(int argc, char **argv);

#endif
