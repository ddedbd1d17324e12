import Foundation

/// What one declarative step does to a collection: its schema afterwards and how the table gets
/// there. Pure: computed (and checked) before anything in the file changes.
struct SchemaEdit {
    var schema: DocumentSchema
    var table: TableChange
}

/// How the table itself changes; indexes, triggers and the full-text table always follow the new
/// layout (`CollectionMigration.sync`).
enum TableChange {
    /// Only derived objects change (indexes, the full-text table, in-memory index kinds).
    case none
    /// `ALTER TABLE ADD COLUMN`: O(1), existing rows read the column's default.
    case addColumn(FieldDefinition)
    /// `ALTER TABLE RENAME COLUMN`: O(1).
    case renameColumn(from: String, to: String)
    /// `ALTER TABLE DROP COLUMN`: rewrites the table, but much faster than a rebuild
    /// (BENCHMARKS.md, "Migrations"); falls back to the rebuild where SQLite refuses it.
    case dropColumn(String, otherwise: [String: ColumnSource])
    /// A new table filled from the old one, then swapped in (SQLite's "12 steps"): O(rows).
    case rebuild([String: ColumnSource])
}

/// Where a rebuilt table's field gets its values.
enum ColumnSource {
    /// The old table's column of that name, copied by SQL.
    case copy(String)
    /// The old field's values, each through a transform (nil: as is) and the new field's checks.
    case convert(old: FieldDefinition, transform: MigrationStep.Transform?)
    /// The values undeclared documents kept under this name in `_extra` (moved out of it).
    case fromExtra
    /// Vectors computed before the transaction, by row id.
    case vectors(ReembeddedVectors)
    /// Nothing: the column's default (or null).
    case fill
}

/// A step that does not fit the collection as it stands; reported as
/// ``MigrationError/invalidStep(migration:reason:)``.
struct StepRefusal: Error { let reason: String }

