"""What the browser tests share: a dashboard (and chat server) in a child process, a headless
Chromium through selenium, waiting, clicking as a person does, axe-core, and a small runner."""
import json
import os
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.request

os.environ.setdefault("SE_OFFLINE", "true")
from selenium import webdriver  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402


class Dashboard:
    """The dashboard binary on a free port. With `upstream`, it syncs with that server instead
    of the built-in simulator (then `simulator` is that server's address, if given)."""

    def __init__(self, binary, *arguments, upstream=None, port=0, db=":memory:", environment=None, demo=False):
        # Tests count messages: the demo's history and its occasional messages stay off unless asked for.
        self.db = db
        extra = (["--upstream", upstream] if upstream else []) + ([] if demo or upstream else ["--no-demo"])
        self.process = subprocess.Popen([binary, "--port", str(port), "--db", db, "--log-level", "warning", *extra, *arguments],
                                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                        env=dict(os.environ, **(environment or {})), preexec_fn=dies_with_this_process)
        self.simulator = upstream.rstrip("/") if upstream else self.process.stdout.readline().strip().split(" on ")[1].rstrip("/")
        # http://127.0.0.1:PORT/?token=TOKEN: opening it sets the cookie that lets the page read.
        self.url = self.process.stdout.readline().strip().split(" on ")[1]
        self.base = self.url.split("?")[0].rstrip("/")
        self.token = self.url.split("token=")[1] if "token=" in self.url else None

    def api(self, path):
        """A GET of the dashboard's API with the access token, decoded."""
        headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
        with urllib.request.urlopen(urllib.request.Request(self.base + path, headers=headers), timeout=30) as response:
            return json.loads(response.read())

    def sim(self, path, body=None):
        request = urllib.request.Request(self.simulator + path, data=None if body is None else json.dumps(body).encode(),
                                         method="GET" if body is None else "POST")
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.loads(response.read())

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)


class ChatServer:
    """The simulator on its own (`chat-server`), as an external upstream."""

    def __init__(self, binary, *arguments, port=0):
        self.process = subprocess.Popen([binary, "--port", str(port), *arguments], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                        preexec_fn=dies_with_this_process)
        self.url = self.process.stdout.readline().strip().split(" on ")[1]

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)


def dies_with_this_process():
    """For Popen's preexec_fn: the child gets SIGKILL when the test process goes, however it
    goes (a timeout's kill included), so no server outlives its test."""
    import ctypes
    import signal
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def free_port():
    import socket
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def browser(width=1200, height=900):
    options = webdriver.ChromeOptions()
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                     f"--user-data-dir={tempfile.mkdtemp()}", f"--window-size={width},{height}"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def wait(driver, condition, seconds=10, message="condition"):
    """Waits for `condition()`; `message` may be a function, called on timeout to say what was seen instead."""
    from selenium.common.exceptions import TimeoutException
    try:
        return WebDriverWait(driver, seconds, poll_frequency=0.05).until(lambda _: condition())
    except TimeoutException as timeout:
        raise TimeoutException(message() if callable(message) else message) from timeout


def click_selector(driver, selector, attempts=5):
    """Clicks what `selector` names, found again if the page replaced it between finding and
    clicking (a list re-rendered by a live update, or an error's buttons drawn again as its second
    account's answer comes in): a person's click lands on the button that is there by then."""
    from selenium.common.exceptions import StaleElementReferenceException
    for attempt in range(attempts):
        try:
            click(driver, find(driver, selector))
            return
        except StaleElementReferenceException:
            if attempt == attempts - 1:
                raise


def click_while_shown(driver, selector):
    """Clicks what `selector` names unless it went away by itself meanwhile (an alert the
    engine's own retry closed between looking and clicking); a control still shown that does not
    take the click is a failure."""
    from selenium.common.exceptions import ElementNotInteractableException, NoSuchElementException, StaleElementReferenceException
    try:
        click_selector(driver, selector)
    except (ElementNotInteractableException, NoSuchElementException, StaleElementReferenceException):
        if visible(driver, selector):
            raise


