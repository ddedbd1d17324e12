import Foundation
import TroveTestSupport

/// The PostgreSQL server the sync tests share (one per test process), with Trove's schema
/// installed from trove-sync.sql, and fresh roles and space names so tests never meet.
enum SyncServerFixture {
    /// The repository's trove-sync.sql.
    static let schemaFile = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent(
            "Sources/TroveSync/Postgres/trove-sync.sql"
        ).path

    private static let installed: Result<TestPostgresServer, Error> = Result {
        let server = try TestPostgresServer.shared()
        try server.psql(file: schemaFile)
        return server
    }

    /// The shared server, schema installed.
    static func server() throws -> TestPostgresServer { try installed.get() }

    /// A new login role (SCRAM password), member of trove_sync_device, and its URL.
    static func newDevice(on server: TestPostgresServer? = nil, prefix: String = "device") throws
        -> Device
    {
        let server = try server ?? Self.server()
        let name = "\(prefix)_\(uniqueSuffix())"
        let password = "pw-\(UUID().uuidString)"
        try server.createRole(name, password: password, inRoles: ["trove_sync_device"])
        return Device(
            role: name, password: password, url: server.url(user: name, password: password))
    }

    /// A space name no other test uses.
    static func newSpaceName() -> String { "space-\(uniqueSuffix())" }

    static func uniqueSuffix() -> String {
        UUID().uuidString.prefix(12).lowercased().replacingOccurrences(of: "-", with: "")
    }

    /// A role that devices log in as.
    struct Device {
        let role: String
        let password: String
        let url: String
    }
}
