import SwiftSyntax
import SwiftSyntaxMacros

/// `@_PersistedProperty` (added by `@Model` to each stored property): the property becomes
/// computed over `_name` storage, observed as an `@Observable` class's properties are, and read
/// and set through `_ModelCoding`, whose overloads (chosen by the property's type when compiled)
/// do nothing for values and, for relationships, resolve the other side through the model's
/// context on first access and keep the inverse in step. A context reads and compares the
/// storage directly (ReferenceLayout), so saves pay no getter.
public struct PersistedPropertyMacro: AccessorMacro, PeerMacro {
    public static func expansion(
        of node: AttributeSyntax, providingAccessorsOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [AccessorDeclSyntax] {
        guard let variable = declaration.as(VariableDeclSyntax.self),
            let binding = variable.bindings.first,
            let name = binding.pattern.as(IdentifierPatternSyntax.self)?.identifier.trimmed
        else { return [] }
        let n = name.text
        let inverse = node.arguments?.as(LabeledExprListSyntax.self)?.first {
            $0.label?.text == "inverse"
        }?.expression
        let extra = inverse.map { ", inverse: \($0.trimmedDescription)" } ?? ""
        let external =
            node.arguments?.as(LabeledExprListSyntax.self)?.contains {
                $0.label?.text == "externalStorage"
            } ?? false
        let hook = external ? "loadedExternal" : "resolved"
        return [
            """
            @storageRestrictions(initializes: _\(name))
            init(initialValue) {
                _\(name) = initialValue
            }
            """,
            """
            get {
                access(keyPath: \\.\(name))
                if let resolved = Trove._ModelCoding.\(raw: hook)(_\(name), name: "\(raw: n)"\(raw: extra), of: self) {
                    _\(name) = resolved
                }
                return _\(name)
            }
            """,
            """
            set {
                let oldValue = _\(name)
                withMutation(keyPath: \\.\(name)) {
                    _\(name) = newValue
                }
                Trove._ModelCoding.didSet(name: "\(raw: n)", from: oldValue, to: newValue\(raw: extra), of: self)
            }
            """,
        ]
    }

    public static func expansion(
        of node: AttributeSyntax, providingPeersOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        guard let variable = declaration.as(VariableDeclSyntax.self),
            let binding = variable.bindings.first,
            let name = binding.pattern.as(IdentifierPatternSyntax.self)?.identifier.trimmed
        else { return [] }
        let type = binding.typeAnnotation.map { ": \($0.type.trimmedDescription)" } ?? ""
        let initializer = binding.initializer.map { " \($0.trimmedDescription)" } ?? ""
        return ["private var _\(name)\(raw: type)\(raw: initializer)"]
    }
}

/// `@_PersistedID` (added by `@Model` to a declared `id`): the id stays a stored property (a
/// context reads it in place), with a `didSet` that tells the model's context it changed, as
/// the other properties' setters do, so a save visits only changed models and still finds a
/// changed id (which it refuses).
public struct PersistedIDMacro: AccessorMacro {
    public static func expansion(
        of node: AttributeSyntax, providingAccessorsOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [AccessorDeclSyntax] {
        [
            """
            didSet {
                Trove._ModelCoding.idDidSet(from: oldValue, of: self)
            }
            """
        ]
    }
}

/// `@Attribute`, `@Relationship` and `@Transient`: markers that `@Model` reads; they add nothing
/// themselves.
public struct MarkerMacro: PeerMacro {
    public static func expansion(
        of node: AttributeSyntax, providingPeersOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        []
    }
}

/// `#Index` and `#Unique`: lists that `@Model` reads from the class body; they declare nothing
/// themselves.
public struct SchemaListMacro: DeclarationMacro {
    public static func expansion(
        of node: some FreestandingMacroExpansionSyntax, in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        []
    }
}
