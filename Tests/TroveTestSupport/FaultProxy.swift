import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A TCP proxy on loopback that forwards to one upstream port and misbehaves as a network does:
/// it refuses connections, delays what it forwards, stalls a connection and then cuts it, and
/// cuts connections after a number of bytes, each drawn from a seeded generator; ``cutAll()``
/// severs every open connection at once. Clients connect to ``port`` instead of the server's.
///
/// One thread accepts; each connection gets two threads, one per direction, blocking on its
/// socket (a test proxy carries a few dozen connections at most).
///
/// ```swift
/// let proxy = try FaultProxy(upstreamPort: server.port, seed: 7, faults: .standard)
/// let url = "postgresql://alice:secret@127.0.0.1:\(proxy.port)/trove"
/// proxy.cutAll()          // a network blip
/// proxy.faults = .none    // healed
/// ```
public final class FaultProxy: @unchecked Sendable {
    // @unchecked Sendable: `port` and `upstreamPort` are constants; everything else (the
    // generator, the faults, the counts, the open connections, `stopped`) is guarded by `lock`.

    /// What the proxy does wrong, as probabilities (0 never, 1 always).
    public struct Faults: Sendable, Hashable {
        /// A new connection is closed as soon as it is accepted.
        public var refuse: Double
        /// A connection is cut once it has carried a random number of bytes (both directions,
        /// up to ``cutWithin``).
        public var cut: Double
        /// The bytes within which a cut connection is cut.
        public var cutWithin: Int
        /// A chunk is held back for up to ``maximumDelay`` before it is forwarded.
        public var delay: Double
        /// The longest delay.
        public var maximumDelay: Duration
        /// A chunk is never forwarded: the connection goes silent for up to ``maximumStall``,
        /// then is cut (what a peer behind a dropping link sees).
        public var stall: Double
        /// The longest silence before a stalled connection is cut.
        public var maximumStall: Duration

        /// Faults with the given probabilities.
        public init(
            refuse: Double = 0, cut: Double = 0, cutWithin: Int = 64 << 10, delay: Double = 0,
            maximumDelay: Duration = .milliseconds(200), stall: Double = 0,
            maximumStall: Duration = .seconds(2)
        ) {
            self.refuse = refuse
            self.cut = cut
            self.cutWithin = cutWithin
            self.delay = delay
            self.maximumDelay = maximumDelay
            self.stall = stall
            self.maximumStall = maximumStall
        }

        /// A faithful proxy.
        public static let none = Faults()
    }

    /// What the proxy has done so far.
    public struct Counts: Sendable, Hashable, CustomStringConvertible {
        /// Connections accepted (refused ones included).
        public var accepted = 0
        /// Connections closed at once by ``Faults/refuse``.
        public var refused = 0
        /// Connections closed because the upstream port did not answer (the server was down).
        public var upstreamDown = 0
        /// Connections cut after a number of bytes, or by ``FaultProxy/cutAll()``.
        public var cut = 0
        /// Connections that went silent and were then cut.
        public var stalled = 0
        /// Chunks held back before they were forwarded.
        public var delayed = 0
        /// Bytes forwarded, both directions.
        public var bytes = 0

        public var description: String {
            "\(accepted) connections (\(refused) refused, \(upstreamDown) with the server down, "
                + "\(cut) cut, \(stalled) stalled and cut), \(delayed) chunks delayed, \(bytes) bytes"
        }
    }

    /// The loopback port clients connect to.
    public let port: Int
    /// The port the proxy forwards to.
    public let upstreamPort: Int

    private let lock = NSLock()
    private let listener: Int32
    private var random: SeededGenerator
    private var current: Faults
    private var tally = Counts()
    private var open: [Int: Pair] = [:]
    private var nextConnection = 0
    private var stopped = false

