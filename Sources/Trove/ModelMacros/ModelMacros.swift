import Foundation
import Observation

/// Makes a final class a persistent model, as SwiftData's `@Model` does: each stored property
/// becomes a column, observed as with `@Observable` (SwiftUI redraws when it changes), and the
/// class gets its row coding, its property list and its declared options written out at compile
/// time. A class that declares no `id` gets one: a time-ordered UUID (v7) given when a context
/// inserts the model, unique across devices so that it syncs.
///
/// ```swift
/// @Model final class Trip {
///     @Attribute(.unique) var name: String
///     var destination: String
///     var startDate: Date
///     @Transient var isSelected = false
///
///     init(name: String, destination: String, startDate: Date) {
///         self.name = name
///         self.destination = destination
///         self.startDate = startDate
///     }
/// }
/// ```
///
/// What cannot be stored is a compile-time error with the reason (and a fix-it where one is
/// obvious): a class that is not final, a stored property without a type annotation, a `let`,
/// a `lazy` property, observers, function or tuple types, an `id` that is not `UUID`, `Int64` or
/// `String`, a `@Transient` property without a default value.
@attached(
    member,
    names: named(_$observationRegistrar), named(access), named(withMutation), named(_$backing),
    named(id), named(_$idKeyPath),
    named(CodingKeys), named(init(from:)), named(encode(to:)), named(_$properties),
    named(_$modelOptions),
    named(_$accessProperties),
    named(_$relationships),
    named(_$toOneRelationships),
    named(init(_$row:)), named(_$write(to:)), named(_$snapshot(into:)), named(_$differing(from:))
)
@attached(memberAttribute)
@attached(extension, conformances: _ReferenceModel, Observable)
public macro Model() = #externalMacro(module: "TroveMacros", type: "ModelMacro")

/// Names the code ``Model()`` writes uses, so that a model file that imports only Trove compiles
/// (SwiftData's models import only SwiftData).
public typealias _ObservationRegistrar = Observation.ObservationRegistrar
public typealias _Observable = Observation.Observable
public typealias _ModelUUID = Foundation.UUID

/// Added by ``Model()`` to each stored property: observed storage. Not written by hand.
@attached(accessor, names: named(init), named(get), named(set))
@attached(peer, names: prefixed(_))
public macro _PersistedProperty() =
    #externalMacro(module: "TroveMacros", type: "PersistedPropertyMacro")

/// Added by ``Model()`` to a to-many relationship: observed storage that loads the children on
/// first access and keeps their references in step. Not written by hand.
@attached(accessor, names: named(init), named(get), named(set))
@attached(peer, names: prefixed(_))
public macro _PersistedProperty(inverse: AnyKeyPath) =
    #externalMacro(module: "TroveMacros", type: "PersistedPropertyMacro")

/// Added by ``Model()`` to an `@Attribute(.externalStorage)` property: observed storage that a
/// fetch leaves out and the first access reads. Not written by hand.
@attached(accessor, names: named(init), named(get), named(set))
@attached(peer, names: prefixed(_))
public macro _PersistedProperty(externalStorage: Bool) =
    #externalMacro(module: "TroveMacros", type: "PersistedPropertyMacro")

/// Added by ``Model()`` to a declared `id`: it stays stored, and a change tells the model's
/// context (whose save refuses it). Not written by hand.
@attached(accessor, names: named(didSet))
public macro _PersistedID() = #externalMacro(module: "TroveMacros", type: "PersistedIDMacro")

/// How a property of a ``Model()`` class is stored, as SwiftData's `@Attribute`.
///
/// ```swift
/// @Attribute(.unique) var email: String
/// @Attribute(originalName: "body") var text: String
/// ```
/// - Parameters:
///   - options: `.unique` (no two models share the value; see ``ModelOptions/unique(_:)``).
///     SwiftData's other options are accepted where they mean nothing on device.
///   - originalName: the property's name in the previous schema version, so a lightweight
///     migration renames the column instead of dropping it.
///   - hashModifier: accepted for SwiftData's sake; it changes nothing.
@attached(peer)
public macro Attribute(
    _ options: AttributeOption..., originalName: String? = nil, hashModifier: String? = nil
) =
    #externalMacro(module: "TroveMacros", type: "MarkerMacro")

/// A relationship between ``Model()`` classes, as SwiftData's `@Relationship`. A to-one
/// relationship (`var category: Category?`) needs no attribute; a to-many one (`var animals:
/// [Animal]`) names its inverse, the to-one property on the other side, and says what deleting
/// this model does to the others. Either side may name the inverse: with
/// `@Relationship(inverse: \AnimalCategory.animals) var category: AnimalCategory?` on the child,
/// the array needs no attribute (or one for its delete rule only).
///
/// ```swift
/// @Model final class Category {
///     var name: String
///     @Relationship(deleteRule: .cascade, inverse: \Animal.category) var animals: [Animal] = []
/// }
/// @Model final class Animal {
///     var name: String
///     var category: Category?
/// }
/// ```
///
/// A to-one relationship is stored as the other model's id (a foreign key, indexed); a to-many
/// one is the models whose to-one property names this one, read on first access. A many-to-many
/// one (an array on both sides) is stored as links in the file's edge table, one per pair.
/// Setting either side keeps the other in step in memory. A delete rule on a to-one property
/// (`@Relationship(deleteRule: .cascade) var engine: Engine?`) is what deleting this model does
/// to the model it names, applied by the context: cascade deletes it too, deny refuses the
/// delete while there is one.
///
/// - Parameters:
///   - options: SwiftData's options; accepted, they change nothing here.
///   - deleteRule: what deleting this model does to the models of the relationship
///     (``RelationshipDeleteRule``, `.nullify` by default).
///   - minimumModelCount: accepted for SwiftData's sake.
///   - maximumModelCount: accepted for SwiftData's sake.
///   - originalName: accepted for SwiftData's sake.
///   - inverse: the property on the other side: a to-one property, or for a many-to-many
///     relationship (links in the file's edge table) the other side's array, which names none
///     (naming it on both sides is circular) and needs no attribute; or, on a to-one property,
///     the array on the other side that names none. Arrays whose inverse neither side names
///     make opening the container throw ``TroveError/invalidModel(type:reason:)``.
///   - hashModifier: accepted for SwiftData's sake.
@attached(peer)
public macro Relationship(
    _ options: RelationshipOption..., deleteRule: RelationshipDeleteRule = .nullify,
    minimumModelCount: Int? = 0,
    maximumModelCount: Int? = 0, originalName: String? = nil, inverse: AnyKeyPath? = nil,
    hashModifier: String? = nil
) = #externalMacro(module: "TroveMacros", type: "MarkerMacro")

