import Foundation

/// What a translated predicate node stands for.
///
/// Every `.condition` is two-valued (true or false, never SQL's unknown), so `!` and `==
/// false` mean in SQL what they mean in Swift: comparisons of a nullable field carry an explicit
/// `IS NOT NULL`.
enum PredicateTerm {
    /// The model the predicate is evaluated on.
    case root
    /// A stored value.
    case field(ModelField)
    /// A value known without looking at a row (captured variables, literals, folded subtrees).
    case constant(Any?)
    /// A boolean.
    case condition(Filter)
    /// A `Bool?` from optional chaining: `condition` where the chain is non-nil, nil elsewhere.
    case optionalCondition(Filter, present: Filter)
    /// `field ?? fallback`.
    case coalesced(ModelField, fallback: Any)
}

/// A PredicateExpressions node that Trove translates (the conformances are in
/// PredicateExpressions+Translation.swift).
protocol TranslatablePredicateExpression {
    func translate(_ translator: inout PredicateTranslator) throws -> PredicateTerm
}

/// Walks a Foundation `#Predicate` expression tree into the engine's ``Filter``.
///
/// Nodes without a row variable are evaluated once and become constants; a node that cannot be
/// translated is a ``TroveError/unsupportedPredicate(node:reason:)`` naming it, never a scan in
/// memory.
struct PredicateTranslator {
    let schema: any ModelFieldResolver
    /// The bound variables (the row, and those of optional chaining), innermost last; a few at
    /// most, so a list.
    private var variables: [(id: PredicateExpressions.VariableID, term: PredicateTerm)]

    /// The filter of `predicate` over `M`'s collection.
    static func filter<M: PersistentModel>(_ predicate: Predicate<M>, schema: ModelSchema<M>) throws
        -> Filter
    {
        var translator = PredicateTranslator(
            schema: schema, variables: [(predicate.variable.key, .root)])
        return try translator.condition(predicate.expression)
    }

    func resolveKeyPath(_ keyPath: AnyKeyPath) throws -> ModelField { try schema.field(keyPath) }
    func extendField(_ base: ModelField, _ names: [String], _ printed: Any) throws -> ModelField {
        try schema.extend(base, with: names, printed: printed)
    }

    /// What the variable stands for, nil when it is not bound.
    func variable(_ id: PredicateExpressions.VariableID) -> PredicateTerm? {
        variables.last { $0.id == id }?.term
    }

    /// Runs `body` with `id` bound to `term`.
    mutating func binding<T>(
        _ id: PredicateExpressions.VariableID, to term: PredicateTerm,
        _ body: (inout PredicateTranslator) throws -> T
    ) rethrows -> T {
        variables.append((id, term))
        defer { variables.removeLast() }
        return try body(&self)
    }

    // MARK: Terms

    mutating func term(_ expression: some PredicateExpression) throws -> PredicateTerm {
        var failure: (any Error)?
        if let translatable = expression as? any TranslatablePredicateExpression {
            do {
                return try translatable.translate(&self)
            } catch {
                failure = error
            }
        }
        // A subtree that reads no row is a constant.
        if let value = try? expression.evaluate(PredicateBindings()) { return .constant(value) }
        throw failure ?? Self.unsupported(expression, "Trove has no SQL for this operation")
    }

    /// The node as a two-valued condition.
    mutating func condition(_ expression: some PredicateExpression) throws -> Filter {
        try condition(of: term(expression), node: expression)
    }

    func condition(of term: PredicateTerm, node: Any) throws -> Filter {
        switch term {
        case .condition(let filter): return filter
        case .field(let field):
            // A Bool field used as a condition.
            return .compare(field.field, .equal, .bool(true))
        case .constant(let value as Bool): return value ? .all : .never
        case .optionalCondition, .coalesced, .constant, .root:
            throw Self.unsupported(node, "not a condition Trove can evaluate in SQL")
        }
    }

    static func unsupported(_ node: Any, _ reason: String) -> TroveError {
        let full = String(describing: type(of: node))
        let name = full.prefix { $0 != "<" }
        return .unsupportedPredicate(
            node: "PredicateExpressions.\(name)", reason: "\(reason) (\(full))")
    }

    // MARK: Values

    /// The stored form of a constant compared with `field`.
    static func value(_ constant: Any?, for field: ModelField, node: Any) throws -> Value {
        guard let constant = unwrapped(constant) else { return .null }
        if let scalar = ValueEncoder.scalar(constant, inJSON: field.isInJSON) { return scalar }
        if let encodable = constant as? any Encodable, let value = try? ValueEncoder.json(encodable)
        {
            if case .object = value {
                throw unsupported(
                    node, "comparing a whole nested value is not supported; compare its properties")
            }
            return value
        }
        throw unsupported(node, "a \(type(of: constant)) value cannot be compared in SQL")
    }

    /// `Optional.some(x)` as `x`, `Optional.none` (at any depth) as nil.
    static func unwrapped(_ value: Any?) -> Any? {
        guard let value else { return nil }
        if let optional = value as? any OptionalValue { return unwrapped(optional.wrappedAny) }
        return value
    }

