import Foundation

/// A fresh directory under the system's temporary folder, removed when the value is deinitialised.
///
/// ```swift
/// let dir = try TemporaryDirectory()
/// let path = dir.url.appendingPathComponent("store.sqlite").path
/// ```
public final class TemporaryDirectory: Sendable {
    public let url: URL

    public init(prefix: String = "trove-test") throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("\(prefix)-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// The path of a file inside this directory.
    public func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    deinit { try? FileManager.default.removeItem(at: url) }
}