def click(driver, element):
    """Clicks as a person does: the control is brought to the middle of the window first, and
    when toasts sit on it, they are dismissed first (with their own buttons)."""
    from selenium.common.exceptions import ElementClickInterceptedException
    driver.execute_script("arguments[0].scrollIntoView({block: 'center', inline: 'center'})", element)
    try:
        element.click()
    except ElementClickInterceptedException:
        # Each toast's own dismiss button; one may expire meanwhile, so they are clicked in the page.
        driver.execute_script("document.querySelectorAll('.toast .toast-dismiss').forEach(button => button.click())")
        element.click()


def find(driver, selector):
    return driver.find_element(By.CSS_SELECTOR, selector)


def find_all(driver, selector):
    return driver.find_elements(By.CSS_SELECTOR, selector)


def text_of(driver, selector):
    """The text of the first match, read in one script (the page re-renders as events arrive)."""
    return driver.execute_script("const e = document.querySelector(arguments[0]); return e ? e.textContent : ''", selector)


def visible(driver, selector):
    return driver.execute_script(
        "const e = document.querySelector(arguments[0]); return !!e && !!(e.offsetWidth || e.offsetHeight || e.getClientRects().length)",
        selector)


def status_text(driver):
    return text_of(driver, "#connection-text")


def calm(driver):
    """The status bar says all is well: live, no problem in it (it is always there, at one height)."""
    return driver.execute_script("return document.querySelector('#banner').dataset.kind") == "live"


def texts(driver, account):
    return driver.execute_script(
        "return [...document.querySelectorAll(arguments[0])].map(e => e.textContent)", f'[data-messages-for="{account}"] .text')


def ids(driver, account):
    return driver.execute_script(
        "return [...document.querySelectorAll(arguments[0])].map(e => e.dataset.id)", f'[data-messages-for="{account}"] .message')


def loaded(driver, account):
    """How many messages the pane holds (the DOM has only the rows near what is in view)."""
    return int(driver.execute_script(
        "return document.querySelector(arguments[0]).dataset.loaded || 0", f'[data-messages-for="{account}"]'))


def loaded_range(driver, account):
    """(loaded, oldest id, newest id) of the pane."""
    values = driver.execute_script(
        "const d = document.querySelector(arguments[0]).dataset; return [d.loaded || '0', d.oldest || '0', d.newest || '0']",
        f'[data-messages-for="{account}"]')
    return tuple(int(value) for value in values)


def enabled(driver, selector):
    """The control exists and is on (neither disabled nor aria-disabled)."""
    return driver.execute_script(
        "const b = document.querySelector(arguments[0]); return !!b && !b.disabled && b.getAttribute('aria-disabled') !== 'true'", selector)


def shot(driver, shots, name):
    path = os.path.join(shots, f"{name}.png")
    driver.save_screenshot(path)
    print(f"  screenshot: {path}")


def open_simulator(driver):
    panel = driver.find_element(By.ID, "simulator")
    if not panel.get_attribute("open"):
        click(driver, find(driver, "#simulator summary"))


def accessibility_problems(driver):
    """axe-core (bundled by the axe-selenium-python package): serious and critical violations."""
    from axe_selenium_python import Axe
    axe = Axe(driver)
    axe.inject()
    # axe walks every node; on a long page and a starved machine it outlasts WebDriver's default
    # 30 s for a script, which is a wait bound, not a finding. The bound goes back after.
    driver.set_script_timeout(180)
    try:
        results = axe.run()
    finally:
        driver.set_script_timeout(30)
    return [(v["id"], v["impact"], len(v["nodes"])) for v in results["violations"] if v["impact"] in ("serious", "critical")]


def accessibility_details(driver):
    """The serious and critical violations with the elements they name, to say what to fix."""
    from axe_selenium_python import Axe
    axe = Axe(driver)
    axe.inject()
    results = axe.run()
    return [(v["id"], [node["target"] for node in v["nodes"]][:5], v["nodes"][0].get("failureSummary", "")[:200])
            for v in results["violations"] if v["impact"] in ("serious", "critical")]


WIDE, NARROW = (1280, 900), (390, 844)

