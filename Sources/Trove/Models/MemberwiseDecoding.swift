import Foundation
import TroveSQLite

/// Decodes a value model by writing each column straight into its stored property, when its
/// `init(from:)` does nothing else: a fetch then skips Codable's containers, whose forwarding
/// and generic lookups (the app's model is in another module, so nothing is specialised) cost
/// more than reading the row.
///
/// A type qualifies when, checked once per type (``init(_:columns:)``):
/// - it is a struct whose stored properties ``MemberwiseCoding()`` lists (each one's offset is
///   `MemoryLayout.offset(of:)` of its key path), exactly its columns, by name, each of a kind
///   read here (``Kind``: text, integers, reals, booleans, dates, UUIDs, string arrays and
///   vectors, each optional or not) in a column storing that kind;
/// - its `init(from:)` stores what it is handed, untouched: ``ModelProbe`` decodes it with
///   made-up values (unique ones, large negative numbers, then empty ones with every optional
///   absent), and each property must hold exactly what it was handed. An `init(from:)` that
///   computes, defaults, renames or throws on those values keeps the Codable path for every row.
///
/// A row this path cannot read as the Codable path would (a NULL in a required column, text
/// that is not a UUID, JSON that is not an array of plain strings, a vector of another size)
/// goes through `init(from:)`, which reads it or names the error; the differential tests hold
/// both paths equal.
struct MemberwiseDecoding: Sendable {
    enum Kind: Sendable {
        case string, int, int64, double, bool, date, uuid, strings
        case floats(dimension: Int)
    }

    struct Field: Sendable {
        /// Where the property is in an instance.
        let offset: Int
        let column: Int
        let kind: Kind
        let isOptional: Bool
    }

    let fields: [Field]
    /// Each field's property name (apart from ``fields``, so a row's reads retain no string).
    let names: [String]

    /// The plan for `M`, or nil when `M` keeps the Codable path.
    init?<M: PersistentModel>(_ type: M.Type, columns plan: ModelRowDecoder.Plan) {
        guard !(M.self is AnyClass), let listed = M.self as? any _MemberwiseFields.Type else {
            return nil
        }
        func stored<T: _MemberwiseFields>(_: T.Type) -> [(
            name: String, offset: Int?, type: Any.Type
        )] {
            T._$fields.map {
                (
                    $0.name, MemoryLayout<T>.offset(of: $0.keyPath),
                    Swift.type(of: $0.keyPath).valueType
                )
            }
        }
        var fields: [Field] = []
        var names: [String] = []
        var covered = Set<String>()
        for (name, offset, type) in _openExistential(listed, do: stored) {
            guard let offset, let column = plan.byProperty[name],
                let (kind, isOptional) = Self.kind(of: type, stored: column.type),
                covered.insert(name).inserted
            else { return nil }
            fields.append(
                Field(offset: offset, column: column.index, kind: kind, isOptional: isOptional))
            names.append(name)
        }
        guard covered.count == plan.names.count else { return nil }
        self.fields = fields
        self.names = names
        guard Self.storesWhatItIsHanded(M.self, fields: fields, names: names) else { return nil }
    }

    /// The kind of a property of `type` in a column storing `stored`, and whether it is
    /// optional; nil when this path does not read it.
    private static func kind(of type: Any.Type, stored: FieldType) -> (Kind, Bool)? {
        let kinds: [(Any.Type, Any.Type, Kind, FieldType?)] = [
            (String.self, String?.self, .string, .text), (Int.self, Int?.self, .int, .integer),
            (Int64.self, Int64?.self, .int64, .integer),
            (Double.self, Double?.self, .double, .real),
            (Bool.self, Bool?.self, .bool, .bool), (Date.self, Date?.self, .date, .date),
            (UUID.self, UUID?.self, .uuid, .text), ([String].self, [String]?.self, .strings, .json),
        ]
        for (plain, optional, kind, column) in kinds where column == stored {
            if type == plain { return (kind, false) }
            if type == optional { return (kind, true) }
        }
        if case .vector(let dimension, _) = stored {
            if type == [Float].self { return (.floats(dimension: dimension), false) }
            if type == [Float]?.self { return (.floats(dimension: dimension), true) }
        }
        return nil
    }

    /// Whether `M(from:)` leaves each property holding what the probe handed it, on two rounds
    /// of unique values (the second of large negative numbers) and one of empty values with
    /// every optional absent.
    private static func storesWhatItIsHanded<M: PersistentModel>(
        _ type: M.Type, fields: [Field], names: [String]
    )
        -> Bool
    {
        for mode in [ModelProbe.Mode.unique(round: 0), .unique(round: 1), .empty] {
            let probe = ModelProbe(mode)
            guard let instance = try? M(from: probe) else { return false }
            let held = withUnsafeBytes(of: instance) { base in
                zip(fields, names).allSatisfy { field, name in
                    let value = printed(base.baseAddress! + field.offset, field)
                    return field.isOptional && probe.absent.contains(name)
                        ? value == nil
                        : value != nil && probe.handed[name] == .some(value)
                }
            }
            guard held else { return false }
        }
        return true
    }

    /// The property at `p`, printed as ``ModelProbe`` prints what it hands out (nil: absent).
    private static func printed(_ p: UnsafeRawPointer, _ field: Field) -> String? {
        func load<T>(_: T.Type) -> String? {
            field.isOptional
                ? p.assumingMemoryBound(to: T?.self).pointee.map { String(describing: $0) }
                : String(describing: p.assumingMemoryBound(to: T.self).pointee)
        }
        return switch field.kind {
        case .string: load(String.self)
        case .int: load(Int.self)
        case .int64: load(Int64.self)
        case .double: load(Double.self)
        case .bool: load(Bool.self)
        case .date: load(Date.self)
        case .uuid: load(UUID.self)
        case .strings: load([String].self)
        case .floats: load([Float].self)
        }
    }

