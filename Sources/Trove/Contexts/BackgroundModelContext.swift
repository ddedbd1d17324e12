import Foundation

/// An actor of its own holding a ``ModelContext`` (``ModelContainer/backgroundContext()``), for
/// imports and other work off the main actor. Its context and models belong to it: work with
/// them inside ``perform(_:)``, which runs on the actor and hands the context out.
///
/// ```swift
/// let background = container.backgroundContext()
/// let count = try await background.perform { context in
///     let drafts = try await context.fetchAll(#Predicate<Post> { $0.content == "" })
///     for post in drafts { post.content = "(empty)" }
///     try await context.save()
///     return drafts.count
/// }
/// ```
public actor BackgroundModelContext {
    let context: ModelContext

    /// The database the context reads and saves to.
    public nonisolated let database: Database

    init(database: Database, registry: ContextRegistry) {
        self.database = database
        context = ModelContext(database: database, registry: registry, isolation: nil)
        context.isolation = self
    }

    /// Runs `body` on this actor with its context, where the context's models can be read and
    /// changed (they cannot leave it: `body` returns only `Sendable` results).
    ///
    /// - Parameter body: the work; it gets the context.
    /// - Returns: what `body` returns.
    /// - Throws: what `body` throws.
    public func perform<T: Sendable>(_ body: nonisolated(nonsending) @Sendable (ModelContext) async throws -> T) async rethrows -> T {
        try await body(context)
    }
}
