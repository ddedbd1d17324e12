import Foundation

/// Devices, their public keys and wrapped epoch keys, kept in `trove_sync.devices` and
/// `trove_sync.wrapped_keys` (server schema version 4), members of the space only.
extension PostgresTransport: MembershipTransport {
    /// The space's current key epoch (`trove_sync.key_epoch`).
    ///
    /// - Throws: ``PostgresError/noSuchSpace(_:)`` when the role is not a member.
    public func keyEpoch(space: String) async throws -> Int64 {
        try await session.run { connection in
            let result = try connection.execute(
                "SELECT trove_sync.key_epoch($1)", [.text(space)])
            try result.expectColumns([PostgresType.int8])
            return try result.integer(0, 0, as: Int64.self)
        }
    }

    /// The space's devices, removed ones included (`trove_sync.devices`).
    ///
    /// - Throws: ``PostgresError/noSuchSpace(_:)`` when the role is not a member.
    public func devices(space: String) async throws -> [SyncDeviceRecord] {
        try await session.run { connection in
            let result = try connection.execute(
                "SELECT device, public_key, certificate, removed_in, role_name::text FROM trove_sync.devices($1)",
                [.text(space)])
            try result.expectColumns([
                PostgresType.text, PostgresType.bytea, PostgresType.bytea, PostgresType.int8,
                PostgresType.text,
            ])
            return try (0..<result.count).map { row in
                SyncDeviceRecord(
                    device: try result.string(row, 0), publicKey: try result.data(row, 1),
                    certificate: try result.data(row, 2),
                    removedIn: result.isNull(row, 3)
                        ? nil : try result.integer(row, 3, as: Int64.self),
                    role: try result.string(row, 4))
            }
        }
    }

    /// The keys wrapped for `device` (`trove_sync.wrapped_keys`).
    ///
    /// - Throws: ``PostgresError/noSuchSpace(_:)`` when the role is not a member.
    public func wrappedKeys(for device: String, space: String) async throws -> [WrappedSpaceKey] {
        try await session.run { connection in
            let result = try connection.execute(
                "SELECT epoch, wrapped_by, payload FROM trove_sync.wrapped_keys($1, $2)",
                [.text(space), .text(device)])
            try result.expectColumns([PostgresType.int8, PostgresType.text, PostgresType.bytea])
            return try (0..<result.count).map { row in
                WrappedSpaceKey(
                    epoch: try result.integer(row, 0, as: Int64.self), device: device,
                    wrappedBy: try result.string(row, 1), payload: try result.data(row, 2))
            }
        }
    }

    /// Registers a device and stores keys wrapped for it (`trove_sync.put_device`).
    ///
    /// - Throws: ``PostgresError/deviceKeyMismatch(_:)`` when the device is registered with
    ///   another public key; ``PostgresError/noSuchSpace(_:)``.
    public func putDevice(_ record: SyncDeviceRecord, keys: [WrappedSpaceKey], space: String)
        async throws
    {
        let parameters: [PostgresValue] = [
            .text(space), .text(record.device), .bytea(record.publicKey),
            .bytea(record.certificate), .int64Array(keys.map(\.epoch)),
            .textArray(keys.map(\.wrappedBy)), .byteaArray(keys.map(\.payload)),
        ]
        try await session.run { connection in
            _ = try connection.execute(
                "SELECT trove_sync.put_device($1, $2, $3, $4, $5, $6, $7)", parameters)
        }
    }

    /// Starts the next key epoch (`trove_sync.start_epoch`).
    ///
    /// - Throws: ``PostgresError/keyEpochTaken(_:)`` when another device started it first;
    ///   ``PostgresError/noSuchSpace(_:)``.
    public func startEpoch(
        _ epoch: Int64, removing: [String], keys: [WrappedSpaceKey], space: String
    ) async throws {
        let parameters: [PostgresValue] = [
            .text(space), .int64(epoch), .textArray(removing), .textArray(keys.map(\.device)),
            .textArray(keys.map(\.wrappedBy)), .byteaArray(keys.map(\.payload)),
        ]
        try await session.run { connection in
            _ = try connection.execute(
                "SELECT trove_sync.start_epoch($1, $2, $3, $4, $5, $6)", parameters)
        }
    }
}