extension DocumentSchema {
    /// The schema after `kind`, and how the table changes. Throws ``StepRefusal`` for steps that
    /// do not fit, ``MigrationError/fieldInUse(collection:field:usedBy:)``, or the schema's own
    /// validation errors.
    func edited(by kind: MigrationStep.Kind, collection: String) throws -> SchemaEdit {
        var next = self
        let change: TableChange
        switch kind {
        case .createCollection, .dropCollection, .custom, .reembed, .lightweight:
            preconditionFailure("not a schema edit")

        case .addField(let field):
            guard self.field(field.name) == nil else {
                throw StepRefusal(reason: "\(collection) already has a field \(field.name)")
            }
            next.fields.append(field)
            let literalIsAllowed =
                try field.defaultValue.map {
                    !DocumentLayout.literal(try FieldCodec.bind($0, for: field)).hasPrefix("(")
                } ?? true
            // ALTER TABLE ADD COLUMN takes no UNIQUE, no NOT NULL without a default and no
            // parenthesised default (SQLite's rules). (Values to move out of `_extra` turn it
            // into a rebuild too; whether there are any is a question for the file.)
            if !field.isUnique, field.isOptional || field.defaultValue != nil, literalIsAllowed {
                change = .addColumn(field)
            } else {
                change = .rebuild(
                    copyingAll(
                        next, except: field.name, with: allowsUndeclaredFields ? .fromExtra : .fill)
                )
            }

        case .renameField(let old, let new):
            guard self.field(old) != nil else {
                throw TroveError.unknownField(field: old, known: fields.map(\.name))
            }
            try DocumentSchema.validate(fieldName: new)
            guard self.field(new) == nil else {
                throw StepRefusal(reason: "\(collection) already has a field \(new)")
            }
            next.fields = fields.map { $0.name == old ? $0.renamed(new) : $0 }
            next.indexes = indexes.map {
                IndexDefinition(
                    $0.keys.map { $0.name == old ? Field(new, path: $0.path) : $0 },
                    unique: $0.isUnique)
            }
            if var fullText {
                fullText.fields = fullText.fields.map { $0 == old ? new : $0 }
                next.fullText = fullText
            }
            if let kind = vectorIndexes[old] {
                next.vectorIndexes[old] = nil
                next.vectorIndexes[new] = kind
            }
            next.embeddingSources = [:]
            for (vector, var source) in embeddingSources {
                if source.textField == old { source.textField = new }
                next.embeddingSources[vector == old ? new : vector] = source
            }
            change = .renameColumn(from: old, to: new)

        case .removeField(let name):
            guard field(name) != nil else {
                throw TroveError.unknownField(field: name, known: fields.map(\.name))
            }
            if let index = indexes.first(where: { $0.keys.contains { $0.name == name } }) {
                throw MigrationError.fieldInUse(
                    collection: collection, field: name,
                    usedBy: "the index on \(index.keys.map(\.description).joined(separator: ", "))")
            }
            if fullText?.fields.contains(name) == true {
                throw MigrationError.fieldInUse(
                    collection: collection, field: name, usedBy: "the full-text index")
            }
            if let (vector, _) = embeddingSources.first(where: { $0.value.textField == name }) {
                throw MigrationError.fieldInUse(
                    collection: collection, field: name, usedBy: "the embedding source of \(vector)"
                )
            }
            let unique = field(name)!.isUnique
            next.fields.removeAll { $0.name == name }
            next.vectorIndexes[name] = nil
            next.embeddingSources[name] = nil
            // SQLite cannot drop a UNIQUE column.
            change =
                unique ? .rebuild(copyingAll(next)) : .dropColumn(name, otherwise: copyingAll(next))

        case .changeField(let name, let definition, let transform):
            guard let old = field(name) else {
                throw TroveError.unknownField(field: name, known: fields.map(\.name))
            }
            guard definition.name == name else {
                throw StepRefusal(
                    reason:
                        "changeField keeps the name (\(name), not \(definition.name)); rename in its own step"
                )
            }
            next.fields = fields.map { $0.name == name ? definition : $0 }
            if definition.type.vectorDimension == nil {
                next.vectorIndexes[name] = nil
                next.embeddingSources[name] = nil
            }
            change = .rebuild(
                copyingAll(next, except: name, with: .convert(old: old, transform: transform)))

        case .addIndex(let index):
            guard !indexes.contains(index),
                !(index.keys.count == 1 && index.keys[0].path == nil
                    && field(index.keys[0].name).map {
                        $0.isIndexed && !index.isUnique || $0.isUnique
                    } == true)
            else { throw StepRefusal(reason: "\(collection) already has that index") }
            next.indexes.append(index)
            change = .none

        case .dropIndex(let index):
            if let position = indexes.firstIndex(of: index) {
                next.indexes.remove(at: position)
            } else if index.keys.count == 1, index.keys[0].path == nil, !index.isUnique,
                let field = field(index.keys[0].name), field.isIndexed, !field.isUnique
            {
                next.fields = fields.map { $0.name == field.name ? $0.indexed(false) : $0 }
            } else {
                throw StepRefusal(
                    reason:
                        "\(collection) has no such index (a unique field's constraint changes with changeField)"
                )
            }
            change = .none

        case .setFullText(let definition):
            guard definition != nil || fullText != nil else {
                throw StepRefusal(reason: "\(collection) has no full-text index")
            }
            next.fullText = definition
            change = .none

        case .setVectorIndex(let name, let kind):
            guard field(name)?.type.vectorDimension != nil else {
                throw StepRefusal(reason: "\(collection).\(name) is not a vector field")
            }
            // `.flat` is the default, stored as no entry, so the schema equals a fresh one.
            next.vectorIndexes[name] = kind == .flat ? nil : kind
            change = .none
        }
        try next.validate()
        return SchemaEdit(schema: next, table: change)
    }

    /// Every field of `schema` copied from the old column of the same name, except `name`.
    func copyingAll(
        _ schema: DocumentSchema, except name: String? = nil, with source: ColumnSource = .fill
    ) -> [String:
        ColumnSource]
    {
        var sources: [String: ColumnSource] = [:]
        for field in schema.fields {
            sources[field.name] = field.name == name ? source : .copy(field.name)
        }
        return sources
    }
}

extension FieldDefinition {
    func renamed(_ name: String) -> FieldDefinition {
        var copy = self
        copy.name = name
        return copy
    }

    func indexed(_ flag: Bool) -> FieldDefinition {
        var copy = self
        copy.isIndexed = flag
        return copy
    }
}
