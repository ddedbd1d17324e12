import Foundation

// Each PredicateExpressions node Trove can translate, as one conformance. Children are
// translated through `translator.term(_:)`, which folds row-independent subtrees to constants.

extension PredicateExpressions.Variable: TranslatablePredicateExpression {
    func translate(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        guard let bound = translator.variable(key) else {
            throw PredicateTranslator.unsupported(self, "an unbound variable")
        }
        return bound
    }
}

extension PredicateExpressions.Value: TranslatablePredicateExpression {
    func translate(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        .constant(value)
    }
}

extension PredicateExpressions.NilLiteral: TranslatablePredicateExpression {
    func translate(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        .constant(nil)
    }
}

extension PredicateExpressions.KeyPath: TranslatablePredicateExpression {
    func translate(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        switch try translator.term(root) {
        case .root:
            return .field(try translator.resolveKeyPath(keyPath))
        case .field(let base):
            if Root.Output.self == String.self, keyPath == PredicateTranslator.stringIsEmpty {
                return .condition(.compare(base.field, .equal, .string("")))
            }
            if Root.Output.self is any Sequence.Type {
                // count, isEmpty, first, ... of a stored array or text: no JSON path reads them.
                throw PredicateTranslator.unsupported(
                    self, "\(keyPath) of a stored collection has no SQL translation")
            }
            return .field(
                try translator.extendField(base, try KeyPathNames.components(keyPath), keyPath))
        case .constant(let value?):
            guard let root = value as? Root.Output else {
                throw PredicateTranslator.unsupported(self, "a key path on a value of another type")
            }
            return .constant(root[keyPath: keyPath])
        default:
            throw PredicateTranslator.unsupported(self, "a key path on a computed value")
        }
    }
}

extension PredicateExpressions.Conjunction: TranslatablePredicateExpression {
    func translate(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        .condition(try translator.condition(lhs) && translator.condition(rhs))
    }
}

extension PredicateExpressions.Disjunction: TranslatablePredicateExpression {
    func translate(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        .condition(try translator.condition(lhs) || translator.condition(rhs))
    }
}

extension PredicateExpressions.Negation: TranslatablePredicateExpression {
    func translate(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        .condition(.not(try translator.condition(wrapped)))
    }
}

extension PredicateExpressions.Equal: TranslatablePredicateExpression {
    func translate(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        .condition(
            try translator.compare(translator.term(lhs), .equal, translator.term(rhs), node: self))
    }
}

extension PredicateExpressions.NotEqual: TranslatablePredicateExpression {
    func translate(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        .condition(
            try translator.compare(
                translator.term(lhs), .notEqual, translator.term(rhs), node: self))
    }
}

extension PredicateExpressions.Comparison: TranslatablePredicateExpression {
    func translate(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        let comparison: Comparison =
            switch op {
            case .lessThan: .less
            case .lessThanOrEqual: .lessOrEqual
            case .greaterThan: .greater
            case .greaterThanOrEqual: .greaterOrEqual
            }
        return .condition(
            try translator.compare(
                translator.term(lhs), comparison, translator.term(rhs), node: self))
    }
}

extension PredicateExpressions.NilCoalesce: TranslatablePredicateExpression {
    func translate(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        let fallback = try translator.term(rhs)
        switch (try translator.term(lhs), fallback) {
        case (.field(let field), .constant(let value?)):
            return .coalesced(field, fallback: value)
        case (.optionalCondition(let condition, let present), .constant(let flag as Bool)):
            return .condition(flag ? .or([.not(present), condition]) : .and([present, condition]))
        case (.constant(let value), _):
            return PredicateTranslator.unwrapped(value).map { .constant($0) } ?? fallback
        default:
            throw PredicateTranslator.unsupported(self, "?? with a fallback that is not a constant")
        }
    }
}

extension PredicateExpressions.ForcedUnwrap: TranslatablePredicateExpression {
    func translate(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        // A stored null does not match (in Swift, evaluating the predicate on it throws).
        switch try translator.term(inner) {
        case .field(let field): return .field(field)
        case .constant(let value):
            guard let value = PredicateTranslator.unwrapped(value) else {
                throw PredicateTranslator.unsupported(self, "unwrapping nil")
            }
            return .constant(value)
        default: throw PredicateTranslator.unsupported(self, "! on a computed value")
        }
    }
}

extension PredicateExpressions.OptionalFlatMap: TranslatablePredicateExpression {
    func translate(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        guard case .field(let base) = try translator.term(wrapped) else {
            throw PredicateTranslator.unsupported(self, "optional chaining on a computed value")
        }
        let present: Filter = .not(.isNull(base.field))
        let inner = try translator.binding(variable.key, to: .field(base)) {
            try $0.term(transform)
        }
        switch inner {
        case .field(let field):
            // A JSON path under a null value is null too.
            return .field(field)
        case .condition(let condition):
            return .optionalCondition(condition, present: present)
        case .optionalCondition(let condition, let inner):
            return .optionalCondition(condition, present: .and([present, inner]))
        default:
            throw PredicateTranslator.unsupported(self, "optional chaining into a computed value")
        }
    }
}

