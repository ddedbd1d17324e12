import Foundation

/// A model that is a class: one instance per row in a ``ModelContext``, changed in place and
/// saved by the context (the SwiftData shape). Declare it `@Observable` so SwiftUI redraws when
/// it changes, spell its `CodingKeys` (Observation stores each property as `_name`), and list
/// its stored properties in ``properties`` (what a macro would generate; Trove has none).
///
/// ```swift
/// @Observable final class Post: _ReferenceModel {
///     var id: Int64
///     var title: String
///     var content: String
///
///     init(id: Int64, title: String, content: String) {
///         self.id = id
///         self.title = title
///         self.content = content
///     }
///
///     enum CodingKeys: String, CodingKey { case _id = "id", _title = "title", _content = "content" }
///     static var properties: [PartialKeyPath<Post>] { [\.title, \.content] }
/// }
/// ```
///
/// Value models (``Model``) keep working as before; pick a reference model when UI code edits
/// models in place and saves them together, a value model for services and batch work.
public protocol _ReferenceModel: PersistentModel, AnyObject {
    /// The model's identity. Settable so that an id left to Trove (``ModelID/unassigned``, for
    /// `UUID` and `String` ids) is given its time-ordered value when a context inserts the model.
    var id: ID { get set }

    /// Every stored property except `id`, as key paths, so a context can put saved values
    /// back (``ModelContext/rollback()``) through the properties' setters, which tell
    /// observers. A stored property missing here makes the container refuse the type
    /// (``TroveError/invalidModel(type:reason:)``).
    static var properties: [PartialKeyPath<Self>] { get }
}
