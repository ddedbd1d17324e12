import Foundation
import Trove
import TroveTestSupport

/// Evaluates a ``Filter`` over Swift values with SQL's three-valued logic: the oracle the
/// SQL-compiled filters are compared with. Independent of Trove's compiler by construction.
enum FilterOracle {
    /// A comparable scalar as SQLite sees it.
    enum Scalar: Equatable {
        case null
        case number(Double)
        case text(String)
    }

    static func scalar(_ value: Value?) -> Scalar {
        switch value {
        case nil, .null?: .null
        case .bool(let v)?: .number(v ? 1 : 0)
        case .int(let v)?: .number(Double(v))
        case .double(let v)?: .number(v)
        case .string(let v)?: .text(v)
        case .date(let v)?: .number(v.timeIntervalSince1970)
        default: .null
        }
    }

    static func lookup(_ field: Field, in document: Document) -> Value? {
        if field.name == "id" { return document.id.value }
        guard var value = document.fields[field.name] else { return nil }
        guard let path = field.path else { return value }
        for step in path.dropFirst().split(separator: ".") {
            guard case .object(let members) = value, let next = members[String(step)] else {
                return nil
            }
            value = next
        }
        return value
    }

    /// nil = unknown (SQL NULL).
    static func evaluate(_ filter: Filter, _ document: Document) -> Bool? {
        switch filter {
        case .all: return true
        case .compare(let field, let op, let value):
            let a = scalar(lookup(field, in: document))
            let b = scalar(value)
            switch op {
            case .equal: return a == b
            case .notEqual: return a != b
            default:
                guard let order = compare(a, b) else { return nil }
                switch op {
                case .less: return order < 0
                case .lessOrEqual: return order <= 0
                case .greater: return order > 0
                case .greaterOrEqual: return order >= 0
                default: return nil
                }
            }
        case .isIn(let field, let values):
            let a = scalar(lookup(field, in: document))
            if values.isEmpty { return false }
            if a == .null { return nil }
            return values.contains { scalar($0) == a }
        case .between(let field, let lower, let upper):
            let a = scalar(lookup(field, in: document))
            return and([
                compare(scalar(lower), a).map { $0 <= 0 },
                compare(a, scalar(upper)).map { $0 <= 0 },
            ])
        case .hasPrefix(let field, let prefix):
            guard case .text(let s) = scalar(lookup(field, in: document)) else { return nil }
            return s.unicodeScalars.starts(with: prefix.unicodeScalars)
        case .contains(let field, let part):
            guard case .text(let s) = scalar(lookup(field, in: document)) else { return nil }
            return s.contains(part)
        case .like(let field, let pattern):
            guard case .text(let s) = scalar(lookup(field, in: document)) else { return nil }
            return like(
                Array(s.lowercased().unicodeScalars), Array(pattern.lowercased().unicodeScalars))
        case .isNull(let field):
            return scalar(lookup(field, in: document)) == .null
        case .exists(let field):
            // Generated documents never hold JSON null, so "present" and "not null" agree.
            return scalar(lookup(field, in: document)) != .null
                || lookup(field, in: document)?.arrayValue != nil
        case .arrayContains(let field, let value):
            guard case .array(let items)? = lookup(field, in: document) else { return false }
            return items.contains { scalar($0) == scalar(value) }
        case .and(let parts): return and(parts.map { evaluate($0, document) })
        case .or(let parts): return or(parts.map { evaluate($0, document) })
        case .not(let inner): return evaluate(inner, document).map { !$0 }
        case .withinDistance(let field, let center, let kilometres):
            guard let point = lookup(field, in: document)?.pointValue else { return nil }
            return GeoOracle.kilometres(point, center) <= kilometres
        case .withinBox(let field, let box):
            guard let point = lookup(field, in: document)?.pointValue else { return nil }
            return GeoOracle.inside(point, box)
        case .linked:
            preconditionFailure("the filter oracle has no link graph (GraphOracle answers those)")
        case .sql:
            preconditionFailure("the filter oracle does not evaluate SQL fragments")
        }
    }

    static func compare(_ a: Scalar, _ b: Scalar) -> Int? {
        switch (a, b) {
        case (.null, _), (_, .null): return nil
        case (.number(let x), .number(let y)): return x < y ? -1 : (x > y ? 1 : 0)
        case (.text(let x), .text(let y)):
            let (u, v) = (Array(x.utf8), Array(y.utf8))
            return u.lexicographicallyPrecedes(v) ? -1 : (u == v ? 0 : 1)
        case (.number, .text): return -1
        case (.text, .number): return 1
        }
    }

    static func and(_ values: [Bool?]) -> Bool? {
        if values.contains(false) { return false }
        if values.contains(where: { $0 == nil }) { return nil }
        return true
    }

    static func or(_ values: [Bool?]) -> Bool? {
        if values.contains(true) { return true }
        if values.contains(where: { $0 == nil }) { return nil }
        return false
    }

    /// SQL LIKE over lowercased scalars: `%` any run, `_` one character.
    static func like(_ s: [Unicode.Scalar], _ p: [Unicode.Scalar]) -> Bool {
        var memo: [Int: Bool] = [:]
        func match(_ i: Int, _ j: Int) -> Bool {
            let key = i * (p.count + 1) + j
            if let known = memo[key] { return known }
            let result: Bool
            if j == p.count {
                result = i == s.count
            } else if p[j] == "%" {
                result = match(i, j + 1) || (i < s.count && match(i + 1, j))
            } else if i < s.count, p[j] == "_" || p[j] == s[i] {
                result = match(i + 1, j + 1)
            } else {
                result = false
            }
            memo[key] = result
            return result
        }
        return match(0, 0)
    }
}

