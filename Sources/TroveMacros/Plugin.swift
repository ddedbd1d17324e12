import SwiftCompilerPlugin
import SwiftSyntaxMacros

/// The compiler plug-in that expands Trove's model macros.
@main
struct TroveMacrosPlugin: CompilerPlugin {
    let providingMacros: [any Macro.Type] = [
        ModelMacro.self, PersistedPropertyMacro.self, PersistedIDMacro.self, MarkerMacro.self,
        SchemaListMacro.self,
        ModelActorMacro.self,
        MemberwiseCodingMacro.self,
    ]
}
