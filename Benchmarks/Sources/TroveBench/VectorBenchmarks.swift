// Placeholder until the vectors benchmark exists; the owning issue replaces this file.
struct NotVectorBuilt: Error {}
func runVectorBenchmarks(_ arguments: [String]) async throws { throw NotVectorBuilt() }
