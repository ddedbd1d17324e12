// Placeholder until the ann benchmark exists; the owning issue replaces this file.
struct NotANNBuilt: Error {}
func runANNBenchmarks(_ arguments: [String]) async throws { throw NotANNBuilt() }
