import Foundation
import Trove
import TroveSQLite

extension SyncSpace {
    /// Proves that this device's key is the space's before anything is sent or applied.
    ///
    /// The space's key check (a constant sealed with its key, kept by the transport) must open
    /// with this key. A space without one gets this device's: it is new (an empty feed), or it
    /// predates key checks, and then this key must open the feed's first change set (the key
    /// the space started with; a device with a wrong passphrase joined later). Two devices that
    /// race to set it both learn which one the transport kept.
    ///
    /// ``push()`` and ``pull()`` call it; call it to check a passphrase before syncing.
    ///
    /// - Throws: ``SyncError/wrongKey(space:)``, ``SyncError/transport(_:)``.
    public func verifyKey() async throws {
        guard !keyVerified else { return }
        // A device added by code holds epoch 0's key once it accepted.
        guard let key = keys.first else {
            throw SyncError.awaitingMembership(space: space, device: device)
        }
        let stored: Data?
        do { stored = try await transport.keyCheck(space: space) } catch {
            throw Self.transportError(error)
        }
        if let stored {
            guard try KeyCheck.opens(stored, key: key, space: space) else {
                throw SyncError.wrongKey(space: space)
            }
        } else {
            let first: [SealedChangeSet]
            do { first = try await transport.pull(space: space, after: 0, limit: 1) } catch {
                throw Self.transportError(error)
            }
            if let sealed = first.first, try !Sealing.opens(sealed, key: key, space: space) {
                throw SyncError.wrongKey(space: space)
            }
            let check = try KeyCheck.seal(key: key, space: space)
            let kept: Data
            do { kept = try await transport.setKeyCheck(check, space: space) } catch {
                throw Self.transportError(error)
            }
            guard try KeyCheck.opens(kept, key: key, space: space) else {
                throw SyncError.wrongKey(space: space)
            }
        }
        keyVerified = true
    }
}
