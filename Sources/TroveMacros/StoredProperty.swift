import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxMacros

/// One stored property of a `@Model` class as the macro reads it from the declaration.
struct StoredProperty {
    let name: String
    /// The type as written; nil when it is left to the initial value (`var count = 0`), which
    /// the generated code never needs: it names each property by key path.
    let type: TypeSyntax?
    let initializer: ExprSyntax?
    let declaration: VariableDeclSyntax
    /// `@Transient`: kept in memory, not stored.
    let isTransient: Bool
    /// `@Attribute(...)`'s options and original name.
    var attributeOptions: [String] = []
    var originalName: ExprSyntax?
    /// `@Relationship(...)`, when written on the property.
    var relationship: AttributeSyntax?
    var deleteRule: ExprSyntax?
    var inverse: ExprSyntax?

    /// Whether the type is spelled as an array (`[T]`, `[T]?`, `Array<T>`): with `@Relationship`,
    /// a to-many relationship.
    var isArray: Bool {
        guard var type = self.type else {
            // `var animals = [Animal]()`
            guard let call = initializer?.as(FunctionCallExprSyntax.self) else { return false }
            return call.calledExpression.is(ArrayExprSyntax.self)
        }
        if let optional = type.as(OptionalTypeSyntax.self) { type = optional.wrappedType }
        if let identifier = type.as(IdentifierTypeSyntax.self), identifier.name.text == "Optional",
            let argument = identifier.genericArgumentClause?.arguments.first
        {
            // `Optional<[T]>`
            if case .type(let wrapped) = argument.argument { type = wrapped }
        }
        if type.is(ArrayTypeSyntax.self) { return true }
        if let identifier = type.as(IdentifierTypeSyntax.self), identifier.name.text == "Array" {
            return true
        }
        return false
    }

    /// A to-many relationship: `@Relationship` on an array of models. It has no column (the
    /// children's references, or the edge table's links for many-to-many, are its storage).
    /// Without `inverse:` it is the side of a many-to-many relationship whose inverse the other
    /// side names (naming it on both sides would make each declaration depend on the other).
    var isToMany: Bool { relationship != nil && isArray }

    /// An array without `@Relationship` that may hold models: a to-many relationship whose
    /// inverse the other side names, or a column of values. The macro cannot tell which (only
    /// the compiler knows whether the element is a model), so it writes code for both, chosen
    /// by the element's type when compiled; arrays of the standard library's and Foundation's
    /// value types are known to be columns.
    var mayBeToMany: Bool {
        guard relationship == nil, isArray else { return false }
        guard let element = arrayElement?.trimmedDescription else { return true }
        return !Self.valueTypes.contains(element)
    }

    /// A to-one property's `@Relationship(inverse:)`: the array on the other side it names.
    var toOneInverse: ExprSyntax? { isArray ? nil : inverse }

    /// The element type of an array spelled `[T]`, `[T]?`, `Array<T>` or `Optional<[T]>`.
    private var arrayElement: TypeSyntax? {
        guard var type = self.type else { return nil }
        if let optional = type.as(OptionalTypeSyntax.self) { type = optional.wrappedType }
        if let identifier = type.as(IdentifierTypeSyntax.self), identifier.name.text == "Optional",
            let argument = identifier.genericArgumentClause?.arguments.first,
            case .type(let wrapped) = argument.argument
        {
            type = wrapped
        }
        if let array = type.as(ArrayTypeSyntax.self) { return array.element }
        if let identifier = type.as(IdentifierTypeSyntax.self), identifier.name.text == "Array",
            let argument = identifier.genericArgumentClause?.arguments.first,
            case .type(let element) = argument.argument
        {
            return element
        }
        return nil
    }

    private static let valueTypes: Set<String> = [
        "String", "Substring", "Character", "Bool", "Int", "Int8", "Int16", "Int32", "Int64",
        "UInt", "UInt8", "UInt16", "UInt32", "UInt64", "Float", "Double", "CGFloat", "Decimal",
        "Date", "Data", "UUID", "URL",
    ]

}

