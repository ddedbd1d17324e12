/// One stored property of a `@Model` class, as the macro lists it (`_$properties`): its name
/// (its column's), its key path, and a closure the macro writes that reads the property's
/// storage (`{ $0._title }`), so a context reads and compares values without the getter (no
/// Observation access, no relationship resolved) and without run-time reflection.
public struct _ModelProperty<M: AnyObject> {
    public let name: String
    public let keyPath: PartialKeyPath<M>
    /// `(M) -> V`, for the property's type `V` (``valueType``).
    let storage: Any
    let valueType: Any.Type

    public init<V>(_ name: String, _ keyPath: KeyPath<M, V>, storage: @escaping (M) -> V) {
        self.name = name
        self.keyPath = keyPath
        self.storage = storage
        valueType = V.self
    }

    /// The storage reader, typed.
    func storage<V>(as _: V.Type) -> (M) -> V { storage as! (M) -> V }
}
