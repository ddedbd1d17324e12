import Foundation
import TroveVectors

/// What a model declares beyond its Codable shape: indexes, unique fields, full-text fields with
/// weights, vector fields, the text field an embedder embeds into a vector field on save, and
/// properties stored under another column name.
///
/// Key paths are read once, when the model's schema is derived; a key path that is not a chain
/// of stored properties makes opening the collection fail with ``TroveError/invalidModel(type:reason:)``.
///
/// ```swift
/// struct Note: Model {
///     var id: Int64
///     var title: String
///     var body: String
///     var category: String
///     var year: Int
///     var embedding: [Float]?
///
///     static var modelOptions: ModelOptions {
///         ModelOptions()
///             .indexed(\Note.category, \Note.year)
///             .fullText(\Note.title, weight: 2).fullText(\Note.body)
///             .vector(\Note.embedding, dimension: 384)
///             .embedding(of: \Note.body, into: \Note.embedding)
///     }
/// }
/// ```
public struct ModelOptions: Hashable, Sendable {
    struct Index: Hashable, Sendable {
        var keys: [[String]]
        var unique: Bool
    }
    struct Vector: Hashable, Sendable {
        var dimension: Int
        var metric: DistanceMetric
        var index: IndexKind
    }

    var indexes: [Index] = []
    private(set) var fullTextNames: [String] = []
    private(set) var fullTextWeights: [String: Double] = [:]
    var tokenizer: String = FullTextDefinition.defaultTokenizer
    var vectors: [String: Vector] = [:]
    var embedding: (text: String, vector: String)? {
        guard let embeddedText, let embeddedVector else { return nil }
        return (embeddedText, embeddedVector)
    }
    private(set) var embeddedText: String?
    private(set) var embeddedVector: String?
    /// Property name -> column name.
    var columns: [String: String] = [:]
    /// Property name -> the model collection it references (``reference(_:to:onDelete:)-(KeyPath<Root,Target.ID>,_,_)``).
    var references: [String: Reference] = [:]
    /// Property name -> the referenced model type, so opening a model's collection can create
    /// the collections it references first.
    var referenceTargets: [String: any PersistentModel.Type] = [:]
    /// Properties a context's fetches leave out, read on first access (`@Attribute(.externalStorage)`).
    var externalNames: Set<String> = []
    /// Column in the previous schema version -> column now (``originalName(_:of:)``).
    var originalNames: [String: String] = [:]
    /// Property name → the value its declared initial value stores (`_initialValue(_:_:)`).
    var initialValues: [String: Value] = [:]
    /// Key paths that could not be read, reported when the schema is derived.
    var problems: [String] = []
    /// Set by ``customCoding()``.
    private(set) var codesThroughConformance = false

    /// No extras: every property is a plain column.
    public init() {}

    /// A B-tree index over the key paths, in order (a compound index when there are several;
    /// key paths into nested values index their JSON path).
    public func indexed<Root>(_ keyPaths: PartialKeyPath<Root>...) -> ModelOptions {
        with { o in
            let keys = keyPaths.map { $0.names(&o.problems) }
            o.indexes.append(Index(keys: keys, unique: false))
        }
    }

    /// A unique index over the key paths: two models may not share the combination (nil values
    /// never collide). A single top-level property becomes a unique field, named by
    /// ``TroveError/uniqueViolation(field:value:)``.
    public func unique<Root>(_ keyPaths: PartialKeyPath<Root>...) -> ModelOptions {
        with { o in
            let keys = keyPaths.map { $0.names(&o.problems) }
            o.indexes.append(Index(keys: keys, unique: true))
        }
    }

    /// Adds a text property to the full-text (FTS5, BM25) index with a weight (default 1).
    public func fullText<Root>(_ keyPath: KeyPath<Root, String>, weight: Double = 1) -> ModelOptions
    {
        fullText(keyPath as PartialKeyPath<Root>, weight: weight)
    }

    /// Adds an optional text property to the full-text index.
    public func fullText<Root>(_ keyPath: KeyPath<Root, String?>, weight: Double = 1)
        -> ModelOptions
    {
        fullText(keyPath as PartialKeyPath<Root>, weight: weight)
    }

    private func fullText<Root>(_ keyPath: PartialKeyPath<Root>, weight: Double) -> ModelOptions {
        with {
            guard let name = $0.topLevel(keyPath) else { return }
            if !$0.fullTextNames.contains(name) { $0.fullTextNames.append(name) }
            $0.fullTextWeights[name] = weight
        }
    }