# Layout shifts as Chromium counts them: every shift not caused by input, and its CLS (the
# largest burst of shifts less than 1 s apart within 5 s).
SHIFT_OBSERVER = """
window.shifts = [];
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) window.shifts.push([entry.value, entry.hadRecentInput, entry.startTime,
    (entry.sources || []).map((source) => source.node ? (source.node.id || source.node.className || source.node.nodeName) : "")]);
}).observe({ type: "layout-shift" });
"""

CUMULATIVE_SHIFT = """
const shifts = window.shifts.filter(([, recentInput]) => !recentInput);
let largest = 0, current = 0, first = 0, previous = -Infinity;
for (const [value, , at] of shifts) {
  if (at - previous > 1000 || at - first > 5000) { current = 0; first = at; }
  current += value; previous = at; largest = Math.max(largest, current);
}
return [shifts.reduce((sum, [value]) => sum + value, 0), largest, shifts.length];
"""


def shift_sources(driver, most=5):
    """The elements that moved most, for a message that says what shifted."""
    return driver.execute_script("""
        const counts = {};
        for (const [value, recent, , sources] of window.shifts) if (!recent) for (const s of sources) counts[s] = (counts[s] || 0) + value;
        return Object.entries(counts).sort((a, b) => b[1] - a[1]).slice(0, arguments[0]);""", most)


def accessible_at_both_widths(driver, state):
    """axe-core at 390 and 1280 px: no serious or critical problem; the window is wide again after."""
    try:
        for width, height in (NARROW, WIDE):
            driver.set_window_size(width, height)
            problems = accessibility_problems(driver)
            assert problems == [], f"{state} at {width} px: {problems}"
    finally:
        driver.set_window_size(*WIDE)


def assert_accessible(driver):
    problems = accessibility_problems(driver)
    assert problems == [], problems


def console_errors(driver):
    return [entry for entry in driver.get_log("browser") if entry["level"] in ("SEVERE", "ERROR")]


def start_dashboard(context, binary, *arguments, size=None, **options):
    """A fresh dashboard (fresh state) in `context.dashboard`, with the page open and live."""
    if context.dashboard:
        context.dashboard.stop()
    context.dashboard = Dashboard(binary, *arguments, **options)
    if size:
        context.driver.set_window_size(*size)
    context.driver.get(context.dashboard.url)
    wait(context.driver, lambda: status_text(context.driver) == "Live", message="live")
    return context.dashboard, context.driver


def dialog_open(driver, selector):
    return driver.execute_script("return document.querySelector(arguments[0]).open", selector)


def banner_options(driver):
    return driver.execute_script("return [...document.querySelectorAll('#banner-actions button[data-option]')].map(b => b.dataset.option)")


def recorded_attempts(driver, title):
    """The attempts "Recent problems" lists for the newest problem whose title holds `title` (in any
    case), as the page words them."""
    return driver.execute_script(
        "const item = [...document.querySelectorAll('#recent-problems > li')]"
        ".find(li => li.textContent.toLowerCase().includes(arguments[0].toLowerCase()));"
        "return item ? [...item.querySelectorAll('.recent-attempts li')].map(li => li.textContent) : []", title)


def fill_storage(dashboard, driver, stored, waiting):
    """Stores `stored` messages, then lowers the quota so that `waiting` more do not fit."""
    roomy = 50_000_000  # what was set before (a fill earlier in the test) must not stop these
    if dashboard.api("/api/state")["storage"]["quotaBytes"] != roomy:
        dashboard.sim("/sim/quota", {"bytes": roomy})
        wait(driver, lambda: dashboard.api("/api/state")["storage"]["quotaBytes"] == roomy, message="room for the stored ones")
    dashboard.sim("/sim/messages", {"account": "primary", "count": stored})
    newest = str(max(dashboard.sim("/sim/sent")["primary"]))
    wait(driver, lambda: (dashboard.api("/api/state")["accounts"]["primary"] or {}).get("cursor") == newest,
         message=lambda: f"stored up to {newest}: {dashboard.api('/api/state')['accounts']} {dashboard.api('/api/state')['connection']['state']}")
    used = dashboard.api("/api/state")["storage"]["usedBytes"]
    dashboard.sim("/sim/quota", {"bytes": used + 300})
    wait(driver, lambda: dashboard.api("/api/state")["storage"]["quotaBytes"] == used + 300, message="the new quota")
    dashboard.sim("/sim/messages", {"account": "primary", "count": waiting})
    wait(driver, lambda: visible(driver, '[data-view-for="primary"] .error-view'), seconds=15, message="the out-of-space view")


