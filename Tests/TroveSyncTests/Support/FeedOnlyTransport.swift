import Foundation
import TroveSync

/// The same feed seen through the plain ``SyncTransport`` requirements only: a device on it
/// replays the whole feed (no snapshots, no byte budget, no cursors).
final class FeedOnlyTransport: SyncTransport, @unchecked Sendable {
    // Only forwards to `base`, which is Sendable itself.
    let base: any SyncTransport
    init(_ base: any SyncTransport) { self.base = base }
    func push(_ changeSets: [SealedChangeSet], space: String) async throws -> [Int64] {
        try await base.push(changeSets, space: space)
    }
    func pull(space: String, after: Int64, limit: Int) async throws -> [SealedChangeSet] {
        try await base.pull(space: space, after: after, limit: limit)
    }
    func notifications(space: String) -> AsyncStream<Void> { base.notifications(space: space) }
    func keyCheck(space: String) async throws -> Data? { try await base.keyCheck(space: space) }
    func setKeyCheck(_ check: Data, space: String) async throws -> Data {
        try await base.setKeyCheck(check, space: space)
    }
}
