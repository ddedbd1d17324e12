import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxMacros

/// `@ModelActor`: an actor that owns a model context of its own, as SwiftData's macro makes one:
/// the container, a context made for the actor in `init(modelContainer:)`, and the conformance.
public struct ModelActorMacro: MemberMacro, ExtensionMacro {
    public static func expansion(
        of node: AttributeSyntax, providingMembersOf declaration: some DeclGroupSyntax,
        conformingTo protocols: [TypeSyntax], in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        guard declaration.is(ActorDeclSyntax.self) else {
            context.diagnose(Diagnostic(node: node, message: ModelDiagnostic.notAnActor))
            return []
        }
        return [
            "public nonisolated let modelContainer: Trove.ModelContainer",
            "public let modelContext: Trove.ModelContext",
            """
            public init(modelContainer: Trove.ModelContainer) {
                self.modelContainer = modelContainer
                self.modelContext = Trove.ModelContext(modelContainer)
            }
            """,
        ]
    }

    public static func expansion(
        of node: AttributeSyntax, attachedTo declaration: some DeclGroupSyntax,
        providingExtensionsOf type: some TypeSyntaxProtocol,
        conformingTo protocols: [TypeSyntax], in context: some MacroExpansionContext
    ) throws -> [ExtensionDeclSyntax] {
        guard declaration.is(ActorDeclSyntax.self), !protocols.isEmpty else { return [] }
        let decl: DeclSyntax = "extension \(type.trimmed): Trove.ModelActor {}"
        return [decl.cast(ExtensionDeclSyntax.self)]
    }
}
