#ifndef C_CHILD_PROCESS_H
#define C_CHILD_PROCESS_H

#include <sys/types.h>

/// Starts `path` with `argv` (NULL-terminated) and `envp` (NULL-terminated; NULL for this
/// process's environment), in `directory` (NULL: this process's), its standard input, output
/// and error on `in`, `out` and `err` (-1: /dev/null), every other descriptor closed, signals at
/// their defaults and none blocked. Returns 0 and the child's id in `pid`, or an errno value.
int trove_spawn(const char *path, char *const argv[], char *const envp[],
                const char *directory, int in, int out, int err, pid_t *pid);

#endif
