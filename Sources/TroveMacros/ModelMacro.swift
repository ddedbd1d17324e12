import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacros

/// `@Model`: a final class becomes a persistent model. Each stored property becomes observed
/// storage (`@_PersistedProperty`), and the class gets what a context needs: observation, the
/// row coding written out (no reflection), its property list, its declared options, an implicit
/// time-ordered `id` when it declares none, and the conformances.
public struct ModelMacro: MemberMacro, MemberAttributeMacro, ExtensionMacro {
    // MARK: Members

    public static func expansion(
        of node: AttributeSyntax, providingMembersOf declaration: some DeclGroupSyntax,
        conformingTo protocols: [TypeSyntax], in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        guard let classDecl = checkedClass(declaration, node: node, in: context),
            let properties = StoredProperties.read(
                classDecl.memberBlock.members, report: { context.diagnose($0) })
        else { return [] }
        let typeName = classDecl.name.trimmed.text
        let stored = properties.filter { !$0.isTransient }
        let declaredID = stored.first { $0.name == "id" }
        if let declaredID, let type = declaredID.type,
            !["UUID", "Int64", "String", "Foundation.UUID", "Swift.Int64", "Swift.String"].contains(
                type.trimmedDescription)
        {
            context.diagnose(
                Diagnostic(node: type, message: ModelDiagnostic.badID(type.trimmedDescription)))
            return []
        }
        let persisted = stored.filter { $0.name != "id" }
        // To-many relationships have no column: the children's references are their storage.
        let columns = persisted.filter { !$0.isToMany }
        let toMany = persisted.filter(\.isToMany)
        // The registrar is made on the first read through a getter: a fetched model nobody reads
        // costs no registrar (its storage is allocations of its own), and a change to a model
        // never read has no observer to tell (observers register through `access`). Unsafe
        // only in name: the model is not Sendable, so one isolation at a time makes it, and the
        // registrar, once made, is Sendable and used as before.
        var members: [DeclSyntax] = [
            "nonisolated(unsafe) private var _$observationRegistrar: Trove._ObservationRegistrar? = nil",
            """
            internal nonisolated func access<_Member>(keyPath: KeyPath<\(raw: typeName), _Member>) {
                if _$observationRegistrar == nil {
                    _$observationRegistrar = Trove._ObservationRegistrar()
                }
                _$observationRegistrar?.access(self, keyPath: keyPath)
            }
            """,
            """
            internal nonisolated func withMutation<_Member, _Result>(
                keyPath: KeyPath<\(raw: typeName), _Member>, _ mutation: () throws -> _Result
            ) rethrows -> _Result {
                guard let registrar = _$observationRegistrar else {
                    return try mutation()
                }
                return try registrar.withMutation(of: self, keyPath: keyPath, mutation)
            }
            """,
            "public let _$backing = Trove._ModelBacking()",
        ]
        if declaredID == nil {
            // Left to the context: a time-ordered UUID (v7) given on insert, unique across devices.
            members.append(
                """
                public var id: Trove._ModelUUID = .unassigned {
                    didSet {
                        Trove._ModelCoding.idDidSet(from: oldValue, of: self)
                    }
                }
                """)
        }
        let idType = declaredID?.type?.trimmedDescription ?? "Trove._ModelUUID"
        members.append(
            """
            public static var _$idKeyPath: ReferenceWritableKeyPath<\(raw: typeName), \(raw: idType)> {
                \\\(raw: typeName).id
            }
            """)
        let keys = (["id"] + columns.map(\.name)).map { "case \($0)" }.joined(separator: "\n")
        members.append(
            """
            public enum CodingKeys: String, CodingKey {
            \(raw: keys)
            }
            """)
        let idDecode =
            declaredID == nil
            ? "self.id = try container.decode(Trove._ModelUUID.self, forKey: .id)"
            : "self.id = try Trove._ModelCoding.decode(\\\(typeName).id, forKey: .id, from: container, references: &references)"
        let decodes =
            (columns.map { property in
                "self._\(property.name) = try Trove._ModelCoding.decode(\\\(typeName).\(property.name), forKey: .\(property.name), from: container, references: &references)"
            } + toMany.map { "self._\($0.name) = []" }).joined(separator: "\n")
        members.append(
            """
            public init(from decoder: any Decoder) throws {
                let container = try decoder.container(keyedBy: CodingKeys.self)
                var references = Trove._PendingReferences(fromRow: true)
                \(raw: idDecode)
                \(raw: decodes)
                self._$backing.pending = references
            }
            """)
        let encodes =
            (["try container.encode(self.id, forKey: .id)"]
            + columns.map { property in
                "try Trove._ModelCoding.encode(self._\(property.name), forKey: .\(property.name), to: &container, backing: _$backing)"
            }).joined(separator: "\n")
        members.append(
            """
            public func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                \(raw: encodes)
            }
            """)
        members.append(
            contentsOf: typedCoding(typeName: typeName, columns: columns, toMany: toMany))
        let accesses = persisted.map { "access(keyPath: \\.\($0.name))" }.joined(separator: "\n")
        members.append(
            """
            public nonisolated func _$accessProperties() {
            \(raw: accesses)
            }
            """)
        // The storage readers let a context read values without the getters (no Observation
        // access, no relationship resolved) and without reflection.
        let keyPaths = columns.map {
            "Trove._ModelProperty(\"\($0.name)\", \\\(typeName).\($0.name), storage: { $0._\($0.name) })"
        }
        members.append(
            """
            public static var _$properties: [Trove._ModelProperty<\(raw: typeName)>] {
                [\(raw: keyPaths.joined(separator: ",\n"))]
            }
            """)
        members.append(
            modelOptions(
                typeName: typeName, columns: columns, members: classDecl.memberBlock.members))
        let relationships = toMany.map { property in
            let rule = property.deleteRule.map { ", deleteRule: \($0.trimmedDescription)" } ?? ""
            let inverse = property.inverse.map { ", inverse: \($0.trimmedDescription)" } ?? ""
            return
                "Trove._RelationshipMetadata(\\\(typeName).\(property.name), name: \"\(property.name)\"\(inverse)\(rule))"
        }
        // Arrays without `@Relationship`: a relationship when the element is a model, chosen by
        // the compiler (`_ModelCoding.relationship` is nil for an array of values).
        let inferred = columns.filter(\.mayBeToMany).map {
            "Trove._ModelCoding.relationship(\\\(typeName).\($0.name), name: \"\($0.name)\")"
        }
        if inferred.isEmpty {
            members.append(
                "public static var _$relationships: [Trove._RelationshipMetadata] { [\(raw: relationships.joined(separator: ", "))] }"
            )
        } else {
            members.append(
                """
                public static var _$relationships: [Trove._RelationshipMetadata] {
                    let declared: [Trove._RelationshipMetadata] = [\(raw: relationships.joined(separator: ", "))]
                    let inferred: [Trove._RelationshipMetadata?] = [\(raw: inferred.joined(separator: ", "))]
                    return declared + inferred.compactMap { $0 }
                }
                """)
        }
        // To-one properties declared with @Relationship: the inverse each names, for the other
        // side's array (which names none) to find, and the delete rule a delete applies.
        let toOne = columns.compactMap { property -> String? in
            guard !property.isArray, property.toOneInverse != nil || property.deleteRule != nil
            else { return nil }
            let inverse = property.toOneInverse.map { ", inverse: \($0.trimmedDescription)" } ?? ""
            let rule = property.deleteRule.map { ", deleteRule: \($0.trimmedDescription)" } ?? ""
            return
                "Trove._ToOneRelationship(\\\(typeName).\(property.name), name: \"\(property.name)\"\(inverse)\(rule))"
        }
        if !toOne.isEmpty {
            members.append(
                "public static var _$toOneRelationships: [Trove._ToOneRelationship] { [\(raw: toOne.joined(separator: ", "))] }"
            )
        }
        return members
    }

