import Foundation

/// One tracked model: the instance (of its table's type), a snapshot of its stored properties
/// (schema order) as read or last saved, sharing storage with the model's own (nil for a model
/// inserted since the last save), and the row version it was at.
final class TrackedEntry {
    let object: AnyObject
    var saved: Snapshot? {
        didSet { savedAddress = Self.address(of: saved) }
    }
    var version: Int64
    var isDeleted = false
    /// False once the entry is out of its identity map.
    var isTracked = true
    /// Where the instance and the snapshot's storage are, for a save to ask for them ahead of
    /// its visit (a hint only: never read through).
    let objectAddress: UnsafeRawPointer
    private(set) var savedAddress: UnsafeRawPointer?

    init(object: AnyObject, saved: Snapshot?, version: Int64) {
        self.object = object
        self.saved = saved
        self.version = version
        objectAddress = UnsafeRawPointer(Unmanaged.passUnretained(object).toOpaque())
        savedAddress = Self.address(of: saved)
    }

    /// Where a snapshot's values are.
    private static func address(of saved: Snapshot?) -> UnsafeRawPointer? {
        saved?.withUnsafeBufferPointer { $0.baseAddress.map { UnsafeRawPointer($0) } }
    }
}

/// A tracked model's stored property values (schema order, then the id) as read or last saved:
/// a slice of an array a fetch fills for a few hundred models at once, so a fetch makes one
/// allocation per group of models, not one per model (a group's array is freed when all its
/// models' snapshots are replaced or gone).
struct Snapshot {
    private var values: ArraySlice<Any>

    init(_ values: ArraySlice<Any>) { self.values = values }

    /// The value of property `slot`.
    subscript(slot slot: Int) -> Any {
        get { values[values.startIndex + slot] }
        set { values[values.startIndex + slot] = newValue }
    }

    func withUnsafeBufferPointer<R>(_ body: (UnsafeBufferPointer<Any>) throws -> R) rethrows -> R {
        try values.withUnsafeBufferPointer(body)
    }
}
