import Foundation

/// Devices, wrapped keys and key epochs in memory, as `trove_sync.devices`, `wrapped_keys` and
/// `spaces.key_epoch` keep them on PostgreSQL.
extension InProcessTransport: MembershipTransport {
    /// The space's current key epoch.
    public func keyEpoch(space: String) async throws -> Int64 {
        membershipLock.withLock { keyEpochs[space] ?? 0 }
    }

    /// The space's devices, removed ones included, in the order they were added.
    public func devices(space: String) async throws -> [SyncDeviceRecord] {
        membershipLock.withLock { memberDevices[space] ?? [] }
    }

    /// The keys wrapped for `device`, by epoch.
    public func wrappedKeys(for device: String, space: String) async throws -> [WrappedSpaceKey] {
        membershipLock.withLock {
            (wrappedSpaceKeys[space]?[device] ?? [:]).values.sorted { $0.epoch < $1.epoch }
        }
    }

    /// Registers a device (kept when registered already) and stores keys wrapped for it.
    ///
    /// - Throws: ``SyncError/invalidInvitation(reason:)`` when it is registered with another
    ///   public key.
    public func putDevice(_ record: SyncDeviceRecord, keys: [WrappedSpaceKey], space: String)
        async throws
    {
        try membershipLock.withLock {
            var devices = memberDevices[space] ?? []
            if let known = devices.first(where: { $0.device == record.device }) {
                guard known.publicKey == record.publicKey else {
                    throw SyncError.invalidInvitation(
                        reason: "device \(record.device) has another public key")
                }
            } else {
                devices.append(record)
                memberDevices[space] = devices
            }
            for key in keys {
                wrappedSpaceKeys[space, default: [:]][key.device, default: [:]][key.epoch] = key
            }
        }
    }

    /// Starts key epoch `epoch`, removing `removing` in it.
    ///
    /// - Throws: ``SyncError/transport(_:)`` when `epoch` is not the current one plus one.
    public func startEpoch(
        _ epoch: Int64, removing: [String], keys: [WrappedSpaceKey], space: String
    ) async throws {
        try membershipLock.withLock {
            let current = keyEpochs[space] ?? 0
            guard epoch == current + 1 else {
                throw SyncError.transport(
                    "space \(space) is at key epoch \(current), so the next is \(current + 1)")
            }
            memberDevices[space] = (memberDevices[space] ?? []).map { record in
                var record = record
                if removing.contains(record.device), record.removedIn == nil {
                    record.removedIn = epoch
                }
                return record
            }
            for key in keys {
                wrappedSpaceKeys[space, default: [:]][key.device, default: [:]][key.epoch] = key
            }
            keyEpochs[space] = epoch
        }
    }
}
