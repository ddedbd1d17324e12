// Placeholder until the store benchmark exists; the owning issue replaces this file.
struct NotStoreBuilt: Error {}
func runStoreBenchmarks(_ arguments: [String]) async throws { throw NotStoreBuilt() }