    /// Orders two constants of the same type the way SQL orders their stored values.
    static func compare(_ a: Value, _ b: Value) -> Int? {
        switch (a, b) {
        case (.int(let x), .int(let y)): return x < y ? -1 : (x == y ? 0 : 1)
        case (.string(let x), .string(let y)): return x < y ? -1 : (x == y ? 0 : 1)
        case (.date(let x), .date(let y)): return x < y ? -1 : (x == y ? 0 : 1)
        case (.bool(let x), .bool(let y)): return x == y ? 0 : (!x ? -1 : 1)
        default:
            guard let x = a.doubleValue, let y = b.doubleValue else { return nil }
            return x < y ? -1 : (x == y ? 0 : 1)
        }
    }

    // MARK: Building conditions

    /// `field <op> value`, false where the field is null (as in Swift, where such a comparison
    /// would not have a value to compare).
    static func ordered(_ field: ModelField, _ op: Comparison, _ value: Value) -> Filter {
        guarded(field, .compare(field.field, op, value))
    }

    /// `condition`, made false (not unknown) where the field is null.
    static func guarded(_ field: ModelField, _ condition: Filter) -> Filter {
        field.isNullable ? .and([.not(.isNull(field.field)), condition]) : condition
    }

    /// Whether `a <op> b` holds for two constants.
    static func holds(_ a: Value, _ op: Comparison, _ b: Value) -> Bool? {
        if op == .equal { return a == b || compare(a, b) == 0 }
        if op == .notEqual { return !(a == b || compare(a, b) == 0) }
        guard let order = compare(a, b) else { return nil }
        return switch op {
        case .less: order < 0
        case .lessOrEqual: order <= 0
        case .greater: order > 0
        case .greaterOrEqual: order >= 0
        case .equal, .notEqual: false
        }
    }

    /// `lhs <op> rhs` for any pair of terms Trove can compare.
    func compare(_ lhs: PredicateTerm, _ op: Comparison, _ rhs: PredicateTerm, node: Any) throws
        -> Filter
    {
        switch (lhs, rhs) {
        case (.constant, .field), (.constant, .coalesced), (.constant, .condition),
            (.constant, .optionalCondition):
            return try compare(rhs, op.mirrored, lhs, node: node)
        case (.field(let field), .constant(let constant)):
            let value = try Self.value(constant, for: field, node: node)
            if op == .equal || op == .notEqual { return .compare(field.field, op, value) }
            return Self.ordered(field, op, value)
        case (.coalesced(let field, let fallback), .constant(let constant)):
            let value = try Self.value(constant, for: field, node: node)
            let fallbackValue = try Self.value(fallback, for: field, node: node)
            guard let fallbackHolds = Self.holds(fallbackValue, op, value) else {
                throw Self.unsupported(node, "these values cannot be compared")
            }
            // Where the field is null the comparison is the fallback's, a constant.
            let stored: Filter =
                op == .equal || op == .notEqual
                ? Self.guarded(field, .compare(field.field, op, value))
                : Self.ordered(field, op, value)
            return fallbackHolds ? .or([.isNull(field.field), stored]) : stored
        case (.constant(let a), .constant(let b)):
            let anyField = ModelField(field: .id, type: nil, isNullable: true)
            let x = try Self.value(a, for: anyField, node: node)
            let y = try Self.value(b, for: anyField, node: node)
            guard let result = Self.holds(x, op, y) else {
                throw Self.unsupported(node, "these values cannot be compared")
            }
            return result ? .all : .never
        case (.condition(let condition), .constant(let constant))
        where op == .equal || op == .notEqual:
            guard let flag = Self.unwrapped(constant) as? Bool else {
                throw Self.unsupported(node, "a condition compared with a non-Bool")
            }
            return (flag == (op == .equal)) ? condition : .not(condition)
        case (.optionalCondition(let condition, let present), .constant(let constant))
        where op == .equal || op == .notEqual:
            let equal: Filter
            switch Self.unwrapped(constant) {
            case nil: equal = .not(present)
            case let flag as Bool: equal = .and([present, flag ? condition : .not(condition)])
            default: throw Self.unsupported(node, "an optional condition compared with a non-Bool")
            }
            return op == .equal ? equal : .not(equal)
        case (.condition, .condition), (.condition, .field), (.field, .condition):
            guard op == .equal || op == .notEqual else { break }
            let a = try condition(of: lhs, node: node)
            let b = try condition(of: rhs, node: node)
            let equal: Filter = .or([.and([a, b]), .and([.not(a), .not(b)])])
            return op == .equal ? equal : .not(equal)
        default:
            break
        }
        throw Self.unsupported(
            node, "Trove compares a stored value with a constant, not two stored values")
    }
}

extension Comparison {
    /// The comparison with its operands swapped (`a < b` is `b > a`).
    var mirrored: Comparison {
        switch self {
        case .less: .greater
        case .lessOrEqual: .greaterOrEqual
        case .greater: .less
        case .greaterOrEqual: .lessOrEqual
        case .equal, .notEqual: self
        }
    }
}

extension Filter {
    /// No document.
    static var never: Filter { .or([]) }
}

/// Lets a value typed `Any` be seen through when it holds an `Optional`.
protocol OptionalValue {
    var wrappedAny: Any? { get }
}

extension Optional: OptionalValue {
    var wrappedAny: Any? {
        switch self {
        case .some(let value): value
        case .none: nil
        }
    }
}

extension PredicateTranslator {
    /// Built once: creating a key path on every translation costs more than the translation.
    /// `nonisolated(unsafe)`: a key path is an immutable object, safe to share between threads.
    nonisolated(unsafe) static let stringIsEmpty: AnyKeyPath = \String.isEmpty
}