    /// Starts a proxy on a free loopback port.
    ///
    /// - Parameters:
    ///   - upstreamPort: the loopback port to forward to.
    ///   - seed: the seed of every fault drawn.
    ///   - faults: what to do wrong from the start.
    public init(upstreamPort: Int, seed: UInt64, faults: Faults = .none) throws {
        self.upstreamPort = upstreamPort
        random = SeededGenerator(seed: seed)
        current = faults
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw FaultProxyError("socket: \(String(cString: strerror(errno)))") }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = Self.loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer -> Int32 in
                guard bind(fd, pointer, length) == 0, listen(fd, 64) == 0 else { return -1 }
                return getsockname(fd, pointer, &length)
            }
        }
        guard bound == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw FaultProxyError("cannot listen on loopback: \(reason)")
        }
        listener = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        let thread = Thread { [self] in acceptLoop() }
        thread.name = "FaultProxy.accept"
        thread.start()
    }

    deinit { stop() }

    /// The faults applied to what happens from now on (open connections keep the cut point
    /// they drew when they were accepted; their delays and stalls follow the new values).
    public var faults: Faults {
        get { lock.withLock { current } }
        set { lock.withLock { current = newValue } }
    }

    /// What the proxy has done so far.
    public var counts: Counts { lock.withLock { tally } }

    /// Cuts every open connection (both sides see the connection reset or closed).
    public func cutAll() {
        let pairs = lock.withLock {
            let pairs = Array(open.values)
            tally.cut += pairs.count
            return pairs
        }
        for pair in pairs { pair.sever() }
    }

    /// Stops accepting and cuts every open connection.
    public func stop() {
        let pairs: [Pair]? = lock.withLock {
            guard !stopped else { return nil }
            stopped = true
            return Array(open.values)
        }
        guard let pairs else { return }
        // Wakes the accepting thread, which then closes the listening socket.
        shutdown(listener, Int32(SHUT_RDWR))
        for pair in pairs { pair.sever() }
    }

    private func acceptLoop() {
        defer { close(listener) }
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if errno == EINTR || errno == ECONNABORTED { continue }
                return
            }
            let (isStopped, plan) = lock.withLock { () -> (Bool, Plan) in
                tally.accepted += 1
                nextConnection += 1
                return (stopped, Plan(faults: current, id: nextConnection, random: &random))
            }
            if isStopped {
                close(client)
                return
            }
            if plan.refuse {
                lock.withLock { tally.refused += 1 }
                close(client)
                continue
            }
            guard let upstream = Self.connectLoopback(port: upstreamPort) else {
                lock.withLock { tally.upstreamDown += 1 }
                close(client)
                continue
            }
            let pair = Pair(client: client, upstream: upstream)
            let stoppedMeanwhile = lock.withLock {
                open[plan.id] = pair
                return stopped
            }
            if stoppedMeanwhile { pair.sever() }
            var directionRandom = plan.random
            for (from, to) in [(client, upstream), (upstream, client)] {
                let seed = directionRandom.next()
                let thread = Thread { [self] in
                    pump(from: from, to: to, pair: pair, plan: plan, seed: seed)
                }
                thread.name = "FaultProxy.pump"
                thread.start()
            }
        }
    }

    /// Forwards `from` to `to` until either side closes or a fault cuts the pair.
    private func pump(from: Int32, to: Int32, pair: Pair, plan: Plan, seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        // Owned by this thread: one chunk in flight per direction (16 KB).
        var buffer = [UInt8](repeating: 0, count: 16 << 10)
        defer {
            pair.sever()
            if pair.finishOne() {
                lock.withLock { _ = open.removeValue(forKey: plan.id) }
            }
        }
        while true {
            let count = buffer.withUnsafeMutableBytes { read(from, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return }
            let faults = self.faults
            let carried = pair.carry(count)
            if let cutAt = plan.cutAfter, carried >= cutAt {
                lock.withLock { tally.cut += 1 }
                return
            }
            if Double.random(in: 0..<1, using: &random) < faults.stall {
                lock.withLock { tally.stalled += 1 }
                Self.sleep(Self.random(upTo: faults.maximumStall, using: &random), unless: pair)
                return
            }
            if Double.random(in: 0..<1, using: &random) < faults.delay {
                lock.withLock { tally.delayed += 1 }
                Self.sleep(Self.random(upTo: faults.maximumDelay, using: &random), unless: pair)
            }
            guard Self.sendAll(buffer, count: count, to: to) else { return }
            lock.withLock { tally.bytes += count }
        }
    }

    /// What one connection drew when it was accepted.
    private struct Plan: Sendable {
        let id: Int
        let refuse: Bool
        let cutAfter: Int?
        let random: SeededGenerator

        init(faults: Faults, id: Int, random: inout SeededGenerator) {
            self.id = id
            refuse = Double.random(in: 0..<1, using: &random) < faults.refuse
            cutAfter =
                Double.random(in: 0..<1, using: &random) < faults.cut
                ? Int.random(in: 1...max(1, faults.cutWithin), using: &random) : nil
            self.random = SeededGenerator(seed: random.next())
        }
    }

    /// The two sockets of one proxied connection, closed once both directions have ended.
    private final class Pair: @unchecked Sendable {
        // @unchecked Sendable: the counters are guarded by `lock`; the descriptors are constants,
        // shut down from any thread (shutdown is safe while another thread reads) and closed
        // only by the last direction to end.
        let client: Int32
        let upstream: Int32
        private let lock = NSLock()
        private var carried = 0
        private var running = 2
        private var severed = false

        init(client: Int32, upstream: Int32) {
            self.client = client
            self.upstream = upstream
        }

        /// Adds `count` bytes; returns the total carried both ways.
        func carry(_ count: Int) -> Int {
            lock.withLock {
                carried += count
                return carried
            }
        }

        var isSevered: Bool { lock.withLock { severed } }

        /// Shuts both sockets down: the blocked reads return, the peers see the connection end.
        func sever() {
            lock.withLock { severed = true }
            shutdown(client, Int32(SHUT_RDWR))
            shutdown(upstream, Int32(SHUT_RDWR))
        }

        /// One direction ended; true for the second, which closes the sockets.
        func finishOne() -> Bool {
            let last = lock.withLock {
                running -= 1
                return running == 0
            }
            if last {
                close(client)
                close(upstream)
            }
            return last
        }
    }

    /// Sleeps up to `duration`, waking early once the pair is severed (``cutAll()``, ``stop()``).
    private static func sleep(_ duration: Duration, unless pair: Pair) {
        var left = duration
        let step = Duration.milliseconds(20)
        while left > .zero, !pair.isSevered {
            let now = min(left, step)
            usleep(useconds_t(now.components.attoseconds / 1_000_000_000_000))
            left -= now
        }
    }

    private static func random(upTo maximum: Duration, using random: inout SeededGenerator)
        -> Duration
    {
        let milliseconds =
            maximum.components.seconds * 1_000 + maximum.components.attoseconds
            / 1_000_000_000_000_000
        return .milliseconds(Int64.random(in: 0...max(0, milliseconds), using: &random))
    }

    private static func sendAll(_ buffer: [UInt8], count: Int, to fd: Int32) -> Bool {
        var sent = 0
        while sent < count {
            let written = buffer.withUnsafeBytes { bytes in
                // MSG_NOSIGNAL: a peer that closed must not raise SIGPIPE in the test process.
                #if os(Linux)
                    send(fd, bytes.baseAddress! + sent, count - sent, Int32(MSG_NOSIGNAL))
                #else
                    send(fd, bytes.baseAddress! + sent, count - sent, 0)
                #endif
            }
            if written < 0, errno == EINTR { continue }
            guard written > 0 else { return false }
            sent += written
        }
        return true
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        return address
    }

    private static func connectLoopback(port: Int) -> Int32? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        #if canImport(Darwin)
            var yes: Int32 = 1
            setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &yes, socklen_t(MemoryLayout<Int32>.size))
        #endif
        var address = loopback(port: port)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            close(fd)
            return nil
        }
        return fd
    }
}

/// Why a ``FaultProxy`` could not start.
public struct FaultProxyError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
