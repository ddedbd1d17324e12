import Foundation

extension DocumentSchema {
    /// The declarative steps that turn this schema into `target`, in an order where each is valid:
    /// renames, then what goes away (indexes, the full-text index, fields), then what changes and
    /// what comes (fields, the full-text index, indexes, vector index kinds). Each is applied to a
    /// copy as it is derived, so every step is checked before the first one runs. A field added
    /// required and without a default takes its value in `fills` (its default while it is added;
    /// the stored schema ends as `target` says).
    func lightweightSteps(
        to target: DocumentSchema, renamed: [String: String], collection: String,
        fills: [String: Value] = [:]
    ) throws -> [MigrationStep.Kind] {
        guard id == target.id else {
            throw StepRefusal(
                reason: "\(collection): the id kind cannot change (\(id) to \(target.id))")
        }
        guard allowsUndeclaredFields == target.allowsUndeclaredFields else {
            throw StepRefusal(
                reason:
                    "\(collection): allowsUndeclaredFields cannot change in a lightweight migration"
            )
        }
        guard allowsExpiry == target.allowsExpiry else {
            throw StepRefusal(
                reason: "\(collection): allowsExpiry cannot change in a lightweight migration")
        }
        var current = self
        var kinds: [MigrationStep.Kind] = []
        func add(_ kind: MigrationStep.Kind) throws {
            current = try current.edited(by: kind, collection: collection).schema
            kinds.append(kind)
        }
        for (old, new) in renamed.sorted(by: { $0.key < $1.key }) where current.field(old) != nil {
            try add(.renameField(from: old, to: new))
        }
        for index in current.indexes where !target.indexes.contains(index) {
            try add(.dropIndex(index))
        }
        // An index made with an earlier default tokenizer serves the current default (it is kept).
        if !FullTextDefinition.stored(current.fullText, serves: target.fullText),
            current.fullText != nil
        {
            try add(.setFullText(nil))
        }
        for field in current.fields where target.field(field.name) == nil {
            try add(.removeField(field.name))
        }
        for field in current.fields {
            if let wanted = target.field(field.name), wanted != field {
                try add(.changeField(field.name, wanted, nil))
            }
        }
        for field in target.fields where current.field(field.name) == nil {
            var added = field
            if !field.isOptional, field.defaultValue == nil, let fill = fills[field.name] {
                added.defaultValue = fill
            }
            try add(.addField(added))
        }
        if !FullTextDefinition.stored(current.fullText, serves: target.fullText),
            let fullText = target.fullText
        {
            try add(.setFullText(fullText))
        }
        for index in target.indexes where !current.indexes.contains(index) {
            try add(.addIndex(index))
        }
        for field in target.fields
        where field.type.vectorDimension != nil
            && current.vectorIndexes[field.name] != target.vectorIndexes[field.name]
        {
            try add(.setVectorIndex(field: field.name, target.vectorIndexes[field.name] ?? .flat))
        }
        if !target.embeddingSources.isEmpty, current.embeddingSources != target.embeddingSources {
            throw StepRefusal(
                reason:
                    "\(collection): the embedding sources differ; change the model with changeEmbeddingModel"
            )
        }
        return kinds
    }

    /// `target` with the stored embedding sources when it names none, and the stored full-text
    /// index when it serves the target's (an earlier default tokenizer), as opening would accept.
    func adopting(_ target: DocumentSchema) -> DocumentSchema {
        var result = target
        if result.embeddingSources.isEmpty { result.embeddingSources = embeddingSources }
        if let fullText, let wanted = target.fullText, fullText.serves(wanted) {
            result.fullText = fullText
        }
        return result
    }
}
