// Talking to the dashboard process: the per-launch session, JSON reads, and state-changing
// posts with the CSRF token.

let csrfToken = "";

export class HttpError extends Error {
  constructor(status, body) {
    super(`HTTP ${status}`);
    this.status = status;
    this.body = body;
  }
}

export async function loadSession() {
  const session = await getJSON("/api/session");
  csrfToken = session.csrfToken;
  return session;
}

export async function getJSON(path, { signal } = {}) {
  const response = await fetch(path, { headers: { Accept: "application/json" }, cache: "no-store", signal });
  const body = await response.json().catch(() => null);
  if (!response.ok) throw new HttpError(response.status, body);
  return body;
}

/** POSTs JSON; resolves with { status, body } whatever the status, rejects only when unreachable. */
export async function post(path, body = {}, { idempotencyKey } = {}) {
  const headers = { "Content-Type": "application/json", Accept: "application/json", "X-CSRF-Token": csrfToken };
  if (idempotencyKey) headers["Idempotency-Key"] = idempotencyKey;
  const response = await fetch(path, { method: "POST", headers, body: JSON.stringify(body), cache: "no-store" });
  return { status: response.status, body: await response.json().catch(() => null) };
}
