"""A real Synapse homeserver for the browser tests: started on a free loopback port with a
generated config (SQLite, registration by shared secret, rate limits out of the way), people
registered and talking through the client-server API. Synapse runs in its own Python (the venv
`.ci/run` makes); this module only drives it."""
import base64
import http.client
import json
import os
import secrets
import shutil
import subprocess
import tempfile
import time
import urllib.parse

from browser_support import dies_with_this_process, free_port


class PortTaken(Exception):
    """Another server took the free port before this Synapse listened on it."""


class Synapse:
    def __init__(self, python, port_attempts=3):
        self.python = python
        self.folder = tempfile.mkdtemp(prefix="browser-synapse-")
        self.secret = secrets.token_hex(16)
        # Unique to this server: its key endpoint names it, which tells it apart from another
        # server that took the same port (a free port is only free when it is chosen).
        self.key_version = "t" + secrets.token_hex(8)
        for attempt in range(1, port_attempts + 1):
            self.port = free_port()
            self._write_config()
            try:
                self._launch()
                return
            except PortTaken:
                if attempt == port_attempts:
                    raise

    def _launch(self):
        self.process = subprocess.Popen([self.python, "-m", "synapse.app.homeserver", "-c", f"{self.folder}/homeserver.yaml"],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=dies_with_this_process)
        deadline = time.monotonic() + 60
        while True:
            try:
                keys = self.call("GET", "/_matrix/key/v2/server")
                if f"ed25519:{self.key_version}" in keys.get("verify_keys", {}):
                    return
                self.process.kill()
                self.process.wait()
                raise PortTaken(self.port)
            except (OSError, RuntimeError):
                if self.process.poll() is not None and "Address already in use" in self._log():
                    raise PortTaken(self.port)
                if time.monotonic() > deadline or self.process.poll() is not None:
                    raise RuntimeError(f"Synapse did not start; see {self.folder}/homeserver.log")
                time.sleep(0.1)

    def _log(self):
        try:
            with open(f"{self.folder}/homeserver.log", errors="replace") as log:
                return log.read()
        except OSError:
            return ""

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}"

    def _write_config(self):
        unlimited = "{per_second: 100000, burst_count: 1000000}"
        with open(f"{self.folder}/signing.key", "w") as f:
            f.write(f"ed25519 {self.key_version} " + base64.b64encode(os.urandom(32)).decode().rstrip("=") + "\n")
        with open(f"{self.folder}/log.yaml", "w") as f:
            f.write("version: 1\nhandlers:\n  file:\n    class: logging.FileHandler\n"
                    f"    filename: {self.folder}/homeserver.log\nroot:\n  level: WARNING\n  handlers: [file]\n"
                    "disable_existing_loggers: false\n")
        with open(f"{self.folder}/homeserver.yaml", "w") as f:
            f.write(f"""server_name: localhost
public_baseurl: "{self.url}/"
listeners:
  - port: {self.port}
    bind_addresses: ["127.0.0.1"]
    type: http
    tls: false
    resources:
      - names: [client, keys]
        compress: false
database:
  name: sqlite3
  args:
    database: "{self.folder}/homeserver.db"
log_config: "{self.folder}/log.yaml"
media_store_path: "{self.folder}/media"
signing_key_path: "{self.folder}/signing.key"
registration_shared_secret: "{self.secret}"
enable_registration: false
report_stats: false
macaroon_secret_key: "{secrets.token_hex(16)}"
form_secret: "{secrets.token_hex(16)}"
trusted_key_servers: []
suppress_key_server_warning: true
caches:
  sync_response_cache_duration: 0
rc_message: {unlimited}
rc_login:
  address: {unlimited}
  account: {unlimited}
  failed_attempts: {unlimited}
rc_joins:
  local: {unlimited}
""")

    def call(self, method, path, body=None, token=None):
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        headers = {"Content-Type": "application/json"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        connection.request(method, path, body=None if body is None else json.dumps(body), headers=headers)
        response = connection.getresponse()
        data = response.read()
        connection.close()
        if response.status >= 300:
            raise RuntimeError(f"{method} {path}: {response.status} {data[:200]!r}")
        return json.loads(data) if data else {}

    def register(self, user, password):
        """Registers `user` by shared secret; returns the full id, `@user:localhost`."""
        subprocess.run([self.python, "-m", "synapse._scripts.register_new_matrix_user", "-u", user, "-p", password, "--no-admin",
                        "-k", self.secret, self.url], check=True, stdout=subprocess.DEVNULL)
        return f"@{user}:localhost"

    def login(self, user, password):
        return self.call("POST", "/_matrix/client/v3/login", {"type": "m.login.password", "identifier": {"type": "m.id.user", "user": user},
                                                              "password": password})["access_token"]

    def create_room(self, token, name, invite, encrypted=False):
        body = {"name": name, "invite": invite}
        if encrypted:
            body["initial_state"] = [{"type": "m.room.encryption", "state_key": "", "content": {"algorithm": "m.megolm.v1.aes-sha2"}}]
        return self.call("POST", "/_matrix/client/v3/createRoom", body, token=token)["room_id"]

    def send_encrypted(self, token, room):
        """What an Olm/Megolm client sends: ciphertext this dashboard cannot read."""
        path = f"/_matrix/client/v3/rooms/{urllib.parse.quote(room)}/send/m.room.encrypted/{secrets.token_hex(8)}"
        return self.call("PUT", path, {"algorithm": "m.megolm.v1.aes-sha2", "ciphertext": "AwgAEnAC", "sender_key": "k", "device_id": "D",
                                       "session_id": "s"}, token=token)["event_id"]

    def upload(self, token, data, content_type, filename):
        """Uploads a file to the homeserver's media repository; returns its mxc:// URI."""
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        connection.request("POST", f"/_matrix/media/v3/upload?filename={urllib.parse.quote(filename)}", body=data,
                           headers={"Content-Type": content_type, "Authorization": f"Bearer {token}"})
        response = connection.getresponse()
        answer = json.loads(response.read())
        connection.close()
        return answer["content_uri"]

    def send_content(self, token, room, content):
        path = f"/_matrix/client/v3/rooms/{urllib.parse.quote(room)}/send/m.room.message/{secrets.token_hex(8)}"
        return self.call("PUT", path, content, token=token)["event_id"]

    def react(self, token, room, event_id, key):
        """A reaction as Element sends it (an m.annotation); returns its event id."""
        path = f"/_matrix/client/v3/rooms/{urllib.parse.quote(room)}/send/m.reaction/{secrets.token_hex(8)}"
        content = {"m.relates_to": {"rel_type": "m.annotation", "event_id": event_id, "key": key}}
        return self.call("PUT", path, content, token=token)["event_id"]

    def reactions(self, token, room, event_id):
        """The (key, sender) pairs the homeserver holds on `event_id`: what every client shows."""
        path = f"/_matrix/client/v1/rooms/{urllib.parse.quote(room)}/relations/{urllib.parse.quote(event_id)}/m.annotation"
        return sorted((event["content"]["m.relates_to"]["key"], event["sender"]) for event in self.call("GET", path, token=token)["chunk"])

    def reply_in_thread(self, token, room, root, text):
        """A reply in the thread under `root`, as Element sends one (m.thread with its fallback reply)."""
        path = f"/_matrix/client/v3/rooms/{urllib.parse.quote(room)}/send/m.room.message/{secrets.token_hex(8)}"
        relation = {"rel_type": "m.thread", "event_id": root, "is_falling_back": True, "m.in_reply_to": {"event_id": root}}
        return self.call("PUT", path, {"msgtype": "m.text", "body": text, "m.relates_to": relation}, token=token)["event_id"]

    def thread_replies(self, token, room, root):
        """The (body, sender) pairs of the thread under `root` as the homeserver holds it, newest first."""
        path = f"/_matrix/client/v1/rooms/{urllib.parse.quote(room)}/relations/{urllib.parse.quote(root)}/m.thread"
        return [(event["content"].get("body"), event["sender"]) for event in self.call("GET", path, token=token)["chunk"]]

    def join(self, token, room):
        self.call("POST", f"/_matrix/client/v3/rooms/{urllib.parse.quote(room)}/join", {}, token=token)

    def send(self, token, room, text):
        path = f"/_matrix/client/v3/rooms/{urllib.parse.quote(room)}/send/m.room.message/{secrets.token_hex(8)}"
        return self.call("PUT", path, {"msgtype": "m.text", "body": text}, token=token)["event_id"]

    def edit(self, token, room, event_id, text):
        """An edit as Element sends it: a "* " fallback body and the new content."""
        path = f"/_matrix/client/v3/rooms/{urllib.parse.quote(room)}/send/m.room.message/{secrets.token_hex(8)}"
        return self.call("PUT", path, {"msgtype": "m.text", "body": f"* {text}", "m.new_content": {"msgtype": "m.text", "body": text},
                                       "m.relates_to": {"rel_type": "m.replace", "event_id": event_id}}, token=token)["event_id"]

    def redact(self, token, room, event_id):
        path = f"/_matrix/client/v3/rooms/{urllib.parse.quote(room)}/redact/{urllib.parse.quote(event_id)}/{secrets.token_hex(8)}"
        self.call("PUT", path, {}, token=token)

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
        shutil.rmtree(self.folder, ignore_errors=True)
