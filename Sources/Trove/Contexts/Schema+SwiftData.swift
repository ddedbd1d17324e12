import Foundation

/// The model types a ``ModelContainer`` stores, and their version: SwiftData's `Schema`.
///
/// ```swift
/// let schema = Schema([Animal.self, AnimalCategory.self])
/// let container = try ModelContainer(for: schema, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
/// let versioned = Schema(versionedSchema: ZooV2.self)   // version 2.0.0, ZooV2's models
/// ```
public struct Schema: Sendable {
    /// The model types (class models managed by contexts, and value models), in the order given.
    public let models: [any PersistentModel.Type]
    /// The version these models are (``VersionedSchema/versionIdentifier`` when made from one).
    public let version: Version

    /// A schema of these model types.
    ///
    /// - Parameters:
    ///   - types: the model types.
    ///   - version: their version; 1.0.0 by default.
    public init(_ types: [any PersistentModel.Type], version: Version = Version(1, 0, 0)) {
        models = types
        self.version = version
    }

    /// A schema of these model types.
    ///
    /// ```swift
    /// let schema = Schema(Animal.self, AnimalCategory.self)
    /// ```
    /// - Parameters:
    ///   - types: the model types.
    ///   - version: their version; 1.0.0 by default.
    public init(_ types: any PersistentModel.Type..., version: Version = Version(1, 0, 0)) {
        self.init(types, version: version)
    }

    /// The schema of one version of a migration plan: its models and its identifier.
    ///
    /// - Parameter versionedSchema: the version.
    public init(versionedSchema: any VersionedSchema.Type) {
        self.init(versionedSchema.models, version: versionedSchema.versionIdentifier)
    }

    /// A semantic version (major, minor, patch), as SwiftData's `Schema.Version`: what
    /// ``VersionedSchema/versionIdentifier`` is, and the name a migration plan's timeline records
    /// for each version (its ``description``, "2.1.0").
    ///
    /// ```swift
    /// enum ZooV2: VersionedSchema {
    ///     static let versionIdentifier = Schema.Version(2, 0, 0)
    ///     static let models: [any PersistentModel.Type] = [Animal.self]
    /// }
    /// ```
    public struct Version: Hashable, Comparable, Codable, Sendable, CustomStringConvertible {
        /// Incompatible changes.
        public var major: Int
        /// Compatible additions.
        public var minor: Int
        /// Fixes.
        public var patch: Int

        /// A version.
        ///
        /// - Parameters:
        ///   - major: the major number.
        ///   - minor: the minor number.
        ///   - patch: the patch number.
        public init(_ major: Int, _ minor: Int, _ patch: Int) {
            (self.major, self.minor, self.patch) = (major, minor, patch)
        }

        /// "major.minor.patch".
        public var description: String { "\(major).\(minor).\(patch)" }

        /// Orders by major, then minor, then patch.
        ///
        /// - Parameters:
        ///   - a: a version.
        ///   - b: another.
        /// - Returns: whether `a` comes before `b`.
        public static func < (a: Version, b: Version) -> Bool {
            (a.major, a.minor, a.patch) < (b.major, b.minor, b.patch)
        }

        /// Reads "2", "v2", "2.1" or "2.1.0" (string version identifiers of earlier Trove
        /// releases, as their files' timelines recorded them); nil for anything else.
        init?(parsing text: String) {
            var body = Substring(text)
            if body.first == "v" || body.first == "V" { body = body.dropFirst() }
            let parts = body.split(separator: ".", omittingEmptySubsequences: false)
            guard (1...3).contains(parts.count) else { return nil }
            var numbers: [Int] = []
            for part in parts {
                guard let number = Int(part), number >= 0, part.allSatisfy(\.isASCII) else {
                    return nil
                }
                numbers.append(number)
            }
            while numbers.count < 3 { numbers.append(0) }
            self.init(numbers[0], numbers[1], numbers[2])
        }
    }
}

/// Where a ``ModelContainer`` keeps its models: SwiftData's `ModelConfiguration`.
///
/// ```swift
/// let onDisk = ModelConfiguration(schema: Schema([Trip.self]), url: URL(filePath: "/tmp/trips.store"))
/// let inMemory = ModelConfiguration(isStoredInMemoryOnly: true)
/// ```
public struct ModelConfiguration: Sendable, Hashable {
    /// The configuration's name (SwiftData names stores by it; the default store is "default").
    public let name: String
    /// The models this configuration stores, or nil for the container's schema.
    public let schema: Schema?
    /// The database file. For ``isStoredInMemoryOnly`` a temporary file (see there).
    public let url: URL
    /// Whether nothing outlives the container.
    ///
    /// Each context reads and writes on a connection of its own, and a private in-memory
    /// SQLite database is reachable from one connection only; so the models live in a
    /// temporary file, made when the container opens and removed (with its WAL) when the
    /// container goes.
    public let isStoredInMemoryOnly: Bool

    /// A configuration whose models live in memory only, or in the default store ("default.store"
    /// in the application-support folder).
    ///
    /// - Parameters:
    ///   - name: the configuration's name; nil for "default".
    ///   - schema: the models it stores; nil for the container's schema.
    ///   - isStoredInMemoryOnly: whether nothing outlives the container.
    public init(_ name: String? = nil, schema: Schema? = nil, isStoredInMemoryOnly: Bool = false) {
        let name = name ?? "default"
        self.name = name
        self.schema = schema
        self.isStoredInMemoryOnly = isStoredInMemoryOnly
        url =
            isStoredInMemoryOnly
            ? FileManager.default.temporaryDirectory.appendingPathComponent(
                "trove-memory-\(UUID().uuidString).store")
            : Self.defaultDirectory.appendingPathComponent("\(name).store")
    }

    /// A configuration whose models live in the file at `url`.
    ///
    /// - Parameters:
    ///   - name: the configuration's name; nil for "default".
    ///   - schema: the models it stores; nil for the container's schema.
    ///   - url: the database file (created when missing).
    public init(_ name: String? = nil, schema: Schema? = nil, url: URL) {
        self.name = name ?? "default"
        self.schema = schema
        self.url = url
        isStoredInMemoryOnly = false
    }

    /// The application-support folder, where SwiftData keeps its default store.
    static var defaultDirectory: URL {
        FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first
            ?? FileManager.default.temporaryDirectory
    }

    /// Same name, location and memory-only flag.
    public static func == (a: ModelConfiguration, b: ModelConfiguration) -> Bool {
        (a.name, a.url, a.isStoredInMemoryOnly) == (b.name, b.url, b.isStoredInMemoryOnly)
    }

    /// Hashes the name, location and memory-only flag.
    ///
    /// - Parameter hasher: the hasher.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(url)
        hasher.combine(isStoredInMemoryOnly)
    }
}