/// Seeded random documents and filters over one fixed schema.
struct RandomDocuments {
    static let schema = DocumentSchema(
        id: .int64,
        fields: [
            .text("title", indexed: true), .integer("n", optional: true),
            .real("x", optional: true),
            .bool("flag", optional: true), .json("tags", optional: true),
            .json("meta", optional: true),
            .date("at", optional: true),
        ],
        indexes: [
            IndexDefinition([Field("n"), Field("x")]),
            IndexDefinition([Field("meta", path: "$.k")]),
        ],
        allowsUndeclaredFields: true)

    static let words = ["alpha", "Beta", "gamma", "delta", "al", "be", "ga%", "x_y", "Alpha"]
    var rng: SeededGenerator

    mutating func pick<T>(_ items: [T]) -> T { items[Int.random(in: 0..<items.count, using: &rng)] }
    mutating func chance(_ p: Double) -> Bool { Double.random(in: 0..<1, using: &rng) < p }

    mutating func document(id: Int64) -> Document {
        var d = Document(id: .int(id))
        d["title"] = .string(pick(Self.words) + (chance(0.5) ? " " + pick(Self.words) : ""))
        if chance(0.8) { d["n"] = .int(Int64.random(in: -5...5, using: &rng)) }
        if chance(0.8) { d["x"] = .double(Double(Int.random(in: -20...20, using: &rng)) / 4) }
        if chance(0.7) { d["flag"] = .bool(chance(0.5)) }
        if chance(0.7) {
            d["tags"] = .array(
                (0..<Int.random(in: 0...3, using: &rng)).map { _ in .string(pick(Self.words)) })
        }
        if chance(0.7) {
            d["meta"] = .object([
                "k": .int(Int64.random(in: 0...3, using: &rng)), "s": .string(pick(Self.words)),
            ])
        }
        if chance(0.6) {
            d["at"] = .date(
                Date(timeIntervalSince1970: Double(Int.random(in: 0...10, using: &rng)) * 86_400))
        }
        if chance(0.5) { d["color"] = .string(pick(["red", "green", "blue"])) }
        if chance(0.5) { d["rank"] = .int(Int64.random(in: 0...9, using: &rng)) }
        return d
    }

    /// A random value comparable with `field`.
    mutating func value(for field: Field) -> Value {
        switch (field.name, field.path) {
        case ("id", _): return .int(Int64.random(in: 0...60, using: &rng))
        case ("title", _): return .string(pick(Self.words))
        case ("n", _), ("rank", _), ("meta", "$.k"?):
            return .int(Int64.random(in: -5...9, using: &rng))
        case ("x", _): return .double(Double(Int.random(in: -20...20, using: &rng)) / 4)
        case ("flag", _): return .bool(chance(0.5))
        case ("at", _):
            return .date(
                Date(timeIntervalSince1970: Double(Int.random(in: 0...10, using: &rng)) * 86_400))
        default: return .string(pick(Self.words + ["red", "green", "blue"]))
        }
    }

    static let scalarFields = [
        Field.id, Field("title"), Field("n"), Field("x"), Field("flag"), Field("at"),
        Field("meta", path: "$.k"), Field("meta", path: "$.s"), Field("color"), Field("rank"),
    ]
    static let textFields = [Field("title"), Field("meta", path: "$.s"), Field("color")]

    mutating func filter(depth: Int) -> Filter {
        if depth > 0, chance(0.45) {
            switch Int.random(in: 0..<3, using: &rng) {
            case 0:
                return .and(
                    (0..<Int.random(in: 1...3, using: &rng)).map { _ in filter(depth: depth - 1) })
            case 1:
                return .or(
                    (0..<Int.random(in: 1...3, using: &rng)).map { _ in filter(depth: depth - 1) })
            default: return .not(filter(depth: depth - 1))
            }
        }
        let field = pick(Self.scalarFields)
        switch Int.random(in: 0..<11, using: &rng) {
        case 0, 1:
            let op = pick([
                Comparison.equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual,
            ])
            let nullable = field.name != "id" && (op == .equal || op == .notEqual) && chance(0.2)
            return .compare(field, op, nullable ? .null : value(for: field))
        case 2:
            return .isIn(
                field, (0..<Int.random(in: 0...3, using: &rng)).map { _ in value(for: field) })
        case 3:
            let (a, b) = (value(for: field), value(for: field))
            return .between(field, a, b)
        case 4: return .hasPrefix(pick(Self.textFields), pick(["a", "al", "B", "ga", "x", "re"]))
        case 5: return .contains(pick(Self.textFields), pick(["a", "lph", "%", "_", "ee", "ta"]))
        case 6:
            return .like(pick(Self.textFields), pick(["a%", "%A", "_e%", "%ta", "ga\\%", "%_%"]))
        case 7: return .isNull(pick(Self.scalarFields.filter { $0.name != "id" }))
        case 8:
            return .exists(
                pick([
                    Field("n"), Field("meta", path: "$.k"), Field("color"), Field("tags"),
                    Field("rank"),
                ]))
        case 9: return .arrayContains(Field("tags"), .string(pick(Self.words)))
        default: return .compare(field, .equal, value(for: field))
        }
    }
}
