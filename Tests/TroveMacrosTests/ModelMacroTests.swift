import SwiftSyntaxMacroExpansion
import SwiftSyntaxMacros
import SwiftSyntaxMacrosGenericTestSupport
import Testing
import TroveMacros

private let macros: [String: MacroSpec] = [
    "Model": MacroSpec(type: ModelMacro.self, conformances: ["_ReferenceModel", "Observable"]),
    "_PersistedProperty": MacroSpec(type: PersistedPropertyMacro.self),
    "Attribute": MacroSpec(type: MarkerMacro.self),
    "Transient": MacroSpec(type: MarkerMacro.self),
    "Relationship": MacroSpec(type: MarkerMacro.self),
    "Index": MacroSpec(type: SchemaListMacro.self),
    "Unique": MacroSpec(type: SchemaListMacro.self),
]

/// Expands `source` and compares with `expanded` (and the diagnostics, and the source after
/// applying every fix-it when `fixed` is given), recording each difference as an issue.
private func expect(
    _ source: String, expands expanded: String, diagnostics: [DiagnosticSpec] = [], fixed: String? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    assertMacroExpansion(
        source, expandedSource: expanded, diagnostics: diagnostics, macroSpecs: macros,
        applyFixIts: fixed == nil ? nil : diagnostics.flatMap { $0.fixIts.map(\.message) }, fixedSource: fixed,
        failureHandler: { Issue.record(Comment(rawValue: $0.message), sourceLocation: sourceLocation) })
}

@Suite struct ModelMacroTests {
    @Test func aClassWithoutIDGetsAnImplicitTimeOrderedOne() {
        expect(
            """
            @Model final class Trip {
                var name: String
                var notes: String? = nil
                @Transient var isSelected = false

                init(name: String) {
                    self.name = name
                }
            }
            """,
            expands: """
            final class Trip {
                var name: String {
                    @storageRestrictions(initializes: _name)
                    init(initialValue) {
                        _name = initialValue
                    }
                    get {
                        access(keyPath: \\.name)
                        return _name
                    }
                    set {
                        withMutation(keyPath: \\.name) {
                            _name = newValue
                        }
                    }
                }

                private var _name: String
                var notes: String? {
                    @storageRestrictions(initializes: _notes)
                    init(initialValue) {
                        _notes = initialValue
                    }
                    get {
                        access(keyPath: \\.notes)
                        return _notes
                    }
                    set {
                        withMutation(keyPath: \\.notes) {
                            _notes = newValue
                        }
                    }
                }

                private var _notes: String? = nil
                var isSelected = false

                init(name: String) {
                    self.name = name
                }

                private let _$observationRegistrar = Trove._ObservationRegistrar()

                internal nonisolated func access<_Member>(keyPath: KeyPath<Trip, _Member>) {
                    _$observationRegistrar.access(self, keyPath: keyPath)
                }

                internal nonisolated func withMutation<_Member, _Result>(
                    keyPath: KeyPath<Trip, _Member>, _ mutation: () throws -> _Result
                ) rethrows -> _Result {
                    try _$observationRegistrar.withMutation(of: self, keyPath: keyPath, mutation)
                }

                public var id: Trove._ModelUUID = .unassigned

                public enum CodingKeys: String, CodingKey {
                    case id
                    case name
                    case notes
                }

                public init(from decoder: any Decoder) throws {
                    let container = try decoder.container(keyedBy: CodingKeys.self)
                    self.id = try container.decode(Trove._ModelUUID.self, forKey: .id)
                    self._name = try Trove._ModelCoding.decode((String).self, forKey: .name, from: container)
                    self._notes = try Trove._ModelCoding.decode((String?).self, forKey: .notes, from: container)
                }

                public func encode(to encoder: any Encoder) throws {
                    var container = encoder.container(keyedBy: CodingKeys.self)
                    try container.encode(self.id, forKey: .id)
                    try Trove._ModelCoding.encode(self._name, forKey: .name, to: &container)
                    try Trove._ModelCoding.encode(self._notes, forKey: .notes, to: &container)
                }

                public static var properties: [PartialKeyPath<Trip>] {
                    [\\Trip.name, \\Trip.notes]
                }

                public static var modelOptions: Trove.ModelOptions {
                    Trove.ModelOptions()
                }
            }

            extension Trip: Trove._ReferenceModel, Trove._Observable {
            }
            """)
    }

