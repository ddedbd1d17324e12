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
    names: named(_$observationRegistrar), named(access), named(withMutation), named(id), named(CodingKeys),
    named(init(from:)), named(encode(to:)), named(properties), named(modelOptions)
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
public macro _PersistedProperty() = #externalMacro(module: "TroveMacros", type: "PersistedPropertyMacro")

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
public macro Attribute(_ options: AttributeOption..., originalName: String? = nil, hashModifier: String? = nil) =
    #externalMacro(module: "TroveMacros", type: "MarkerMacro")

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
public macro Index<T>(_ indices: [PartialKeyPath<T>]...) = #externalMacro(module: "TroveMacros", type: "SchemaListMacro")

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
public macro Unique<T>(_ constraints: [PartialKeyPath<T>]...) = #externalMacro(module: "TroveMacros", type: "SchemaListMacro")

/// An option of ``Attribute(_:originalName:hashModifier:)``, as SwiftData's
/// `Schema.Attribute.Option`.
public struct AttributeOption: Hashable, Sendable {
    let name: String

    /// No two models of the type hold the same value (a unique index).
    public static let unique = AttributeOption(name: "unique")
    /// SwiftData's hint to keep a large value beside the row; Trove stores it in its column.
    public static let externalStorage = AttributeOption(name: "externalStorage")
    /// SwiftData's CloudKit and Spotlight options: accepted so models compile; they change nothing.
    public static let allowsCloudEncryption = AttributeOption(name: "allowsCloudEncryption")
    public static let spotlight = AttributeOption(name: "spotlight")
    public static let preserveValueOnDeletion = AttributeOption(name: "preserveValueOnDeletion")
    public static let ephemeral = AttributeOption(name: "ephemeral")
}
