"""Browser tests of the dashboard page in a real headless Chromium (selenium + chromedriver).

Run by the Swift test `BrowserTests` (so by `swift test` and `.ci/run`):
    python3 Tests/Browser/dashboard_page_test.py DASHBOARD_BINARY SCREENSHOT_DIR
Starts its own dashboard with the built-in simulator, walks the page through its states, saves a
screenshot of each, and ends with "N passed, M failed". The recovery flows have their own file
(recovery_flows_test.py).
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from browser_support import (  # noqa: E402
    By, Dashboard, accessibility_details, accessibility_problems, browser, click, console_errors, enabled, find, loaded, open_simulator, run_suite,
    shot, texts, wait,
)

BINARY, SHOTS = sys.argv[1], sys.argv[2]
os.makedirs(SHOTS, exist_ok=True)


# MARK: Tests


def test_loads_live_without_console_errors(context):
    dashboard, driver = context.dashboard, context.driver
    driver.get(dashboard.url)
    wait(driver, lambda: driver.find_element(By.ID, "connection-text").text == "Live", message="live")
    shot(driver, SHOTS, "live")
    assert console_errors(driver) == [], console_errors(driver)
    assert accessibility_problems(driver) == [], accessibility_details(driver)


def test_messages_appear_in_both_panes_within_a_second(context):
    dashboard, driver = context.dashboard, context.driver
    dashboard.sim("/sim/messages", {"account": "primary", "count": 2, "text": "hello primary"})
    dashboard.sim("/sim/messages", {"account": "linked", "count": 2, "text": "hello linked"})
    started = time.monotonic()
    wait(driver, lambda: texts(driver, "primary").count("hello primary") == 2 and texts(driver, "linked").count("hello linked") == 2,
         seconds=1, message="both panes within a second")
    print(f"  arrived in {time.monotonic() - started:.3f} s")
    shot(driver, SHOTS, "messages")


def test_html_in_a_message_is_shown_as_text(context):
    dashboard, driver = context.dashboard, context.driver
    dashboard.sim("/sim/messages", {"account": "primary", "count": 1, "text": "<b id=\"injected\">bold</b><img src=x onerror=alert(1)>"})
    wait(driver, lambda: any("<b id=" in t for t in texts(driver, "primary")), message="literal text")
    assert driver.find_elements(By.ID, "injected") == []


def countdown_seconds(driver):
    text = driver.execute_script("return document.querySelector('#banner-countdown').textContent")
    return int(text.split()[3]) if text.startswith("Trying again in") else 0


def test_offline_shows_a_counting_banner_and_retry_now_brings_it_back(context):
    dashboard, driver = context.dashboard, context.driver
    dashboard.sim("/sim/faults", {"mode": "offline"})
    dashboard.sim("/sim/messages", {"account": "primary", "count": 1})
    # Jitter may draw a short wait; failures repeat until one is long enough to watch it fall.
    wait(driver, lambda: countdown_seconds(driver) >= 4, seconds=60, message="a countdown of 4 s or more")
    first = countdown_seconds(driver)
    wait(driver, lambda: 0 < countdown_seconds(driver) < first, seconds=3, message="the countdown falls")
    shot(driver, SHOTS, "waiting")
    assert accessibility_problems(driver) == [], accessibility_details(driver)
    # Clicked with seconds to go: at 1 s the engine's own try may start under the pointer (the
    # banner's buttons change with it), and this is about Retry now not waiting for it.
    wait(driver, lambda: countdown_seconds(driver) >= 3, seconds=60, message="3 s or more to go")
    dashboard.sim("/sim/faults", {"mode": "none"})
    clicked = time.monotonic()
    click(driver, find(driver, "#banner-actions button[data-role=\"default\"]"))
    wait(driver, lambda: driver.find_element(By.ID, "connection-text").text == "Live", message="live again")
    assert time.monotonic() - clicked < 3, "Retry now did not wait for the countdown"


def test_out_of_space_view_buy_confirm_and_everything_once(context):
    dashboard, driver = context.dashboard, context.driver
    open_simulator(driver)
    before = dashboard.sim("/sim/stats")["purchases"]
    click(driver, find(driver, "#sim-fill"))
    view = '[data-view-for="primary"] .error-view'
    options = f"{view} button[data-option]"
    # Filling 5 MB takes a while on a busy machine: the view comes when the batch that no longer fits does.
    wait(driver, lambda: len(driver.find_elements(By.CSS_SELECTOR, options)) >= 2, seconds=40, message="the out-of-space view")
    # Storage filled with what was stored, and a few more wait: deleting the oldest can make room, or buying.
    offered = [button.get_attribute("data-option") for button in driver.find_elements(By.CSS_SELECTOR, options)]
    assert offered == ["not-now", "free-space", "buy-space"], offered
    titles = [button.text for button in driver.find_elements(By.CSS_SELECTOR, options)]
    assert titles == ["Not now", "Free space", "Buy more space"], f"Cancel only hides the view here, and says so: {titles}"
    roles = [button.get_attribute("data-role") for button in driver.find_elements(By.CSS_SELECTOR, options)]
    assert roles == ["cancel", "destructive", "default"], f"deleting looks like deleting: {roles}"
    assert driver.find_element(By.CSS_SELECTOR, view).get_attribute("role") == "alert"
    shot(driver, SHOTS, "out-of-space")
    assert accessibility_problems(driver) == [], accessibility_details(driver)
    buy = driver.find_element(By.CSS_SELECTOR, f'{view} button[data-option="buy-space"]')
    click(driver, buy)
    wait(driver, lambda: driver.find_element(By.ID, "confirm").get_attribute("open") is not None, message="confirmation")
    shot(driver, SHOTS, "confirm-buy")
    assert driver.switch_to.active_element.get_attribute("data-role") == "cancel", "focus moved into the dialog, on the safe answer"
    assert accessibility_problems(driver) == [], accessibility_details(driver)
    # A double click on the confirmation runs one attempt.
    confirm = driver.find_element(By.CSS_SELECTOR, '#confirm-actions button[data-role="default"]')
    driver.execute_script("arguments[0].click(); arguments[0].click();", confirm)
    wait(driver, lambda: driver.find_elements(By.CSS_SELECTOR, view) == [], seconds=30, message="view gone")
    wait(driver, lambda: driver.find_element(By.ID, "connection-text").text == "Live", seconds=30, message="syncing again")
    assert dashboard.sim("/sim/stats")["purchases"] == before + 1
    sent = dashboard.sim("/sim/sent")["primary"]
    wait(driver, lambda: loaded(driver, "primary") == len(sent), message="every message present, each once")


def test_reload_and_a_second_tab_show_every_message_once(context):
    dashboard, driver = context.dashboard, context.driver
    driver.refresh()
    sent = dashboard.sim("/sim/sent")
    wait(driver, lambda: driver.find_element(By.ID, "connection-text").text == "Live", message="live after reload")
    for account in ("primary", "linked"):
        wait(driver, lambda account=account: loaded(driver, account) == min(50, len(sent[account])), message=f"{account}: the newest 50")
    second = browser()
    try:
        second.get(dashboard.url)
        wait(second, lambda: second.find_element(By.ID, "connection-text").text == "Live", message="second tab live")
        dashboard.sim("/sim/messages", {"account": "linked", "count": 3, "text": "to both tabs"})
        for tab in (driver, second):
            wait(tab, lambda tab=tab: texts(tab, "linked").count("to both tabs") == 3, message="both tabs once each")
    finally:
        second.quit()


def test_unlink_hides_the_linked_pane(context):
    dashboard, driver = context.dashboard, context.driver
    dashboard.sim("/sim/linked", {"linked": False})
    wait(driver, lambda: not driver.find_element(By.ID, "pane-linked").is_displayed(), message="linked pane hidden")
    shot(driver, SHOTS, "unlinked")
    dashboard.sim("/sim/linked", {"linked": True})
    wait(driver, lambda: driver.find_element(By.ID, "pane-linked").is_displayed(), message="linked pane back")


def test_keyboard_alone_reaches_the_simulator_controls(context):
    dashboard, driver = context.dashboard, context.driver
    open_simulator(driver)
    driver.execute_script("document.activeElement?.blur(); window.scrollTo(0, 0)")
    body = driver.find_element(By.TAG_NAME, "body")
    from selenium.webdriver.common.keys import Keys
    body.send_keys(Keys.TAB)
    focused = set()
    for _ in range(60):
        focused.add(driver.switch_to.active_element.get_attribute("id") or driver.switch_to.active_element.text)
        driver.switch_to.active_element.send_keys(Keys.TAB)
    assert "engine-toggle" in focused and "sim-fill" in focused, focused


def test_readable_at_320_pixels_and_in_dark_mode(context):
    dashboard, driver = context.dashboard, context.driver
    driver.set_window_size(320, 800)
    width = driver.execute_script("return document.documentElement.scrollWidth")
    shot(driver, SHOTS, "narrow")
    driver.set_window_size(1200, 900)
    assert width <= 320, f"the page scrolls sideways at 320 px ({width} px wide)"
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "dark"}]})
    background = driver.execute_script("return getComputedStyle(document.body).backgroundColor")
    shot(driver, SHOTS, "dark")
    assert accessibility_problems(driver) == [], accessibility_details(driver)
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})
    assert background != "rgb(247, 247, 249)", "dark mode changes the background"


def test_stopped_state_offers_start(context):
    dashboard, driver = context.dashboard, context.driver
    click(driver, find(driver, "#engine-toggle"))
    wait(driver, lambda: "Syncing is stopped" in driver.find_element(By.ID, "banner-text").text, message="stopped banner")
    shot(driver, SHOTS, "stopped")
    assert accessibility_problems(driver) == [], accessibility_details(driver)
    assert find(driver, "#engine-toggle").text == "Start syncing"
    # The stop's progress runs its 400 ms even when the banner came sooner; a person clicks the
    # toggle once it is on again (a click on an off control does nothing, daily_use_test checks).
    wait(driver, lambda: enabled(driver, "#engine-toggle"), message="the toggle on again after its progress")
    click(driver, find(driver, "#engine-toggle"))
    wait(driver, lambda: driver.find_element(By.ID, "connection-text").text == "Live", message="started again")


def test_without_the_token_the_page_says_how_to_get_in(context):
    dashboard, driver = context.dashboard, context.driver
    second = browser()  # no cookie yet: as a person who opened the bare address
    try:
        second.get(dashboard.base + "/")
        wait(second, lambda: "Open the dashboard's own address" in second.find_element(By.ID, "load-view").text, message="how to get in")
        assert "?token=" in second.find_element(By.ID, "load-view").text
        assert accessibility_problems(second) == [], accessibility_problems(second)
        shot(second, SHOTS, "no-token")
        second.get(dashboard.url)  # the printed address: the cookie is set and the token leaves the address bar
        wait(second, lambda: second.find_element(By.ID, "connection-text").text == "Live", message="in")
        assert "token=" not in second.current_url, second.current_url
        cookie = second.get_cookie(f"lp_token_{dashboard.base.rsplit(':', 1)[1]}")
        assert cookie and cookie["httpOnly"] and cookie["sameSite"] == "Strict", cookie
        assert second.execute_script("return document.cookie") == "", "the token cookie is not readable by scripts"
    finally:
        second.quit()


def test_when_the_process_is_gone_the_banner_says_so(context):
    dashboard, driver = context.dashboard, context.driver
    dashboard.stop()
    wait(driver, lambda: "does not answer" in driver.find_element(By.ID, "banner-text").text, message="process down")
    wait(driver, lambda: "Trying again" in driver.find_element(By.ID, "banner-countdown").text, message="its own countdown")
    shot(driver, SHOTS, "process-down")


if __name__ == "__main__":
    run_suite(globals(), SHOTS, dashboard=Dashboard(BINARY))
