import Foundation
import Trove

/// A local value that a concurrent change from another device overwrote (it lost the
/// last-writer-wins comparison), kept so the app can show it and bring it back.
///
/// Also a record deleted because another device made a record with the same unique value
/// (`@Attribute(.unique)`, a unique index) while the two were apart: every device keeps the
/// record with the smaller id (time-ordered ids: the older) and deletes the other; `field` is
/// the unique field and `losingValue` its value. Such a record cannot be restored:
/// ``SyncSpace/restore(_:)`` throws ``SyncError/conflictRecordGone(collection:id:)``.
///
/// ```swift
/// for conflict in try await sync.conflicts() {
///     print(conflict.collection, conflict.recordID, conflict.field, conflict.losingValue)
/// }
/// try await sync.restore(conflicts[0])   // the losing value becomes the newest write
/// ```
public struct SyncConflict: Sendable, Hashable, Identifiable {
    /// The conflict's number on this device.
    public var id: Int64
    /// The collection of the record.
    public var collection: String
    /// The record's id (a UUID in lowercase or a String id).
    public var recordID: String
    /// The field whose value was overwritten (a column name: `_expires` for the expiry time,
    /// `_extra` for undeclared fields, `weight` for a link in `_trove_edges`).
    public var field: String
    /// The value that lost, as stored (`SQLValue`: text, integer, real, blob or null).
    public var losingValue: SQLValue
    /// The device that wrote the losing value.
    public var losingDevice: String
    /// When the losing value was written (its hybrid logical clock, as a date).
    public var losingTime: Date
    /// The device whose value won.
    public var winningDevice: String
    /// When the winning value was written.
    public var winningTime: Date
}
