import Foundation

/// What ``Model()`` makes of a final class: one instance per row in a ``ModelContext``, changed
/// in place and saved by the context (the SwiftData shape). The macro writes the conformance;
/// generic code names ``PersistentModel``, as SwiftData's does.
///
/// Value models (``Model``) keep working beside them; pick a `@Model` class when UI code edits
/// models in place and saves them together, a value model for services and batch work.
public protocol _ReferenceModel: PersistentModel, AnyObject {
    /// The model's identity. Settable so that an id left to Trove (``ModelID/unassigned``, for
    /// `UUID` and `String` ids) is given its time-ordered value when a context inserts the model.
    var id: ID { get set }

    /// The key path of ``id`` as the class declares it (`\Note.id`). The macro's `id` has a
    /// `didSet`, so its key path is not the stored property's that generic code would spell
    /// (`\M.id`, through the protocol); predicates and sorts name it through this one.
    static var _$idKeyPath: ReferenceWritableKeyPath<Self, ID> { get }

    /// Every stored property except `id` and to-many relationships marked `@Relationship`, by
    /// name (its column's name before renames), with a reader of its storage, so a context can
    /// read and compare values without the getters and put back saved values through the
    /// setters, which tell observers. (An array of models without `@Relationship` is listed too:
    /// the macro cannot tell it from a column; contexts leave it out.)
    static var _$properties: [_ModelProperty<Self>] { get }

    /// What the macro reads from the declaration (`#Index`, `#Unique`, `@Attribute`,
    /// relationships); a class may add Trove's own (full text, vectors) in ``PersistentModel/modelOptions``.
    static var _$modelOptions: ModelOptions { get }

    /// The to-many relationships, each with its inverse and delete rule.
    static var _$relationships: [_RelationshipMetadata] { get }

    /// The to-one properties declared with `@Relationship`: the inverse each names (an array on
    /// the other side that does not name this side) and its delete rule.
    static var _$toOneRelationships: [_ToOneRelationship] { get }

    /// Tells Observation that every stored property is read (what an autosave watches), without
    /// the getters: a relationship is not resolved for it.
    func _$accessProperties()

    /// The model's context and the relationships it has not resolved yet.
    var _$backing: _ModelBacking { get }

    /// The model in the row a context's fetch is on, each property read straight from its
    /// column: the typed twin of `init(from:)`, reading the same values.
    init(_$row row: _ModelRowReader) throws

    /// Writes each stored property into its slot of a save's row: the typed twin of
    /// `encode(to:)`, writing the same values.
    func _$write(to row: inout _ModelRowWriter) throws

    /// Appends what a tracked model's snapshot holds: each property in ``_$properties`` order
    /// (a to-one relationship's as the other model's id), then the id.
    func _$snapshot(into values: inout [Any])

    /// The positions in ``_$properties`` whose values are not bit for bit those of `saved` (a
    /// snapshot ``_$snapshot(into:)`` took): the candidates for a change.
    func _$differing(from saved: UnsafePointer<Any>) -> [Int]
}

extension _ReferenceModel {
    /// The context the model was inserted into or fetched by, as SwiftData's
    /// `PersistentModel.modelContext`; nil for a model not inserted yet, and once nobody holds
    /// the context any more (the model still reads its relationships then, and nothing tracks
    /// its changes: they went with the context).
    public var modelContext: ModelContext? { _$backing.context }

    /// A class that declares a plain stored `id` (not through the macro): the protocol's.
    public static var _$idKeyPath: ReferenceWritableKeyPath<Self, ID> { \Self.id }

    /// None: a class without `@Relationship` on a to-one property.
    public static var _$toOneRelationships: [_ToOneRelationship] { [] }
}
