import Foundation

/// What Trove stores as one row of a document collection, its fields derived from its Codable
/// shape (no macros): a value ``Model`` (a struct, read and written through a
/// ``ModelCollection``) or a `@Model` class (``Model()``, managed by a ``ModelContext``).
/// Versioned schemas list either kind (``VersionedSchema/models``).
public protocol PersistentModel: Codable, SendableMetatype {
    /// The identifier type: `Int64`, `UUID` or `String`.
    associatedtype ID: ModelID
    /// The model's identity; it is the collection's `id`, not a field.
    var id: ID { get }
    /// The document collection the models live in; by default the type's name (`Note` -> `Note`).
    static var collectionName: String { get }
    /// Declared extras: indexes, unique fields, full-text and vector fields, embedding, renames.
    static var modelOptions: ModelOptions { get }
}

extension PersistentModel {
    public static var collectionName: String { String(describing: Self.self) }
    public static var modelOptions: ModelOptions { ModelOptions() }

    /// Every option of the type: for a `@Model` class, what its declaration says
    /// (`_$modelOptions`) and then its own ``modelOptions``.
    static var declaredOptions: ModelOptions {
        guard let model = Self.self as? any _ReferenceModel.Type else { return modelOptions }
        return model._$modelOptions.merged(with: modelOptions)
    }
}

/// A Codable value type stored as one row of a document collection, its fields derived from
/// its Codable shape (no macros): optionals, enums, `Date`, `Data`, `URL`, `Decimal`, `UUID`,
/// arrays and nested Codable values (stored as JSON, queryable by path).
///
/// ```swift
/// struct Note: Model {
///     var id: Int64
///     var title: String
///     var body: String
///     var tags: [String]
///     var due: Date?
///
///     static var modelOptions: ModelOptions {
///         ModelOptions().indexed(\Note.due).fullText(\Note.title, weight: 2).fullText(\Note.body)
///     }
/// }
/// let notes = try await database.models(Note.self)
/// try await notes.insert(Note(id: 1, title: "Dentist", body: "Tuesday 9:00", tags: ["health"], due: nil))
/// let soon = try await notes.fetch(FetchDescriptor(predicate: #Predicate { $0.tags.contains("health") }))
/// ```
///
/// Properties are matched to key paths by name, so a type's `CodingKeys`, when written out,
/// keep each property's name as its string value (store a property under another column name
/// with ``ModelOptions/column(_:named:)``).
public protocol Model: PersistentModel, Sendable {}

/// A type that can identify a model: `Int64`, `UUID` or `String`.
public protocol ModelID: Codable, Hashable, Sendable {
    /// The kind of id column this type needs.
    static var idKind: IDKind { get }
    /// The id as the document id.
    var documentID: DocumentID { get }
    /// The id read back from a document id.
    init?(documentID: DocumentID)
}

extension ModelID {
    /// The id that leaves the choice to Trove: a model inserted (or saved) with it gets a new id
    /// in the write, and the insert returns it.
    ///
    /// `UUID` and `String` ids get a time-ordered UUIDv7 (RFC 9562; as lowercase text for
    /// `String`), unique across devices and sorting by creation time; `Int64` ids get what
    /// SQLite assigns a new rowid (one above the largest). The value itself is `0`, the nil
    /// UUID or `""`, none of which Trove ever generates.
    ///
    /// ```swift
    /// struct Note: Model {
    ///     var id: UUID = .unassigned
    ///     var title: String
    /// }
    /// let id = try await notes.insert(Note(title: "Dentist"))  // 019ad6c4-...
    /// ```
    public static var unassigned: Self {
        guard let id = Self(documentID: .unassigned(idKind)) else {
            preconditionFailure("\(Self.self) does not read back its unassigned document id")
        }
        return id
    }

    /// Whether this is ``unassigned``, an id left to Trove.
    var isUnassigned: Bool { documentID.isUnassigned }
}

extension Int64: ModelID {
    public static var idKind: IDKind { .int64 }
    public var documentID: DocumentID { .int(self) }
    public init?(documentID: DocumentID) {
        guard case .int(let v) = documentID else { return nil }
        self = v
    }
}

extension UUID: ModelID {
    public static var idKind: IDKind { .uuid }
    public var documentID: DocumentID { .uuid(self) }
    public init?(documentID: DocumentID) {
        guard case .uuid(let v) = documentID else { return nil }
        self = v
    }
}

extension String: ModelID {
    public static var idKind: IDKind { .string }
    public var documentID: DocumentID { .string(self) }
    public init?(documentID: DocumentID) {
        guard case .string(let v) = documentID else { return nil }
        self = v
    }
}