    /// The typed row coding a context uses on its hot paths: one read, write, snapshot and
    /// comparison per property, each an overload of `_ModelCoding` chosen when compiled by the
    /// property's type, so no Codable container is made and no generic type is looked up per
    /// row. `init(from:)` and `encode(to:)` stay: the general path, and the tests' oracle.
    /// Positions follow `init(from:)`'s order (the id first), slots the columns' order.
    static func typedCoding(typeName: String, columns: [StoredProperty], toMany: [StoredProperty])
        -> [DeclSyntax]
    {
        // The closure names the property for the overload (its type), and is never called.
        func read(_ storage: String, _ position: Int) -> String {
            "self.\(storage) = try Trove._ModelCoding.read(row, \(position), references: &references, { (model: \(typeName)) in model.\(storage) })"
        }
        let reads =
            ([read("id", 0)]
            + columns.enumerated().map { position, property in
                read("_\(property.name)", position + 1)
            } + toMany.map { "self._\($0.name) = []" }).joined(separator: "\n")
        let writes = columns.enumerated().map { slot, property in
            "try Trove._ModelCoding.write(self._\(property.name), \(slot), to: &row, backing: _$backing)"
        }
        let snapshots =
            (columns.map { property in
                "values.append(Trove._ModelCoding.snapshot(self._\(property.name), \"\(property.name)\", _$backing))"
            } + ["values.append(self.id)"]).joined(separator: "\n")
        let comparisons = columns.enumerated().map { slot, property in
            "if !Trove._ModelCoding.isCurrent(self._\(property.name), saved, \(slot), \"\(property.name)\", _$backing) {\nslots.append(\(slot))\n}"
        }
        let differing =
            comparisons.isEmpty
            ? "return []"
            : (["var slots: [Int] = []"] + comparisons + ["return slots"]).joined(separator: "\n")
        return [
            """
            public init(_$row row: Trove._ModelRowReader) throws {
                var references = Trove._PendingReferences(fromRow: true)
                \(raw: reads)
                self._$backing.pending = references
            }
            """,
            """
            public func _$write(to row: inout Trove._ModelRowWriter) throws {
                \(raw: writes.isEmpty ? "_ = row" : writes.joined(separator: "\n"))
            }
            """,
            """
            public func _$snapshot(into values: inout [Any]) {
                \(raw: snapshots)
            }
            """,
            """
            public func _$differing(from saved: UnsafePointer<Any>) -> [Int] {
                \(raw: differing)
            }
            """,
        ]
    }

