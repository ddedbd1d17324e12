// Model containers and contexts: class models edited in place and saved together, the SwiftData way.
// Run: swift run example-model-context [folder]
import Foundation
import Trove

let folder = CommandLine.arguments.dropFirst().first ?? NSTemporaryDirectory()
let url = URL(fileURLWithPath: folder).appendingPathComponent("blog-\(ProcessInfo.processInfo.processIdentifier).store")
defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: url.path + suffix) } }

// A container opens (and, given a plan, migrates) the schema's models; its main context is for UI code.
let container = try ModelContainer(for: Schema(versionedSchema: BlogV1.self), configurations: ModelConfiguration(url: url))
let context = container.mainContext
context.autosaveEnabled = false   // this example saves by hand, to show each step

let post = Post(id: 1, title: "How to use it?", content: "It's very easy.")
context.insert(post)
post.content = "What did I tell you?"
try context.save()
let posts = try context.fetch(FetchDescriptor<Post>(predicate: #Predicate { $0.title.contains("it") }))
print("fetched:", posts.map(\.content), "same instance:", posts[0] === post)

// Unsaved edits can be rolled back: every field returns, inserted models go.
post.title = "Draft title"
context.insert(Post(id: 2, title: "Never saved", content: ""))
print("has changes:", context.hasChanges)
context.rollback()
print("after rollback:", post.title, "- has changes:", context.hasChanges)

// Saves are guarded by row versions: a row changed meanwhile is a conflict, and nothing is written.
try await container.database.execute("UPDATE \"Post\" SET content = 'edited elsewhere' WHERE id = 1")
post.title = "Mine"
do {
    try context.save()
} catch let TroveError.modelConflict(model, id, fields) {
    print("conflict:", model, id, fields)
    context.rollback()
    _ = try context.fetch(FetchDescriptor<Post>())  // an unchanged instance takes the newer row
    print("now:", post.title, "/", post.content)
}

// Relationships: a to-one reference resolves through the context, the to-many side is a collection.
let blog = Blog(id: 1, name: "Field notes")
context.insert(blog)
try context.append(post, to: blog, via: \.blogID)
try context.append(Post(id: 3, title: "Second post", content: "More.", cover: Data(count: 1_000_000)), to: blog, via: \.blogID)
try context.save()
let written = try context.children(\Post.blogID, of: blog)
print("blog posts:", written.map(\.title).sorted())
print("post 1's blog:", try context.referenced(\.blogID, of: post, as: Blog.self)?.name ?? "none")

// A lazy field is not read by fetches; its first access reads it once.
let other = ModelContext(container)
let second = try other.fetch(FetchDescriptor<Post>(predicate: #Predicate { $0.id == 3 }))[0]
print("cover loaded:", second.cover.isLoaded, "- bytes:", try other.load(\.cover, of: second).count)

// Work off the main actor goes to a model actor: its own context, used only on the actor.
actor Renamer: ModelActor {
    let modelContainer: ModelContainer
    let modelContext: ModelContext
    init(modelContainer: ModelContainer) {
        self.modelContainer = modelContainer
        modelContext = ModelContext(modelContainer)
    }
    func uppercaseTitles() throws -> Int {
        let all = try modelContext.fetch(FetchDescriptor<Post>())
        for post in all { post.title = post.title.uppercased() }
        try modelContext.save()
        return all.count
    }
}
let renamed = try await Renamer(modelContainer: container).uppercaseTitles()
print("renamed in the background:", renamed)

// Value models keep working beside them.
let visits = try await container.database.models(Visit.self)
try await visits.insert(Visit(id: 1, postID: 1, at: Date(timeIntervalSince1970: 0)))
print("visits:", try await visits.count())
