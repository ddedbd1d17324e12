/// Why a PostgreSQL operation failed: the server's SQLSTATE and message, or the connection's.
///
/// Trove's server functions raise their own SQLSTATEs (class `TS`), each a case here, so an app
/// matches a case, never a message:
///
/// ```swift
/// do {
///     _ = try await transport.pull(space: "notes", after: 0, limit: 100)
/// } catch PostgresError.noSuchSpace {
///     // not created yet, or this role is not a member
/// }
/// ```
public enum PostgresError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The connection URL could not be parsed (libpq's reason).
    case invalidURL(String)
    /// No connection, or it was lost (server down or restarting, network, TLS refused, SCRAM
    /// authentication failed). Retrying later may succeed.
    case connectionFailed(String)
    /// No space of that name of which the role is a member (TS001; an unknown space and one the
    /// role may not use look the same, so a name's existence does not leak).
    case noSuchSpace(String)
    /// The space name belongs to another role's space (TS002).
    case spaceNameTaken(String)
    /// Only the space's owner may add members (TS003).
    case notSpaceOwner(String)
    /// No database role of that name (TS004).
    case noSuchRole(String)
    /// A space's feed may not be pruned that far: past the newest snapshot or the slowest live
    /// cursor, or back (TS005).
    case pruneRefused(String)
    /// The device was removed from the space: the server refuses its change sets (TS006).
    case deviceRemoved(String)
    /// Another device started that key epoch first (TS007).
    case keyEpochTaken(String)
    /// The device is registered with another public key (TS008).
    case deviceKeyMismatch(String)
    /// What was sent is sealed under an older key epoch than the space's (TS009): the sender
    /// learns the new epoch and seals again.
    case staleKeyEpoch(String)
    /// Any other error the server reported: its SQLSTATE (for example `42501`, insufficient
    /// privilege, or `42883` when the Trove schema is not installed) and message.
    case server(sqlState: String, message: String)
    /// The server answered with something the Trove schema never returns (a wrong schema version).
    case unexpectedResult(String)

    /// The SQLSTATE of an error the server reported; nil for connection and client-side errors.
    public var sqlState: String? {
        switch self {
        case .noSuchSpace: return "TS001"
        case .spaceNameTaken: return "TS002"
        case .notSpaceOwner: return "TS003"
        case .noSuchRole: return "TS004"
        case .pruneRefused: return "TS005"
        case .deviceRemoved: return "TS006"
        case .keyEpochTaken: return "TS007"
        case .deviceKeyMismatch: return "TS008"
        case .staleKeyEpoch: return "TS009"
        case .server(let state, _): return state
        case .invalidURL, .connectionFailed, .unexpectedResult: return nil
        }
    }

    /// What went wrong, with the server's or libpq's message (never the URL, which may hold a
    /// password).
    public var description: String {
        switch self {
        case .invalidURL(let message): return "invalid PostgreSQL URL: \(message)"
        case .connectionFailed(let message): return "PostgreSQL connection failed: \(message)"
        case .noSuchSpace(let message), .spaceNameTaken(let message), .notSpaceOwner(let message),
            .noSuchRole(let message), .pruneRefused(let message), .deviceRemoved(let message),
            .keyEpochTaken(let message), .deviceKeyMismatch(let message),
            .staleKeyEpoch(let message):
            return message
        case .server(let state, let message): return "PostgreSQL error \(state): \(message)"
        case .unexpectedResult(let message): return "unexpected PostgreSQL result: \(message)"
        }
    }

    /// The error for a server-reported SQLSTATE and message.
    static func reported(sqlState: String, message: String) -> PostgresError {
        switch sqlState {
        case "TS001": return .noSuchSpace(message)
        case "TS002": return .spaceNameTaken(message)
        case "TS003": return .notSpaceOwner(message)
        case "TS004": return .noSuchRole(message)
        case "TS005": return .pruneRefused(message)
        case "TS006": return .deviceRemoved(message)
        case "TS007": return .keyEpochTaken(message)
        case "TS008": return .deviceKeyMismatch(message)
        case "TS009": return .staleKeyEpoch(message)
        default:
            // Class 08 (connection exception) and 57P01-57P03 (the server shutting down or not
            // yet accepting connections) mean the connection is gone, not that the request is bad.
            if sqlState.hasPrefix("08") || ["57P01", "57P02", "57P03"].contains(sqlState) {
                return .connectionFailed(message)
            }
            return .server(sqlState: sqlState, message: message)
        }
    }
}