extension PredicateExpressions.SequenceContains: TranslatablePredicateExpression {
    func translate(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        let node = self
        switch (try translator.term(sequence), try translator.term(element)) {
        case (.field(let array), .constant(let element)):
            // `$0.tags.contains("x")`: an element of a JSON array.
            let value = try PredicateTranslator.value(
                element, for: ModelField(field: array.field, type: nil, isNullable: true),
                node: node)
            guard !value.isNull else {
                throw PredicateTranslator.unsupported(node, "contains(nil) on a stored array")
            }
            return .condition(.arrayContains(array.field, value))
        case (.constant(let values?), .field(let field)):
            // `[a, b].contains($0.x)`: IN.
            guard let sequence = values as? any Sequence else {
                throw PredicateTranslator.unsupported(node, "contains on a non-sequence")
            }
            var members: [Value] = []
            var includesNil = false
            for element in sequence {
                let value = try PredicateTranslator.value(element, for: field, node: node)
                if value.isNull { includesNil = true } else { members.append(value) }
            }
            let isIn = PredicateTranslator.guarded(field, .isIn(field.field, members))
            return .condition(includesNil ? .or([.isNull(field.field), isIn]) : isIn)
        default:
            throw PredicateTranslator.unsupported(
                node,
                "contains needs a stored array and a constant, or constants and a stored value")
        }
    }
}

extension PredicateExpressions.CollectionContainsCollection: TranslatablePredicateExpression {
    func translate(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        guard case .field(let field) = try translator.term(base),
            case .constant(let other?) = try translator.term(other),
            let substring = PredicateTranslator.unwrapped(other) as? String
        else {
            throw PredicateTranslator.unsupported(
                self, "contains needs a stored text and a constant text")
        }
        return .condition(PredicateTranslator.guarded(field, .contains(field.field, substring)))
    }
}

extension PredicateExpressions.SequenceStartsWith: TranslatablePredicateExpression {
    func translate(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        guard case .field(let field) = try translator.term(base),
            case .constant(let other?) = try translator.term(prefix),
            let prefix = PredicateTranslator.unwrapped(other) as? String
        else {
            throw PredicateTranslator.unsupported(
                self, "starts(with:) needs a stored text and a constant text")
        }
        return .condition(PredicateTranslator.guarded(field, .hasPrefix(field.field, prefix)))
    }
}

extension PredicateExpressions.RangeExpressionContains: TranslatablePredicateExpression {
    func translate(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        guard case .constant(let range?) = try translator.term(range),
            let bounds = range as? any RangeBounds,
            case .field(let field) = try translator.term(element)
        else {
            throw PredicateTranslator.unsupported(
                self, "contains needs a constant range and a stored value")
        }
        let node = self
        func value(_ bound: Any) throws -> Value {
            try PredicateTranslator.value(bound, for: field, node: node)
        }
        var parts: [Filter] = []
        if let lower = bounds.lowerBoundAny {
            parts.append(.compare(field.field, .greaterOrEqual, try value(lower)))
        }
        if let upper = bounds.upperBoundAny {
            parts.append(
                .compare(
                    field.field, bounds.includesUpperBound ? .lessOrEqual : .less, try value(upper))
            )
        }
        if parts.count == 2, bounds.includesUpperBound, case .compare(_, _, let lower) = parts[0],
            case .compare(_, _, let upper) = parts[1]
        {
            return .condition(
                PredicateTranslator.guarded(field, .between(field.field, lower, upper)))
        }
        return .condition(
            PredicateTranslator.guarded(field, parts.count == 1 ? parts[0] : .and(parts)))
    }
}

/// The bounds of the standard ranges, seen through `Any`.
protocol RangeBounds {
    var lowerBoundAny: Any? { get }
    var upperBoundAny: Any? { get }
    var includesUpperBound: Bool { get }
}

extension ClosedRange: RangeBounds {
    var lowerBoundAny: Any? { lowerBound }
    var upperBoundAny: Any? { upperBound }
    var includesUpperBound: Bool { true }
}

extension Range: RangeBounds {
    var lowerBoundAny: Any? { lowerBound }
    var upperBoundAny: Any? { upperBound }
    var includesUpperBound: Bool { false }
}

extension PartialRangeFrom: RangeBounds {
    var lowerBoundAny: Any? { lowerBound }
    var upperBoundAny: Any? { nil }
    var includesUpperBound: Bool { false }
}

extension PartialRangeThrough: RangeBounds {
    var lowerBoundAny: Any? { nil }
    var upperBoundAny: Any? { upperBound }
    var includesUpperBound: Bool { true }
}

extension PartialRangeUpTo: RangeBounds {
    var lowerBoundAny: Any? { nil }
    var upperBoundAny: Any? { upperBound }
    var includesUpperBound: Bool { false }
}
