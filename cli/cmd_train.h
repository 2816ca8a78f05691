/*
 * cmd_train.h — `shortc train` and `shortc grad` (cmd_train.c; docs/training.md).
 */
#ifndef SHORTC_CMD_TRAIN_H
#define SHORTC_CMD_TRAIN_H

int train_main(int argc, char **argv);
int grad_main(int argc, char **argv);

#endif
