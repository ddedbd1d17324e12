// Model containers and contexts: reference models edited in place and saved together.
// Run: swift run example-model-context [folder]
import Foundation
import Trove

let folder = CommandLine.arguments.dropFirst().first ?? NSTemporaryDirectory()
let path = URL(fileURLWithPath: folder).appendingPathComponent("blog-\(ProcessInfo.processInfo.processIdentifier).trove").path
defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }

// A container opens (and, given a plan, migrates) the schema's models; its main context is for UI code.
let container = try await ModelContainer(BlogV1.self, at: path)
let context = container.mainContext

let post = Post(id: 1, title: "How to use it?", content: "It's very easy.")
try context.insert(post)
post.content = "What did I tell you?"
try await context.save()
let posts = try await context.fetchAll(#Predicate<Post> { $0.title.contains("it") })
print("fetched:", posts.map(\.content), "same instance:", posts[0] === post)

// Unsaved edits can be rolled back: every field returns, inserted models go.
post.title = "Draft title"
try context.insert(Post(id: 2, title: "Never saved", content: ""))
print("has changes:", context.hasChanges)
try context.rollback()
print("after rollback:", post.title, "- has changes:", context.hasChanges)

// Saves are guarded by row versions: a row changed meanwhile is a conflict, and nothing is written.
try await container.database.execute("UPDATE \"Post\" SET content = 'edited elsewhere' WHERE id = 1")
post.title = "Mine"
do {
    try await context.save()
} catch let TroveError.modelConflict(model, id, fields) {
    print("conflict:", model, id, fields)
    try context.rollback()
    _ = try await context.fetchAll(Post.self)  // an unchanged instance takes the newer row
    print("now:", post.title, "/", post.content)
}

// Relationships: a to-one reference resolves through the context, the to-many side is a collection.
let blog = Blog(id: 1, name: "Field notes")
try context.insert(blog)
try context.append(post, to: blog, via: \.blogID)
try context.append(Post(id: 3, title: "Second post", content: "More.", cover: Data(count: 1_000_000)), to: blog, via: \.blogID)
try await context.save()
let written = try await context.children(\Post.blogID, of: blog)
print("blog posts:", written.map(\.title).sorted())
print("post 1's blog:", try await context.referenced(\.blogID, of: post, as: Blog.self)?.name ?? "none")

// A lazy field is not read by fetches; its first access reads it once.
let other = try await ModelContainer(BlogV1.self, at: path).mainContext
let second = try await other.fetchAll(#Predicate<Post> { $0.id == 3 })[0]
print("cover loaded:", second.cover.isLoaded, "- bytes:", try await other.load(\.cover, of: second).count)

// Background contexts are actors of their own: work with their models inside perform.
let renamed = try await container.backgroundContext().perform { background in
    let all = try await background.fetchAll(Post.self)
    for post in all { post.title = post.title.uppercased() }
    try await background.save()
    return all.count
}
print("renamed in the background:", renamed)

// Value models keep working beside them.
let visits = try await container.database.models(Visit.self)
try await visits.insert(Visit(id: 1, postID: 1, at: Date(timeIntervalSince1970: 0)))
print("visits:", try await visits.count())