    @Test func declaredOptionsBecomeModelOptions() {
        expect(
            """
            @Model final class Person {
                #Index<Person>([\\.familyName], [\\.familyName, \\.givenName])
                #Unique<Person>([\\.givenName, \\.familyName])
                var id: Int64
                @Attribute(.unique) var email: String
                @Attribute(originalName: "surname") var familyName: String
                var givenName: String
            }
            """,
            expands: """
                final class Person {
                    var id: Int64
                    var email: String {
                        @storageRestrictions(initializes: _email)
                        init(initialValue) {
                            _email = initialValue
                        }
                        get {
                            access(keyPath: \\.email)
                            return _email
                        }
                        set {
                            withMutation(keyPath: \\.email) {
                                _email = newValue
                            }
                        }
                    }

                    private var _email: String
                    var familyName: String {
                        @storageRestrictions(initializes: _familyName)
                        init(initialValue) {
                            _familyName = initialValue
                        }
                        get {
                            access(keyPath: \\.familyName)
                            return _familyName
                        }
                        set {
                            withMutation(keyPath: \\.familyName) {
                                _familyName = newValue
                            }
                        }
                    }

                    private var _familyName: String
                    var givenName: String {
                        @storageRestrictions(initializes: _givenName)
                        init(initialValue) {
                            _givenName = initialValue
                        }
                        get {
                            access(keyPath: \\.givenName)
                            return _givenName
                        }
                        set {
                            withMutation(keyPath: \\.givenName) {
                                _givenName = newValue
                            }
                        }
                    }

                    private var _givenName: String

                    private let _$observationRegistrar = Trove._ObservationRegistrar()

                    internal nonisolated func access<_Member>(keyPath: KeyPath<Person, _Member>) {
                        _$observationRegistrar.access(self, keyPath: keyPath)
                    }

                    internal nonisolated func withMutation<_Member, _Result>(
                        keyPath: KeyPath<Person, _Member>, _ mutation: () throws -> _Result
                    ) rethrows -> _Result {
                        try _$observationRegistrar.withMutation(of: self, keyPath: keyPath, mutation)
                    }

                    public enum CodingKeys: String, CodingKey {
                        case id
                        case email
                        case familyName
                        case givenName
                    }

                    public init(from decoder: any Decoder) throws {
                        let container = try decoder.container(keyedBy: CodingKeys.self)
                        self.id = try container.decode(Int64.self, forKey: .id)
                        self._email = try Trove._ModelCoding.decode((String).self, forKey: .email, from: container)
                        self._familyName = try Trove._ModelCoding.decode((String).self, forKey: .familyName, from: container)
                        self._givenName = try Trove._ModelCoding.decode((String).self, forKey: .givenName, from: container)
                    }

                    public func encode(to encoder: any Encoder) throws {
                        var container = encoder.container(keyedBy: CodingKeys.self)
                        try container.encode(self.id, forKey: .id)
                        try Trove._ModelCoding.encode(self._email, forKey: .email, to: &container)
                        try Trove._ModelCoding.encode(self._familyName, forKey: .familyName, to: &container)
                        try Trove._ModelCoding.encode(self._givenName, forKey: .givenName, to: &container)
                    }

                    public static var properties: [PartialKeyPath<Person>] {
                        [\\Person.email, \\Person.familyName, \\Person.givenName]
                    }

                    public static var modelOptions: Trove.ModelOptions {
                        var options = Trove.ModelOptions()
                        options = options.unique(\\Person.email)
                        options = options.originalName("surname", of: \\Person.familyName)
                        options = options.indexed(\\Person.familyName)
                        options = options.indexed(\\Person.familyName, \\Person.givenName)
                        options = options.unique(\\Person.givenName, \\Person.familyName)
                        return options
                    }
                }

                extension Person: Trove._ReferenceModel, Trove._Observable {
                }
                """)
    }