    /// The declared options: `@Attribute(.unique)`, `originalName`, `.externalStorage`,
    /// relationships, `#Index` and `#Unique`.
    static func modelOptions(
        typeName: String, columns: [StoredProperty], members: MemberBlockItemListSyntax
    )
        -> DeclSyntax
    {
        var lines: [String] = ["var options = Trove.ModelOptions()"]
        for property in columns {
            let keyPath = "\\\(typeName).\(property.name)"
            if property.attributeOptions.contains("unique") {
                lines.append("options = options.unique(\(keyPath))")
            }
            if property.attributeOptions.contains("externalStorage") {
                lines.append("options = options._externalStorage(\(keyPath))")
            }
            if let original = property.originalName {
                lines.append(
                    "options = options.originalName(\(original.trimmedDescription), of: \(keyPath))"
                )
            }
            lines.append("Trove._ModelCoding.describe(\(keyPath), in: &options)")
            // The initial value fills the column of rows stored before the property existed (a
            // lightweight migration adding it), as SwiftData takes a property's default from it.
            if let initializer = property.initializer, !initializer.is(NilLiteralExprSyntax.self) {
                lines.append(
                    "options = options._initialValue(\(keyPath), \(initializer.trimmedDescription))"
                )
            }
        }
        for member in members {
            guard let expansion = member.decl.as(MacroExpansionDeclSyntax.self) else { continue }
            let name = expansion.macroName.text
            guard name == "Index" || name == "Unique" else { continue }
            for argument in expansion.arguments {
                guard let array = argument.expression.as(ArrayExprSyntax.self) else { continue }
                let paths = array.elements.map { qualified($0.expression, typeName) }.joined(
                    separator: ", ")
                lines.append(
                    name == "Index"
                        ? "options = options.indexed(\(paths))"
                        : "options = options.unique(\(paths))")
            }
        }
        lines.append("return options")
        return """
            public static var _$modelOptions: Trove.ModelOptions {
                \(raw: lines.joined(separator: "\n"))
            }
            """
    }

    /// `\.name` written inside `#Index<T>` as `\T.name`, so it has a root outside the macro.
    static func qualified(_ expression: ExprSyntax, _ typeName: String) -> String {
        guard let keyPath = expression.as(KeyPathExprSyntax.self), keyPath.root == nil else {
            return expression.trimmedDescription
        }
        return "\\\(typeName)\(keyPath.components.trimmedDescription)"
    }

    // MARK: Member attributes