/// A class's stored properties, with the diagnostics of those that cannot be stored.
enum StoredProperties {
    /// - Parameter report: where diagnostics go (nowhere when another role of the macro already
    ///   reports them).
    static func read(_ members: MemberBlockItemListSyntax, report: (Diagnostic) -> Void)
        -> [StoredProperty]?
    {
        var properties: [StoredProperty] = []
        var failed = false
        for member in members {
            guard let variable = member.decl.as(VariableDeclSyntax.self), isStored(variable) else {
                continue
            }
            if variable.modifiers.contains(where: {
                $0.name.tokenKind == .keyword(.static) || $0.name.tokenKind == .keyword(.class)
            }) {
                continue
            }
            guard variable.bindings.count == 1, let binding = variable.bindings.first,
                let pattern = binding.pattern.as(IdentifierPatternSyntax.self)
            else {
                report(Diagnostic(node: variable, message: ModelDiagnostic.manyBindings()))
                failed = true
                continue
            }
            let name = pattern.identifier.text
            if name.hasPrefix("_$") { continue }
            let isTransient = hasAttribute(variable, "Transient")
            if variable.modifiers.contains(where: { $0.name.tokenKind == .keyword(.lazy) }) {
                if isTransient { continue }
                report(Diagnostic(node: variable, message: ModelDiagnostic.lazyProperty(name)))
                failed = true
                continue
            }
            if let accessors = binding.accessorBlock,
                case .accessors(let list) = accessors.accessors,
                list.contains(where: { ["willSet", "didSet"].contains($0.accessorSpecifier.text) }),
                !isTransient
            {
                report(Diagnostic(node: accessors, message: ModelDiagnostic.observers(name)))
                failed = true
                continue
            }
            let type = binding.typeAnnotation?.type.trimmed
            let initializer = binding.initializer?.value
            if variable.bindingSpecifier.tokenKind == .keyword(.let), !isTransient {
                let keyword = variable.bindingSpecifier
                let fixed = TokenSyntax.keyword(
                    .var, leadingTrivia: keyword.leadingTrivia,
                    trailingTrivia: keyword.trailingTrivia)
                report(
                    Diagnostic(
                        node: keyword, message: ModelDiagnostic.letProperty(name),
                        fixIts: [
                            FixIt(
                                message: ModelFixIt(message: "use 'var'"),
                                changes: [
                                    .replace(oldNode: Syntax(keyword), newNode: Syntax(fixed))
                                ])
                        ]))
                failed = true
                continue
            }
            if isTransient {
                if binding.initializer == nil, !(type.map(isOptional) ?? false) {
                    report(
                        Diagnostic(
                            node: variable, message: ModelDiagnostic.transientWithoutDefault(name)))
                    failed = true
                }
                properties.append(
                    StoredProperty(
                        name: name, type: type, initializer: initializer, declaration: variable,
                        isTransient: true))
                continue
            }
            if let type, !isStorable(type) {
                report(
                    Diagnostic(
                        node: type,
                        message: ModelDiagnostic.unstorable(name, type.trimmedDescription)))
                failed = true
                continue
            }
            var property = StoredProperty(
                name: name, type: type, initializer: initializer, declaration: variable,
                isTransient: false)
            for attribute in variable.attributes.compactMap({ $0.as(AttributeSyntax.self) }) {
                let attributeName = attribute.attributeName.trimmedDescription
                let arguments = attribute.arguments?.as(LabeledExprListSyntax.self) ?? []
                if attributeName == "Attribute" {
                    for argument in arguments {
                        if argument.label?.text == "originalName" {
                            property.originalName = argument.expression
                        } else if argument.label == nil,
                            let member = argument.expression.as(MemberAccessExprSyntax.self)
                        {
                            property.attributeOptions.append(member.declName.baseName.text)
                        }
                    }
                } else if attributeName == "Relationship" {
                    property.relationship = attribute
                    for argument in arguments {
                        if argument.label?.text == "deleteRule" {
                            property.deleteRule = argument.expression
                        }
                        if argument.label?.text == "inverse" {
                            property.inverse = argument.expression
                            if let keyPath = argument.expression.as(KeyPathExprSyntax.self),
                                keyPath.root == nil
                            {
                                report(
                                    Diagnostic(
                                        node: keyPath,
                                        message: ModelDiagnostic.inverseWithoutRoot(
                                            name, keyPath.components.trimmedDescription)))
                                failed = true
                            }
                        }
                    }
                }
            }
            properties.append(property)
        }
        return failed ? nil : properties
    }

    /// Whether a `var` or `let` has storage (no `get`, or only observers).
    static func isStored(_ variable: VariableDeclSyntax) -> Bool {
        guard let binding = variable.bindings.first else { return false }
        guard let block = binding.accessorBlock else { return true }
        switch block.accessors {
        case .getter: return false
        case .accessors(let list):
            return !list.contains {
                ["get", "set", "_read", "_modify", "init", "unsafeAddress"].contains(
                    $0.accessorSpecifier.text)
            }
        }
    }

    static func hasAttribute(_ variable: VariableDeclSyntax, _ name: String) -> Bool {
        variable.attributes.contains {
            $0.as(AttributeSyntax.self)?.attributeName.trimmedDescription == name
        }
    }

    static func isOptional(_ type: TypeSyntax) -> Bool {
        if type.is(OptionalTypeSyntax.self) || type.is(ImplicitlyUnwrappedOptionalTypeSyntax.self) {
            return true
        }
        if let identifier = type.as(IdentifierTypeSyntax.self), identifier.name.text == "Optional" {
            return true
        }
        return false
    }

    /// Types with no column, at any depth: functions, tuples, existentials, metatypes.
    static func isStorable(_ type: TypeSyntax) -> Bool {
        if type.is(FunctionTypeSyntax.self)
            || type.is(TupleTypeSyntax.self) && type.as(TupleTypeSyntax.self)!.elements.count != 1
            || type.is(MetatypeTypeSyntax.self) || type.is(SomeOrAnyTypeSyntax.self)
            || type.is(CompositionTypeSyntax.self)
        {
            return false
        }
        if let tuple = type.as(TupleTypeSyntax.self), let only = tuple.elements.first {
            return isStorable(only.type)
        }
        if let attributed = type.as(AttributedTypeSyntax.self) {
            return isStorable(attributed.baseType)
        }
        if let optional = type.as(OptionalTypeSyntax.self) {
            return isStorable(optional.wrappedType)
        }
        if let array = type.as(ArrayTypeSyntax.self) { return isStorable(array.element) }
        if let dictionary = type.as(DictionaryTypeSyntax.self) {
            return isStorable(dictionary.key) && isStorable(dictionary.value)
        }
        if let identifier = type.as(IdentifierTypeSyntax.self),
            let arguments = identifier.genericArgumentClause?.arguments
        {
            for argument in arguments {
                if case .type(let inner) = argument.argument, !isStorable(inner) { return false }
            }
        }
        return true
    }
}
