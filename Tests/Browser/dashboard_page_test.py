"""Browser tests of the dashboard page in a real headless Chromium (selenium + chromedriver).

Run by the Swift test `BrowserTests` (so by `swift test` and `.ci/run`):
    python3 Tests/Browser/dashboard_page_test.py DASHBOARD_BINARY SCREENSHOT_DIR
Starts its own dashboard with the built-in simulator, walks the page through its states, saves a
screenshot of each, and ends with "N passed, M failed".
"""
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
from selenium.webdriver.support.ui import Select, WebDriverWait  # noqa: E402

BINARY, SHOTS = sys.argv[1], sys.argv[2]
os.makedirs(SHOTS, exist_ok=True)


class Dashboard:
    def __init__(self, *arguments):
        self.process = subprocess.Popen([BINARY, "--port", "0", "--db", ":memory:", "--log-level", "warning", *arguments],
                                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.simulator = self.process.stdout.readline().strip().split(" on ")[1].rstrip("/")
        self.url = self.process.stdout.readline().strip().split(" on ")[1]

    def sim(self, path, body=None):
        request = urllib.request.Request(self.simulator + path, data=None if body is None else json.dumps(body).encode(),
                                         method="GET" if body is None else "POST")
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.loads(response.read())

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)


def browser():
    options = webdriver.ChromeOptions()
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                     f"--user-data-dir={tempfile.mkdtemp()}", "--window-size=1200,900"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def wait(driver, condition, seconds=10, message="condition"):
    return WebDriverWait(driver, seconds, poll_frequency=0.05).until(lambda _: condition(), message)


def texts(driver, account):
    # Read in one script: the list is re-rendered as events arrive.
    return driver.execute_script(
        "return [...document.querySelectorAll(arguments[0])].map(e => e.textContent)", f'[data-messages-for="{account}"] .text')


def ids(driver, account):
    return driver.execute_script(
        "return [...document.querySelectorAll(arguments[0])].map(e => e.dataset.id)", f'[data-messages-for="{account}"] .message')


def shot(driver, name):
    path = os.path.join(SHOTS, f"{name}.png")
    driver.save_screenshot(path)
    print(f"  screenshot: {path}")


def open_simulator(driver):
    panel = driver.find_element(By.ID, "simulator")
    if not panel.get_attribute("open"):
        driver.find_element(By.CSS_SELECTOR, "#simulator summary").click()


def accessibility_problems(driver):
    """axe-core (bundled by the axe-selenium-python package): serious and critical violations."""
    from axe_selenium_python import Axe
    axe = Axe(driver)
    axe.inject()
    results = axe.run()
    return [(v["id"], v["impact"], len(v["nodes"])) for v in results["violations"] if v["impact"] in ("serious", "critical")]


def console_errors(driver):
    return [entry for entry in driver.get_log("browser") if entry["level"] in ("SEVERE", "ERROR")]


# MARK: Tests


def test_loads_live_without_console_errors(dashboard, driver):
    driver.get(dashboard.url)
    wait(driver, lambda: driver.find_element(By.ID, "connection-text").text == "Live", message="live")
    shot(driver, "live")
    assert console_errors(driver) == [], console_errors(driver)
    assert accessibility_problems(driver) == [], accessibility_problems(driver)


def test_messages_appear_in_both_panes_within_a_second(dashboard, driver):
    dashboard.sim("/sim/messages", {"account": "primary", "count": 2, "text": "hello primary"})
    dashboard.sim("/sim/messages", {"account": "linked", "count": 2, "text": "hello linked"})
    started = time.monotonic()
    wait(driver, lambda: texts(driver, "primary").count("hello primary") == 2 and texts(driver, "linked").count("hello linked") == 2,
         seconds=1, message="both panes within a second")
    print(f"  arrived in {time.monotonic() - started:.3f} s")
    shot(driver, "messages")


def test_html_in_a_message_is_shown_as_text(dashboard, driver):
    dashboard.sim("/sim/messages", {"account": "primary", "count": 1, "text": "<b id=\"injected\">bold</b><img src=x onerror=alert(1)>"})
    wait(driver, lambda: any("<b id=" in t for t in texts(driver, "primary")), message="literal text")
    assert driver.find_elements(By.ID, "injected") == []


def countdown_seconds(driver):
    text = driver.execute_script("return document.querySelector('#banner').hidden ? '' : "
                                 "document.querySelector('#banner-countdown').textContent")
    return int(text.split()[2]) if text.startswith("Retrying in") else 0


def test_offline_shows_a_counting_banner_and_retry_now_brings_it_back(dashboard, driver):
    dashboard.sim("/sim/faults", {"mode": "offline"})
    dashboard.sim("/sim/messages", {"account": "primary", "count": 1})
    # Jitter may draw a short wait; failures repeat until one is long enough to watch it fall.
    wait(driver, lambda: countdown_seconds(driver) >= 4, seconds=60, message="a countdown of 4 s or more")
    first = countdown_seconds(driver)
    wait(driver, lambda: 0 < countdown_seconds(driver) < first, seconds=3, message="the countdown falls")
    shot(driver, "waiting")
    assert accessibility_problems(driver) == [], accessibility_problems(driver)
    dashboard.sim("/sim/faults", {"mode": "none"})
    clicked = time.monotonic()
    driver.find_element(By.CSS_SELECTOR, "#banner-actions button").click()
    wait(driver, lambda: driver.find_element(By.ID, "connection-text").text == "Live", message="live again")
    assert time.monotonic() - clicked < 3, "Retry now did not wait for the countdown"