    public static func expansion(
        of node: AttributeSyntax, attachedTo declaration: some DeclGroupSyntax,
        providingAttributesFor member: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [AttributeSyntax] {
        guard isAccepted(declaration), let variable = member.as(VariableDeclSyntax.self),
            StoredProperties.isStored(variable), variable.bindings.count == 1,
            let binding = variable.bindings.first,
            let name = binding.pattern.as(IdentifierPatternSyntax.self)?.identifier.text,
            !name.hasPrefix("_$"),
            variable.bindingSpecifier.tokenKind == .keyword(.var),
            !variable.modifiers.contains(where: {
                [.keyword(.static), .keyword(.class), .keyword(.lazy)].contains($0.name.tokenKind)
            }),
            !StoredProperties.hasAttribute(variable, "Transient"),
            !StoredProperties.hasAttribute(variable, "_PersistedProperty"),
            !StoredProperties.hasAttribute(variable, "_PersistedID")
        else { return [] }
        // observers: diagnosed by the member expansion
        if binding.accessorBlock != nil { return [] }
        // The id stays stored (contexts read it in place); its changes are told as the others'.
        if name == "id" { return ["@_PersistedID"] }
        let inverse = variable.attributes.compactMap { $0.as(AttributeSyntax.self) }
            .first { $0.attributeName.trimmedDescription == "Relationship" }?
            .arguments?.as(LabeledExprListSyntax.self)?.first { $0.label?.text == "inverse" }?
            .expression
        let property = StoredProperty(
            name: name, type: binding.typeAnnotation?.type, initializer: binding.initializer?.value,
            declaration: variable,
            isTransient: false)
        if let inverse, property.isArray {
            return ["@_PersistedProperty(inverse: \(inverse.trimmed))"]
        }
        let external =
            variable.attributes.compactMap { $0.as(AttributeSyntax.self) }
            .first { $0.attributeName.trimmedDescription == "Attribute" }?
            .arguments?.as(LabeledExprListSyntax.self)?
            .contains {
                $0.expression.as(MemberAccessExprSyntax.self)?.declName.baseName.text
                    == "externalStorage"
            }
            ?? false
        if external { return ["@_PersistedProperty(externalStorage: true)"] }
        return ["@_PersistedProperty"]
    }

    // MARK: Extensions

    public static func expansion(
        of node: AttributeSyntax, attachedTo declaration: some DeclGroupSyntax,
        providingExtensionsOf type: some TypeSyntaxProtocol,
        conformingTo protocols: [TypeSyntax], in context: some MacroExpansionContext
    ) throws -> [ExtensionDeclSyntax] {
        guard isAccepted(declaration) else { return [] }
        // Spelled through Trove so that a file that imports only Trove compiles; only those the
        // class does not already have (the compiler lists what is missing).
        let missing = protocols.map(\.trimmedDescription)
        var listed: [String] = []
        if missing.contains(where: { $0.hasSuffix("_ReferenceModel") }) {
            listed.append("Trove._ReferenceModel")
        }
        if missing.contains(where: { $0.hasSuffix("Observable") }) {
            listed.append("Trove._Observable")
        }
        guard !listed.isEmpty else { return [] }
        let decl: DeclSyntax =
            "extension \(type.trimmed): \(raw: listed.joined(separator: ", ")) {}"
        return [decl.cast(ExtensionDeclSyntax.self)]
    }

    /// Whether the member expansion accepts the class (checked again, without diagnostics, by the
    /// roles that must add nothing to a refused class).
    static func isAccepted(_ declaration: some DeclGroupSyntax) -> Bool {
        guard let classDecl = declaration.as(ClassDeclSyntax.self),
            classDecl.modifiers.contains(where: { $0.name.tokenKind == .keyword(.final) }),
            !(classDecl.inheritanceClause?.inheritedTypes.first.map {
                looksLikeClass($0.type.trimmedDescription)
            }
                ?? false)
        else { return false }
        return StoredProperties.read(classDecl.memberBlock.members, report: { _ in }) != nil
    }

    /// The class, when it is one `@Model` accepts; else the diagnostic, with a fix-it where one
    /// is obvious.
    static func checkedClass(
        _ declaration: some DeclGroupSyntax, node: AttributeSyntax,
        in context: some MacroExpansionContext
    ) -> ClassDeclSyntax? {
        guard let classDecl = declaration.as(ClassDeclSyntax.self) else {
            context.diagnose(Diagnostic(node: node, message: ModelDiagnostic.notAClass))
            return nil
        }
        if let inheritance = classDecl.inheritanceClause?.inheritedTypes.first,
            looksLikeClass(inheritance.type.trimmedDescription)
        {
            context.diagnose(Diagnostic(node: inheritance, message: ModelDiagnostic.inherits))
            return nil
        }
        guard classDecl.modifiers.contains(where: { $0.name.tokenKind == .keyword(.final) }) else {
            let keyword = classDecl.classKeyword
            let finalClass = TokenSyntax.identifier(
                "final class", leadingTrivia: keyword.leadingTrivia,
                trailingTrivia: keyword.trailingTrivia)
            context.diagnose(
                Diagnostic(
                    node: keyword, message: ModelDiagnostic.notFinal,
                    fixIts: [
                        FixIt(
                            message: ModelFixIt(message: "add 'final'"),
                            changes: [
                                .replace(oldNode: Syntax(keyword), newNode: Syntax(finalClass))
                            ])
                    ]))
            return nil
        }
        return classDecl
    }

    /// Superclasses the macro can tell by name: Foundation's (`NSObject`, ...). Any other first
    /// inherited name may be a protocol, which a syntax macro cannot tell apart; the compiler
    /// refuses a superclass there (the generated `init(from:)` does not call `super.init`).
    static func looksLikeClass(_ name: String) -> Bool {
        name == "NSObject" || name.hasPrefix("NS")
    }
}
