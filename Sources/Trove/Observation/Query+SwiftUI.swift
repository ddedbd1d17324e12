#if canImport(SwiftUI)
    import SwiftUI

    /// The models a fetch selects, as a view property that redraws the view after each commit that
    /// changes them, as SwiftData's `@Query`: a thin layer over ``QueryResults`` in the
    /// environment's ``ModelContext`` (set with `.modelContainer(_:)`).
    ///
    /// ```swift
    /// struct AnimalList: View {
    ///     @Query(sort: \Animal.name) private var animals: [Animal]
    ///     var body: some View { List(animals) { Text($0.name) } }
    /// }
    /// ```
    @MainActor @propertyWrapper
    public struct Query<Element: PersistentModel>: DynamicProperty {
        @Environment(\.modelContext) private var modelContext
        @State private var results = QueryResults<Element>()
        private let descriptor: FetchDescriptor<Element>

        /// The models, in the descriptor's order.
        public var wrappedValue: [Element] { results.models }

        /// What the last read threw, or nil.
        public var fetchError: (any Error)? { results.fetchError }

        /// Every model the descriptor selects.
        public init(_ descriptor: FetchDescriptor<Element>) {
            self.descriptor = descriptor
        }

        /// The models `filter` accepts, in `sort` order.
        public init(filter: Predicate<Element>? = nil, sort: [SortDescriptor<Element>] = []) {
            self.init(FetchDescriptor(predicate: filter, sortBy: sort))
        }

        /// The models `filter` accepts, ordered by one property.
        public init<Value: Comparable>(
            filter: Predicate<Element>? = nil, sort keyPath: KeyPath<Element, Value> & Sendable,
            order: SortOrder = .forward
        ) {
            self.init(
                FetchDescriptor(predicate: filter, sortBy: [SortDescriptor(keyPath, order: order)]))
        }

        public mutating func update() {
            results.update(descriptor, in: modelContext)
        }
    }

    extension EnvironmentValues {
        /// The context views read and write models in: the main context of the container set with
        /// `.modelContainer(_:)`, as in SwiftData.
        @Entry public var modelContext: ModelContext = ModelContextDefault.context
    }

    /// The context of a view with no container set: an empty one in memory, made once.
    @MainActor
    enum ModelContextDefault {
        static let container: ModelContainer = {
            do {
                return try ModelContainer(
                    for: Schema([]), configurations: ModelConfiguration(isStoredInMemoryOnly: true))
            } catch {
                preconditionFailure("an empty in-memory container could not be made: \(error)")
            }
        }()
        static var context: ModelContext { container.mainContext }
    }

    extension View {
        /// Puts `container`'s main context in the environment of this view and its children, for
        /// `@Query` and `@Environment(\.modelContext)`, as SwiftData's modifier does.
        public func modelContainer(_ container: ModelContainer) -> some View {
            environment(\.modelContext, container.mainContext)
        }
    }
#endif
