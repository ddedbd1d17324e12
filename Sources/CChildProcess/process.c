// Starts child processes without Foundation's Process: on Linux its run() lists /proc/self/fd
// by copying each directory entry's whole 256-byte name field, which reads past glibc's buffer
// when an entry ends a page and the next is unmapped (swift-corelibs-foundation pull request
// 5472). The test runner, with many descriptors open and children started from several threads
// at once, crashed that way; `trove model install` could too.
#define _GNU_SOURCE
#include "CChildProcess.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <unistd.h>

extern char **environ;

int trove_spawn(const char *path, char *const argv[], char *const envp[],
                     const char *directory, int in, int out, int err, pid_t *pid) {
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attributes;
    int rc = posix_spawn_file_actions_init(&actions);
    if (rc != 0) return rc;
    rc = posix_spawnattr_init(&attributes);
    if (rc != 0) {
        posix_spawn_file_actions_destroy(&actions);
        return rc;
    }
    const int given[3] = {in, out, err};
    for (int fd = 0; fd < 3 && rc == 0; fd++) {
        if (given[fd] < 0) {
            rc = posix_spawn_file_actions_addopen(&actions, fd, "/dev/null",
                                                  fd == 0 ? O_RDONLY : O_WRONLY, 0);
        } else if (given[fd] != fd) {
            rc = posix_spawn_file_actions_adddup2(&actions, given[fd], fd);
        }
    }
    if (rc == 0 && directory != NULL) rc = posix_spawn_file_actions_addchdir_np(&actions, directory);
    if (rc == 0) rc = posix_spawn_file_actions_addclosefrom_np(&actions, 3);
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    if (rc == 0) rc = posix_spawnattr_setsigmask(&attributes, &none);
    if (rc == 0) rc = posix_spawnattr_setsigdefault(&attributes, &all);
    if (rc == 0) rc = posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    if (rc == 0) rc = posix_spawn(pid, path, &actions, &attributes, argv, envp != NULL ? envp : environ);
    posix_spawnattr_destroy(&attributes);
    posix_spawn_file_actions_destroy(&actions);
    return rc;
}
