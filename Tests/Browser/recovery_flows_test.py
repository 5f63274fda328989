"""Recovery flows as a person lives them, in a real headless Chromium: every error kind is
failed and recovered with the mouse (or the keyboard), Try again is clicked twice after a
failure and each click is a real attempt counted upstream, the failed attempt is seen, the
first load and scroll-back fail into views with Try again, Free space asks first and says what it
removes, bursts are one toast, long text never scrolls sideways, other windows see an attempt
running, Keep these and sync again shows the server's messages at once and tells the new ones,
and an external upstream leaves the console clean. axe-core stays clean in every state.

    python3 Tests/Browser/recovery_flows_test.py DASHBOARD_BINARY CHAT_SERVER_BINARY SCREENSHOT_DIR
"""
import os
import re
import sys
import time
import urllib.request
import json

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from browser_support import (  # noqa: E402
    calm, By, ChatServer, Dashboard, assert_accessible, banner_options, browser, click, console_errors, dialog_open, enabled, fill_storage, find, find_all,
    loaded, loaded_range, recorded_attempts, run_suite, shot, status_text, text_of, texts, visible, wait,
)
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.expected_conditions import staleness_of  # noqa: E402

BINARY, CHAT_SERVER, SHOTS = sys.argv[1], sys.argv[2], sys.argv[3]
os.makedirs(SHOTS, exist_ok=True)

# Long backoff: between the person's clicks the engine does not retry by itself, so what the
# simulator counts is what the clicks did.
PATIENT = ("--backoff-base-ms", "60000", "--backoff-cap-ms", "60000")


def start(context, *arguments, upstream=None):
    """A fresh dashboard (fresh state) with the page open and live."""
    if context.dashboard:
        context.dashboard.stop()
    context.dashboard = Dashboard(BINARY, *arguments, upstream=upstream)
    context.driver.get(context.dashboard.url)
    wait(context.driver, lambda: status_text(context.driver) == "Live", message="live")
    return context.dashboard, context.driver


def api(dashboard, path):
    return dashboard.api(path)



def banner_button(driver, option):
    return find(driver, f'#banner-actions button[data-option="{option}"]')


def countdown(driver):
    text = text_of(driver, "#banner-countdown")
    return int(text.split()[3]) if text.startswith("Trying again in") else 0


def wait_for_a_long_wait(driver):
    """Waits until the engine's next try is at least 10 s away, so it cannot mix into a click's count."""
    wait(driver, lambda: countdown(driver) >= 10, seconds=90, message="a countdown of 10 s or more")


def upstream_calls(dashboard):
    return dashboard.sim("/sim/stats")["upstreamCalls"]



def dismiss_toasts(driver):
    for dismiss in find_all(driver, ".toast .toast-dismiss"):
        dismiss.click()


# MARK: Try again, twice, for real


def test_try_again_twice_after_a_failure_runs_two_real_attempts(context):
    dashboard, driver = start(context, *PATIENT)
    dashboard.sim("/sim/faults", {"mode": "error500"})
    dashboard.sim("/sim/expire-token", {})  # ends the held poll, so the failure shows now
    wait(driver, lambda: banner_options(driver) == ["stop-syncing", "try-again"], seconds=15, message="the error's own options in the banner")
    assert "having trouble" in text_of(driver, "#banner-text")
    notes = []
    for click_number in (1, 2):
        wait_for_a_long_wait(driver)
        before = upstream_calls(dashboard)
        click(driver, banner_button(driver, "try-again"))
        wait(driver, lambda: len(recorded_attempts(driver, "having trouble")) == click_number, seconds=15, message=f"attempt {click_number} ended")
        wait(driver, lambda: enabled(driver, '#banner-actions button[data-option="try-again"]'), message="the button is back")
        assert upstream_calls(dashboard) > before, f"click {click_number} reached the chat server"
        note = text_of(driver, "#banner-note")
        assert note.startswith("Try again didn't help"), note
        notes.append(note)
        # Each failed click changes what is said, so the second never looks ignored.
        assert ("2 tries" in note) == (click_number == 2), note
        assert countdown(driver) > 0 or "Trying again" in text_of(driver, "#banner-text"), "the banner still counts down"
    assert notes[0] != notes[1], notes
    assert all("didn't help" in line for line in recorded_attempts(driver, "having trouble"))
    # Details: the technical cause and a Copy button that says what it did.
    click(driver, find(driver, "#banner-details summary"))
    assert "500" in text_of(driver, "#banner-details pre"), text_of(driver, "#banner-details pre")
    click(driver, find(driver, '#banner-details button'))
    wait(driver, lambda: text_of(driver, "#banner-details .copy-status") != "", message="copy says what happened")
    assert text_of(driver, "#banner-details .copy-status") in ("Copied.", "Could not copy; select the text above instead.")
    shot(driver, SHOTS, "still-failing-banner")
    assert_accessible(driver)
    # Cancel stops syncing, as the suggestion says; Start brings it back.
    click(driver, banner_button(driver, "stop-syncing"))
    wait(driver, lambda: "Syncing is stopped" in text_of(driver, "#banner-text"), message="stopped")
    dashboard.sim("/sim/faults", {"mode": "none"})
    click(driver, find(driver, '#engine-toggle'))
    wait(driver, lambda: status_text(driver) == "Live", message="live again")


