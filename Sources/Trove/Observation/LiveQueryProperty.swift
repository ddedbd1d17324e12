#if canImport(SwiftUI)
    import SwiftUI

    /// A SwiftUI property that shows a live query's latest result; everything it does is
    /// ``LiveResults``' (shared, tested code). The view keeps one observation for its lifetime.
    ///
    /// ```swift
    /// struct UnreadBadge: View {
    ///     @Live var unread: Int?
    ///     init(mail: DocumentCollection) { _unread = Live(mail.observeCount(where: Field("read") == false)) }
    ///     var body: some View { Text("\(unread ?? 0)") }
    /// }
    /// ```
    @MainActor
    @propertyWrapper
    public struct Live<Value: Sendable>: DynamicProperty {
        @State private var results: LiveResults<Value>

        /// Observes `query`. SwiftUI keeps the results object of a view's first init for the view's
        /// lifetime; the ones later inits create are released at once, which cancels them.
        public init(_ query: LiveQuery<Value>) {
            _results = State(wrappedValue: LiveResults(query))
        }

        /// The latest result; nil until the first arrives.
        public var wrappedValue: Value? { results.value }

        /// The results object (its error, update count, cancel).
        public var projectedValue: LiveResults<Value> { results }
    }
#endif
