import Foundation
import TroveEmbeddings
import TroveSQLite

extension Database {
    /// Gives the search collection `name` further models
    /// (``CollectionConfiguration/additionalEmbeddings``): a vector field each, empty in every
    /// row until written, with its vector index, the configuration recording them. In one
    /// immediate transaction (a savepoint inside the caller's). `package`: the `trove` tool
    /// moves its older databases, whose further models lived in collections of their own, with
    /// it; a public way to add a model to a collection would also need re-embedding every row.
    ///
    /// - Throws: ``TroveError/collectionNotFound(_:)``, ``TroveError/invalidDimension(_:)``.
    package func addModels(_ models: [EmbeddingManifest], toSearchCollection name: String) throws {
        guard !models.isEmpty else { return }
        var configuration = try searchStore(name, requested: nil).preset
        let before = configuration.vectorFields.count
        configuration.additionalEmbeddings += models
        try configuration.validate()
        let layout = DocumentLayout(preset: name, configuration: configuration)
        try connection.transaction(.immediate) {
            for field in configuration.vectorFields.dropFirst(before) {
                guard let definition = layout.schema.field(field) else { continue }
                try connection.execute(
                    script:
                        "ALTER TABLE \(layout.table) ADD COLUMN \(try layout.columnDefinition(definition))"
                )
            }
            try connection.execute(
                "UPDATE \(CollectionSchema.metaTable) SET value = ? WHERE key = ?",
                [.text(configuration.encodedJSON()), .text("collection.\(name)")])
        }
        connection.clearStatementCache()
        documentStores[name] = nil
        _ = try searchStore(name, requested: nil)
    }
}
