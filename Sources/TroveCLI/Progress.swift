import Foundation

/// The progress bar `trove index` draws on a terminal, and its one-line summary.
///
/// The bar is redrawn in place on stderr (carriage return, no newline) at most ten times a
/// second; when stderr is not a terminal nothing is drawn, so logs stay clean.
///
/// ```
/// [##########..........]  52%  26/50 files  310 chunks  41.2 chunks/s  ETA 0:06
/// ```
final class ProgressBar: @unchecked Sendable {
    // @unchecked Sendable: used from one task at a time (the indexing loop); the lock only
    // guards against a stray concurrent redraw.
    private let lock = NSLock()
    private let sink: any TextSink
    private let enabled: Bool
    private let width: Int
    private let started: Date
    private var lastDraw: Date = .distantPast
    private var drewSomething = false

    /// Total work, in bytes of input: the share of bytes done drives the bar and the ETA.
    let totalBytes: Int
    let totalFiles: Int

    /// - Parameters:
    ///   - enabled: draw at all (stderr is a terminal and `--quiet`/`--json` were not given).
    init(
        sink: any TextSink, enabled: Bool, totalFiles: Int, totalBytes: Int, width: Int = 20,
        now: Date = Date()
    ) {
        self.sink = sink
        self.enabled = enabled
        self.totalFiles = totalFiles
        self.totalBytes = max(totalBytes, 1)
        self.width = width
        self.started = now
    }

    /// Redraws the bar if enough time passed since the last redraw (or `force`).
    func update(
        files: Int, bytes: Int, chunks: Int, now: Date = Date(), force: Bool = false
    ) {
        guard enabled else { return }
        lock.lock()
        defer { lock.unlock() }
        guard force || now.timeIntervalSince(lastDraw) >= 0.1 else { return }
        lastDraw = now
        drewSomething = true
        sink.write(
            "\r"
                + Self.line(
                    files: files, totalFiles: totalFiles, bytes: bytes, totalBytes: totalBytes,
                    chunks: chunks, elapsed: now.timeIntervalSince(started), width: width)
                + "\u{1B}[K")
    }

    /// Erases the bar so the summary line starts on a clean line.
    func finish() {
        guard enabled else { return }
        lock.lock()
        defer { lock.unlock() }
        if drewSomething { sink.write("\r\u{1B}[K") }
    }

    /// The text of the bar (without the carriage return), for given counts.
    static func line(
        files: Int, totalFiles: Int, bytes: Int, totalBytes: Int, chunks: Int,
        elapsed: TimeInterval, width: Int = 20
    ) -> String {
        let fraction = min(1, max(0, Double(bytes) / Double(max(totalBytes, 1))))
        let filled = Int((fraction * Double(width)).rounded(.down))
        let bar =
            String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
        var text = "[\(bar)] \(String(format: "%3d", Int((fraction * 100).rounded(.down))))%  "
        text += "\(files)/\(totalFiles) files  \(chunks) chunks"
        if elapsed > 0.5 {
            text += "  " + String(format: "%.1f", Double(chunks) / elapsed) + " chunks/s"
            if fraction > 0.01, fraction < 1 {
                text += "  ETA " + duration(elapsed * (1 - fraction) / fraction)
            }
        }
        return text
    }

    /// `m:ss` (or `h:mm:ss`) for a number of seconds.
    static func duration(_ seconds: TimeInterval) -> String {
        let total = Int(seconds.rounded())
        let (hours, minutes, secs) = (total / 3600, total / 60 % 60, total % 60)
        return hours > 0
            ? String(format: "%d:%02d:%02d", hours, minutes, secs)
            : String(format: "%d:%02d", minutes, secs)
    }
}
