import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxMacros

/// `@MemberwiseCoding` on a value model (a struct): lists its stored properties by key path, so
/// fetched rows are written straight into them and written rows read straight from them (no
/// Codable containers, no run-time reflection). A struct that codes itself (`init(from:)` or
/// `encode(to:)` in its body) is refused: the fast path would skip that code.
public struct MemberwiseCodingMacro: ExtensionMacro {
    public static func expansion(
        of node: AttributeSyntax, attachedTo declaration: some DeclGroupSyntax,
        providingExtensionsOf type: some TypeSyntaxProtocol,
        conformingTo protocols: [TypeSyntax], in context: some MacroExpansionContext
    ) throws -> [ExtensionDeclSyntax] {
        guard let structDecl = declaration.as(StructDeclSyntax.self) else {
            context.diagnose(Diagnostic(node: node, message: ModelDiagnostic.notAStruct))
            return []
        }
        var names: [String] = []
        for member in structDecl.memberBlock.members {
            if let function = member.decl.as(FunctionDeclSyntax.self),
                function.name.text == "encode",
                function.signature.parameterClause.parameters.first?.firstName.text == "to"
            {
                context.diagnose(
                    Diagnostic(node: function.name, message: ModelDiagnostic.codesItself))
                return []
            }
            if let initializer = member.decl.as(InitializerDeclSyntax.self),
                initializer.signature.parameterClause.parameters.first?.firstName.text == "from"
            {
                context.diagnose(
                    Diagnostic(node: initializer.initKeyword, message: ModelDiagnostic.codesItself))
                return []
            }
            guard let variable = member.decl.as(VariableDeclSyntax.self),
                StoredProperties.isStored(variable),
                !variable.modifiers.contains(where: {
                    [.keyword(.static), .keyword(.lazy)].contains($0.name.tokenKind)
                })
            else { continue }
            for binding in variable.bindings {
                if let name = binding.pattern.as(IdentifierPatternSyntax.self)?.identifier.text {
                    names.append(name)
                }
            }
        }
        let typeName = type.trimmedDescription
        let fields = names.map { "(\"\($0)\", \\\(typeName).\($0))" }.joined(separator: ", ")
        let decl: DeclSyntax = """
            extension \(type.trimmed): Trove._MemberwiseFields {
                public static var _$fields: [(name: String, keyPath: PartialKeyPath<\(raw: typeName)>)] { [\(raw: fields)] }
            }
            """
        return [decl.cast(ExtensionDeclSyntax.self)]
    }
}
