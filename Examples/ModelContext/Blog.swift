import Foundation
import Trove

/// A model class, as SwiftData declares one: @Model makes it observable (SwiftUI redraws),
/// persistent and coded, and gives it a time-ordered UUID id since it declares none.
@Model final class Post {
    var title: String
    var content: String
    var blog: Blog?  // a to-one relationship: stored as the blog's id, resolved on first access
    // Many-to-many: one side names the other as its inverse; each pair is one stored link.
    @Relationship(inverse: \Tag.posts) var tags = [Tag]()

    init(title: String, content: String, blog: Blog? = nil) {
        self.title = title
        self.content = content
        self.blog = blog
    }
}

@Model final class Blog {
    @Attribute(.unique) var name: String
    // Deleting a blog deletes its posts; the inverse is each post's `blog`.
    @Relationship(deleteRule: .cascade, inverse: \Post.blog)
    var posts = [Post]()

    init(name: String) {
        self.name = name
    }
}

@Model final class Tag {
    @Attribute(.unique) var name: String
    @Relationship var posts = [Post]()  // the other side of Post.tags

    init(name: String) {
        self.name = name
    }
}

/// A value model in the same file: a struct, read and written through `database.models`.
struct Visit: Model {
    var id: Int64
    var postTitle: String
    var at: Date
}
