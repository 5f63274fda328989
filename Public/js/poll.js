// The page's own long-poll loop: one per tab. A generation number plus an AbortController make a
// stale answer harmless; when the dashboard process cannot be reached it backs off with full
// jitter (cap 10 s), asking for an answer at once until one comes, and it retries at once when
// the browser comes online, the page is shown again or the tab becomes visible. Waits are measured on the wall clock, because background
// tabs throttle timers.

const HOLD_SECONDS = 25;
const BASE_MS = 500;
const CAP_MS = 10_000;

export function startPolling({ epoch, since, onEvents, onReset, onReachability, onUnauthorized }) {
  let generation = 0;
  let controller = null;
  let failures = 0;
  let seq = since;
  let currentEpoch = epoch;
  let wake = null;
  /** Who waits for the next poll's outcome (Retry now shows its progress until then). */
  let outcomeWaiters = [];
  let immediate = false;
  const outcome = () => {
    const waiters = outcomeWaiters;
    outcomeWaiters = [];
    waiters.forEach((resolve) => resolve());
  };

  function sleepUntil(time, gen) {
    return new Promise((resolve) => {
      const done = () => { clearInterval(timer); wake = null; resolve(); };
      const timer = setInterval(() => { if (Date.now() >= time || gen !== generation) done(); }, 250);
      wake = done;
    });
  }

  async function run(gen) {
    while (gen === generation) {
      controller = new AbortController();
      const visible = document.visibilityState === "visible" ? 1 : 0;
      // After a failure (and on Retry now) the poll asks for an answer at once: whether the
      // process answers is news that should not wait for a held poll to end.
      const hold = failures > 0 || immediate ? 0 : HOLD_SECONDS;
      immediate = false;
      const url = `/api/poll?since=${seq}&epoch=${encodeURIComponent(currentEpoch)}&timeout=${hold}&visible=${visible}`;
      const abandon = setTimeout(() => controller.abort(), (HOLD_SECONDS + 10) * 1000);
      let refused = false;
      try {
        const response = await fetch(url, { signal: controller.signal, cache: "no-store", headers: { Accept: "application/json" } });
        if (response.status === 401) {
          // The dashboard restarted with a new access token: the page says so and goes on asking,
          // slowly, so it is back by itself once the new address is opened (in any window).
          refused = true;
          onUnauthorized();
          throw new Error("HTTP 401");
        }
        if (!response.ok) throw new Error(`HTTP ${response.status}`);
        const answer = await response.json();
        if (gen !== generation) return;
        failures = 0;
        onReachability(true, null);
        outcome();
        if (answer.reset) {
          currentEpoch = answer.epoch;
          seq = answer.seq;
          onReset(answer.state);
        } else {
          seq = answer.seq;
          if (answer.events.length) onEvents(answer.events);
        }
      } catch {
        if (gen !== generation) return;
        failures += 1;
        const retryAt = Date.now() + Math.random() * Math.min(CAP_MS, BASE_MS * 2 ** (failures - 1));
        if (!refused) onReachability(false, retryAt);
        outcome();
        await sleepUntil(retryAt, gen);
      } finally {
        clearTimeout(abandon);
      }
    }
  }

  function restart() {
    generation += 1;
    controller?.abort();
    wake?.();
    run(generation);
  }

  const onPageShow = (event) => { if (event.persisted) restart(); };
  window.addEventListener("online", restart);
  window.addEventListener("pageshow", onPageShow);
  // Every visibility change re-polls, so the server's count of visible tabs stays true.
  document.addEventListener("visibilitychange", restart);
  run(generation);

  /** Polls again at once; resolves when that poll got through or failed. */
  function retryNow() {
    const done = new Promise((resolve) => outcomeWaiters.push(resolve));
    immediate = true;
    restart();
    return done;
  }

  function stop() {
    outcome();
    generation += 1;
    controller?.abort();
    wake?.();
    window.removeEventListener("online", restart);
    window.removeEventListener("pageshow", onPageShow);
    document.removeEventListener("visibilitychange", restart);
  }
  return { retryNow, stop };
}