    /// Writes the model in the row `statement` is on into the uninitialized instance at `base`;
    /// false when a column needs the Codable path (nothing is then left initialized). Not
    /// generic: a fetch's rows are written at their place in one buffer (``Rows``), with no
    /// generic metadata looked up per row.
    func write(_ statement: Statement, to base: UnsafeMutableRawPointer) -> Bool {
        for n in fields.indices {
            let field = fields[n]
            if write(field, from: statement, to: base + field.offset) { continue }
            for written in fields[..<n] { destroy(written, at: base + written.offset) }
            return false
        }
        return true
    }

    /// A fetch's models, written in place in chunks of 64 KB, then moved into an array of
    /// their exact count at once (the types written here are bitwise movable: strings, arrays
    /// and plain values). Chunks that small come from the allocator's heap and are reused by the
    /// next fetch; a buffer grown by doubling was fresh mapped memory each time, and its page
    /// faults cost more than the per-row generic appends it saves. Not generic: only
    /// ``take(as:)`` and ``free(as:)`` know the type, so a row costs no generic metadata lookup.
    struct Rows {
        private var chunks: [UnsafeMutableRawPointer] = []
        private(set) var count = 0
        private let stride: Int
        private let perChunk: Int
        /// The next free place in the last chunk, and how many models still fit there.
        private var place: UnsafeMutableRawPointer?
        private var room = 0

        init<M>(of type: M.Type) {
            precondition(MemoryLayout<M>.alignment <= 16, "malloc aligns to 16 bytes")
            stride = Swift.max(1, MemoryLayout<M>.stride)
            perChunk = Swift.max(1, 65_536 / stride)
        }

        /// Room for the next model; ``commit()`` once it is written.
        mutating func next() -> UnsafeMutableRawPointer {
            if room == 0 {
                guard let made = malloc(perChunk * stride) else {
                    fatalError("out of memory for \(perChunk) models")
                }
                chunks.append(made)
                (place, room) = (made, perChunk)
            }
            return place!
        }

        mutating func commit() {
            count += 1
            room -= 1
            place! += stride
        }

        /// The models, moved out: the chunks are empty afterwards.
        mutating func take<M>(as type: M.Type) -> [M] {
            defer { count = 0 }
            guard count > 0 else { return [] }
            return [M](unsafeUninitializedCapacity: count) { buffer, initialized in
                let out = UnsafeMutableRawPointer(buffer.baseAddress!)
                for (i, chunk) in chunks.enumerated() {
                    let models = Swift.min(perChunk, count - i * perChunk)
                    guard models > 0 else { break }
                    (out + i * perChunk * stride).copyMemory(
                        from: chunk, byteCount: models * stride)
                }
                initialized = count
            }
        }

        /// Destroys what is left (a fetch that failed midway) and frees the chunks.
        mutating func free<M>(as type: M.Type) {
            for (i, chunk) in chunks.enumerated() {
                let models = Swift.min(perChunk, count - i * perChunk)
                if models > 0 { chunk.assumingMemoryBound(to: M.self).deinitialize(count: models) }
                Foundation.free(chunk)
            }
            chunks = []
            (count, place, room) = (0, nil, 0)
        }
    }

    /// Reads `field`'s column into the uninitialized property at `p`; false when the column is
    /// NULL for a required property or holds what the Codable path must judge.
    private func write(_ field: Field, from statement: Statement, to p: UnsafeMutableRawPointer)
        -> Bool
    {
        let i = field.column
        func put<T>(_ value: T?) -> Bool {
            if field.isOptional {
                if value == nil, !statement.isNull(at: i) { return false }
                p.initializeMemory(as: T?.self, repeating: value, count: 1)
                return true
            }
            guard let value else { return false }
            p.initializeMemory(as: T.self, repeating: value, count: 1)
            return true
        }
        switch field.kind {
        case .string:
            return put(statement.string(at: i))
        case .int:
            return put(statement.isNull(at: i) ? nil : Int(statement.int64(at: i)))
        case .int64:
            return put(statement.isNull(at: i) ? nil : statement.int64(at: i))
        case .double:
            return put(statement.isNull(at: i) ? nil : statement.double(at: i))
        case .bool:
            return put(statement.isNull(at: i) ? nil : statement.int64(at: i) != 0)
        case .date:
            return put(
                statement.isNull(at: i) ? nil : Date(timeIntervalSince1970: statement.double(at: i))
            )
        case .uuid:
            return put(statement.string(at: i).flatMap(UUID.init(uuidString:)))
        case .strings:
            return put(statement.bytes(at: i).flatMap(JSONStringArray.strings))
        case .floats(let dimension):
            return put(
                statement.bytes(at: i).flatMap { VectorBlob.vector($0, dimension: dimension) })
        }
    }

    private func destroy(_ field: Field, at p: UnsafeMutableRawPointer) {
        func drop<T>(_: T.Type) {
            if field.isOptional {
                p.assumingMemoryBound(to: T?.self).deinitialize(count: 1)
            } else {
                p.assumingMemoryBound(to: T.self).deinitialize(count: 1)
            }
        }
        switch field.kind {
        case .string: drop(String.self)
        case .strings: drop([String].self)
        case .floats: drop([Float].self)
        case .int, .int64, .double, .bool, .date, .uuid: break
        }
    }
}
