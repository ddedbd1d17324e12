import Foundation
import TroveCLI

// All behaviour lives in TroveCLI so it can be tested in-process; this only forwards the
// process's arguments, streams and environment and exits with the command's status.
let status = await TroveCommandLine.run(Array(CommandLine.arguments.dropFirst()), console: .process)
exit(status)