    /// The FTS5 tokenizer of the full-text index; ``FullTextDefinition/defaultTokenizer`` (CJK
    /// and other unspaced scripts in bigrams) when not set.
    public func tokenizer(_ tokenizer: String) -> ModelOptions { with { $0.tokenizer = tokenizer } }

    /// Stores a `[Float]` (or `[Float]?`) property as a vector field of `dimension` components,
    /// searched exactly (`.flat`, the default) or through HNSW.
    public func vector<Root>(
        _ keyPath: KeyPath<Root, [Float]?>, dimension: Int, metric: DistanceMetric = .cosine,
        index: IndexKind = .flat
    ) -> ModelOptions {
        vector(keyPath as PartialKeyPath<Root>, dimension: dimension, metric: metric, index: index)
    }

    /// Stores a `[Float]` property as a vector field.
    public func vector<Root>(
        _ keyPath: KeyPath<Root, [Float]>, dimension: Int, metric: DistanceMetric = .cosine,
        index: IndexKind = .flat
    ) -> ModelOptions {
        vector(keyPath as PartialKeyPath<Root>, dimension: dimension, metric: metric, index: index)
    }

    private func vector<Root>(
        _ keyPath: PartialKeyPath<Root>, dimension: Int, metric: DistanceMetric, index: IndexKind
    )
        -> ModelOptions
    {
        with {
            guard let name = $0.topLevel(keyPath) else { return }
            $0.vectors[name] = Vector(dimension: dimension, metric: metric, index: index)
        }
    }

    /// On every save through a ``ModelCollection`` opened with an embedder, the embedder embeds
    /// the text property and the vector is stored in the vector property (declared with
    /// ``vector(_:dimension:metric:index:)-(KeyPath<Root,[Float]?>,_,_,_)``). Typed text search
    /// embeds its query with the same embedder.
    public func embedding<Root>(
        of text: KeyPath<Root, String>, into vector: KeyPath<Root, [Float]?>
    ) -> ModelOptions {
        with {
            $0.embeddedText = $0.topLevel(text)
            $0.embeddedVector = $0.topLevel(vector)
        }
    }

    /// Stores a property under another column name (for example to keep a column when a
    /// property is renamed in code). Key paths and predicates keep using the property.
    public func column<Root, Value>(_ keyPath: KeyPath<Root, Value>, named column: String)
        -> ModelOptions
    {
        with {
            guard let name = $0.topLevel(keyPath) else { return }
            $0.columns[name] = column
        }
    }

    /// The name a property had in the previous version of the schema, so the lightweight
    /// migration to this version renames its column instead of dropping it and adding an empty
    /// one (SwiftData's `@Attribute(originalName:)`, which ``Attribute(_:originalName:hashModifier:)``
    /// writes as this).
    ///
    /// ```swift
    /// ModelOptions().originalName("body", of: \Note.text)
    /// ```
    public func originalName<Root, Value>(_ name: String, of keyPath: KeyPath<Root, Value>)
        -> ModelOptions
    {
        with {
            guard let property = $0.topLevel(keyPath) else { return }
            $0.originalNames[name] = $0.columns[property] ?? property
        }
    }

    /// An optional property of a `@Model` class that a context's fetches leave out and read on
    /// its first access (`@Attribute(.externalStorage)` writes this). Not written by hand.
    public func _externalStorage<Root, Value>(_ keyPath: KeyPath<Root, Value?>) -> ModelOptions {
        with {
            guard let name = $0.topLevel(keyPath) else { return }
            $0.externalNames.insert(name)
        }
    }

    /// A non-optional property stays in every fetch: a fetched model needs its value.
    public func _externalStorage<Root, Value>(_ keyPath: KeyPath<Root, Value>) -> ModelOptions {
        self
    }

    /// The initial value a `@Model` class declares for a property (`var rating = 0`), which
    /// fills the column of rows stored before a lightweight migration added it. Evaluated once,
    /// when the schema is built; not part of the stored schema, so an initial value that changes
    /// (`Date.now`) never makes a file differ from its models. Written by ``Model()``.
    public func _initialValue<Root, V: Encodable>(
        _ keyPath: KeyPath<Root, V>, _ value: @autoclosure () -> V
    ) -> ModelOptions {
        with {
            guard let name = $0.topLevel(keyPath) else { return }
            let value = value()
            let encoder = ValueEncoder(inJSON: false)
            guard (try? value.encode(to: encoder)) != nil, !encoder.value.isNull else { return }
            $0.initialValues[name] = encoder.value
        }
    }