# MARK: Every connection error, each option, in the state where it appears


def test_each_connection_error_fails_visibly_then_recovers_three_times_in_a_row(context):
    dashboard, driver = start(context, *PATIENT)
    kinds = (("malformed", "could not be read"), ("offline", "cannot be reached"), ("conflict", "continues somewhere else"))
    for mode, words in [kind for kind in kinds for _ in range(3)]:
        dashboard.sim("/sim/faults", {"mode": mode})
        dashboard.sim("/sim/expire-token", {})
        wait(driver, lambda: words in text_of(driver, "#banner-text") and banner_options(driver) == ["stop-syncing", "try-again"], seconds=20,
             message=f"{mode}: banner with its options")
        click(driver, banner_button(driver, "try-again"))
        wait(driver, lambda: text_of(driver, "#banner-note").__contains__("didn't help"), seconds=15, message=f"{mode}: the failure is seen")
        wait(driver, lambda: enabled(driver, '#banner-actions button[data-option="try-again"]'), message="enabled again")
        shot(driver, SHOTS, f"banner-{mode}")
        assert_accessible(driver)
        dashboard.sim("/sim/faults", {"mode": "none"})
        # The engine's own retry may get there first and take the banner away under the pointer
        # (seen on a loaded machine): then there is nothing left to click, and live is what counts.
        try:
            click(driver, banner_button(driver, "try-again"))
        except (StaleElementReferenceException, NoSuchElementException):
            pass
        wait(driver, lambda: status_text(driver) == "Live" and calm(driver), seconds=15, message=f"{mode}: live again")


def test_cancel_on_a_connection_error_stops_and_start_resumes(context):
    dashboard, driver = start(context, *PATIENT)
    dashboard.sim("/sim/faults", {"mode": "offline"})
    wait(driver, lambda: banner_options(driver) == ["stop-syncing", "try-again"], seconds=20, message="unreachable banner")
    click(driver, banner_button(driver, "stop-syncing"))
    wait(driver, lambda: "Syncing is stopped" in text_of(driver, "#banner-text"), message="stopped")
    assert_accessible(driver)
    dashboard.sim("/sim/faults", {"mode": "none"})
    click(driver, find(driver, '#engine-toggle'))
    wait(driver, lambda: status_text(driver) == "Live", seconds=15, message="live again")


