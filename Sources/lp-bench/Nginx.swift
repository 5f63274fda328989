import Foundation

/// nginx on a loopback port (one worker, sendfile, no access log), serving a folder and, with
/// `nchan`, the Nchan module's long-poll pub/sub (`POST /pub?id=<channel>`, `GET /sub?id=<channel>`
/// answered with the newest message on, armed again by `If-Modified-Since`/`If-None-Match`);
/// written to a temporary folder, started and stopped by the benchmark.
final class NginxPeer {
    let port: Int
    private let child: ChildProcess
    private let runDirectory: String

    /// The Nchan module as Debian's `libnginx-mod-nchan` installs it.
    static let nchanModule = "/usr/lib/nginx/modules/ngx_nchan_module.so"

    /// nginx's processes: the master and its workers.
    var processes: [Int32] {
        let children = (try? String(contentsOfFile: "/proc/\(child.pid)/task/\(child.pid)/children", encoding: .utf8)) ?? ""
        return [child.pid] + children.split(separator: " ").compactMap { Int32($0) }
    }

    init(root: String, workers: Int = 1, nchan: Bool = false) throws {
        guard let nginx = findExecutable("nginx") else { throw BenchError("nginx not found (apt-get install nginx-light)") }
        if nchan, !FileManager.default.fileExists(atPath: Self.nchanModule) {
            throw BenchError("no Nchan module at \(Self.nchanModule) (apt-get install libnginx-mod-nchan)")
        }
        port = try freePort()
        runDirectory = NSTemporaryDirectory() + "lp-bench-nginx-\(getpid())"
        try FileManager.default.createDirectory(atPath: runDirectory, withIntermediateDirectories: true)
        let nchanLocations = nchan ? """
                    location = /pub {
                        nchan_publisher;
                        nchan_channel_id $arg_id;
                        nchan_message_buffer_length 32;
                        nchan_message_timeout 10m;
                    }
                    location = /sub {
                        nchan_subscriber longpoll;
                        nchan_channel_id $arg_id;
                        nchan_subscriber_first_message newest;
                        nchan_subscriber_timeout 120s;
                    }
            """ : ""
        let configuration = """
            \(nchan ? "load_module \(Self.nchanModule);" : "")
            worker_processes \(workers);
            worker_rlimit_nofile 20000;
            pid \(runDirectory)/nginx.pid;
            error_log \(runDirectory)/error.log warn;
            events { worker_connections 16384; multi_accept on; }
            http {
                include /etc/nginx/mime.types;
                default_type application/octet-stream;
                access_log off;
                sendfile on;
                tcp_nopush on;
                tcp_nodelay on;
                keepalive_timeout 120s;
                keepalive_requests 1000000;
                client_body_temp_path \(runDirectory)/body;
                proxy_temp_path \(runDirectory)/proxy;
                fastcgi_temp_path \(runDirectory)/fastcgi;
                uwsgi_temp_path \(runDirectory)/uwsgi;
                scgi_temp_path \(runDirectory)/scgi;
                \(nchan ? "nchan_shared_memory_size 128M;" : "")
                server {
                    listen 127.0.0.1:\(port) backlog=4096;
                    root \(root);
            \(nchanLocations)
                }
            }
            """
        let path = runDirectory + "/nginx.conf"
        try configuration.write(toFile: path, atomically: true, encoding: .utf8)
        child = try ChildProcess(name: "nginx", executable: nginx,
                                 arguments: ["-p", runDirectory + "/", "-c", path, "-g", "daemon off;"], quietStderr: false)
        try waitUntilListening(port: port)
    }

    func stop() {
        child.stop()
        try? FileManager.default.removeItem(atPath: runDirectory)
    }
}

/// Polls a TCP connect until the port accepts, for up to five seconds.
func waitUntilListening(port: Int) throws {
    for _ in 0..<500 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        close(fd)
        if connected { return }
        usleep(10_000)
    }
    throw BenchError("nothing listens on port \(port)")
}
