import Foundation
import Observation

/// The models a ``FetchDescriptor`` selects in a ``ModelContext``, kept current: read when bound,
/// then again after each commit that changes them (this context's, another context's, another
/// connection's or process's, or sync's). It is `Observable`, so a view that reads ``models``
/// redraws when they change: SwiftUI's `@Query` is a thin wrapper over it, and code on other
/// platforms uses it directly.
///
/// ```swift
/// let results = QueryResults(FetchDescriptor<Post>(sortBy: [SortDescriptor(\.title)]), in: container.mainContext)
/// print(results.models.map(\.title))   // now, and after any commit that changes them
/// ```
@MainActor @Observable
public final class QueryResults<Element: PersistentModel> {
    /// The models, in the descriptor's order, as the context's instances.
    public private(set) var models: [Element] = []
    /// What the last read threw, or nil.
    public private(set) var fetchError: (any Error)?

    @ObservationIgnored private var watching: Task<Void, any Error>?
    @ObservationIgnored private weak var context: ModelContext?
    /// What the descriptor asks, to tell a new descriptor from the one followed.
    @ObservationIgnored private var followed: Query?

    /// Results bound to nothing yet (``models`` is empty until ``update(_:in:)``).
    public nonisolated init() {}

    /// Results of `descriptor` in `context`, read now and kept current.
    ///
    /// - Parameters:
    ///   - descriptor: which models, in what order.
    ///   - context: the context whose instances they are (the main context, for UI code).
    public init(_ descriptor: FetchDescriptor<Element>, in context: ModelContext) {
        update(descriptor, in: context)
    }

    /// Follows `descriptor` in `context` from now on; nothing happens when both are the ones
    /// followed already (SwiftUI calls this on every update of a view).
    ///
    /// - Parameters:
    ///   - descriptor: which models, in what order.
    ///   - context: the context whose instances they are.
    public func update(_ descriptor: FetchDescriptor<Element>, in context: ModelContext) {
        let query = try? descriptor.query()
        if context === self.context, watching != nil, query != nil, query == followed { return }
        watching?.cancel()
        (self.context, followed, fetchError) = (context, query, nil)
        do {
            watching = try context.observe(descriptor) { [weak self] models in self?.models = models
            }
        } catch {
            (watching, models, fetchError) = (nil, [], error)
        }
    }

    isolated deinit {
        watching?.cancel()
    }
}
