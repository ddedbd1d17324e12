import Foundation

/// What a ``Model()`` instance keeps beside its properties: its context's store (so
/// relationships resolve on first access) and the references it has read but not resolved.
/// Made by the macro's code; not used directly.
///
/// Not Sendable: it belongs to its model, in the model's isolation.
public final class _ModelBacking {
    /// The store of the context that tracks the model, held strongly so that a model outlives a
    /// context dropped after a fetch and still reads its relationships. The store holds its
    /// models only while its ``ModelContext`` lives (the context lets go of them when it goes,
    /// ``ContextStore/detach()``), so this makes no cycle that outlives the context.
    var store: ContextStore?
    /// The context that tracks the model: nil once the context is gone (the store it leaves
    /// behind reads but tracks nothing, so there is nothing to save through).
    var context: ModelContext? { store?.owner }
    /// To-one relationships read from a row and not resolved yet: the other model's id.
    public var pending = _PendingReferences()
    // The collections start as `init()` makes them (the shared empty storage), not from empty
    // literals, which call the literal initializers: a fetch makes one backing per row.
    /// `@Attribute(.externalStorage)` properties a fetch left out and nobody has read yet.
    var unloaded = Set<String>()
    /// To-many relationships whose children are known (read once, or the model is new).
    var loaded = Set<String>()
    /// Many-to-many relationships: the ids the edge table held as last read or saved (none
    /// for a relationship never read), what a save compares the array with.
    var linked = [String: Set<DocumentID>]()
    /// The table whose list of changed models holds this model (``TrackedModels/changedModels``):
    /// set by the first change after a save, cleared when the table takes its changes as saved,
    /// so a model goes into the list once, and a save visits only the models in it.
    @usableFromInline var changedIn: ObjectIdentifier?
    /// Whether the model was read from a row (else it is new: it has no stored children).
    var isFromRow: Bool { pending.fromRow }

    public init() {}

    /// Tells the model's context that a stored property of `model` (the model this backing
    /// belongs to) changed, so its next save compares it with its snapshot. Called by the
    /// setters ``Model()`` writes (through ``_ModelCoding``), the id's included.
    /// - Parameters:
    ///   - name: the property that changed (nil: none that has a column).
    ///   - oldValue: its value before, as a snapshot holds it.
    @usableFromInline
    func changed<M: _ReferenceModel, V>(_ model: M, name: String?, from oldValue: V) {
        guard changedIn == nil, let store, !store.isDetached,
            let table = try? store.table(M.self)
        else { return }
        table.markChanged(model, name: name, from: oldValue)
    }
}

/// The ids a row names in a model's to-one relationships, by property, until each is resolved
/// through the context. Made by the macro's `init(from:)`.
public struct _PendingReferences {
    var ids = [String: DocumentID]()
    /// Set by decoding: the model comes from a row.
    var fromRow = false

    /// - Parameter fromRow: whether the model is being read from a row.
    public init(fromRow: Bool = false) { self.fromRow = fromRow }
}
