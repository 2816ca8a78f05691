/* cmd_sim.h — `shortc sim`: one kernel of a CUDA file on the simulator (cmd_sim.c). */
#ifndef SHORTC_CMD_SIM_H
#define SHORTC_CMD_SIM_H

/* argv[1] is "sim"; returns the process exit status. */
int sim_main(int argc, char **argv);

#endif
