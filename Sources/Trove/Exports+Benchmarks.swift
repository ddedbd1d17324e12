import TroveSQLite
import TroveText
import TroveVectors

// The machinery under Trove that its benchmarks measure on its own (the indexes, the tokenizers,
// the connection), named for `@_spi(Benchmarks) import Trove` only: it is not API, and apps never
// see it. TroveSQLite, TroveText and TroveVectors are targets, not products; Exports.swift lists
// what of them is API.

@_spi(Benchmarks) public typealias Connection = TroveSQLite.Connection
@_spi(Benchmarks) public typealias EncryptionKey = TroveSQLite.EncryptionKey
@_spi(Benchmarks) public typealias EncryptionReadAhead = TroveSQLite.EncryptionReadAhead
@_spi(Benchmarks) public typealias EncryptionStatistics = TroveSQLite.EncryptionStatistics
@_spi(Benchmarks) public typealias FTS5Pattern = TroveSQLite.FTS5Pattern
@_spi(Benchmarks) public typealias Statement = TroveSQLite.Statement
@_spi(Benchmarks) public typealias BM25Hit = TroveText.BM25Hit
@_spi(Benchmarks) public typealias BM25Index = TroveText.BM25Index
@_spi(Benchmarks) public typealias RankFusion = TroveText.RankFusion
@_spi(Benchmarks) public typealias Stopwords = TroveText.Stopwords
@_spi(Benchmarks) public typealias TypedQuery = TroveText.TypedQuery
@_spi(Benchmarks) public typealias Tokenizer = TroveText.Tokenizer
@_spi(Benchmarks) public typealias DistanceKernels = TroveVectors.DistanceKernels
@_spi(Benchmarks) public typealias FlatIndex = TroveVectors.FlatIndex
@_spi(Benchmarks) public typealias HNSWFilterPlan = TroveVectors.HNSWFilterPlan
@_spi(Benchmarks) public typealias HNSWIndex = TroveVectors.HNSWIndex
@_spi(Benchmarks) public typealias Neighbor = TroveVectors.Neighbor
@_spi(Benchmarks) public typealias TopK = TroveVectors.TopK