    /// A value that is not stored as a column's value has no initial value to fill with.
    public func _initialValue<Root, V>(_ keyPath: KeyPath<Root, V>, _ value: @autoclosure () -> V)
        -> ModelOptions
    { self }

    /// A relationship's initial models are the context's business, not a column's.
    public func _initialValue<Root, T: _ReferenceModel>(
        _ keyPath: KeyPath<Root, T?>, _ value: @autoclosure () -> T?
    ) -> ModelOptions { self }

    /// A relationship's initial models are the context's business, not a column's.
    public func _initialValue<Root, T: _ReferenceModel>(
        _ keyPath: KeyPath<Root, [T]>, _ value: @autoclosure () -> [T]
    ) -> ModelOptions { self }

    /// A relationship's initial models are the context's business, not a column's.
    public func _initialValue<Root, T: _ReferenceModel>(
        _ keyPath: KeyPath<Root, [T]?>, _ value: @autoclosure () -> [T]?
    ) -> ModelOptions { self }

    /// Every fetched row goes through the type's `init(from:)`, and every written model through
    /// its `encode(to:)`.
    ///
    /// Without it, the rows of a struct marked ``MemberwiseCoding()`` are written straight into
    /// its properties when its `init(from:)` only stores what it reads, and read straight from them
    /// when its `encode(to:)` only writes what they hold: Trove checks that once per type with
    /// made-up values (unique ones, large negative numbers, then empty ones with every optional
    /// absent); a type whose conformance changes any of them keeps it for every row. Declare
    /// this for an `init(from:)` or `encode(to:)` that checks or changes values in ways those
    /// cannot show, such as rejecting some strings.
    public func customCoding() -> ModelOptions { with { $0.codesThroughConformance = true } }

    /// These options and then `other`'s (where both set one thing, `other`'s).
    func merged(with other: ModelOptions) -> ModelOptions {
        var merged = self
        merged.indexes += other.indexes
        for name in other.fullTextNames where !merged.fullTextNames.contains(name) {
            merged.fullTextNames.append(name)
        }
        merged.fullTextWeights.merge(other.fullTextWeights) { _, new in new }
        if other.tokenizer != FullTextDefinition.defaultTokenizer {
            merged.tokenizer = other.tokenizer
        }
        merged.vectors.merge(other.vectors) { _, new in new }
        if other.embeddedText != nil {
            (merged.embeddedText, merged.embeddedVector) = (
                other.embeddedText, other.embeddedVector
            )
        }
        merged.columns.merge(other.columns) { _, new in new }
        merged.references.merge(other.references) { _, new in new }
        merged.referenceTargets.merge(other.referenceTargets) { _, new in new }
        merged.originalNames.merge(other.originalNames) { _, new in new }
        merged.initialValues.merge(other.initialValues) { _, new in new }
        merged.externalNames.formUnion(other.externalNames)
        merged.problems += other.problems
        merged.codesThroughConformance =
            merged.codesThroughConformance || other.codesThroughConformance
        return merged
    }

    func with(_ change: (inout ModelOptions) -> Void) -> ModelOptions {
        var copy = self
        change(&copy)
        return copy
    }

    mutating func topLevel(_ keyPath: AnyKeyPath) -> String? {
        let names = keyPath.names(&problems)
        guard names.count == 1 else {
            if !names.isEmpty { problems.append("\(keyPath) must name a top-level property") }
            return nil
        }
        return names[0]
    }

    public static func == (a: ModelOptions, b: ModelOptions) -> Bool {
        a.indexes == b.indexes && a.fullTextNames == b.fullTextNames
            && a.fullTextWeights == b.fullTextWeights
            && a.tokenizer == b.tokenizer && a.vectors == b.vectors
            && a.embeddedText == b.embeddedText
            && a.embeddedVector == b.embeddedVector && a.columns == b.columns
            && a.problems == b.problems
            && a.references == b.references
            && a.codesThroughConformance == b.codesThroughConformance
            && a.originalNames == b.originalNames
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(indexes)
        hasher.combine(fullTextNames)
        hasher.combine(vectors)
        hasher.combine(columns)
    }
}

extension AnyKeyPath {
    /// The property names, or none (with the problem recorded) when the key path cannot be read.
    fileprivate func names(_ problems: inout [String]) -> [String] {
        do {
            return try KeyPathNames.components(self)
        } catch {
            problems.append("\(self): \(error)")
            return []
        }
    }
}