def test_a_refused_token_is_an_alert_whose_options_work_every_time(context):
    dashboard, driver = start(context, *PATIENT)
    dialog_open = lambda: driver.execute_script("return document.querySelector('#alert').open")  # noqa: E731
    for round_number in (1, 2, 3):
        dashboard.sim("/sim/faults", {"mode": "unauthorized"})
        dashboard.sim("/sim/expire-token", {})
        wait(driver, dialog_open, seconds=20, message="the alert")
        assert "won't let this dashboard in" in text_of(driver, "#alert-title")
        assert "keeps trying" in text_of(driver, "#alert-suggestion"), "the words say what happens"
        assert driver.switch_to.active_element.get_attribute("data-option") == "try-again", "focus is in the dialog"
        click(driver, find(driver, '#alert-actions button[data-option="try-again"]'))
        wait(driver, lambda: text_of(driver, "#alert-note").__contains__("didn't help"), seconds=15, message="failure in the dialog")
        wait(driver, lambda: enabled(driver, '#alert-actions button[data-option="try-again"]'), message="enabled again")
        shot(driver, SHOTS, f"token-refused-{round_number}")
        assert_accessible(driver)
        if round_number < 3:
            dashboard.sim("/sim/faults", {"mode": "none"})
            click(driver, find(driver, '#alert-actions button[data-option="try-again"]'))
            wait(driver, lambda: not dialog_open() and status_text(driver) == "Live", seconds=15, message="recovered")
        else:
            # The fault stays until syncing is stopped: the engine's own next try (a full-jitter
            # draw of up to a minute, so at times within a second) would otherwise mend the
            # error before the banner is looked at.
            driver.switch_to.active_element.send_keys(Keys.ESCAPE)  # Escape only closes the dialog
            wait(driver, lambda: not dialog_open() and banner_options(driver) == ["stop-syncing", "try-again"], message="closed: in the banner")
            click(driver, banner_button(driver, "stop-syncing"))  # Stop syncing
            wait(driver, lambda: "Syncing is stopped" in text_of(driver, "#banner-text"), message="stopped")
            dashboard.sim("/sim/faults", {"mode": "none"})
            click(driver, find(driver, '#engine-toggle'))
            wait(driver, lambda: status_text(driver) == "Live", seconds=15, message="started")


# MARK: Storage



def view_options(driver):
    return driver.execute_script(
        "return [...document.querySelectorAll('[data-view-for=\"primary\"] .error-view button[data-option]')].map(b => b.dataset.option)")


def test_free_space_asks_first_says_what_it_removes_and_removes_exactly_that(context):
    dashboard, driver = start(context)
    fill_storage(dashboard, driver, stored=40, waiting=10)
    assert view_options(driver) == ["not-now", "free-space", "buy-space"], view_options(driver)
    shot(driver, SHOTS, "out-of-space-with-free-space")
    assert_accessible(driver)
    # First time: read the question and step back. Nothing is removed.
    click(driver, find(driver, '[data-view-for="primary"] button[data-option="free-space"]'))
    wait(driver, lambda: driver.execute_script("return document.querySelector('#confirm').open"), message="the question")
    question = text_of(driver, "#confirm-detail")
    match = re.search(r"the (\d+) oldest messages", question)
    assert match and "cannot be fetched" in question, question
    removing = int(match.group(1))
    shot(driver, SHOTS, "free-space-question")
    assert_accessible(driver)
    click(driver, find(driver, '#confirm-actions button[data-role="cancel"]'))
    assert len(api(dashboard, "/api/messages?account=primary&limit=500")["messages"]) == 40, "nothing removed on Cancel"
    # Second time: go ahead. Exactly that many of the oldest go and the waiting ten arrive.
    click(driver, find(driver, '[data-view-for="primary"] button[data-option="free-space"]'))
    wait(driver, lambda: driver.execute_script("return document.querySelector('#confirm').open"), message="the question again")
    click(driver, find(driver, '#confirm-actions button[data-role="default"]'))
    wait(driver, lambda: not visible(driver, '[data-view-for="primary"] .error-view') and status_text(driver) == "Live", seconds=15,
         message="recovered")
    stored = sorted(message["id"] for message in api(dashboard, "/api/messages?account=primary&limit=500")["messages"])
    assert stored == list(range(removing + 1, 51)), (removing, stored[:3], len(stored))
    wait(driver, lambda: loaded_range(driver, "primary") == (len(stored), stored[0], stored[-1]), message="the page holds exactly what is stored")


