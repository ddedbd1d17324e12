import Foundation

/// A model's identity across contexts, as SwiftData's `PersistentIdentifier`: its collection
/// (entity) and its id. Pass it between actors (models themselves stay in their context) and
/// look the model up there.
///
/// ```swift
/// let id = post.persistentModelID
/// let same: Post? = otherContext.registeredModel(for: id)
/// let ids = try context.fetchIdentifiers(FetchDescriptor<Post>())
/// ```
public struct PersistentIdentifier: Hashable, Codable, Sendable, CustomStringConvertible {
    /// The model's collection (``PersistentModel/collectionName``).
    public let entityName: String
    /// The model's id.
    public let id: DocumentID

    init(entityName: String, id: DocumentID) {
        self.entityName = entityName
        self.id = id
    }

    /// "Collection/id".
    public var description: String { "\(entityName)/\(id)" }

    private enum CodingKeys: String, CodingKey { case entityName, int, string, uuid }

    /// Decodes an identifier written by ``encode(to:)``.
    ///
    /// - Parameter decoder: the decoder.
    /// - Throws: `DecodingError` when no id is present.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        entityName = try container.decode(String.self, forKey: .entityName)
        if let value = try container.decodeIfPresent(Int64.self, forKey: .int) {
            id = .int(value)
        } else if let value = try container.decodeIfPresent(UUID.self, forKey: .uuid) {
            id = .uuid(value)
        } else {
            id = .string(try container.decode(String.self, forKey: .string))
        }
    }

    /// Encodes the collection and the id (keyed by its kind: `int`, `string` or `uuid`).
    ///
    /// - Parameter encoder: the encoder.
    /// - Throws: the encoder's errors.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(entityName, forKey: .entityName)
        switch id {
        case .int(let value): try container.encode(value, forKey: .int)
        case .string(let value): try container.encode(value, forKey: .string)
        case .uuid(let value): try container.encode(value, forKey: .uuid)
        }
    }
}

extension PersistentModel {
    /// The model's identity across contexts.
    ///
    /// ```swift
    /// let id = post.persistentModelID   // Post/1
    /// ```
    public var persistentModelID: PersistentIdentifier {
        PersistentIdentifier(entityName: Self.collectionName, id: id.documentID)
    }
}
