import Foundation

extension BERTEmbedder {
    /// Where `trove model install` puts all-MiniLM-L6-v2, resolved the same way:
    /// `$TROVE_MODEL_DIR`, else `$XDG_CACHE_HOME/trove/models/all-MiniLM-L6-v2`, else
    /// `~/.cache/trove/models/all-MiniLM-L6-v2`.
    ///
    /// ```swift
    /// let embedder = try BERTEmbedder(modelDirectory: BERTEmbedder.defaultModelDirectory)
    /// ```
    public static var defaultModelDirectory: URL {
        let environment = ProcessInfo.processInfo.environment
        if let dir = environment["TROVE_MODEL_DIR"], !dir.isEmpty {
            return URL(fileURLWithPath: dir, isDirectory: true)
        }
        let cacheHome: URL
        if let xdg = environment["XDG_CACHE_HOME"], !xdg.isEmpty {
            cacheHome = URL(fileURLWithPath: xdg, isDirectory: true)
        } else {
            let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
            cacheHome = URL(fileURLWithPath: home, isDirectory: true).appendingPathComponent(
                ".cache")
        }
        return cacheHome.appendingPathComponent("trove/models/all-MiniLM-L6-v2", isDirectory: true)
    }
}