def test_buying_declined_then_declined_again_then_bought(context):
    dashboard, driver = start(context)
    fill_storage(dashboard, driver, stored=5, waiting=40)
    assert view_options(driver) == ["not-now", "buy-space"], "removing old messages cannot make room for 40: not offered"
    dashboard.sim("/sim/faults", {"mode": "decline"})
    dialog_open = lambda: driver.execute_script("return document.querySelector('#alert').open")  # noqa: E731
    confirm_open = lambda: driver.execute_script("return document.querySelector('#confirm').open")  # noqa: E731
    click(driver, find(driver, '[data-view-for="primary"] button[data-option="buy-space"]'))
    wait(driver, confirm_open, message="asks before buying")
    click(driver, find(driver, '#confirm-actions button[data-role="default"]'))
    wait(driver, lambda: dialog_open() and "did not go through" in text_of(driver, "#alert-title"), seconds=15, message="declined")
    assert not visible(driver, "#alert-note"), "a new error: it says what happened itself"
    assert_accessible(driver)
    for outcome in ("declined again", "bought"):
        if outcome == "bought":
            dashboard.sim("/sim/faults", {"mode": "none"})
        click(driver, find(driver, '#alert-actions button[data-option="try-again"]'))
        wait(driver, confirm_open, message="trying the purchase again asks too")
        click(driver, find(driver, '#confirm-actions button[data-role="default"]'))
        if outcome == "declined again":
            wait(driver, lambda: "Try again didn't help" in text_of(driver, "#alert-note"), seconds=15, message=outcome)
            wait(driver, lambda: enabled(driver, '#alert-actions button[data-option="try-again"]'), message="enabled again")
            shot(driver, SHOTS, "purchase-declined-again")
        else:
            wait(driver, lambda: not dialog_open() and status_text(driver) == "Live", seconds=15, message=outcome)
    wait(driver, lambda: loaded(driver, "primary") == 45, message="every message arrived")
    assert dashboard.sim("/sim/stats")["purchases"] == 1


def test_cancel_on_out_of_space_keeps_the_way_back_in_the_banner(context):
    dashboard, driver = start(context)
    fill_storage(dashboard, driver, stored=5, waiting=40)
    click(driver, find(driver, '[data-view-for="primary"] button[data-option="not-now"]'))
    wait(driver, lambda: not visible(driver, '[data-view-for="primary"] .error-view'), message="the view goes")
    assert status_text(driver) == "Paused"
    assert banner_options(driver) == ["buy-space"], banner_options(driver)
    assert_accessible(driver)
    click(driver, banner_button(driver, "buy-space"))
    click(driver, find(driver, '#confirm-actions button[data-role="default"]'))
    wait(driver, lambda: status_text(driver) == "Live", seconds=15, message="live after buying from the banner")


# MARK: Loading


FAILING_STATE = """
(() => {
  let calls = 0;
  const realFetch = window.fetch.bind(window);
  window.fetch = (input, init) => {
    if (String(input).startsWith("/api/state")) {
      calls += 1;
      if (calls === 1) return Promise.resolve(new Response("<html>proxy login</html>", { status: 200, headers: { "Content-Type": "text/html" } }));
      if (calls === 2) return Promise.resolve(new Response(JSON.stringify({ title: "Boom", detail: "Something broke." }),
                                                           { status: 500, headers: { "Content-Type": "application/problem+json" } }));
    }
    return realFetch(input, init);
  };
})();
"""


def test_a_first_load_that_fails_is_a_view_with_try_again(context):
    dashboard, driver = start(context)
    script = driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": FAILING_STATE})
    try:
        driver.get(dashboard.url)
        wait(driver, lambda: visible(driver, "#load-view"), message="the load view")
        assert "could not be read" in text_of(driver, "#load-view"), text_of(driver, "#load-view")
        assert not visible(driver, ".panes"), "the view takes the main area"
        shot(driver, SHOTS, "first-load-failed")
        assert_accessible(driver)
        click(driver, find(driver, "#load-view button"))
        wait(driver, lambda: "answered 500" in text_of(driver, "#load-view") and "Still not loaded" in text_of(driver, "#load-view"),
             message="the second failure, said")
        click(driver, find(driver, "#load-view button"))
        wait(driver, lambda: status_text(driver) == "Live" and not visible(driver, "#load-view"), message="loaded")
    finally:
        driver.execute_cdp_cmd("Page.removeScriptToEvaluateOnNewDocument", {"identifier": script["identifier"]})


