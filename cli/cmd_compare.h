/* cmd_compare.h — `shortc compare` and `shortc report`: the cost model side by side (cmd_compare.c). */
#ifndef SHORTC_CMD_COMPARE_H
#define SHORTC_CMD_COMPARE_H

/* argv[1] is "compare"; returns the process exit status. */
int compare_main(int argc, char **argv);
/* argv[1] is "report"; returns the process exit status. */
int report_main(int argc, char **argv);

#endif
