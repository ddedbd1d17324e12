import Foundation

/// Where `trove` keeps its database and finds its model.
enum Locations {
    /// The database path: `--db PATH`, else `$TROVE_DB`, else
    /// `${XDG_DATA_HOME:-$HOME/.local/share}/trove/trove.sqlite`.
    ///
    /// ```swift
    /// Locations.database(flag: nil, environment: ["HOME": "/home/ana"], currentDirectory: "/")
    /// // "/home/ana/.local/share/trove/trove.sqlite"
    /// ```
    /// Relative paths are resolved against `currentDirectory`; `~/` is expanded with `HOME`.
    /// - Throws: ``CLIError/usage(_:command:)`` when no rule gives a path (no `HOME` either).
    static func database(
        flag: String?, environment: [String: String], currentDirectory: String
    ) throws -> String {
        if let flag, !flag.isEmpty {
            return absolute(flag, environment: environment, currentDirectory: currentDirectory)
        }
        if let env = environment["TROVE_DB"], !env.isEmpty {
            return absolute(env, environment: environment, currentDirectory: currentDirectory)
        }
        // XDG Base Directory: a relative XDG_DATA_HOME is invalid and must be ignored.
        if let xdg = environment["XDG_DATA_HOME"], xdg.hasPrefix("/") {
            return (xdg as NSString).appendingPathComponent("trove/trove.sqlite")
        }
        guard let home = environment["HOME"], !home.isEmpty else {
            throw CLIError.usage(
                "no database location: pass --db PATH or set TROVE_DB (HOME is not set)",
                command: nil)
        }
        return (home as NSString).appendingPathComponent(".local/share/trove/trove.sqlite")
    }

    /// `path` made absolute and standardised (`~/` expanded, `.`/`..` removed).
    static func absolute(
        _ path: String, environment: [String: String], currentDirectory: String
    ) -> String {
        var expanded = path
        if path == "~" || path.hasPrefix("~/"), let home = environment["HOME"] {
            expanded = home + path.dropFirst()
        }
        if !expanded.hasPrefix("/") {
            expanded = (currentDirectory as NSString).appendingPathComponent(expanded)
        }
        return (expanded as NSString).standardizingPath
    }
}
