import Foundation

/// A tool's arguments as a `Decodable` value whose coding keys are the arguments themselves:
/// each key carries its JSON Schema, so the input schema `tools/list` shows and the checks a
/// call goes through come from one declaration.
///
/// A call's `arguments` object is checked member by member against the schemas (an unknown
/// name, a value of the wrong type, a number out of range or a missing required argument is a
/// ``ToolError`` naming the argument), then decoded.
///
/// ```swift
/// struct EchoArguments: ToolArguments {
///     typealias Argument = CodingKeys
///     var text: String
///     enum CodingKeys: String, ToolArgument {
///         case text
///         var schema: ArgumentSchema { .string("what to echo") }
///         var isRequired: Bool { true }
///     }
/// }
/// let arguments = try EchoArguments(arguments: .object([("text", .string("hi"))]))
/// ```
protocol ToolArguments: Decodable, Sendable {
    /// The arguments, in the order the schema lists them.
    associatedtype Argument: ToolArgument
}

/// One argument of a tool: its name (the coding key), its schema, whether a call must give it.
protocol ToolArgument: CodingKey, CaseIterable, Sendable {
    var schema: ArgumentSchema { get }
    var isRequired: Bool { get }
}

extension ToolArgument {
    var isRequired: Bool { false }
}

extension ToolArguments {
    /// The tool's `inputSchema`: a closed object of the arguments' schemas.
    static var inputSchema: JSONValue {
        let arguments = Array(Argument.allCases)
        return JSONSchema.closedObject(
            arguments.map { ($0.stringValue, $0.schema.json) },
            required: arguments.filter(\.isRequired).map(\.stringValue))
    }

    /// Checks a call's `arguments` (nil or null: none) against the schemas, then decodes them.
    /// A member that is null counts as absent; a single string stands for a list of one.
    /// - Throws: ``ToolError`` naming the argument at fault.
    init(arguments value: JSONValue?) throws {
        let members: [(String, JSONValue)]
        switch value {
        case nil, .null?: members = []
        case .object(let given)?: members = given
        default: throw ToolError("arguments must be a JSON object")
        }
        let names = Argument.allCases.map(\.stringValue)
        for (key, _) in members where Argument(stringValue: key) == nil {
            throw ToolError(
                "unknown argument '\(key)'; this tool takes "
                    + (names.isEmpty ? "no arguments" : names.joined(separator: ", ")))
        }
        var checked: [(String, JSONValue)] = []
        for argument in Argument.allCases {
            let name = argument.stringValue
            guard let given = members.last(where: { $0.0 == name })?.1, given != .null else {
                if argument.isRequired { throw ToolError("'\(name)' is required") }
                continue
            }
            guard let value = argument.schema.accepted(given) else {
                throw ToolError("'\(name)' must be \(argument.schema.expectation)")
            }
            checked.append((name, value))
        }
        do {
            self = try JSONOutput.decode(Self.self, from: .object(checked))
        } catch {
            // The checks above admit only what the declared types decode; a mismatch is a bug.
            preconditionFailure("\(Self.self) does not decode what its schemas accept: \(error)")
        }
    }
}

/// The JSON Schema of one tool argument, and the check a value passes before it is decoded.
enum ArgumentSchema: Sendable {
    case string(String, choices: [String]? = nil)
    case integer(String, range: ClosedRange<Int>)
    case number(String)
    case boolean(String)
    /// A string or an array of strings: the shape of every list argument.
    case strings(String)

    var json: JSONValue {
        switch self {
        case .string(let description, let choices): JSONSchema.string(description, choices: choices)
        case .integer(let description, let range):
            JSONSchema.integer(description, minimum: range.lowerBound, maximum: range.upperBound)
        case .number(let description): JSONSchema.number(description)
        case .boolean(let description): JSONSchema.boolean(description)
        case .strings(let description): JSONSchema.strings(description)
        }
    }

    /// What a value must be, for the message that names the argument at fault.
    var expectation: String {
        switch self {
        case .string: "a string"
        case .integer(_, let range):
            "a whole number from \(range.lowerBound) to \(range.upperBound)"
        case .number: "a number"
        case .boolean: "true or false"
        case .strings: "a string or an array of strings"
        }
    }

    /// `value` in the shape its Swift type decodes (a whole number written `3.0` as `3`, one
    /// string as a list of one), nil when the schema does not take it. Choices are left to the
    /// command, whose message lists them as its command line does.
    func accepted(_ value: JSONValue) -> JSONValue? {
        switch (self, value) {
        case (.string, .string), (.boolean, .bool): return value
        case (.integer(_, let range), _):
            let number: Int64?
            switch value {
            case .int(let n): number = n
            case .double(let x) where x == x.rounded() && abs(x) < 1e15: number = Int64(x)
            default: number = nil
            }
            guard let number, let whole = Int(exactly: number), range.contains(whole) else {
                return nil
            }
            return .int(number)
        case (.number, .int): return value
        case (.number, .double(let x)) where x.isFinite: return value
        case (.strings, .string): return .array([value])
        case (.strings, .array(let items)):
            return items.allSatisfy { $0.string != nil } ? value : nil
        default: return nil
        }
    }
}

/// The arguments of a tool that takes none.
struct NoArguments: ToolArguments {
    typealias Argument = None

    enum None: ToolArgument {
        var stringValue: String { switch self {} }
        var intValue: Int? { nil }
        init?(stringValue: String) { nil }
        init?(intValue: Int) { nil }
        var schema: ArgumentSchema { switch self {} }
    }

    init() {}
    init(from decoder: any Decoder) throws {}
}
