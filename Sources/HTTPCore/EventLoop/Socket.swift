import CShims
#if canImport(Glibc)
import Glibc
#endif

/// An IPv4 or IPv6 address and port of a socket.
public struct SocketAddress: Sendable, Equatable, CustomStringConvertible {
    public let host: String
    public let port: Int
    public let isIPv6: Bool

    /// `host:port`, with IPv6 hosts in brackets, as it appears in a URL or a `Host` header.
    public var description: String { isIPv6 ? "[\(host)]:\(port)" : "\(host):\(port)" }

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
        self.isIPv6 = host.contains(":")
    }

    init(_ storage: sockaddr_storage) {
        var storage = storage
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        if Int32(storage.ss_family) == AF_INET6 {
            let address = withUnsafePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee } }
            var raw = address.sin6_addr
            inet_ntop(AF_INET6, &raw, &text, socklen_t(text.count))
            host = text.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
            port = Int(UInt16(bigEndian: address.sin6_port))
            isIPv6 = true
        } else {
            let address = withUnsafePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee } }
            var raw = address.sin_addr
            inet_ntop(AF_INET, &raw, &text, socklen_t(text.count))
            host = text.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
            port = Int(UInt16(bigEndian: address.sin_port))
            isIPv6 = false
        }
    }

    /// True for 127.0.0.0/8 and ::1.
    public var isLoopback: Bool {
        isIPv6 ? host == "::1" : host.hasPrefix("127.")
    }
}

/// Thin wrappers over the socket calls the server makes.
enum Socket {
    /// A non-blocking listening socket bound to `host:port` (`host` is a numeric address or `localhost`).
    static func listen(host: String, port: Int, backlog: Int32 = 4096) throws -> (fd: Int32, address: SocketAddress) {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV
        var results: UnsafeMutablePointer<addrinfo>?
        let lookupHost = host == "localhost" ? "127.0.0.1" : host
        let status = getaddrinfo(lookupHost, String(port), &hints, &results)
        guard status == 0, let first = results else {
            throw SystemError(call: "getaddrinfo(\(host))", errno: EINVAL)
        }
        defer { freeaddrinfo(results) }

        let fd = cshims_socket_nonblocking(first.pointee.ai_family, Int32(SOCK_STREAM.rawValue))
        guard fd >= 0 else { throw SystemError.last("socket") }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        if first.pointee.ai_family == AF_INET6 {
            setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &one, socklen_t(MemoryLayout<Int32>.size))
        }
        guard bind(fd, first.pointee.ai_addr, first.pointee.ai_addrlen) == 0 else {
            let error = SystemError.last("bind(\(host):\(port))")
            close(fd)
            throw error
        }
        guard Glibc.listen(fd, backlog) == 0 else {
            let error = SystemError.last("listen")
            close(fd)
            throw error
        }
        return (fd, try localAddress(of: fd))
    }

    static func localAddress(of fd: Int32) throws -> SocketAddress {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard result == 0 else { throw SystemError.last("getsockname") }
        return SocketAddress(storage)
    }

    /// Accepts one connection as a non-blocking descriptor, or returns nil with `errno` set.
    static func accept(_ listener: Int32) -> (fd: Int32, peer: SocketAddress)? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let fd = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { cshims_accept4(listener, $0, &length) }
        }
        guard fd >= 0 else { return nil }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        return (fd, SocketAddress(storage))
    }

    /// Sends as much of `bytes` as the kernel takes now; never raises SIGPIPE.
    static func send(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Int {
        Glibc.send(fd, bytes.baseAddress, bytes.count, CSHIMS_MSG_NOSIGNAL)
    }
}
