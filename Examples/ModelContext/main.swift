// Model containers and contexts: @Model classes edited in place and saved together, the SwiftData way.
// Run: swift run example-model-context [folder]
import Foundation
import Trove

let folder = CommandLine.arguments.dropFirst().first ?? NSTemporaryDirectory()
let url = URL(fileURLWithPath: folder).appendingPathComponent("blog-\(ProcessInfo.processInfo.processIdentifier).store")
defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: url.path + suffix) } }

// A container opens the models' collections (and, given a plan, migrates them); its main context is for UI code.
let container = try ModelContainer(for: Blog.self, Post.self, Tag.self, Visit.self, configurations: ModelConfiguration(url: url))
let context = container.mainContext
context.autosaveEnabled = false  // this example saves by hand, to show each step

// Inserting a post inserts the blog it names; both sides of the relationship are kept in step.
let blog = Blog(name: "Field notes")
let post = Post(title: "How to use it?", content: "It's very easy.", blog: blog)
context.insert(post)
post.content = "What did I tell you?"
try context.save()
print("blog posts:", blog.posts.map(\.title))
let posts = try context.fetch(FetchDescriptor<Post>(predicate: #Predicate { $0.title.contains("it") }))
print("fetched:", posts.map(\.content), "same instance:", posts[0] === post)

// Unsaved edits can be rolled back: every field returns, inserted models go.
post.title = "Draft title"
context.insert(Post(title: "Never saved", content: ""))
print("has changes:", context.hasChanges)
context.rollback()
print("after rollback:", post.title, "- has changes:", context.hasChanges)

// Saves are guarded by row versions: a row changed meanwhile is a conflict, and nothing is written.
try await container.database.execute("UPDATE \"Post\" SET content = 'edited elsewhere'")
post.title = "Mine"
do {
    try context.save()
} catch let TroveError.modelConflict(model, _, fields) {
    print("conflict:", model, fields)
    context.rollback()
    _ = try context.fetch(FetchDescriptor<Post>())  // an unchanged instance takes the newer row
    print("now:", post.title, "/", post.content)
}

// Another context reads the same rows; relationships resolve on first access, through its identity map.
blog.posts.append(Post(title: "Second post", content: "More."))
try context.save()
let other = ModelContext(container)
let stored = try other.fetch(FetchDescriptor<Blog>())[0]
print("other context:", stored.posts.map(\.title).sorted(), "- a post's blog:", stored.posts[0].blog?.name ?? "none")

// Many-to-many: tagging a post from either side puts it on both; a third context reads the links.
let howto = Tag(name: "howto")
for post in stored.posts { post.tags.append(howto) }
try other.save()
let third = ModelContext(container)
let tag = try third.fetch(FetchDescriptor<Tag>())[0]
print("tagged \(tag.name):", tag.posts.map(\.title).sorted())

// Deleting the blog deletes its posts (the cascade rule), and their links with them.
other.delete(stored)
try other.save()
print("posts left:", try other.fetchCount(FetchDescriptor<Post>()), "- howto's posts:", howto.posts.count)

// Work off the main actor goes to a model actor: its own context, used only on the actor.
@ModelActor actor Importer {
    func importBlog(named name: String, titles: [String]) throws -> Int {
        let blog = Blog(name: name)
        for title in titles { blog.posts.append(Post(title: title, content: "")) }
        modelContext.insert(blog)
        try modelContext.save()
        return try modelContext.fetchCount(FetchDescriptor<Post>())
    }
}
print("imported:", try await Importer(modelContainer: container).importBlog(named: "Imported", titles: ["One", "Two"]))

// Value models keep working beside them.
let visits = try await container.database.models(Visit.self)
try await visits.insert(Visit(id: 1, postTitle: "One", at: Date(timeIntervalSince1970: 0)))
print("visits:", try await visits.count())