def test_scroll_back_that_fails_is_a_view_in_its_pane(context):
    dashboard, driver = start(context)
    dashboard.sim("/sim/messages", {"account": "primary", "count": 70})
    driver.refresh()
    wait(driver, lambda: visible(driver, '[data-older-for="primary"]'), message="older messages to load")
    driver.execute_cdp_cmd("Network.enable", {})
    driver.execute_cdp_cmd("Network.setBlockedURLs", {"urls": ["*/api/messages*"]})
    try:
        click(driver, find(driver, '[data-older-for="primary"]'))
        wait(driver, lambda: "could not be loaded" in text_of(driver, '[data-older-error-for="primary"]'), message="inline view")
        assert_accessible(driver)
        # Try again while it still fails: the view is made again (the old one goes), and says so again.
        driver.execute_script("document.querySelector('[data-older-error-for=\"primary\"] .error-view').dataset.first = 'yes'")
        click(driver, find(driver, '[data-older-error-for="primary"] button'))
        wait(driver, lambda: driver.execute_script(
            "const v = document.querySelector('[data-older-error-for=\"primary\"] .error-view'); return !!v && !v.dataset.first"),
             message="the second failure's view")
        assert "could not be loaded" in text_of(driver, '[data-older-error-for="primary"]')
        assert loaded_range(driver, "primary")[0] == 50, "nothing half-loaded"
        assert driver.execute_script("return document.activeElement.closest('[data-older-error-for]') !== null"), \
            "the focus is on the new Try again"
    finally:
        driver.execute_cdp_cmd("Network.setBlockedURLs", {"urls": []})
    click(driver, find(driver, '[data-older-error-for="primary"] button'))
    wait(driver, lambda: loaded_range(driver, "primary") == (70, 1, 70) and text_of(driver, '[data-older-error-for="primary"]') == "",
         message="loaded")


# MARK: Notifications and text


def scroll_away_from_the_newest(driver, dashboard):
    """Fills the pane and scrolls it down, so new messages come in above what the reader sees."""
    dashboard.sim("/sim/messages", {"account": "primary", "count": 40})
    wait(driver, lambda: loaded(driver, "primary") >= 40, message="a pane to scroll")
    driver.execute_script("document.querySelector('[data-scroll-for=\"primary\"]').scrollTop = 400")
    wait(driver, lambda: driver.execute_script("return document.querySelector('[data-scroll-for=\"primary\"]').scrollTop") > 100,
         message="scrolled down")


def message_toasts(driver):
    return driver.execute_script("return [...document.querySelectorAll('#toasts .toast-text')].map(t => t.textContent)")


def test_messages_in_view_get_no_toast_and_a_burst_out_of_view_is_one(context):
    dashboard, driver = start(context)
    dismiss_toasts(driver)
    for count in (3, 3):
        before = loaded(driver, "primary")
        dashboard.sim("/sim/messages", {"account": "primary", "count": count})
        wait(driver, lambda before=before, count=count: loaded(driver, "primary") == before + count, message="shown")
        time.sleep(0.3)
        assert not any("new message" in t.lower() for t in message_toasts(driver)), "they are in view already"
    scroll_away_from_the_newest(driver, dashboard)
    dismiss_toasts(driver)
    before = loaded(driver, "primary")
    dashboard.sim("/sim/messages", {"account": "primary", "count": 200})
    wait(driver, lambda: loaded(driver, "primary") == before + 200, message="all shown")
    wait(driver, lambda: message_toasts(driver) == ["200 new messages"], message=lambda: f"one toast: {message_toasts(driver)}")
    assert driver.execute_script("return document.querySelectorAll('#toasts .toast').length") <= 3


