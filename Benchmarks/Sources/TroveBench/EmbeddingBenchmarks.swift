// Placeholder until the embeddings benchmark exists; the owning issue replaces this file.
struct NotEmbeddingBuilt: Error {}
func runEmbeddingBenchmarks(_ arguments: [String]) async throws { throw NotEmbeddingBuilt() }
