import Foundation
import TroveSQLite

/// What happens to the documents that reference a document when it is deleted. Enforced by
/// SQLite (a foreign key), so deletes through raw SQL follow the rule too.
///
/// ```swift
/// .reference("author", to: "authors", onDelete: .cascade)                 // books go with their author
/// .reference("folder", to: "folders", onDelete: .nullify, optional: true) // notes stay, unfiled
/// .reference("book", to: "books", onDelete: .deny)                        // no deleting a lent book
/// ```
public enum DeleteRule: String, Codable, Hashable, Sendable, CustomStringConvertible {
    /// Delete the referencing documents too (`ON DELETE CASCADE`).
    case cascade
    /// Set the referencing field to null (`ON DELETE SET NULL`; the field must be optional).
    case nullify
    /// Refuse a delete that would leave documents referencing a deleted one (`ON DELETE NO
    /// ACTION`, checked at the end of each statement).
    case deny

    public var description: String { rawValue }

    var sql: String {
        switch self {
        case .cascade: "CASCADE"
        case .nullify: "SET NULL"
        // Not RESTRICT: that refuses even a statement that also deletes every referencing
        // document (a subtree of a self reference), and fails as SQLITE_CONSTRAINT_TRIGGER, the
        // code user triggers' RAISE shares; NO ACTION fails as SQLITE_CONSTRAINT_FOREIGNKEY.
        case .deny: "NO ACTION"
        }
    }
}

/// A field's reference to another document collection (or its own): the field holds an id of a
/// document there. Compiled into the table as
/// `REFERENCES "<collection>"("id") ON DELETE CASCADE | SET NULL | NO ACTION`, with an index on
/// the field.
///
/// ```swift
/// let books = try await database.documents("books", schema: DocumentSchema(fields: [
///     .text("title"),
///     .reference("author", to: "authors", onDelete: .cascade),
/// ]))
/// ```
public struct Reference: Hashable, Sendable, Codable {
    /// The referenced document collection. It must exist when the referencing collection is
    /// created, unless it is the collection itself (a self reference).
    public var collection: String
    /// The id kind of the referenced collection (checked against it when the field's collection
    /// is created).
    public var idKind: IDKind
    /// What deleting a referenced document does.
    public var onDelete: DeleteRule

    /// A reference to `collection`, whose ids are of kind `id`.
    public init(_ collection: String, id: IDKind = .int64, onDelete: DeleteRule) {
        self.collection = collection
        self.idKind = id
        self.onDelete = onDelete
    }

    /// The column constraint. Updates of a referenced id keep SQLite's default (NO ACTION): a
    /// referenced document's id cannot change while it is referenced (the API never changes ids).
    var foreignKeyClause: String {
        "REFERENCES \"\(collection)\"(\"id\") ON DELETE \(onDelete.sql)"
    }

    /// The field type that holds ids of this kind.
    var fieldType: FieldType { idKind == .int64 ? .integer : .text }

    /// Checks what can be checked without the file (the target is checked when the collection is
    /// created, see `DocumentStore.validateReferences`).
    func validate(_ field: FieldDefinition) throws {
        try CollectionSchema.validate(name: collection)
        guard field.type == fieldType else {
            throw TroveError.invalidConfiguration(
                "reference field \(field.name) holds \(idKind) ids, so its type must be \(fieldType), not \(field.type)"
            )
        }
        guard onDelete != .nullify || field.isOptional else {
            throw TroveError.invalidConfiguration(
                "reference field \(field.name) is required, so its delete rule cannot be nullify")
        }
        guard field.defaultValue == nil else {
            throw TroveError.invalidConfiguration(
                "reference field \(field.name) cannot have a default")
        }
    }

    /// The stored form of an id held by the field: an integer, a lowercase UUID, a non-empty
    /// string. (UUIDs are compared as text, so they are normalised the way ids are stored.)
    func bind(_ value: Value, field: String) throws -> SQLValue {
        switch (idKind, value) {
        case (.int64, .int(let v)): return .integer(v)
        case (.uuid, .string(let v)):
            guard let uuid = UUID(uuidString: v) else {
                throw TroveError.typeMismatch(
                    field: field, expected: "a UUID of \(collection)", value: value.description)
            }
            return .text(uuid.uuidString.lowercased())
        case (.string, .string(let v)):
            guard !v.isEmpty else {
                throw TroveError.invalidValue(field: field, reason: "an id cannot be empty")
            }
            return .text(v)
        default:
            throw TroveError.typeMismatch(
                field: field, expected: "an \(idKind) id of \(collection)", value: value.description
            )
        }
    }
}

extension FieldDefinition {
    /// A field holding the id of a document in `collection` (a to-one relationship). The field's
    /// type follows the id kind (integer for `.int64`, text for `.uuid` and `.string`); it is
    /// always indexed, so finding the documents that reference a document is an index lookup.
    ///
    /// ```swift
    /// .reference("author", to: "authors", onDelete: .cascade)
    /// .reference("folder", to: "folders", id: .uuid, onDelete: .nullify, optional: true)
    /// ```
    /// - Parameters:
    ///   - name: the field's name.
    ///   - collection: the referenced collection (it must exist first, unless it is this one).
    ///   - id: the referenced collection's id kind.
    ///   - onDelete: what deleting a referenced document does to the documents referencing it.
    ///   - optional: whether the field may be null (required by `.nullify`).
    ///   - unique: at most one document may reference each target (a one-to-one relationship).
    public static func reference(
        _ name: String, to collection: String, id: IDKind = .int64, onDelete: DeleteRule,
        optional: Bool = false, unique: Bool = false
    ) -> FieldDefinition {
        let reference = Reference(collection, id: id, onDelete: onDelete)
        return FieldDefinition(
            name, reference.fieldType, optional: optional, unique: unique, reference: reference)
    }
}

extension DocumentSchema {
    /// The declared reference fields.
    var referenceFields: [FieldDefinition] { fields.filter { $0.reference != nil } }
}