def test_toasts_never_take_focus_and_never_exceed_three(context):
    dashboard, driver = start(context)
    scroll_away_from_the_newest(driver, dashboard)
    engine_toggle = find(driver, "#engine-toggle")
    driver.execute_script("arguments[0].focus()", engine_toggle)
    for linked in (False, True, False, True):
        dashboard.sim("/sim/linked", {"linked": linked})
        wait(driver, lambda linked=linked: driver.execute_script("return !document.querySelector('#pane-linked').hidden") == linked,
             message="the linked pane follows")
    dashboard.sim("/sim/messages", {"account": "primary", "count": 1})
    wait(driver, lambda: any("New message" in t for t in message_toasts(driver)), message="message toast")
    assert driver.execute_script("return document.querySelectorAll('#toasts .toast').length") == 3
    assert driver.switch_to.active_element == engine_toggle, "focus stayed where the person left it"
    # Dismissing one removes that one (the others may expire meanwhile on a busy machine: 5 s each).
    first = find(driver, "#toasts .toast")
    click(driver, first.find_element(By.CSS_SELECTOR, ".toast-dismiss"))
    assert staleness_of(first)(driver), "the dismissed toast is gone"
    assert driver.execute_script("return document.querySelectorAll('#toasts .toast').length") <= 2


def test_html_and_a_5000_character_word_never_scroll_sideways(context):
    dashboard, driver = start(context)
    dashboard.sim("/sim/messages", {"account": "primary", "count": 1, "text": "<img src=x onerror=alert(1)><b>bold</b>"})
    dashboard.sim("/sim/messages", {"account": "linked", "count": 1, "text": "W" * 5000})
    wait(driver, lambda: any(len(t) == 5000 for t in texts(driver, "linked")), message="the long word")
    try:
        for width in (320, 1280):
            driver.set_window_size(width, 900)
            widths = driver.execute_script(
                "return [document.documentElement.scrollWidth, window.innerWidth,"
                " ...[...document.querySelectorAll('.pane')].map(p => p.scrollWidth - p.clientWidth)]")
            assert widths[0] <= widths[1], f"{width} px: the page is {widths[0]} px wide"
            assert all(extra <= 0 for extra in widths[2:]), f"{width} px: a pane overflows {widths[2:]}"
            toast_heights = driver.execute_script("return [...document.querySelectorAll('#toasts .toast')].map(t => t.offsetHeight)")
            assert all(height <= 200 for height in toast_heights), f"{width} px: a toast quotes too much {toast_heights}"
            shot(driver, SHOTS, f"long-word-{width}")
        assert find_all(driver, '[data-messages-for="primary"] img') == [], "HTML stays text"
    finally:
        driver.set_window_size(1200, 900)


# MARK: Live tells the truth


def test_a_slow_upstream_is_not_shown_as_plainly_live(context):
    dashboard, driver = start(context, "--hold-seconds", "3")
    # Every upstream call now waits 9 s: a poll held 3 s answers after 12 s, 9 s later than a live one would.
    dashboard.sim("/sim/faults", {"mode": "slow", "delayMs": 9000})
    wait(driver, lambda: status_text(driver) == "Live, but slow", seconds=30, message="not plainly Live")
    age = text_of(driver, "#connection-age")
    assert re.fullmatch(r"Updated \d+ s ago", age), age
    assert find(driver, "#connection").get_attribute("data-kind") == "slow"
    shot(driver, SHOTS, "slow-upstream")
    assert_accessible(driver)
    dashboard.sim("/sim/faults", {"mode": "none"})
    wait(driver, lambda: status_text(driver) == "Live" and not visible(driver, "#connection-age"), seconds=30, message="plainly Live again")


# MARK: Other windows and other upstreams


def test_another_window_sees_the_attempt_running(context):
    dashboard, driver = start(context, *PATIENT)
    dashboard.sim("/sim/faults", {"mode": "error500"})
    dashboard.sim("/sim/expire-token", {})
    second = browser()
    try:
        second.get(dashboard.url)
        for window in (driver, second):
            wait(window, lambda window=window: banner_options(window) == ["stop-syncing", "try-again"], seconds=20, message="both banners")
        dashboard.sim("/sim/faults", {"mode": "slow"})  # each upstream call takes 2 s: the attempt is long enough to watch
        click(driver, banner_button(driver, "try-again"))
        wait(second, lambda: "another window" in text_of(second, "#banner [data-busy-for]")
             and not enabled(second, '#banner-actions button[data-option="try-again"]'), seconds=5, message="busy in the other window")
        shot(second, SHOTS, "busy-in-another-window")
        assert_accessible(second)
        dashboard.sim("/sim/faults", {"mode": "none"})
        wait(second, lambda: status_text(second) == "Live", seconds=30, message="both live")
        wait(driver, lambda: status_text(driver) == "Live", seconds=10, message="both live")
    finally:
        second.quit()


