// Talking to the dashboard process: the per-launch session, JSON reads that refuse what they
// cannot read, and state-changing posts with the CSRF token.

let csrfToken = "";

/** The dashboard answered with an error status; `body` is its problem+json when it sent one. */
export class HttpError extends Error {
  constructor(status, body) {
    super(`HTTP ${status}`);
    this.status = status;
    this.body = body;
  }
}

/** The dashboard answered 200 with something that is not the expected JSON. */
export class UnreadableAnswer extends Error {
  constructor(path) {
    super(`unreadable answer from ${path}`);
    this.path = path;
  }
}

/** Why a request of the page failed, in words. */
export function reasonFor(failure) {
  if (failure instanceof HttpError && failure.status === 401) {
    return "This page has no access to the dashboard: it needs the address the dashboard printed when it started.";
  }
  if (failure instanceof HttpError) {
    return `The dashboard answered ${failure.status}${failure.body?.detail ? `: ${failure.body.detail}` : "."}`;
  }
  if (failure instanceof UnreadableAnswer) return "The dashboard's answer could not be read.";
  return "The dashboard process does not answer. Is it still running?";
}

export async function loadSession() {
  const session = await getJSON("/api/session");
  if (typeof session?.csrfToken !== "string" || typeof session?.epoch !== "string") throw new UnreadableAnswer("/api/session");
  csrfToken = session.csrfToken;
  return session;
}

export async function getJSON(path, { signal } = {}) {
  const response = await fetch(path, { headers: { Accept: "application/json" }, cache: "no-store", signal });
  let body = null;
  let readable = true;
  try {
    body = await response.json();
  } catch {
    readable = false;
  }
  if (!response.ok) throw new HttpError(response.status, body);
  if (!readable || body === null || typeof body !== "object") throw new UnreadableAnswer(path);
  return body;
}

/** POSTs JSON; resolves with { status, body } whatever the status, rejects only when unreachable. */
export async function post(path, body = {}, { idempotencyKey } = {}) {
  const headers = { "Content-Type": "application/json", Accept: "application/json", "X-CSRF-Token": csrfToken };
  if (idempotencyKey) headers["Idempotency-Key"] = idempotencyKey;
  const response = await fetch(path, { method: "POST", headers, body: JSON.stringify(body), cache: "no-store" });
  return { status: response.status, body: await response.json().catch(() => null) };
}

/** A PUT without a body (state-changing: it carries the CSRF token); its status and JSON body, if any. */
export async function put(path) {
  const headers = { Accept: "application/json", "X-CSRF-Token": csrfToken };
  const response = await fetch(path, { method: "PUT", headers, cache: "no-store" });
  return { status: response.status, body: await response.json().catch(() => null) };
}

/** A DELETE of the API (state-changing: it carries the CSRF token); its status and JSON body, if any. */
export async function remove(path) {
  const headers = { Accept: "application/json", "X-CSRF-Token": csrfToken };
  const response = await fetch(path, { method: "DELETE", headers, cache: "no-store" });
  return { status: response.status, body: await response.json().catch(() => null) };
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs one attempt the person asked for. When the request does not get through, it is sent
 *  again with the same key (the server then runs it at most once); after three tries it rejects. */
export async function postAttempt(errorId, optionId, idempotencyKey, extra = {}) {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await post(`/api/errors/${encodeURIComponent(errorId)}/attempts`, { ...extra, option: optionId }, { idempotencyKey });
    } catch (failure) {
      if (attempt >= 3) throw failure;
      await sleep(400 * attempt);
    }
  }
}
