import SwiftSyntaxMacroExpansion
import SwiftSyntaxMacros
import SwiftSyntaxMacrosGenericTestSupport
import Testing
import TroveMacros

private let macros: [String: MacroSpec] = [
    "Model": MacroSpec(type: ModelMacro.self, conformances: ["_ReferenceModel", "Observable"]),
    "_PersistedProperty": MacroSpec(type: PersistedPropertyMacro.self),
    "_PersistedID": MacroSpec(type: PersistedIDMacro.self),
    "Attribute": MacroSpec(type: MarkerMacro.self),
    "Transient": MacroSpec(type: MarkerMacro.self),
    "Relationship": MacroSpec(type: MarkerMacro.self),
    "Index": MacroSpec(type: SchemaListMacro.self),
    "Unique": MacroSpec(type: SchemaListMacro.self),
    "ModelActor": MacroSpec(type: ModelActorMacro.self, conformances: ["ModelActor"]),
    "MemberwiseCoding": MacroSpec(
        type: MemberwiseCodingMacro.self, conformances: ["_MemberwiseFields"]),
]

/// Expands `source` and compares with `expanded` (and the diagnostics, and the source after
/// applying every fix-it when `fixed` is given), recording each difference as an issue.
private func expect(
    _ source: String, expands expanded: String, diagnostics: [DiagnosticSpec] = [],
    fixed: String? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    assertMacroExpansion(
        source, expandedSource: expanded, diagnostics: diagnostics, macroSpecs: macros,
        applyFixIts: fixed == nil ? nil : diagnostics.flatMap { $0.fixIts.map(\.message) },
        fixedSource: fixed,
        failureHandler: {
            Issue.record(Comment(rawValue: $0.message), sourceLocation: sourceLocation)
        })
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
                            if let resolved = Trove._ModelCoding.resolved(_name, name: "name", of: self) {
                                _name = resolved
                            }
                            return _name
                        }
                        set {
                            let oldValue = _name
                            withMutation(keyPath: \\.name) {
                                _name = newValue
                            }
                            Trove._ModelCoding.didSet(name: "name", from: oldValue, to: newValue, of: self)
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
                            if let resolved = Trove._ModelCoding.resolved(_notes, name: "notes", of: self) {
                                _notes = resolved
                            }
                            return _notes
                        }
                        set {
                            let oldValue = _notes
                            withMutation(keyPath: \\.notes) {
                                _notes = newValue
                            }
                            Trove._ModelCoding.didSet(name: "notes", from: oldValue, to: newValue, of: self)
                        }
                    }

                    private var _notes: String? = nil
                    var isSelected = false

                    init(name: String) {
                        self.name = name
                    }

                    nonisolated(unsafe) private var _$observationRegistrar: Trove._ObservationRegistrar? = nil

                    internal nonisolated func access<_Member>(keyPath: KeyPath<Trip, _Member>) {
                        if _$observationRegistrar == nil {
                            _$observationRegistrar = Trove._ObservationRegistrar()
                        }
                        _$observationRegistrar?.access(self, keyPath: keyPath)
                    }

                    internal nonisolated func withMutation<_Member, _Result>(
                        keyPath: KeyPath<Trip, _Member>, _ mutation: () throws -> _Result
                    ) rethrows -> _Result {
                        guard let registrar = _$observationRegistrar else {
                            return try mutation()
                        }
                        return try registrar.withMutation(of: self, keyPath: keyPath, mutation)
                    }

                    public let _$backing = Trove._ModelBacking()

                    public var id: Trove._ModelUUID = .unassigned {
                        didSet {
                            Trove._ModelCoding.idDidSet(from: oldValue, of: self)
                        }
                    }

                    public static var _$idKeyPath: ReferenceWritableKeyPath<Trip, Trove._ModelUUID> {
                        \\Trip.id
                    }

                    public enum CodingKeys: String, CodingKey {
                        case id
                        case name
                        case notes
                    }

                    public init(from decoder: any Decoder) throws {
                        let container = try decoder.container(keyedBy: CodingKeys.self)
                        var references = Trove._PendingReferences(fromRow: true)
                        self.id = try container.decode(Trove._ModelUUID.self, forKey: .id)
                        self._name = try Trove._ModelCoding.decode(\\Trip.name, forKey: .name, from: container, references: &references)
                        self._notes = try Trove._ModelCoding.decode(\\Trip.notes, forKey: .notes, from: container, references: &references)
                        self._$backing.pending = references
                    }

                    public func encode(to encoder: any Encoder) throws {
                        var container = encoder.container(keyedBy: CodingKeys.self)
                        try container.encode(self.id, forKey: .id)
                        try Trove._ModelCoding.encode(self._name, forKey: .name, to: &container, backing: _$backing)
                        try Trove._ModelCoding.encode(self._notes, forKey: .notes, to: &container, backing: _$backing)
                    }

                    public init(_$row row: Trove._ModelRowReader) throws {
                        var references = Trove._PendingReferences(fromRow: true)
                        self.id = try Trove._ModelCoding.read(row, 0, references: &references, { (model: Trip) in
                                model.id
                            })
                        self._name = try Trove._ModelCoding.read(row, 1, references: &references, { (model: Trip) in
                                model._name
                            })
                        self._notes = try Trove._ModelCoding.read(row, 2, references: &references, { (model: Trip) in
                                model._notes
                            })
                        self._$backing.pending = references
                    }

                    public func _$write(to row: inout Trove._ModelRowWriter) throws {
                        try Trove._ModelCoding.write(self._name, 0, to: &row, backing: _$backing)
                        try Trove._ModelCoding.write(self._notes, 1, to: &row, backing: _$backing)
                    }

                    public func _$snapshot(into values: inout [Any]) {
                        values.append(Trove._ModelCoding.snapshot(self._name, "name", _$backing))
                        values.append(Trove._ModelCoding.snapshot(self._notes, "notes", _$backing))
                        values.append(self.id)
                    }

                    public func _$differing(from saved: UnsafePointer<Any>) -> [Int] {
                        var slots: [Int] = []
                        if !Trove._ModelCoding.isCurrent(self._name, saved, 0, "name", _$backing) {
                            slots.append(0)
                        }
                        if !Trove._ModelCoding.isCurrent(self._notes, saved, 1, "notes", _$backing) {
                            slots.append(1)
                        }
                        return slots
                    }

                    public nonisolated func _$accessProperties() {
                        access(keyPath: \\.name)
                        access(keyPath: \\.notes)
                    }

                    public static var _$properties: [Trove._ModelProperty<Trip>] {
                        [Trove._ModelProperty("name", \\Trip.name, storage: {
                                    $0._name
                                }),
                            Trove._ModelProperty("notes", \\Trip.notes, storage: {
                                    $0._notes
                                })]
                    }

                    public static var _$modelOptions: Trove.ModelOptions {
                        var options = Trove.ModelOptions()
                        Trove._ModelCoding.describe(\\Trip.name, in: &options)
                        Trove._ModelCoding.describe(\\Trip.notes, in: &options)
                        return options
                    }

                    public static var _$relationships: [Trove._RelationshipMetadata] {
                        []
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
                    var id: Int64 {
                        didSet {
                            Trove._ModelCoding.idDidSet(from: oldValue, of: self)
                        }
                    }
                    var email: String {
                        @storageRestrictions(initializes: _email)
                        init(initialValue) {
                            _email = initialValue
                        }
                        get {
                            access(keyPath: \\.email)
                            if let resolved = Trove._ModelCoding.resolved(_email, name: "email", of: self) {
                                _email = resolved
                            }
                            return _email
                        }
                        set {
                            let oldValue = _email
                            withMutation(keyPath: \\.email) {
                                _email = newValue
                            }
                            Trove._ModelCoding.didSet(name: "email", from: oldValue, to: newValue, of: self)
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
                            if let resolved = Trove._ModelCoding.resolved(_familyName, name: "familyName", of: self) {
                                _familyName = resolved
                            }
                            return _familyName
                        }
                        set {
                            let oldValue = _familyName
                            withMutation(keyPath: \\.familyName) {
                                _familyName = newValue
                            }
                            Trove._ModelCoding.didSet(name: "familyName", from: oldValue, to: newValue, of: self)
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
                            if let resolved = Trove._ModelCoding.resolved(_givenName, name: "givenName", of: self) {
                                _givenName = resolved
                            }
                            return _givenName
                        }
                        set {
                            let oldValue = _givenName
                            withMutation(keyPath: \\.givenName) {
                                _givenName = newValue
                            }
                            Trove._ModelCoding.didSet(name: "givenName", from: oldValue, to: newValue, of: self)
                        }
                    }

                    private var _givenName: String

                    nonisolated(unsafe) private var _$observationRegistrar: Trove._ObservationRegistrar? = nil

                    internal nonisolated func access<_Member>(keyPath: KeyPath<Person, _Member>) {
                        if _$observationRegistrar == nil {
                            _$observationRegistrar = Trove._ObservationRegistrar()
                        }
                        _$observationRegistrar?.access(self, keyPath: keyPath)
                    }

                    internal nonisolated func withMutation<_Member, _Result>(
                        keyPath: KeyPath<Person, _Member>, _ mutation: () throws -> _Result
                    ) rethrows -> _Result {
                        guard let registrar = _$observationRegistrar else {
                            return try mutation()
                        }
                        return try registrar.withMutation(of: self, keyPath: keyPath, mutation)
                    }

                    public let _$backing = Trove._ModelBacking()

                    public static var _$idKeyPath: ReferenceWritableKeyPath<Person, Int64> {
                        \\Person.id
                    }

                    public enum CodingKeys: String, CodingKey {
                        case id
                        case email
                        case familyName
                        case givenName
                    }

                    public init(from decoder: any Decoder) throws {
                        let container = try decoder.container(keyedBy: CodingKeys.self)
                        var references = Trove._PendingReferences(fromRow: true)
                        self.id = try Trove._ModelCoding.decode(\\Person.id, forKey: .id, from: container, references: &references)
                        self._email = try Trove._ModelCoding.decode(\\Person.email, forKey: .email, from: container, references: &references)
                        self._familyName = try Trove._ModelCoding.decode(\\Person.familyName, forKey: .familyName, from: container, references: &references)
                        self._givenName = try Trove._ModelCoding.decode(\\Person.givenName, forKey: .givenName, from: container, references: &references)
                        self._$backing.pending = references
                    }

                    public func encode(to encoder: any Encoder) throws {
                        var container = encoder.container(keyedBy: CodingKeys.self)
                        try container.encode(self.id, forKey: .id)
                        try Trove._ModelCoding.encode(self._email, forKey: .email, to: &container, backing: _$backing)
                        try Trove._ModelCoding.encode(self._familyName, forKey: .familyName, to: &container, backing: _$backing)
                        try Trove._ModelCoding.encode(self._givenName, forKey: .givenName, to: &container, backing: _$backing)
                    }

                    public init(_$row row: Trove._ModelRowReader) throws {
                        var references = Trove._PendingReferences(fromRow: true)
                        self.id = try Trove._ModelCoding.read(row, 0, references: &references, { (model: Person) in
                                model.id
                            })
                        self._email = try Trove._ModelCoding.read(row, 1, references: &references, { (model: Person) in
                                model._email
                            })
                        self._familyName = try Trove._ModelCoding.read(row, 2, references: &references, { (model: Person) in
                                model._familyName
                            })
                        self._givenName = try Trove._ModelCoding.read(row, 3, references: &references, { (model: Person) in
                                model._givenName
                            })
                        self._$backing.pending = references
                    }

                    public func _$write(to row: inout Trove._ModelRowWriter) throws {
                        try Trove._ModelCoding.write(self._email, 0, to: &row, backing: _$backing)
                        try Trove._ModelCoding.write(self._familyName, 1, to: &row, backing: _$backing)
                        try Trove._ModelCoding.write(self._givenName, 2, to: &row, backing: _$backing)
                    }

                    public func _$snapshot(into values: inout [Any]) {
                        values.append(Trove._ModelCoding.snapshot(self._email, "email", _$backing))
                        values.append(Trove._ModelCoding.snapshot(self._familyName, "familyName", _$backing))
                        values.append(Trove._ModelCoding.snapshot(self._givenName, "givenName", _$backing))
                        values.append(self.id)
                    }

                    public func _$differing(from saved: UnsafePointer<Any>) -> [Int] {
                        var slots: [Int] = []
                        if !Trove._ModelCoding.isCurrent(self._email, saved, 0, "email", _$backing) {
                            slots.append(0)
                        }
                        if !Trove._ModelCoding.isCurrent(self._familyName, saved, 1, "familyName", _$backing) {
                            slots.append(1)
                        }
                        if !Trove._ModelCoding.isCurrent(self._givenName, saved, 2, "givenName", _$backing) {
                            slots.append(2)
                        }
                        return slots
                    }

                    public nonisolated func _$accessProperties() {
                        access(keyPath: \\.email)
                        access(keyPath: \\.familyName)
                        access(keyPath: \\.givenName)
                    }

                    public static var _$properties: [Trove._ModelProperty<Person>] {
                        [Trove._ModelProperty("email", \\Person.email, storage: {
                                    $0._email
                                }),
                            Trove._ModelProperty("familyName", \\Person.familyName, storage: {
                                    $0._familyName
                                }),
                            Trove._ModelProperty("givenName", \\Person.givenName, storage: {
                                    $0._givenName
                                })]
                    }

                    public static var _$modelOptions: Trove.ModelOptions {
                        var options = Trove.ModelOptions()
                        options = options.unique(\\Person.email)
                        Trove._ModelCoding.describe(\\Person.email, in: &options)
                        options = options.originalName("surname", of: \\Person.familyName)
                        Trove._ModelCoding.describe(\\Person.familyName, in: &options)
                        Trove._ModelCoding.describe(\\Person.givenName, in: &options)
                        options = options.indexed(\\Person.familyName)
                        options = options.indexed(\\Person.familyName, \\Person.givenName)
                        options = options.unique(\\Person.givenName, \\Person.familyName)
                        return options
                    }

                    public static var _$relationships: [Trove._RelationshipMetadata] {
                        []
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
                DiagnosticSpec(
                    message:
                        "@Model applies to a final class; a value model is a struct that conforms to Model",
                    line: 1, column: 1)
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
                    message:
                        "@Model applies to a final class (a context keeps one instance per row; subclasses are not stored)",
                    line: 1, column: 8, fixIts: [FixItSpec(message: "add 'final'")])
            ],
            fixed: """
                @Model final class Point {
                    var x: Int = 0
                }
                """)
    }

    @Test func relationshipsAndInferredTypes() {
        expect(
            """
            @Model final class Category {
                var name = ""
                @Relationship(deleteRule: .cascade, inverse: \\Animal.category)
                var animals = [Animal]()
                var parent: Category?
            }
            """,
            expands: """
                final class Category {
                    var name {
                        @storageRestrictions(initializes: _name)
                        init(initialValue) {
                            _name = initialValue
                        }
                        get {
                            access(keyPath: \\.name)
                            if let resolved = Trove._ModelCoding.resolved(_name, name: "name", of: self) {
                                _name = resolved
                            }
                            return _name
                        }
                        set {
                            let oldValue = _name
                            withMutation(keyPath: \\.name) {
                                _name = newValue
                            }
                            Trove._ModelCoding.didSet(name: "name", from: oldValue, to: newValue, of: self)
                        }
                    }

                    private var _name = ""
                    var animals {
                        @storageRestrictions(initializes: _animals)
                        init(initialValue) {
                            _animals = initialValue
                        }
                        get {
                            access(keyPath: \\.animals)
                            if let resolved = Trove._ModelCoding.resolved(_animals, name: "animals", inverse: \\Animal.category, of: self) {
                                _animals = resolved
                            }
                            return _animals
                        }
                        set {
                            let oldValue = _animals
                            withMutation(keyPath: \\.animals) {
                                _animals = newValue
                            }
                            Trove._ModelCoding.didSet(name: "animals", from: oldValue, to: newValue, inverse: \\Animal.category, of: self)
                        }
                    }

                    private var _animals = [Animal]()
                    var parent: Category? {
                        @storageRestrictions(initializes: _parent)
                        init(initialValue) {
                            _parent = initialValue
                        }
                        get {
                            access(keyPath: \\.parent)
                            if let resolved = Trove._ModelCoding.resolved(_parent, name: "parent", of: self) {
                                _parent = resolved
                            }
                            return _parent
                        }
                        set {
                            let oldValue = _parent
                            withMutation(keyPath: \\.parent) {
                                _parent = newValue
                            }
                            Trove._ModelCoding.didSet(name: "parent", from: oldValue, to: newValue, of: self)
                        }
                    }

                    private var _parent: Category?

                    nonisolated(unsafe) private var _$observationRegistrar: Trove._ObservationRegistrar? = nil

                    internal nonisolated func access<_Member>(keyPath: KeyPath<Category, _Member>) {
                        if _$observationRegistrar == nil {
                            _$observationRegistrar = Trove._ObservationRegistrar()
                        }
                        _$observationRegistrar?.access(self, keyPath: keyPath)
                    }

                    internal nonisolated func withMutation<_Member, _Result>(
                        keyPath: KeyPath<Category, _Member>, _ mutation: () throws -> _Result
                    ) rethrows -> _Result {
                        guard let registrar = _$observationRegistrar else {
                            return try mutation()
                        }
                        return try registrar.withMutation(of: self, keyPath: keyPath, mutation)
                    }

                    public let _$backing = Trove._ModelBacking()

                    public var id: Trove._ModelUUID = .unassigned {
                        didSet {
                            Trove._ModelCoding.idDidSet(from: oldValue, of: self)
                        }
                    }

                    public static var _$idKeyPath: ReferenceWritableKeyPath<Category, Trove._ModelUUID> {
                        \\Category.id
                    }

                    public enum CodingKeys: String, CodingKey {
                        case id
                        case name
                        case parent
                    }

                    public init(from decoder: any Decoder) throws {
                        let container = try decoder.container(keyedBy: CodingKeys.self)
                        var references = Trove._PendingReferences(fromRow: true)
                        self.id = try container.decode(Trove._ModelUUID.self, forKey: .id)
                        self._name = try Trove._ModelCoding.decode(\\Category.name, forKey: .name, from: container, references: &references)
                        self._parent = try Trove._ModelCoding.decode(\\Category.parent, forKey: .parent, from: container, references: &references)
                        self._animals = []
                        self._$backing.pending = references
                    }

                    public func encode(to encoder: any Encoder) throws {
                        var container = encoder.container(keyedBy: CodingKeys.self)
                        try container.encode(self.id, forKey: .id)
                        try Trove._ModelCoding.encode(self._name, forKey: .name, to: &container, backing: _$backing)
                        try Trove._ModelCoding.encode(self._parent, forKey: .parent, to: &container, backing: _$backing)
                    }

                    public init(_$row row: Trove._ModelRowReader) throws {
                        var references = Trove._PendingReferences(fromRow: true)
                        self.id = try Trove._ModelCoding.read(row, 0, references: &references, { (model: Category) in
                                model.id
                            })
                        self._name = try Trove._ModelCoding.read(row, 1, references: &references, { (model: Category) in
                                model._name
                            })
                        self._parent = try Trove._ModelCoding.read(row, 2, references: &references, { (model: Category) in
                                model._parent
                            })
                        self._animals = []
                        self._$backing.pending = references
                    }

                    public func _$write(to row: inout Trove._ModelRowWriter) throws {
                        try Trove._ModelCoding.write(self._name, 0, to: &row, backing: _$backing)
                        try Trove._ModelCoding.write(self._parent, 1, to: &row, backing: _$backing)
                    }

                    public func _$snapshot(into values: inout [Any]) {
                        values.append(Trove._ModelCoding.snapshot(self._name, "name", _$backing))
                        values.append(Trove._ModelCoding.snapshot(self._parent, "parent", _$backing))
                        values.append(self.id)
                    }

                    public func _$differing(from saved: UnsafePointer<Any>) -> [Int] {
                        var slots: [Int] = []
                        if !Trove._ModelCoding.isCurrent(self._name, saved, 0, "name", _$backing) {
                            slots.append(0)
                        }
                        if !Trove._ModelCoding.isCurrent(self._parent, saved, 1, "parent", _$backing) {
                            slots.append(1)
                        }
                        return slots
                    }

                    public nonisolated func _$accessProperties() {
                        access(keyPath: \\.name)
                        access(keyPath: \\.animals)
                        access(keyPath: \\.parent)
                    }

                    public static var _$properties: [Trove._ModelProperty<Category>] {
                        [Trove._ModelProperty("name", \\Category.name, storage: {
                                    $0._name
                                }),
                            Trove._ModelProperty("parent", \\Category.parent, storage: {
                                    $0._parent
                                })]
                    }

                    public static var _$modelOptions: Trove.ModelOptions {
                        var options = Trove.ModelOptions()
                        Trove._ModelCoding.describe(\\Category.name, in: &options)
                        options = options._initialValue(\\Category.name, "")
                        Trove._ModelCoding.describe(\\Category.parent, in: &options)
                        return options
                    }

                    public static var _$relationships: [Trove._RelationshipMetadata] {
                        [Trove._RelationshipMetadata(\\Category.animals, name: "animals", inverse: \\Animal.category, deleteRule: .cascade)]
                    }
                }

                extension Category: Trove._ReferenceModel, Trove._Observable {
                }
                """)
    }

    /// The side of a many-to-many relationship whose inverse the other side names: no column, a
    /// relationship without `inverse:` (found when the container opens).
    @Test func aManyToManySideLeavesItsInverseToTheOtherSide() {
        expect(
            """
            @Model final class Playlist {
                @Relationship(deleteRule: .cascade) var songs: [Song] = []
            }
            """,
            expands: """
                final class Playlist {
                    var songs: [Song] {
                        @storageRestrictions(initializes: _songs)
                        init(initialValue) {
                            _songs = initialValue
                        }
                        get {
                            access(keyPath: \\.songs)
                            if let resolved = Trove._ModelCoding.resolved(_songs, name: "songs", of: self) {
                                _songs = resolved
                            }
                            return _songs
                        }
                        set {
                            let oldValue = _songs
                            withMutation(keyPath: \\.songs) {
                                _songs = newValue
                            }
                            Trove._ModelCoding.didSet(name: "songs", from: oldValue, to: newValue, of: self)
                        }
                    }

                    private var _songs: [Song] = []

                    nonisolated(unsafe) private var _$observationRegistrar: Trove._ObservationRegistrar? = nil

                    internal nonisolated func access<_Member>(keyPath: KeyPath<Playlist, _Member>) {
                        if _$observationRegistrar == nil {
                            _$observationRegistrar = Trove._ObservationRegistrar()
                        }
                        _$observationRegistrar?.access(self, keyPath: keyPath)
                    }

                    internal nonisolated func withMutation<_Member, _Result>(
                        keyPath: KeyPath<Playlist, _Member>, _ mutation: () throws -> _Result
                    ) rethrows -> _Result {
                        guard let registrar = _$observationRegistrar else {
                            return try mutation()
                        }
                        return try registrar.withMutation(of: self, keyPath: keyPath, mutation)
                    }

                    public let _$backing = Trove._ModelBacking()

                    public var id: Trove._ModelUUID = .unassigned {
                        didSet {
                            Trove._ModelCoding.idDidSet(from: oldValue, of: self)
                        }
                    }

                    public static var _$idKeyPath: ReferenceWritableKeyPath<Playlist, Trove._ModelUUID> {
                        \\Playlist.id
                    }

                    public enum CodingKeys: String, CodingKey {
                        case id
                    }

                    public init(from decoder: any Decoder) throws {
                        let container = try decoder.container(keyedBy: CodingKeys.self)
                        var references = Trove._PendingReferences(fromRow: true)
                        self.id = try container.decode(Trove._ModelUUID.self, forKey: .id)
                        self._songs = []
                        self._$backing.pending = references
                    }

                    public func encode(to encoder: any Encoder) throws {
                        var container = encoder.container(keyedBy: CodingKeys.self)
                        try container.encode(self.id, forKey: .id)
                    }

                    public init(_$row row: Trove._ModelRowReader) throws {
                        var references = Trove._PendingReferences(fromRow: true)
                        self.id = try Trove._ModelCoding.read(row, 0, references: &references, { (model: Playlist) in
                                model.id
                            })
                        self._songs = []
                        self._$backing.pending = references
                    }

                    public func _$write(to row: inout Trove._ModelRowWriter) throws {
                        _ = row
                    }

                    public func _$snapshot(into values: inout [Any]) {
                        values.append(self.id)
                    }

                    public func _$differing(from saved: UnsafePointer<Any>) -> [Int] {
                        return []
                    }

                    public nonisolated func _$accessProperties() {
                        access(keyPath: \\.songs)
                    }

                    public static var _$properties: [Trove._ModelProperty<Playlist>] {
                        []
                    }

                    public static var _$modelOptions: Trove.ModelOptions {
                        var options = Trove.ModelOptions()
                        return options
                    }

                    public static var _$relationships: [Trove._RelationshipMetadata] {
                        [Trove._RelationshipMetadata(\\Playlist.songs, name: "songs", deleteRule: .cascade)]
                    }
                }

                extension Playlist: Trove._ReferenceModel, Trove._Observable {
                }
                """)
    }

    @Test func anArrayWithoutRelationshipMayBeAToManyRelationship() {
        // The compiler picks, by the element's type, whether `stops` is a relationship (no
        // column) or a column; `scores` holds a standard value type, a column for certain.
        expect(
            """
            @Model final class Trail {
                var stops: [Stop] = []
                var scores: [Int] = []
            }
            """,
            expands: """
                final class Trail {
                    var stops: [Stop] {
                        @storageRestrictions(initializes: _stops)
                        init(initialValue) {
                            _stops = initialValue
                        }
                        get {
                            access(keyPath: \\.stops)
                            if let resolved = Trove._ModelCoding.resolved(_stops, name: "stops", of: self) {
                                _stops = resolved
                            }
                            return _stops
                        }
                        set {
                            let oldValue = _stops
                            withMutation(keyPath: \\.stops) {
                                _stops = newValue
                            }
                            Trove._ModelCoding.didSet(name: "stops", from: oldValue, to: newValue, of: self)
                        }
                    }

                    private var _stops: [Stop] = []
                    var scores: [Int] {
                        @storageRestrictions(initializes: _scores)
                        init(initialValue) {
                            _scores = initialValue
                        }
                        get {
                            access(keyPath: \\.scores)
                            if let resolved = Trove._ModelCoding.resolved(_scores, name: "scores", of: self) {
                                _scores = resolved
                            }
                            return _scores
                        }
                        set {
                            let oldValue = _scores
                            withMutation(keyPath: \\.scores) {
                                _scores = newValue
                            }
                            Trove._ModelCoding.didSet(name: "scores", from: oldValue, to: newValue, of: self)
                        }
                    }

                    private var _scores: [Int] = []

                    nonisolated(unsafe) private var _$observationRegistrar: Trove._ObservationRegistrar? = nil

                    internal nonisolated func access<_Member>(keyPath: KeyPath<Trail, _Member>) {
                        if _$observationRegistrar == nil {
                            _$observationRegistrar = Trove._ObservationRegistrar()
                        }
                        _$observationRegistrar?.access(self, keyPath: keyPath)
                    }

                    internal nonisolated func withMutation<_Member, _Result>(
                        keyPath: KeyPath<Trail, _Member>, _ mutation: () throws -> _Result
                    ) rethrows -> _Result {
                        guard let registrar = _$observationRegistrar else {
                            return try mutation()
                        }
                        return try registrar.withMutation(of: self, keyPath: keyPath, mutation)
                    }

                    public let _$backing = Trove._ModelBacking()

                    public var id: Trove._ModelUUID = .unassigned {
                        didSet {
                            Trove._ModelCoding.idDidSet(from: oldValue, of: self)
                        }
                    }

                    public static var _$idKeyPath: ReferenceWritableKeyPath<Trail, Trove._ModelUUID> {
                        \\Trail.id
                    }

                    public enum CodingKeys: String, CodingKey {
                        case id
                        case stops
                        case scores
                    }

                    public init(from decoder: any Decoder) throws {
                        let container = try decoder.container(keyedBy: CodingKeys.self)
                        var references = Trove._PendingReferences(fromRow: true)
                        self.id = try container.decode(Trove._ModelUUID.self, forKey: .id)
                        self._stops = try Trove._ModelCoding.decode(\\Trail.stops, forKey: .stops, from: container, references: &references)
                        self._scores = try Trove._ModelCoding.decode(\\Trail.scores, forKey: .scores, from: container, references: &references)
                        self._$backing.pending = references
                    }

                    public func encode(to encoder: any Encoder) throws {
                        var container = encoder.container(keyedBy: CodingKeys.self)
                        try container.encode(self.id, forKey: .id)
                        try Trove._ModelCoding.encode(self._stops, forKey: .stops, to: &container, backing: _$backing)
                        try Trove._ModelCoding.encode(self._scores, forKey: .scores, to: &container, backing: _$backing)
                    }

                    public init(_$row row: Trove._ModelRowReader) throws {
                        var references = Trove._PendingReferences(fromRow: true)
                        self.id = try Trove._ModelCoding.read(row, 0, references: &references, { (model: Trail) in
                                model.id
                            })
                        self._stops = try Trove._ModelCoding.read(row, 1, references: &references, { (model: Trail) in
                                model._stops
                            })
                        self._scores = try Trove._ModelCoding.read(row, 2, references: &references, { (model: Trail) in
                                model._scores
                            })
                        self._$backing.pending = references
                    }

                    public func _$write(to row: inout Trove._ModelRowWriter) throws {
                        try Trove._ModelCoding.write(self._stops, 0, to: &row, backing: _$backing)
                        try Trove._ModelCoding.write(self._scores, 1, to: &row, backing: _$backing)
                    }

                    public func _$snapshot(into values: inout [Any]) {
                        values.append(Trove._ModelCoding.snapshot(self._stops, "stops", _$backing))
                        values.append(Trove._ModelCoding.snapshot(self._scores, "scores", _$backing))
                        values.append(self.id)
                    }

                    public func _$differing(from saved: UnsafePointer<Any>) -> [Int] {
                        var slots: [Int] = []
                        if !Trove._ModelCoding.isCurrent(self._stops, saved, 0, "stops", _$backing) {
                            slots.append(0)
                        }
                        if !Trove._ModelCoding.isCurrent(self._scores, saved, 1, "scores", _$backing) {
                            slots.append(1)
                        }
                        return slots
                    }

                    public nonisolated func _$accessProperties() {
                        access(keyPath: \\.stops)
                        access(keyPath: \\.scores)
                    }

                    public static var _$properties: [Trove._ModelProperty<Trail>] {
                        [Trove._ModelProperty("stops", \\Trail.stops, storage: {
                                    $0._stops
                                }),
                            Trove._ModelProperty("scores", \\Trail.scores, storage: {
                                    $0._scores
                                })]
                    }

                    public static var _$modelOptions: Trove.ModelOptions {
                        var options = Trove.ModelOptions()
                        Trove._ModelCoding.describe(\\Trail.stops, in: &options)
                        options = options._initialValue(\\Trail.stops, [])
                        Trove._ModelCoding.describe(\\Trail.scores, in: &options)
                        options = options._initialValue(\\Trail.scores, [])
                        return options
                    }

                    public static var _$relationships: [Trove._RelationshipMetadata] {
                        let declared: [Trove._RelationshipMetadata] = []
                        let inferred: [Trove._RelationshipMetadata?] = [Trove._ModelCoding.relationship(\\Trail.stops, name: "stops")]
                        return declared + inferred.compactMap {
                            $0
                        }
                    }
                }

                extension Trail: Trove._ReferenceModel, Trove._Observable {
                }
                """)
    }

    @Test func aToOnePropertyThatNamesItsInverseIsListedForTheOtherSide() {
        expect(
            """
            @Model final class Stop {
                @Relationship(inverse: \\Trail.stops) var trail: Trail?
            }
            """,
            expands: """
                final class Stop {
                    var trail: Trail? {
                        @storageRestrictions(initializes: _trail)
                        init(initialValue) {
                            _trail = initialValue
                        }
                        get {
                            access(keyPath: \\.trail)
                            if let resolved = Trove._ModelCoding.resolved(_trail, name: "trail", of: self) {
                                _trail = resolved
                            }
                            return _trail
                        }
                        set {
                            let oldValue = _trail
                            withMutation(keyPath: \\.trail) {
                                _trail = newValue
                            }
                            Trove._ModelCoding.didSet(name: "trail", from: oldValue, to: newValue, of: self)
                        }
                    }

                    private var _trail: Trail?

                    nonisolated(unsafe) private var _$observationRegistrar: Trove._ObservationRegistrar? = nil

                    internal nonisolated func access<_Member>(keyPath: KeyPath<Stop, _Member>) {
                        if _$observationRegistrar == nil {
                            _$observationRegistrar = Trove._ObservationRegistrar()
                        }
                        _$observationRegistrar?.access(self, keyPath: keyPath)
                    }

                    internal nonisolated func withMutation<_Member, _Result>(
                        keyPath: KeyPath<Stop, _Member>, _ mutation: () throws -> _Result
                    ) rethrows -> _Result {
                        guard let registrar = _$observationRegistrar else {
                            return try mutation()
                        }
                        return try registrar.withMutation(of: self, keyPath: keyPath, mutation)
                    }

                    public let _$backing = Trove._ModelBacking()

                    public var id: Trove._ModelUUID = .unassigned {
                        didSet {
                            Trove._ModelCoding.idDidSet(from: oldValue, of: self)
                        }
                    }

                    public static var _$idKeyPath: ReferenceWritableKeyPath<Stop, Trove._ModelUUID> {
                        \\Stop.id
                    }

                    public enum CodingKeys: String, CodingKey {
                        case id
                        case trail
                    }

                    public init(from decoder: any Decoder) throws {
                        let container = try decoder.container(keyedBy: CodingKeys.self)
                        var references = Trove._PendingReferences(fromRow: true)
                        self.id = try container.decode(Trove._ModelUUID.self, forKey: .id)
                        self._trail = try Trove._ModelCoding.decode(\\Stop.trail, forKey: .trail, from: container, references: &references)
                        self._$backing.pending = references
                    }

                    public func encode(to encoder: any Encoder) throws {
                        var container = encoder.container(keyedBy: CodingKeys.self)
                        try container.encode(self.id, forKey: .id)
                        try Trove._ModelCoding.encode(self._trail, forKey: .trail, to: &container, backing: _$backing)
                    }

                    public init(_$row row: Trove._ModelRowReader) throws {
                        var references = Trove._PendingReferences(fromRow: true)
                        self.id = try Trove._ModelCoding.read(row, 0, references: &references, { (model: Stop) in
                                model.id
                            })
                        self._trail = try Trove._ModelCoding.read(row, 1, references: &references, { (model: Stop) in
                                model._trail
                            })
                        self._$backing.pending = references
                    }

                    public func _$write(to row: inout Trove._ModelRowWriter) throws {
                        try Trove._ModelCoding.write(self._trail, 0, to: &row, backing: _$backing)
                    }

                    public func _$snapshot(into values: inout [Any]) {
                        values.append(Trove._ModelCoding.snapshot(self._trail, "trail", _$backing))
                        values.append(self.id)
                    }

                    public func _$differing(from saved: UnsafePointer<Any>) -> [Int] {
                        var slots: [Int] = []
                        if !Trove._ModelCoding.isCurrent(self._trail, saved, 0, "trail", _$backing) {
                            slots.append(0)
                        }
                        return slots
                    }

                    public nonisolated func _$accessProperties() {
                        access(keyPath: \\.trail)
                    }

                    public static var _$properties: [Trove._ModelProperty<Stop>] {
                        [Trove._ModelProperty("trail", \\Stop.trail, storage: {
                                    $0._trail
                                })]
                    }

                    public static var _$modelOptions: Trove.ModelOptions {
                        var options = Trove.ModelOptions()
                        Trove._ModelCoding.describe(\\Stop.trail, in: &options)
                        return options
                    }

                    public static var _$relationships: [Trove._RelationshipMetadata] {
                        []
                    }

                    public static var _$toOneRelationships: [Trove._ToOneRelationship] {
                        [Trove._ToOneRelationship(\\Stop.trail, name: "trail", inverse: \\Trail.stops)]
                    }
                }

                extension Stop: Trove._ReferenceModel, Trove._Observable {
                }
                """)
    }

    @Test func aToOneDeleteRuleWithoutAnInverseIsListed() {
        expect(
            """
            @Model final class Car {
                @Relationship(deleteRule: .cascade) var engine: Engine?
            }
            """,
            expands: """
                final class Car {
                    var engine: Engine? {
                        @storageRestrictions(initializes: _engine)
                        init(initialValue) {
                            _engine = initialValue
                        }
                        get {
                            access(keyPath: \\.engine)
                            if let resolved = Trove._ModelCoding.resolved(_engine, name: "engine", of: self) {
                                _engine = resolved
                            }
                            return _engine
                        }
                        set {
                            let oldValue = _engine
                            withMutation(keyPath: \\.engine) {
                                _engine = newValue
                            }
                            Trove._ModelCoding.didSet(name: "engine", from: oldValue, to: newValue, of: self)
                        }
                    }

                    private var _engine: Engine?

                    nonisolated(unsafe) private var _$observationRegistrar: Trove._ObservationRegistrar? = nil

                    internal nonisolated func access<_Member>(keyPath: KeyPath<Car, _Member>) {
                        if _$observationRegistrar == nil {
                            _$observationRegistrar = Trove._ObservationRegistrar()
                        }
                        _$observationRegistrar?.access(self, keyPath: keyPath)
                    }

                    internal nonisolated func withMutation<_Member, _Result>(
                        keyPath: KeyPath<Car, _Member>, _ mutation: () throws -> _Result
                    ) rethrows -> _Result {
                        guard let registrar = _$observationRegistrar else {
                            return try mutation()
                        }
                        return try registrar.withMutation(of: self, keyPath: keyPath, mutation)
                    }

                    public let _$backing = Trove._ModelBacking()

                    public var id: Trove._ModelUUID = .unassigned {
                        didSet {
                            Trove._ModelCoding.idDidSet(from: oldValue, of: self)
                        }
                    }

                    public static var _$idKeyPath: ReferenceWritableKeyPath<Car, Trove._ModelUUID> {
                        \\Car.id
                    }

                    public enum CodingKeys: String, CodingKey {
                        case id
                        case engine
                    }

                    public init(from decoder: any Decoder) throws {
                        let container = try decoder.container(keyedBy: CodingKeys.self)
                        var references = Trove._PendingReferences(fromRow: true)
                        self.id = try container.decode(Trove._ModelUUID.self, forKey: .id)
                        self._engine = try Trove._ModelCoding.decode(\\Car.engine, forKey: .engine, from: container, references: &references)
                        self._$backing.pending = references
                    }

                    public func encode(to encoder: any Encoder) throws {
                        var container = encoder.container(keyedBy: CodingKeys.self)
                        try container.encode(self.id, forKey: .id)
                        try Trove._ModelCoding.encode(self._engine, forKey: .engine, to: &container, backing: _$backing)
                    }

                    public init(_$row row: Trove._ModelRowReader) throws {
                        var references = Trove._PendingReferences(fromRow: true)
                        self.id = try Trove._ModelCoding.read(row, 0, references: &references, { (model: Car) in
                                model.id
                            })
                        self._engine = try Trove._ModelCoding.read(row, 1, references: &references, { (model: Car) in
                                model._engine
                            })
                        self._$backing.pending = references
                    }

                    public func _$write(to row: inout Trove._ModelRowWriter) throws {
                        try Trove._ModelCoding.write(self._engine, 0, to: &row, backing: _$backing)
                    }

                    public func _$snapshot(into values: inout [Any]) {
                        values.append(Trove._ModelCoding.snapshot(self._engine, "engine", _$backing))
                        values.append(self.id)
                    }

                    public func _$differing(from saved: UnsafePointer<Any>) -> [Int] {
                        var slots: [Int] = []
                        if !Trove._ModelCoding.isCurrent(self._engine, saved, 0, "engine", _$backing) {
                            slots.append(0)
                        }
                        return slots
                    }

                    public nonisolated func _$accessProperties() {
                        access(keyPath: \\.engine)
                    }

                    public static var _$properties: [Trove._ModelProperty<Car>] {
                        [Trove._ModelProperty("engine", \\Car.engine, storage: {
                                    $0._engine
                                })]
                    }

                    public static var _$modelOptions: Trove.ModelOptions {
                        var options = Trove.ModelOptions()
                        Trove._ModelCoding.describe(\\Car.engine, in: &options)
                        return options
                    }

                    public static var _$relationships: [Trove._RelationshipMetadata] {
                        []
                    }

                    public static var _$toOneRelationships: [Trove._ToOneRelationship] {
                        [Trove._ToOneRelationship(\\Car.engine, name: "engine", deleteRule: .cascade)]
                    }
                }

                extension Car: Trove._ReferenceModel, Trove._Observable {
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
                    message:
                        "stored property 'x' must be a var: a context sets it when it reads or rolls back",
                    line: 2, column: 5,
                    fixIts: [FixItSpec(message: "use 'var'")])
            ],
            fixed: """
                @Model final class Point {
                    var x: Int = 0
                }
                """)
    }

    @Test(arguments: [
        (
            "@Transient var cache: [String: Int]",
            "@Transient property 'cache' needs a default value: it is not stored, so a fetched model starts from it"
        ),
        (
            "lazy var total: Int = 0",
            "'lazy' property 'total' cannot be stored; use @Attribute(.externalStorage) for a column read on first access, or @Transient"
        ),
        (
            "var action: () -> Void",
            "property 'action' of type '() -> Void' cannot be stored (functions, tuples and existentials have no column); mark it @Transient"
        ),
        (
            "var pair: (Int, Int)",
            "property 'pair' of type '(Int, Int)' cannot be stored (functions, tuples and existentials have no column); mark it @Transient"
        ),
        ("var id: Int", "'id' must be a var of type UUID, Int64 or String, not 'Int'"),
        ("var a: Int = 0, b: Int = 0", "declare one stored property per 'var' in a @Model class"),
        (
            "@Relationship(inverse: \\.stops) var trail: Trail?",
            "@Relationship(inverse:) of 'trail' must name the other model's type ('\\Other.stops'): the key path is read outside this class"
        ),
        (
            "@Relationship(inverse: \\.boxes) var items: [Item] = []",
            "@Relationship(inverse:) of 'items' must name the other model's type ('\\Other.boxes'): the key path is read outside this class"
        ),
        (
            "var x: Int = 0 { didSet { } }",
            "stored property 'x' cannot have willSet/didSet in a @Model class; observe the model (Observation) instead"
        ),
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

    @Test func aModelActorOwnsAContext() {
        expect(
            """
            @ModelActor actor Importer {
                func run() {}
            }
            """,
            expands: """
                actor Importer {
                    func run() {}

                    public nonisolated let modelContainer: Trove.ModelContainer

                    public let modelContext: Trove.ModelContext

                    public init(modelContainer: Trove.ModelContainer) {
                        self.modelContainer = modelContainer
                        self.modelContext = Trove.ModelContext(modelContainer)
                    }
                }

                extension Importer: Trove.ModelActor {
                }
                """)
    }

    @Test func aModelActorIsAnActor() {
        expect(
            """
            @ModelActor final class Importer {
            }
            """,
            expands: """
                final class Importer {
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message:
                        "@ModelActor applies to an actor: its context is used only on the actor's executor",
                    line: 1, column: 1)
            ])
    }

    @Test func memberwiseCodingListsTheStoredProperties() {
        expect(
            """
            @MemberwiseCoding
            struct Note: Model {
                var id: Int64
                var title: String
                let due: Date?
                static var modelOptions: ModelOptions { ModelOptions() }
                var shout: String { title.uppercased() }
            }
            """,
            expands: """
                struct Note: Model {
                    var id: Int64
                    var title: String
                    let due: Date?
                    static var modelOptions: ModelOptions { ModelOptions() }
                    var shout: String { title.uppercased() }
                }

                extension Note: Trove._MemberwiseFields {
                    public static var _$fields: [(name: String, keyPath: PartialKeyPath<Note>)] {
                        [("id", \\Note.id), ("title", \\Note.title), ("due", \\Note.due)]
                    }
                }
                """)
    }

    @Test func memberwiseCodingRefusesAStructThatCodesItself() {
        expect(
            """
            @MemberwiseCoding
            struct Note: Model {
                var id: Int64
                init(from decoder: any Decoder) throws { id = 1 }
            }
            """,
            expands: """
                struct Note: Model {
                    var id: Int64
                    init(from decoder: any Decoder) throws { id = 1 }
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message:
                        "@MemberwiseCoding writes rows straight into the properties, skipping this; remove one or the other",
                    line: 4, column: 5)
            ])
    }
}