def test_keep_these_and_sync_again_shows_the_servers_messages_and_tells_the_new_ones(context):
    server = ChatServer(CHAT_SERVER)
    port = int(server.url.rstrip("/").rsplit(":", 1)[1])
    try:
        dashboard, driver = start(context, "--backoff-base-ms", "100", "--backoff-cap-ms", "500", upstream=server.url)
        dashboard.sim("/sim/messages", {"account": "primary", "count": 60, "text": "before the restart"})
        wait(driver, lambda: loaded_range(driver, "primary")[0] == 60, seconds=15, message="60 stored")
        # The server starts again with nothing kept: it numbers from 1, below what is stored here.
        server.stop()
        server = ChatServer(CHAT_SERVER, port=port)
        dashboard.sim("/sim/messages", {"account": "primary", "count": 45, "text": "on the server now"})
        resync = '[data-view-for="primary"] button[data-option="resync"]'
        wait(driver, lambda: visible(driver, resync), seconds=20, message="the server is behind: Keep these and sync again")
        click(driver, find(driver, resync))
        if dialog_open(driver, "#confirm"):
            click(driver, find(driver, '#confirm-actions button[data-role="default"]'))
        # Without a reload: the pane shows what the server has, nothing of what was set aside.
        wait(driver, lambda: loaded_range(driver, "primary")[0] == 45 and set(texts(driver, "primary")) == {"on the server now"},
             seconds=20, message=lambda: f"the pane shows the server's messages: {loaded_range(driver, 'primary')} {set(texts(driver, 'primary'))}")
        wait(driver, lambda: status_text(driver) == "Live", seconds=15, message="live again")
        shot(driver, SHOTS, "resynced")
        # A new message is told, although its id (46) is below the highest told before (60).
        dismiss_toasts(driver)
        for number in (1, 2):
            driver.execute_script("document.querySelector('[data-scroll-for=\"primary\"]').scrollTop = 400")
            dashboard.sim("/sim/messages", {"account": "primary", "count": 1, "text": f"news {number}"})
            newest = max(dashboard.sim("/sim/sent")["primary"])
            # Held above the view until the person scrolls up, as any new row while they read older ones.
            wait(driver, lambda: loaded_range(driver, "primary")[2] == newest, seconds=15, message=f"news {number} arrived")
            wait(driver, lambda: any("new message" in text.lower() for text in toast_texts(driver)), seconds=10,
                 message=f"news {number} is told: {toast_texts(driver)}")
            dismiss_toasts(driver)
    finally:
        context.dashboard.stop()
        context.dashboard = None
        server.stop()


def toast_texts(driver):
    return driver.execute_script("return [...document.querySelectorAll('#toasts .toast-text')].map(t => t.textContent)")


def test_with_an_external_upstream_the_console_stays_clean(context):
    server = ChatServer(CHAT_SERVER)
    try:
        dashboard, driver = start(context, upstream=server.url)
        driver.get_log("browser")  # drop what earlier pages logged
        driver.refresh()
        wait(driver, lambda: status_text(driver) == "Live", message="live")
        assert not visible(driver, "#simulator"), "no simulator panel"
        dashboard.sim("/sim/messages", {"account": "primary", "count": 3, "text": "from outside"})
        wait(driver, lambda: texts(driver, "primary").count("from outside") == 3, message="messages arrive")
        assert console_errors(driver) == [], console_errors(driver)
        assert_accessible(driver)
    finally:
        context.dashboard.stop()
        context.dashboard = None
        server.stop()


if __name__ == "__main__":
    run_suite(globals(), SHOTS, dashboard=None)