    @Test func aStructIsRefused() {
        expect(
            """
            @Model struct Point {
                var x: Int
            }
            """,
            expands: """
                struct Point {
                    var x: Int
                }
                """,
            diagnostics: [
                DiagnosticSpec(message: "@Model applies to a final class; a value model is a struct that conforms to Model", line: 1, column: 1)
            ])
    }

    @Test func aClassThatIsNotFinalGetsAFixIt() {
        expect(
            """
            @Model class Point {
                var x: Int = 0
            }
            """,
            expands: """
                class Point {
                    var x: Int = 0
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message: "@Model applies to a final class (a context keeps one instance per row; subclasses are not stored)",
                    line: 1, column: 8, fixIts: [FixItSpec(message: "add 'final'")])
            ],
            fixed: """
                @Model final class Point {
                    var x: Int = 0
                }
                """)
    }

    @Test func aPropertyWithoutTypeGetsTheLiteralsType() {
        expect(
            """
            @Model final class Point {
                var x = 0
            }
            """,
            expands: """
                final class Point {
                    var x = 0
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message: "property 'x' needs a type annotation: its column's type is read from it", line: 2, column: 9,
                    fixIts: [FixItSpec(message: "add ': Int'")])
            ],
            fixed: """
                @Model final class Point {
                    var x: Int = 0
                }
                """)
    }

    @Test func aLetGetsAFixIt() {
        expect(
            """
            @Model final class Point {
                let x: Int = 0
            }
            """,
            expands: """
                final class Point {
                    let x: Int = 0
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message: "stored property 'x' must be a var: a context sets it when it reads or rolls back", line: 2, column: 5,
                    fixIts: [FixItSpec(message: "use 'var'")])
            ],
            fixed: """
                @Model final class Point {
                    var x: Int = 0
                }
                """)
    }

    @Test(arguments: [
        ("@Transient var cache: [String: Int]", "@Transient property 'cache' needs a default value: it is not stored, so a fetched model starts from it"),
        ("lazy var total: Int = 0", "'lazy' property 'total' cannot be stored; use @Attribute(.externalStorage) for a column read on first access, or @Transient"),
        ("var action: () -> Void", "property 'action' of type '() -> Void' cannot be stored (functions, tuples and existentials have no column); mark it @Transient"),
        ("var pair: (Int, Int)", "property 'pair' of type '(Int, Int)' cannot be stored (functions, tuples and existentials have no column); mark it @Transient"),
        ("var id: Int", "'id' must be a var of type UUID, Int64 or String, not 'Int'"),
        ("var a: Int = 0, b: Int = 0", "declare one stored property per 'var' in a @Model class"),
        ("var x: Int = 0 { didSet { } }", "stored property 'x' cannot have willSet/didSet in a @Model class; observe the model (Observation) instead"),
        ("@Relationship(deleteRule: .cascade) var items: [Item] = []", "relationship 'items': object relationships are not stored yet; store the other model's id (var itemsID: Other.ID?) and declare it with ModelOptions.reference(_:to:onDelete:)"),
    ])
    func whatCannotBeStoredIsAnError(declaration: String, message: String) {
        let source = "@Model final class Box {\n    \(declaration)\n}"
        // Only the diagnostic is compared (the expansion is what the class was, minus
        // attributes): the failure the comparison reports lists every diagnostic it produced.
        var messages: [String] = []
        assertMacroExpansion(
            source, expandedSource: "", macroSpecs: macros,
            failureHandler: { messages.append($0.message) })
        #expect(messages.contains { $0.contains(message) }, "\(messages)")
    }
}
