// The keyring tests need the process's session-bus address to name a private bus. Setting it
// with setenv while the suite runs races every thread that reads the environment (Foundation's
// Process.run copies it, and a concurrent setenv moves it: a crash). So it is set here, in a
// constructor that runs before `main` and before any thread; the bus is started later at that
// address (PrivateKeyring.swift), and until then the address leads nowhere, the "no bus" case.
#define _XOPEN_SOURCE 700
#include "CTestSessionBus.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char directory[4096];

static int remove_entry(const char *path, const struct stat *info, int flag, struct FTW *walk) {
    (void)info, (void)flag, (void)walk;
    remove(path);
    return 0;
}

// Registered first, so it runs last: after the bus daemon was ended (PrivateKeyring.swift).
static void remove_directory(void) {
    if (directory[0] != '\0') nftw(directory, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

__attribute__((constructor)) static void trove_test_choose_session_bus(void) {
    const char *temporary = getenv("TMPDIR");
    if (temporary == NULL || temporary[0] == '\0') temporary = "/tmp";
    char template[4096];
    if (snprintf(template, sizeof template, "%s/trove-bus.XXXXXX", temporary) >= (int)sizeof template)
        return;
    if (mkdtemp(template) == NULL) return;
    char address[4200];
    snprintf(address, sizeof address, "unix:path=%s/bus", template);
    setenv("DBUS_SESSION_BUS_ADDRESS", address, 1);
    strcpy(directory, template);
    atexit(remove_directory);
}

const char *trove_test_session_bus_directory(void) {
    return directory[0] == '\0' ? NULL : directory;
}
