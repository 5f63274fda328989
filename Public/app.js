// The dashboard page's entry module. This first version loads the per-launch session and shows
// that the process answers; the live long-poll loop, messages and recoverable errors build on it.

const connection = document.getElementById("connection");
const connectionText = document.getElementById("connection-text");
const serverInfo = document.getElementById("server-info");

function showConnection(state, text) {
  connection.dataset.state = state;
  if (connectionText.textContent !== text) connectionText.textContent = text;
}

async function loadSession() {
  const response = await fetch("/api/session", { headers: { Accept: "application/json" } });
  if (!response.ok) throw new Error(`session: HTTP ${response.status}`);
  return response.json();
}

async function main() {
  try {
    const session = await loadSession();
    serverInfo.textContent = `Dashboard process ${session.epoch} on ${location.host}`;
    showConnection("stopped", "Dashboard reachable; syncing is not running");
  } catch {
    showConnection("unreachable", "The dashboard process does not answer");
  }
}

main();
