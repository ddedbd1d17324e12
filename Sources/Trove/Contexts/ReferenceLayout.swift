@_spi(Reflection) import Swift
import Foundation
import Observation

/// What the contexts need to know about a reference model type beyond its ``ModelSchema``:
/// which property each of its key paths names, and a writable key path per stored property.
///
/// `@unchecked Sendable`: `names` is only touched while holding `lock`, and so are the probes
/// (read-only instances only this type can reach); `writable` and `accesses` are set once in
/// `init`, and key paths and the accesses' closures are immutable.
final class ReferenceLayout<M: _ReferenceModel>: @unchecked Sendable {
    private let lock = NSLock()
    private let probes: [(instance: M, handed: [String: String?], types: [String: String])]
    private var names: [AnyKeyPath: String] = [:]
    /// Property name -> its key path from ``_ReferenceModel/properties``.
    let writable: [String: PartialKeyPath<M>]
    /// Property name -> how to read, compare, write and encode it.
    let accesses: [String: PropertyAccess]
    /// How to read and compare `id` (a save checks every tracked model's id is the one it is
    /// tracked under).
    let idAccess: PropertyAccess
    /// The properties a fetch leaves out (``LazyField``).
    let lazy: Set<String>
    /// The bytes from an instance's start to the end of its last stored field: what a save
    /// reads of each tracked model (asked for ahead of its visit).
    let instanceExtent: Int

    /// The layout of `M`, derived on first use and cached for the life of the process.
    static func shared() throws -> ReferenceLayout<M> {
        try ReferenceLayoutCache.shared.layout(for: M.self) { try ReferenceLayout<M>() }
    }

    private init() throws {
        let typeName = String(describing: M.self)
        var probes: [(instance: M, handed: [String: String?], types: [String: String])] = []
        var round = 0
        var lazy: Set<String> = []
        repeat {
            let probe = ModelProbe(.unique(round: round))
            do {
                probes.append((try M(from: probe), probe.handed, probe.types))
                lazy = probe.lazy
            } catch {
                throw TroveError.invalidModel(type: typeName, reason: "its init(from:) fails on probe values (\(error))")
            }
            round += 1
        } while probes[0].handed.values.count(where: { $0 == "true" || $0 == "false" }) >> round > 0
        self.probes = probes
        var writable: [String: PartialKeyPath<M>] = [:]
        var names: [AnyKeyPath: String] = [:]
        for keyPath in M.properties {
            guard let name = Self.name(of: keyPath, probes: probes) else {
                throw TroveError.invalidModel(type: typeName, reason: "properties lists \(keyPath), which is not one stored property")
            }
            writable[name] = keyPath
            names[keyPath] = name
        }
        for name in probes[0].handed.keys where name != "id" && writable[name] == nil {
            throw TroveError.invalidModel(
                type: typeName, reason: "properties does not list \(name) (a context puts saved values back through it)")
        }
        self.writable = writable
        let fields = Self.storedFields()
        func size<T>(_: T.Type) -> Int { MemoryLayout<T>.size }
        instanceExtent = fields.values.map { $0.offset + _openExistential($0.type, do: size) }.max() ?? 64
        func access(_ name: String, _ keyPath: PartialKeyPath<M>) -> PropertyAccess {
            let access = PropertyAccess(name: name, keyPath: keyPath, offset: Self.storage(of: name, keyPath, in: fields))
            // The storage must read as the property does (a stored field that is not its
            // backing would not): checked on every probe, else the key path is used.
            if probes.allSatisfy({ "\(access.read($0.instance))" == "\($0.instance[keyPath: keyPath])" }) { return access }
            return PropertyAccess(name: name, keyPath: keyPath, offset: nil)
        }
        self.accesses = writable.reduce(into: [:]) { accesses, property in accesses[property.key] = access(property.key, property.value) }
        self.idAccess = access("id", \M.id)
        self.names = names
        self.lazy = lazy
    }

    /// `M`'s stored fields (its own, not a superclass's) by name: offset from the start of an
    /// instance, and type. Empty when the runtime cannot list them.
    private static func storedFields() -> [String: (offset: Int, type: Any.Type)] {
        var fields: [String: (offset: Int, type: Any.Type)] = [:]
        // `.classType`, spelled by value: the standard library declares it a mutable static.
        let listed = _forEachField(of: M.self, options: _EachFieldOptions(rawValue: 1 << 0)) { name, offset, type, _ in
            fields[String(cString: name)] = (offset, type)
            return true
        }
        return listed ? fields : [:]
    }

    /// Where property `name` is stored: its own stored field, or the `_name` field
    /// `@Observable` keeps behind it, when that field has the property's type.
    private static func storage(of name: String, _ keyPath: PartialKeyPath<M>, in fields: [String: (offset: Int, type: Any.Type)]) -> Int? {
        let valueType = ObjectIdentifier(type(of: keyPath).valueType)
        for candidate in M.self is any Observable.Type ? [name, "_" + name] : [name] {
            if let field = fields[candidate], ObjectIdentifier(field.type) == valueType { return field.offset }
        }
        return nil
    }

    /// The property `keyPath` names (a key path of `M` whose first component is a property),
    /// or nil when it names none.
    func name(of keyPath: AnyKeyPath) -> String? {
        lock.withLock {
            if let known = names[keyPath] { return known }
            let found = Self.name(of: keyPath, probes: probes)
            if let found { names[keyPath] = found }
            return found
        }
    }

    private static func name(of keyPath: AnyKeyPath, probes: [(instance: M, handed: [String: String?], types: [String: String])]) -> String? {
        let read = probes.map { probe in (probe.instance as Any)[keyPath: keyPath].flatMap(unwrapped).map { String(describing: $0) } }
        let byValue = probes[0].handed.keys.filter { name in
            probes.indices.allSatisfy { i in probes[i].handed[name].flatMap { $0 } != nil && probes[i].handed[name]! == read[i] }
        }
        if byValue.count == 1 { return byValue[0] }
        // Values that cannot be unique (enums, nested values): the only property of that type.
        var valueType = String(describing: type(of: keyPath).valueType)
        if valueType.hasPrefix("Optional<"), valueType.hasSuffix(">") { valueType = String(valueType.dropFirst(9).dropLast()) }
        let byType = probes[0].types.filter { $0.value == valueType }.map(\.key)
        return byType.count == 1 ? byType[0] : nil
    }

    /// Copies every stored property from `source` into `target` through its setter.
    func copy(from source: M, to target: M) {
        for access in accesses.values { access.write(target, access.read(source)) }
    }
}

private func unwrapped(_ value: Any) -> Any? {
    let mirror = Mirror(reflecting: value)
    guard mirror.displayStyle == .optional else { return value }
    return mirror.children.first.flatMap { unwrapped($0.value) }
}

/// The layouts of every reference model type used in the process, by type.
///
/// `@unchecked Sendable`: `storage` is only touched while holding `lock`.
final class ReferenceLayoutCache: @unchecked Sendable {
    static let shared = ReferenceLayoutCache()
    private let lock = NSLock()
    private var storage: [ObjectIdentifier: AnyObject] = [:]

    func layout<M: _ReferenceModel>(for type: M.Type, derive: () throws -> ReferenceLayout<M>) throws -> ReferenceLayout<M> {
        if let known = lock.withLock({ storage[ObjectIdentifier(type)] }) as? ReferenceLayout<M> { return known }
        let layout = try derive()
        lock.withLock { storage[ObjectIdentifier(type)] = layout }
        return layout
    }
}
