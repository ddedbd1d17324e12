import SwiftDiagnostics
import SwiftSyntax

/// What the model macros refuse, each with the reason a person can act on.
struct ModelDiagnostic: DiagnosticMessage {
    let message: String
    let id: String
    var severity: DiagnosticSeverity { .error }
    var diagnosticID: MessageID { MessageID(domain: "Trove", id: id) }

    static let notAClass = ModelDiagnostic(
        message:
            "@Model applies to a final class; a value model is a struct that conforms to Model",
        id: "notAClass")
    static let notAStruct = ModelDiagnostic(
        message:
            "@MemberwiseCoding applies to a struct (a value model); a class model is a @Model class",
        id: "notAStruct")
    static let codesItself = ModelDiagnostic(
        message:
            "@MemberwiseCoding writes rows straight into the properties, skipping this; remove one or the other",
        id: "codesItself")
    static let notAnActor = ModelDiagnostic(
        message:
            "@ModelActor applies to an actor: its context is used only on the actor's executor",
        id: "notAnActor")
    static let notFinal = ModelDiagnostic(
        message:
            "@Model applies to a final class (a context keeps one instance per row; subclasses are not stored)",
        id: "notFinal")
    static let inherits = ModelDiagnostic(
        message:
            "a @Model class cannot inherit from another class (its rows hold only its own properties)",
        id: "inherits")
    static func letProperty(_ name: String) -> ModelDiagnostic {
        ModelDiagnostic(
            message:
                "stored property '\(name)' must be a var: a context sets it when it reads or rolls back",
            id: "let"
        )
    }
    static func transientWithoutDefault(_ name: String) -> ModelDiagnostic {
        ModelDiagnostic(
            message:
                "@Transient property '\(name)' needs a default value: it is not stored, so a fetched model starts from it",
            id: "transientDefault")
    }
    static func manyBindings() -> ModelDiagnostic {
        ModelDiagnostic(
            message: "declare one stored property per 'var' in a @Model class", id: "manyBindings")
    }
    static func lazyProperty(_ name: String) -> ModelDiagnostic {
        ModelDiagnostic(
            message:
                "'lazy' property '\(name)' cannot be stored; use @Attribute(.externalStorage) for a column read on first access, or @Transient",
            id: "lazy")
    }
    static func observers(_ name: String) -> ModelDiagnostic {
        ModelDiagnostic(
            message:
                "stored property '\(name)' cannot have willSet/didSet in a @Model class; observe the model (Observation) instead",
            id: "observers")
    }
    static func unstorable(_ name: String, _ type: String) -> ModelDiagnostic {
        ModelDiagnostic(
            message:
                "property '\(name)' of type '\(type)' cannot be stored (functions, tuples and existentials have no column); mark it @Transient",
            id: "unstorable")
    }
    static func inverseWithoutRoot(_ name: String, _ keyPath: String) -> ModelDiagnostic {
        ModelDiagnostic(
            message:
                "@Relationship(inverse:) of '\(name)' must name the other model's type ('\\Other\(keyPath)'): the key path is read outside this class",
            id: "inverseWithoutRoot")
    }
    static func badID(_ type: String) -> ModelDiagnostic {
        ModelDiagnostic(
            message: "'id' must be a var of type UUID, Int64 or String, not '\(type)'", id: "badID")
    }
}

/// A fix-it with a message.
struct ModelFixIt: FixItMessage {
    let message: String
    var fixItID: MessageID { MessageID(domain: "Trove", id: message) }
}
