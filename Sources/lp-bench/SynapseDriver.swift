import Foundation

/// The Python that the Matrix benchmarks share: a throwaway Synapse on a free loopback port
/// (rate limits open, users `alice` and `bob` with passwords `<user>-password`), a `call` helper
/// for its client-server API (and the dashboard's), `login`, and `cleanup`, which stops every
/// process started and removes the folder. Run by Synapse's own Python.
///
/// Its database is SQLite, or with `start_postgres()` first a PostgreSQL cluster of its own in the
/// same folder (what Synapse recommends for real use: a pool of connections rather than one),
/// reached over a Unix socket, run as the `postgres` user when the driver runs as root.
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
        configuration = f"""server_name: localhost
        public_baseurl: "http://127.0.0.1:{port}/"
        listeners:
          - port: {port}
            bind_addresses: ["127.0.0.1"]
            type: http
            tls: false
            resources:
              - names: [client]
                compress: false
        DATABASE
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
        """
        sqlite_database = f"""database:
          name: sqlite3
          args:
            database: "{folder}/homeserver.db"
        """
        pg_data = f"{folder}/pg"
        postgres_database = f"""database:
          name: psycopg2
          args:
            user: synapse
            database: synapse
            host: "{pg_data}"
            cp_min: 5
            cp_max: 10
        """
        database = sqlite_database

        def write_config(path, block):
            with open(path, "w") as f:
                f.write(configuration.replace("DATABASE\n", block))

        processes = []
        postgres = {}
        def cleanup():
            for process in processes:
                if process.poll() is None:
                    process.terminate()
                    try:
                        process.wait(10)
                    except subprocess.TimeoutExpired:
                        process.kill()
            stop_postgres()
            shutil.rmtree(folder, ignore_errors=True)

        def as_postgres_user():
            # PostgreSQL refuses to run as root.
            return {"user": "postgres", "group": "postgres"} if os.geteuid() == 0 else {}

        def start_postgres(initialise=True):
            """A cluster of its own in `pg_data` (made, unless a copied one is there), listening on a
            Unix socket only; Synapse's database `synapse` as its docs ask (UTF8, C collation)."""
            global database
            for tool in ("initdb", "postgres", "pg_isready", "createdb"):
                if not shutil.which(tool):
                    sys.exit(f"no {tool} on PATH: install PostgreSQL's server (apt-get install postgresql) and put its bin folder on PATH")
            try:
                import psycopg2  # noqa: F401
            except ImportError:
                sys.exit(f"Synapse's Python has no psycopg2: {sys.executable} -m pip install psycopg2-binary")
            os.chmod(folder, 0o755)
            if initialise:
                os.makedirs(pg_data)
                if os.geteuid() == 0:
                    shutil.chown(pg_data, "postgres", "postgres")
                subprocess.run(["initdb", "-D", pg_data, "-U", "synapse", "-A", "trust", "-E", "UTF8", "--locale=C"],
                               check=True, stdout=subprocess.DEVNULL, **as_postgres_user())
            postgres["process"] = subprocess.Popen(["postgres", "-D", pg_data, "-k", pg_data, "-c", "listen_addresses="],
                                                   stdout=subprocess.DEVNULL, stderr=open(f"{folder}/postgres.log", "w"), **as_postgres_user())
            for _ in range(300):
                if subprocess.run(["pg_isready", "-q", "-h", pg_data, "-U", "synapse", "-d", "synapse" if not initialise else "postgres"]).returncode == 0:
                    break
                time.sleep(0.1)
            else:
                sys.exit(f"PostgreSQL did not start: {open(f'{folder}/postgres.log').read()[-2000:]}")
            if initialise:
                subprocess.run(["createdb", "-h", pg_data, "-U", "synapse", "-T", "template0", "-E", "UTF8", "--locale=C", "synapse"], check=True)
            database = postgres_database

        def stop_postgres():
            process = postgres.pop("process", None)
            if process and process.poll() is None:
                process.terminate()  # a "smart" shutdown: waits for its sessions, then checkpoints
                try:
                    process.wait(60)
                except subprocess.TimeoutExpired:
                    process.kill()

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
            write_config(f"{folder}/homeserver.yaml", database)
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