def test_out_of_space_view_buy_confirm_and_everything_once(dashboard, driver):
    open_simulator(driver)
    before = dashboard.sim("/sim/stats")["purchases"]
    driver.find_element(By.ID, "sim-fill").click()
    wait(driver, lambda: len(driver.find_elements(By.CSS_SELECTOR, ".error-view button")) == 3, message="view with three buttons")
    assert driver.find_element(By.CSS_SELECTOR, ".error-view").get_attribute("role") == "alert"
    shot(driver, "out-of-space")
    assert accessibility_problems(driver) == [], accessibility_problems(driver)
    buy = driver.find_element(By.CSS_SELECTOR, '.error-view button[data-option="buy-space"]')
    buy.click()
    wait(driver, lambda: driver.find_element(By.ID, "alert").get_attribute("open") is not None, message="confirmation")
    shot(driver, "confirm-buy")
    assert driver.switch_to.active_element.get_attribute("data-role") == "default", "focus moved into the dialog"
    assert accessibility_problems(driver) == [], accessibility_problems(driver)
    # A double click on the confirmation runs one attempt.
    confirm = driver.find_element(By.CSS_SELECTOR, '#alert-actions button[data-role="default"]')
    driver.execute_script("arguments[0].click(); arguments[0].click();", confirm)
    wait(driver, lambda: driver.find_elements(By.CSS_SELECTOR, ".error-view") == [], message="view gone")
    wait(driver, lambda: driver.find_element(By.ID, "connection-text").text == "Live", message="syncing again")
    assert dashboard.sim("/sim/stats")["purchases"] == before + 1
    sent = dashboard.sim("/sim/sent")["primary"]
    wait(driver, lambda: len(ids(driver, "primary")) == len(sent), message="every message present")
    shown = ids(driver, "primary")
    assert len(shown) == len(set(shown)), "no message twice"


def test_reload_and_a_second_tab_show_every_message_once(dashboard, driver):
    driver.refresh()
    sent = dashboard.sim("/sim/sent")
    wait(driver, lambda: driver.find_element(By.ID, "connection-text").text == "Live", message="live after reload")
    for account in ("primary", "linked"):
        shown = ids(driver, account)
        assert len(shown) == len(set(shown)) == min(50, len(sent[account])), (account, len(shown), len(sent[account]))
    second = browser()
    try:
        second.get(dashboard.url)
        wait(second, lambda: second.find_element(By.ID, "connection-text").text == "Live", message="second tab live")
        dashboard.sim("/sim/messages", {"account": "linked", "count": 3, "text": "to both tabs"})
        for tab in (driver, second):
            wait(tab, lambda tab=tab: texts(tab, "linked").count("to both tabs") == 3, message="both tabs once each")
    finally:
        second.quit()


def test_unlink_hides_the_linked_pane(dashboard, driver):
    dashboard.sim("/sim/linked", {"linked": False})
    wait(driver, lambda: not driver.find_element(By.ID, "pane-linked").is_displayed(), message="linked pane hidden")
    shot(driver, "unlinked")
    dashboard.sim("/sim/linked", {"linked": True})
    wait(driver, lambda: driver.find_element(By.ID, "pane-linked").is_displayed(), message="linked pane back")


def test_keyboard_alone_reaches_the_simulator_controls(dashboard, driver):
    body = driver.find_element(By.TAG_NAME, "body")
    from selenium.webdriver.common.keys import Keys
    body.send_keys(Keys.TAB)
    focused = set()
    for _ in range(40):
        focused.add(driver.switch_to.active_element.get_attribute("id") or driver.switch_to.active_element.text)
        driver.switch_to.active_element.send_keys(Keys.TAB)
    assert "engine-stop" in focused and "notifications" in focused, focused


def test_readable_at_320_pixels_and_in_dark_mode(dashboard, driver):
    driver.set_window_size(320, 800)
    width = driver.execute_script("return document.documentElement.scrollWidth")
    shot(driver, "narrow")
    driver.set_window_size(1200, 900)
    assert width <= 320, f"the page scrolls sideways at 320 px ({width} px wide)"
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "dark"}]})
    background = driver.execute_script("return getComputedStyle(document.body).backgroundColor")
    shot(driver, "dark")
    assert accessibility_problems(driver) == [], accessibility_problems(driver)
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})
    assert background != "rgb(247, 247, 249)", "dark mode changes the background"


def test_stopped_state_offers_start(dashboard, driver):
    driver.find_element(By.ID, "engine-stop").click()
    wait(driver, lambda: "Syncing is stopped" in driver.find_element(By.ID, "banner-text").text, message="stopped banner")
    shot(driver, "stopped")
    assert accessibility_problems(driver) == [], accessibility_problems(driver)
    driver.find_element(By.CSS_SELECTOR, "#banner-actions button").click()
    wait(driver, lambda: driver.find_element(By.ID, "connection-text").text == "Live", message="started again")


def test_when_the_process_is_gone_the_banner_says_so(dashboard, driver):
    dashboard.stop()
    wait(driver, lambda: "does not answer" in driver.find_element(By.ID, "banner-text").text, message="process down")
    wait(driver, lambda: "Retrying in" in driver.find_element(By.ID, "banner-countdown").text
         or "Retrying now" in driver.find_element(By.ID, "banner-countdown").text, message="its own countdown")
    shot(driver, "process-down")


def main():
    dashboard = Dashboard()
    driver = browser()
    passed = failed = 0
    try:
        for name, test in [(n, f) for n, f in globals().items() if n.startswith("test_")]:
            try:
                test(dashboard, driver)
                passed += 1
                print(f"ok {name}")
            except Exception:  # noqa: BLE001 - report and go on
                failed += 1
                print(f"FAILED {name}")
                traceback.print_exc()
                shot(driver, f"failed-{name}")
    finally:
        driver.quit()
        dashboard.stop()
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
