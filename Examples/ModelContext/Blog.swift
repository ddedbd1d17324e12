import Foundation
import Observation
import Trove

/// A reference model: a final class, @Observable so SwiftUI redraws when it changes.
/// CodingKeys name the columns (Observation stores each property as `_name`), and
/// `properties` lists the stored properties so a context can put saved values back.
@Model final class Post {
    var id: Int64
    var title: String
    var content: String
    var blogID: Int64?
    var cover: LazyField<Data>  // not read by fetches; loaded on first access

    init(id: Int64, title: String, content: String, blogID: Int64? = nil, cover: Data = Data()) {
        self.id = id
        self.title = title
        self.content = content
        self.blogID = blogID
        self.cover = LazyField(cover)
    }

    static var modelOptions: ModelOptions { ModelOptions().reference(\Post.blogID, to: Blog.self, onDelete: .nullify) }
}

@Model final class Blog {
    var id: Int64
    var name: String

    init(id: Int64, name: String) {
        self.id = id
        self.name = name
    }

}

/// A value model in the same schema: a struct, read and written through `database.models`.
struct Visit: Model {
    var id: Int64
    var postID: Int64
    var at: Date
}

enum BlogV1: VersionedSchema {
    static let versionIdentifier = Schema.Version(1, 0, 0)
    static let models: [any PersistentModel.Type] = [Blog.self, Post.self, Visit.self]
}
