#ifndef C_TEST_SESSION_BUS_H
#define C_TEST_SESSION_BUS_H

/// The folder of the test process's private session bus, chosen before `main`: the bus socket
/// is `bus` in it, and `DBUS_SESSION_BUS_ADDRESS` names that socket from the start. NULL when
/// the folder could not be made.
const char *trove_test_session_bus_directory(void);

#endif
