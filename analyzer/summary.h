/* summary.h - the head of a profile on stderr (summary.c). */
#ifndef WHATIF_SUMMARY_H
#define WHATIF_SUMMARY_H

#include <stddef.h>

/* Prints the head of dir's profile (profile.csv, run.json) on stderr.
 * Returns 0, or -1 when there is no profile. */
int summary_print(const char *dir);

/* The string value of "key" in a run.json, or "" (buf always set). */
void summary_json_string(const char *path, const char *key, char *buf,
                         size_t len);

#endif
