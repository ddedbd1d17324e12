import Foundation
import Trove
import TroveSQLite

/// A device's merge state at one point of the feed: what a new device applies instead of
/// replaying the feed up to ``upTo``.
///
/// The merge state is every record's causal length and every field's value with its stamp
/// (`_trove_sync_records`, `_trove_sync_fields`; fields of dead lives and tombstones included, so
/// a late change of a deleted life still loses), plus how far each writer's sequence numbers
/// were received (so the new device does not see the pruned start of the feed as a gap). It
/// travels as change sets, one per writer device, whose fields carry that device's stamps: a
/// device applies it with the merge it applies the feed with (``Merger``), so a state joined from
/// a snapshot and one replayed from the feed are the same join of the same writes.
///
/// ```
/// plaintext: "TSN1" schemaVersion upTo writerCount (device received)* groupCount (device length changeSet)*
/// changeSet: ChangeSetCoding; numbers LEB128 varints (upTo, received zig-zag); strings length + UTF-8
/// part i of n: AES-256-GCM(key, plaintext[i * partSize ..< (i + 1) * partSize], aad)
/// aad: "trove-snapshot/1" 0x00 space 0x00 device 0x00 upTo 0x00 i 0x00 n
/// ```
struct Snapshot {
    var schemaVersion: Int
    /// The last server sequence the state covers.
    var upTo: Int64
    /// Each writer device's highest sequence number received without a gap.
    var writers: [String: Int64]
    /// The merge state as one change set per writer device (a record with no field at all, a
    /// tombstone whose fields were never known here, goes with the snapshot's own device).
    var groups: [(device: String, set: ChangeSet)]

    static let magic: [UInt8] = Array("TSN1".utf8)
    /// Bytes of plaintext per sealed part: a few MB, so one request or one row stays small.
    static let partSize = 4 << 20

    /// Why a snapshot is not applied (the device then pulls the feed instead).
    enum Refusal: Error, CustomStringConvertible {
        case cannotOpen
        case unknownFormat(String)
        case newerSchema(snapshot: Int, local: Int)
        case notNewer(snapshot: Int64, cursor: Int64)
        case partMissing(Int)
        case doesNotFit(String)

        var description: String {
            switch self {
            case .cannotOpen:
                "it does not open with the space's key (altered, or sealed with another key)"
            case .unknownFormat(let why): "it is not a snapshot this version reads (\(why))"
            case .newerSchema(let snapshot, let local):
                "it was made with schema version \(snapshot); this device has \(local)"
            case .notNewer(let snapshot, let cursor):
                "it covers the feed up to \(snapshot), and this device has pulled up to \(cursor)"
            case .partMissing(let part):
                "its part \(part) is gone from the server (a newer snapshot replaced it)"
            case .doesNotFit(let why): "it does not fit this device: \(why)"
            }
        }
    }

    // MARK: Capture

    /// Reads the merge state of `captured` tables. Call inside a transaction.
    static func capture(
        _ connection: Connection, captured: [String: CapturedTable], device: String,
        schemaVersion: Int, upTo: Int64
    ) throws -> Snapshot {
        // device -> collection -> id -> fields, in the order read (records by id).
        var byDevice: [String: [String: [SQLValue: [ChangeSet.FieldChange]]]] = [:]
        var records: [String: [(SQLValue, Int64)]] = [:]
        for name in captured.keys.sorted() {
            records[name] = try connection.query(
                "SELECT id, cl FROM \(SyncTables.records) WHERE collection = ? ORDER BY id",
                [.text(name)]
            ).map { ($0[0], $0.int64(at: 1) ?? 0) }
            for row in try connection.query(
                "SELECT id, field, cl, hlc, device, value, base_hlc, base_device FROM \(SyncTables.fields) WHERE collection = ?",
                [.text(name)])
            {
                let change = ChangeSet.FieldChange(
                    name: row.string(at: 1) ?? "", cl: row.int64(at: 2) ?? 0,
                    hlc: row.int64(at: 3) ?? 0, value: row[5],
                    baseHLC: row.int64(at: 6), baseDevice: row.string(at: 7))
                byDevice[row.string(at: 4) ?? "", default: [:]][name, default: [:]][
                    row[0], default: []
                ].append(change)
            }
        }
        var devices = Set(byDevice.keys)
        devices.insert(device)
        var groups: [(device: String, set: ChangeSet)] = []
        for writer in devices.sorted() {
            var collections: [ChangeSet.Collection] = []
            for name in captured.keys.sorted() {
                let fields = byDevice[writer]?[name] ?? [:]
                var kept: [ChangeSet.Record] = []
                for (id, cl) in records[name] ?? [] {
                    if let changes = fields[id] {
                        kept.append(ChangeSet.Record(id: id, cl: cl, fields: changes))
                    } else if writer == device,
                        !devices.contains(where: { byDevice[$0]?[name]?[id] != nil })
                    {
                        kept.append(ChangeSet.Record(id: id, cl: cl, fields: []))
                    }
                }
                guard !kept.isEmpty else { continue }
                let manifests = (captured[name]?.vectorFields ?? [:]).mapValues { manifestKey($0) }
                collections.append(
                    ChangeSet.Collection(name: name, manifests: manifests, records: kept))
            }
            if !collections.isEmpty {
                groups.append(
                    (writer, ChangeSet(schemaVersion: schemaVersion, collections: collections)))
            }
        }
        var writers = try WriterSequences.received(connection)
        writers[device] =
            try connection.scalar("SELECT pushed FROM \(SyncTables.device)")?.int64Value ?? 0
        return Snapshot(schemaVersion: schemaVersion, upTo: upTo, writers: writers, groups: groups)
    }

