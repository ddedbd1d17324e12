import Foundation

// What Trove's benchmarks drive directly, named for `@_spi(Benchmarks) import TroveSync` only:
// it is not API, and apps never see it.
extension SyncSpace {
    /// Seals the pending local changes into change sets without sending them; the next
    /// ``push()`` sends them. `trove-bench sync-join` writes a feed of a million change sets
    /// this way: a push per change set would add a server round trip to each. Call after a first
    /// push (which checks the key and reads the membership).
    ///
    /// - Returns: how many change sets were sealed.
    @_spi(Benchmarks) public func sealWithoutPushing() async throws -> Int {
        try await sealPending()
    }
}
