import Foundation

/// The property names a key path goes through (`\Note.address?.city` -> `["address", "city"]`),
/// read from the key path's printed form, which this toolchain writes as `\Root.a.b` (optional
/// chaining as `?`, computed properties and subscripts as `<computed ...>`).
///
/// Printing a key path demangles names, so every result is cached: translation of a predicate
/// or a sort looks its key paths up here and stays fast.
enum KeyPathNames {
    private static let cache = KeyPathNameCache()

    /// The stored-property names of `keyPath` from its root.
    ///
    /// - Throws: ``TroveError/unsupportedPredicate(node:reason:)`` for computed properties,
    ///   subscripts and other components that are not stored properties.
    static func components(_ keyPath: AnyKeyPath) throws -> [String] {
        if let known = cache[keyPath] { return try known.get() }
        let result = Result { try parse(keyPath) }
        cache[keyPath] = result
        return try result.get()
    }

    private static func parse(_ keyPath: AnyKeyPath) throws -> [String] {
        let printed = String(describing: keyPath)
        let root = String(describing: type(of: keyPath).rootType)
        let prefix = "\\" + root
        guard printed.hasPrefix(prefix) else {
            throw TroveError.unsupportedPredicate(
                node: printed, reason: "a key path Trove cannot read")
        }
        var rest = printed.dropFirst(prefix.count)
        if rest.isEmpty { return [] }  // \Root.self
        guard rest.first == "." else {
            throw TroveError.unsupportedPredicate(
                node: printed, reason: "a key path Trove cannot read")
        }
        rest = rest.dropFirst()
        var names: [String] = []
        // `@Observable` makes a reference model's properties computed: the probe names them.
        if rest.hasPrefix("<computed"), let (name, tail) = referenceProperty(keyPath, printed: rest)
        {
            names.append(name)
            if tail.isEmpty { return names }
            rest = tail.dropFirst()
        }
        for raw in rest.split(separator: ".", omittingEmptySubsequences: false) {
            var name = Substring(raw)
            while let last = name.last, last == "?" || last == "!" { name = name.dropLast() }
            guard let first = name.first, first.isLetter || first == "_",
                name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" })
            else {
                throw TroveError.unsupportedPredicate(
                    node: printed,
                    reason:
                        "'\(raw)' is not a stored property (computed properties and subscripts have no column)"
                )
            }
            names.append(String(name))
        }
        return names
    }
}

extension KeyPathNames {
    /// The property a reference model key path's first component names (read on the type's
    /// probes, ``ReferenceLayout``), and what is printed after that component.
    fileprivate static func referenceProperty(_ keyPath: AnyKeyPath, printed: Substring) -> (
        String, Substring
    )? {
        guard let root = type(of: keyPath).rootType as? any _ReferenceModel.Type else { return nil }
        func name<R: _ReferenceModel>(_ type: R.Type) -> String? {
            try? ReferenceLayout<R>.shared().name(of: keyPath)
        }
        guard let found = name(root) else { return nil }
        // The component ends at the `>` that closes `<computed`; its printed type may nest `<>`.
        var depth = 0
        for index in printed.indices {
            if printed[index] == "<" { depth += 1 }
            if printed[index] == ">" {
                depth -= 1
                if depth == 0 { return (found, printed[printed.index(after: index)...]) }
            }
        }
        return nil
    }
}

/// A lock-protected dictionary of parsed key paths.
///
/// `@unchecked Sendable`: every access to `storage` holds `lock`; key paths are immutable
/// objects that can be shared between threads.
private final class KeyPathNameCache: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: [AnyKeyPath: Result<[String], any Error>] = [:]

    subscript(keyPath: AnyKeyPath) -> Result<[String], any Error>? {
        get { lock.withLock { storage[keyPath] } }
        set { lock.withLock { storage[keyPath] = newValue } }
    }
}