    // MARK: Coding

    func encode() -> [UInt8] {
        var out = ByteWriter()
        out.bytes += Self.magic
        out.varint(UInt64(schemaVersion))
        out.signed(upTo)
        out.varint(UInt64(writers.count))
        for (writer, received) in writers.sorted(by: { $0.key < $1.key }) {
            out.string(writer)
            out.signed(received)
        }
        out.varint(UInt64(groups.count))
        for group in groups {
            out.string(group.device)
            let bytes = ChangeSetCoding.encode(group.set)
            out.varint(UInt64(bytes.count))
            out.bytes += bytes
        }
        return out.bytes
    }

    static func decode(_ bytes: [UInt8]) throws -> Snapshot {
        var input = ByteReader(bytes: bytes)
        do {
            guard Array(try input.take(magic.count)) == magic else {
                throw Refusal.unknownFormat("no TSN1 magic")
            }
            let schemaVersion = Int(try input.varint())
            let upTo = try input.signed()
            var writers: [String: Int64] = [:]
            for _ in 0..<(try input.count()) {
                let writer = try input.string()
                writers[writer] = try input.signed()
            }
            var groups: [(device: String, set: ChangeSet)] = []
            for _ in 0..<(try input.count()) {
                let writer = try input.string()
                let set = try ChangeSetCoding.decode(Array(try input.take(input.count())))
                groups.append((writer, set))
            }
            guard input.isAtEnd else { throw Refusal.unknownFormat("bytes after the end") }
            return Snapshot(
                schemaVersion: schemaVersion, upTo: upTo, writers: writers, groups: groups)
        } catch let error as ChangeSetCoding.Malformed {
            throw Refusal.unknownFormat(error.reason)
        }
    }

    // MARK: Sealing

    static func associatedData(space: String, device: String, upTo: Int64, part: Int, parts: Int)
        -> [UInt8]
    {
        Array(
            "trove-snapshot/1\u{0}\(space)\u{0}\(device)\u{0}\(upTo)\u{0}\(part)\u{0}\(parts)".utf8)
    }

    /// The snapshot sealed in parts of ``partSize`` bytes of plaintext (at least one).
    func seal(key: SyncKey, space: String, device: String) throws -> [Data] {
        try seal(keys: SpaceKeys(key: key), space: space, device: device)
    }

    /// The snapshot sealed under the current epoch of `keys` (see ``SpaceKeys``).
    func seal(keys: SpaceKeys, space: String, device: String) throws -> [Data] {
        let plain = encode()
        let parts = max(1, (plain.count + Self.partSize - 1) / Self.partSize)
        return try (0..<parts).map { part in
            let slice = Array(
                plain[(part * Self.partSize)..<min(plain.count, (part + 1) * Self.partSize)])
            return Data(
                try keys.seal(
                    slice,
                    associatedData: Self.associatedData(
                        space: space, device: device, upTo: upTo, part: part, parts: parts)))
        }
    }

    /// Opens the sealed parts of `descriptor` (all of them, in order).
    static func open(_ sealed: [Data], descriptor: SnapshotDescriptor, key: SyncKey, space: String)
        throws -> Snapshot
    {
        try open(sealed, descriptor: descriptor, keys: SpaceKeys(key: key), space: space)
    }

    static func open(
        _ sealed: [Data], descriptor: SnapshotDescriptor, keys: SpaceKeys, space: String
    ) throws -> Snapshot {
        var plain: [UInt8] = []
        for (part, payload) in sealed.enumerated() {
            guard
                let opened = try keys.open(
                    Array(payload),
                    associatedData: associatedData(
                        space: space, device: descriptor.device, upTo: descriptor.upToSequence,
                        part: part,
                        parts: sealed.count))
            else { throw Refusal.cannotOpen }
            plain += opened
        }
        let snapshot = try decode(plain)
        guard snapshot.upTo == descriptor.upToSequence else {
            throw Refusal.unknownFormat(
                "it says it covers \(snapshot.upTo), the server says \(descriptor.upToSequence)")
        }
        return snapshot
    }

    // MARK: Applying

    /// Merges the snapshot into this device's state and moves the cursor to ``upTo``. Call inside
    /// the write transaction that applies it (a refusal thrown here rolls everything back).
    func apply(with merger: Merger, connection: Connection, device: String) throws {
        let cursor =
            try connection.scalar("SELECT pulled FROM \(SyncTables.device)")?.int64Value ?? 0
        guard upTo > cursor else { throw Refusal.notNewer(snapshot: upTo, cursor: cursor) }
        guard schemaVersion <= merger.localSchemaVersion else {
            throw Refusal.newerSchema(snapshot: schemaVersion, local: merger.localSchemaVersion)
        }
        for group in groups {
            do {
                if let reason = try merger.check(group.set) {
                    throw Refusal.doesNotFit(reason.description)
                }
            } catch let error as SyncError {
                throw Refusal.doesNotFit(error.description)
            }
        }
        // Records first, links last: a link whose record is dead in the snapshot is dead too, and
        // applied after the record nothing cascades (applied before, the record's death would
        // delete the link's row and this device would record that as a change of its own).
        for links in [false, true] {
            for group in groups {
                var part = group.set
                part.collections = part.collections.filter {
                    (merger.captured[$0.name]?.isLinks ?? false) == links
                }
                if !part.collections.isEmpty { try merger.apply(part, from: group.device) }
            }
        }
        try WriterSequences.merge(writers.filter { $0.key != device }, on: connection)
        try connection.execute(
            "UPDATE \(SyncTables.device) SET pulled = max(pulled, ?)", [.integer(upTo)])
    }
}