def ms_from_click_until(driver, selector, condition, seconds=10):
    """Clicks `selector` and measures inside the page the milliseconds from the click to the first
    change of the page after which `condition` (a JavaScript expression) holds."""
    driver.execute_script("""
        const [selector, condition] = arguments;
        const holds = new Function(`return (${condition});`);
        const timing = window.__clickTiming = { clickAt: null, doneAt: null };
        const onClick = (event) => {
          if (timing.clickAt === null && event.target instanceof Element && event.target.closest(selector)) timing.clickAt = performance.now();
        };
        document.addEventListener("click", onClick, { capture: true });
        const observer = new MutationObserver(() => {
          if (timing.clickAt === null || !holds()) return;
          timing.doneAt = performance.now();
          observer.disconnect();
          document.removeEventListener("click", onClick, { capture: true });
        });
        observer.observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true });
    """, selector, condition)
    click(driver, find(driver, selector))
    wait(driver, lambda: driver.execute_script("return window.__clickTiming.doneAt !== null"), seconds=seconds,
         message=lambda: f"after clicking {selector}: {condition}")
    return driver.execute_script("return window.__clickTiming.doneAt - window.__clickTiming.clickAt")


def run(tests, shots, context):
    """Runs `tests` (name, function) in order with `context`, screenshots failures, prints
    "N passed, M failed" and exits 1 on any failure."""
    passed = failed = 0
    for name, test in tests:
        started = time.monotonic()
        try:
            test(context)
            passed += 1
            print(f"ok {name} ({time.monotonic() - started:.1f} s)", flush=True)
        except Exception:  # noqa: BLE001 - report and go on
            failed += 1
            print(f"FAILED {name}", flush=True)
            traceback.print_exc()
            try:
                shot(context.driver, shots, f"failed-{name}")
            except Exception:  # noqa: BLE001
                pass
    print(f"{passed} passed, {failed} failed")
    return failed == 0


def tests_in(namespace):
    """The namespace's tests in order; `BROWSER_TESTS=word,word` keeps only those whose names hold one of the words."""
    only = [word for word in os.environ.get("BROWSER_TESTS", "").split(",") if word]
    return [(name, function) for name, function in namespace.items()
            if name.startswith("test_") and callable(function) and (not only or any(word in name for word in only))]


def run_suite(namespace, shots, dashboard=None, size=(1200, 900), **extra):
    """Runs a test file's tests in one browser, with `dashboard` (or none, for tests that start
    their own, which they put into `context.dashboard` to have it stopped; a chat server a test
    starts goes into `context.server`) and `extra` in the context; stops the browser, the
    dashboard and the chat server afterwards; exits 1 on any failure."""
    from types import SimpleNamespace

    def body():
        context = SimpleNamespace(dashboard=dashboard, driver=browser(*size), **extra)
        try:
            return run(tests_in(namespace), shots, context)
        finally:
            context.driver.quit()
            if context.dashboard:
                context.dashboard.stop()
            if getattr(context, "server", None):
                context.server.stop()
    main_guard(body)


def scroll_at_rest(driver, selector):
    """Waits, frame by frame, until the element's scroll position has not moved for three
    animation frames (a smooth scroll has ended); returns it."""
    return driver.execute_async_script("""
        const [selector, done] = arguments;
        const element = document.querySelector(selector);
        let last = element.scrollTop, still = 0;
        const tick = () => {
          if (element.scrollTop === last) { if (++still >= 3) return done(last); } else { still = 0; last = element.scrollTop; }
          requestAnimationFrame(tick);
        };
        requestAnimationFrame(tick);""", selector)


def main_guard(body):
    try:
        ok = body()
    except Exception:  # noqa: BLE001
        traceback.print_exc()
        ok = False
    sys.exit(0 if ok else 1)
