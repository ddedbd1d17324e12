// What the Trove module's public API takes, returns or throws from the lower modules, visible with
// `import Trove` alone (Tests/TroveTests/ExportsTests.swift names each one, so the build
// breaks if one is dropped).
//
// Type by type, not whole modules: most of TroveSQLite (Connection, Statement, the encrypting VFS),
// TroveVectors (the indexes and kernels), TroveText (BM25Index, the stemmer) and TroveEmbeddings
// (the encoders) is the machinery under Trove, not its API. TroveEmbeddings is a product of its
// own, for apps that embed without a database; the other three are not products (the benchmarks
// reach them through Exports+Benchmarks.swift).

// By module: TroveEmbeddings, what collections and models embed with, the manifest frozen with
// them, and what embedding throws; TroveSQLite, raw SQL (`Database.query`, bindings), what
// failures throw, encryption at rest; TroveText, the tokenizer a full-text index is created with
// (its `fts5TokenizeArgument`); TroveVectors, a vector field's metric and its HNSW parameters.

@_exported import protocol TroveEmbeddings.Embedder
@_exported import enum TroveEmbeddings.EmbeddingError
@_exported import struct TroveEmbeddings.EmbeddingManifest
@_exported import enum TroveSQLite.EncryptedFile
@_exported import enum TroveSQLite.Encryption
@_exported import enum TroveSQLite.EncryptionError
@_exported import struct TroveSQLite.EncryptionInfo
@_exported import protocol TroveSQLite.KeyStore
@_exported import struct TroveSQLite.ResultCode
@_exported import struct TroveSQLite.Row
@_exported import enum TroveSQLite.SQLValue
@_exported import struct TroveSQLite.SQLiteError
@_exported import struct TroveText.TokenizerConfiguration
@_exported import enum TroveVectors.DistanceMetric
@_exported import struct TroveVectors.HNSWConfiguration
@_exported import enum TroveVectors.HNSWQuantization
@_exported import enum TroveVectors.VectorIndexError

#if canImport(Security)
    @_exported import struct TroveSQLite.KeychainKeyStore
#endif