/// What deleting a model does to the models of one of its relationships, as SwiftData's
/// `Schema.Relationship.DeleteRule`.
public enum RelationshipDeleteRule: Hashable, Sendable {
    /// The related models are deleted too.
    case cascade
    /// Deleting is refused while related models exist.
    case deny
    /// The related models' reference becomes nil (SwiftData's default).
    case nullify
    /// Nothing: the related models keep naming a model that is gone.
    case noAction
}

/// An option of ``Relationship(_:deleteRule:minimumModelCount:maximumModelCount:originalName:inverse:hashModifier:)``,
/// as SwiftData's `Schema.Relationship.Option`; accepted so models compile.
public struct RelationshipOption: Hashable, Sendable {
    let name: String
    /// SwiftData's uniqueness option for relationships.
    public static let unique = RelationshipOption(name: "unique")
}

/// A property of a ``Model()`` class that is not stored (kept in memory only), as SwiftData's
/// `@Transient`. It needs a default value: a fetched model starts from it.
@attached(peer)
public macro Transient() = #externalMacro(module: "TroveMacros", type: "MarkerMacro")

/// Indexes on a ``Model()`` class's columns, as SwiftData's `#Index`: each array is one index
/// (several key paths make a compound index).
///
/// ```swift
/// @Model final class Trip {
///     #Index<Trip>([\.name], [\.startDate, \.destination])
///     ...
/// }
/// ```
@freestanding(declaration)
public macro Index<T>(_ indices: [PartialKeyPath<T>]...) =
    #externalMacro(module: "TroveMacros", type: "SchemaListMacro")

/// Uniqueness constraints on a ``Model()`` class's columns, as SwiftData's `#Unique`: each
/// array is one constraint (several key paths: unique together).
///
/// ```swift
/// @Model final class Person {
///     #Unique<Person>([\.givenName, \.familyName])
///     ...
/// }
/// ```
@freestanding(declaration)
public macro Unique<T>(_ constraints: [PartialKeyPath<T>]...) =
    #externalMacro(module: "TroveMacros", type: "SchemaListMacro")

/// An option of ``Attribute(_:originalName:hashModifier:)``, as SwiftData's
/// `Schema.Attribute.Option`.
public struct AttributeOption: Hashable, Sendable {
    let name: String

    /// No two models of the type hold the same value (a unique index).
    public static let unique = AttributeOption(name: "unique")
    /// A large value a context's fetches leave out and read on first access of the property
    /// (for an optional property; a non-optional one is read with its row).
    public static let externalStorage = AttributeOption(name: "externalStorage")
    /// SwiftData's CloudKit and Spotlight options: accepted so models compile; they change nothing.
    public static let allowsCloudEncryption = AttributeOption(name: "allowsCloudEncryption")
    public static let spotlight = AttributeOption(name: "spotlight")
    public static let preserveValueOnDeletion = AttributeOption(name: "preserveValueOnDeletion")
    public static let ephemeral = AttributeOption(name: "ephemeral")
}

/// Makes a value model's rows fast to read and write: fetched rows are written straight into
/// its stored properties and written rows read straight from them, with no Codable containers
/// and no run-time reflection. The macro lists the struct's stored properties; Trove checks once
/// per type that the compiler's `init(from:)` and `encode(to:)` store and write exactly what
/// they are handed (a struct that codes itself is refused when compiled). Without it a value
/// model works the same, through Codable.
///
/// ```swift
/// @MemberwiseCoding
/// struct Note: Model {
///     var id: Int64
///     var title: String
///     var due: Date?
/// }
/// ```
@attached(extension, conformances: _MemberwiseFields, names: named(_$fields))
public macro MemberwiseCoding() =
    #externalMacro(module: "TroveMacros", type: "MemberwiseCodingMacro")

/// A value model whose stored properties ``MemberwiseCoding()`` listed. Written by the macro.
public protocol _MemberwiseFields {
    /// Every stored property, by name and key path.
    static var _$fields: [(name: String, keyPath: PartialKeyPath<Self>)] { get }
}

/// Makes an actor a ``ModelActor``, as SwiftData's `@ModelActor` does: it stores the container
/// and a context of its own, made in `init(modelContainer:)`, for work off the main actor.
///
/// ```swift
/// @ModelActor actor Importer {
///     func importPosts(_ titles: [String]) throws {
///         for title in titles { modelContext.insert(Post(title: title, content: "")) }
///         try modelContext.save()
///     }
/// }
/// try await Importer(modelContainer: container).importPosts(["One", "Two"])
/// ```
@attached(member, names: named(modelContainer), named(modelContext), named(init(modelContainer:)))
@attached(extension, conformances: ModelActor)
public macro ModelActor() = #externalMacro(module: "TroveMacros", type: "ModelActorMacro")
