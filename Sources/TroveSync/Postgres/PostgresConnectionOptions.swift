import CLibPQ
import Foundation

/// A parsed connection URL (or libpq key=value string) and what Trove adds to it: TLS required
/// (`sslmode=require`) for any host other than the local machine unless the URL names an
/// `sslmode` itself, a connect timeout and TCP keepalives so a dead server is noticed.
struct PostgresConnectionOptions: Sendable {
    /// The libpq keyword/value pairs, the URL's own first, then Trove's additions.
    let parameters: [(key: String, value: String)]

    /// Whether every host the URL names is this machine (a Unix socket, localhost or a loopback
    /// address), which is when TLS is not required by default.
    let isLocal: Bool

    /// Parses `url` with libpq's own parser.
    ///
    /// - Throws: ``PostgresError/invalidURL(_:)`` with libpq's reason.
    init(url: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        var error: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(url, &error) else {
            let message = error.map { String(cString: $0) } ?? "cannot parse"
            if let error { PQfreemem(error) }
            throw PostgresError.invalidURL(message.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        defer { PQconninfoFree(options) }
        var given: [(key: String, value: String)] = []
        var cursor = options
        while let keyword = cursor.pointee.keyword {
            if let value = cursor.pointee.val {
                given.append((String(cString: keyword), String(cString: value)))
            }
            cursor += 1
        }
        func value(_ key: String) -> String? { given.first { $0.key == key }?.value }

        // libpq falls back on PGHOST/PGHOSTADDR when the URL names no host; so do we.
        let hosts =
            (value("hostaddr") ?? value("host") ?? environment["PGHOSTADDR"] ?? environment[
                "PGHOST"] ?? "")
            .split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        isLocal = hosts.allSatisfy(Self.isLocalHost)

        var parameters = given
        if value("sslmode") == nil, !isLocal { parameters.append(("sslmode", "require")) }
        if value("connect_timeout") == nil { parameters.append(("connect_timeout", "10")) }
        if value("keepalives_idle") == nil { parameters.append(("keepalives_idle", "30")) }
        if value("application_name") == nil {
            parameters.append(("application_name", "trove-sync"))
        }
        self.parameters = parameters
    }

    /// The key=value string libpq connects with (values quoted and escaped).
    var connectionString: String {
        parameters.map { key, value in
            let escaped = value.replacingOccurrences(of: "\\", with: "\\\\")
                .replacingOccurrences(of: "'", with: "\\'")
            return "\(key)='\(escaped)'"
        }.joined(separator: " ")
    }

    /// The value of one keyword, as libpq will see it.
    func value(_ key: String) -> String? { parameters.first { $0.key == key }?.value }

    /// A Unix socket path, localhost, or a loopback address (127.0.0.0/8, ::1).
    static func isLocalHost(_ host: String) -> Bool {
        let host = host.trimmingCharacters(in: .whitespaces)
        if host.isEmpty || host.hasPrefix("/") || host.hasPrefix("@") { return true }
        if host.lowercased() == "localhost" || host == "::1" || host == "[::1]" { return true }
        let octets = host.split(separator: ".")
        return octets.count == 4 && octets[0] == "127" && octets.allSatisfy { UInt8($0) != nil }
    }
}
