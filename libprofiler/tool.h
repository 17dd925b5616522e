/* tool.h - what the OMPT tool (tool.c) offers its own other modules. */
#ifndef WHATIF_TOOL_H
#define WHATIF_TOOL_H

/* The program proper begins now (called once, before main, by the
 * preloaded tool's __libc_start_main wrapper): its serial work is counted
 * from here. */
void tool_program_starts(void);

#endif
