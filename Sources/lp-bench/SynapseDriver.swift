import Foundation

/// The Python that the Matrix benchmarks share: a throwaway Synapse on a free loopback port
/// (SQLite, rate limits open, users `alice` and `bob` with passwords `<user>-password`), a `call`
/// helper for its client-server API (and the dashboard's), `login`, and `cleanup`, which stops
/// every process started and removes the folder. Run by Synapse's own Python.
enum SynapseDriver {
    static let prelude = #"""
        import argparse, base64, http.client, json, os, secrets, shutil, socket, sqlite3, statistics, subprocess, sys, tempfile, threading, time, urllib.parse

        def free_port():
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                return s.getsockname()[1]

        folder = tempfile.mkdtemp(prefix="lp-bench-synapse-")
        port = free_port()
        secret = secrets.token_hex(16)
        open_limit = "{per_second: 100000, burst_count: 1000000}"
        with open(f"{folder}/signing.key", "w") as f:
            f.write("ed25519 a_bench " + base64.b64encode(os.urandom(32)).decode().rstrip("=") + "\n")
        with open(f"{folder}/log.yaml", "w") as f:
            f.write(f"version: 1\nhandlers:\n  file:\n    class: logging.FileHandler\n    filename: {folder}/homeserver.log\nroot:\n  level: WARNING\n  handlers: [file]\ndisable_existing_loggers: false\n")
        with open(f"{folder}/homeserver.yaml", "w") as f:
            f.write(f"""server_name: localhost
        public_baseurl: "http://127.0.0.1:{port}/"
        listeners:
          - port: {port}
            bind_addresses: ["127.0.0.1"]
            type: http
            tls: false
            resources:
              - names: [client]
                compress: false
        database:
          name: sqlite3
          args:
            database: "{folder}/homeserver.db"
        log_config: "{folder}/log.yaml"
        media_store_path: "{folder}/media"
        signing_key_path: "{folder}/signing.key"
        registration_shared_secret: "{secret}"
        enable_registration: false
        report_stats: false
        macaroon_secret_key: "{secrets.token_hex(16)}"
        form_secret: "{secrets.token_hex(16)}"
        trusted_key_servers: []
        suppress_key_server_warning: true
        rc_message: {open_limit}
        rc_login:
          address: {open_limit}
          account: {open_limit}
          failed_attempts: {open_limit}
        rc_joins:
          local: {open_limit}
        rc_joins_per_room: {open_limit}
        rc_room_creation: {open_limit}
        rc_invites:
          per_room: {open_limit}
          per_user: {open_limit}
          per_issuer: {open_limit}
        """)

        processes = []
        def cleanup():
            for process in processes:
                if process.poll() is None:
                    process.terminate()
                    try:
                        process.wait(10)
                    except subprocess.TimeoutExpired:
                        process.kill()
            shutil.rmtree(folder, ignore_errors=True)

        def call(port, method, path, body=None, token=None, timeout=60):
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
            headers = {"Content-Type": "application/json"}
            if token:
                headers["Authorization"] = f"Bearer {token}"
            connection.request(method, path, body=json.dumps(body) if body is not None else None, headers=headers)
            response = connection.getresponse()
            data = response.read()
            connection.close()
            if response.status >= 300:
                raise RuntimeError(f"{method} {path}: {response.status} {data[:200]!r}")
            return json.loads(data) if data else {}

        def start_synapse(register=True):
            processes.append(subprocess.Popen([sys.executable, "-m", "synapse.app.homeserver", "-c", f"{folder}/homeserver.yaml"],
                                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            for _ in range(600):
                try:
                    call(port, "GET", "/_matrix/client/versions", timeout=2)
                    break
                except Exception:
                    time.sleep(0.1)
            for user in ("alice", "bob") if register else ():
                subprocess.run([sys.executable, "-m", "synapse._scripts.register_new_matrix_user", "-u", user, "-p", user + "-password",
                                "--no-admin", "-k", secret, f"http://127.0.0.1:{port}"], check=True, stdout=subprocess.DEVNULL)
        def login(user, device):
            return call(port, "POST", "/_matrix/client/v3/login", {"type": "m.login.password", "identifier": {"type": "m.id.user", "user": user},
                                                                   "password": user + "-password", "device_id": device})["access_token"]
        """#
}
