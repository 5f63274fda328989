"""The page tells one story, as a new person meets it in a real headless Chromium: a restart with
two windows open, every part of the page agreeing in each fault, a first screen that explains
itself, storage in a person's words, notices that add something, a calm layout at 5 messages a
second and through a minute of failures (at 390 and 1280 px at once), the tab's title, search
that puts the message asked for first, reading that marks read only what was shown, words and
dates for people, and axe clean at 390, 1280 and 1920 px in light and dark.

    python3 Tests/Browser/story_test.py DASHBOARD_BINARY SCREENSHOT_DIR
"""
import os
import re
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from browser_support import (  # noqa: E402
    CUMULATIVE_SHIFT, SHIFT_OBSERVER, Dashboard, accessibility_details, accessibility_problems, click, click_selector, click_while_shown, dialog_open, fill_storage, find,
    find_all, free_port, loaded, loaded_range, open_simulator, run_suite, shift_sources, shot, start_dashboard, status_text, text_of,
    visible, wait,
)
from selenium.webdriver.common.keys import Keys  # noqa: E402

BINARY, SHOTS = sys.argv[1], sys.argv[2]
os.makedirs(SHOTS, exist_ok=True)

WIDTHS = ((390, 844), (1280, 900), (1920, 1080))


def start(context, *arguments, **options):
    return start_dashboard(context, BINARY, *arguments, size=(1280, 900), **options)


def second_window(driver, url, size=(1280, 900)):
    first = driver.current_window_handle
    driver.switch_to.new_window("window")
    driver.set_window_size(*size)
    driver.get(url)
    wait(driver, lambda: status_text(driver) in ("Live", "Reconnecting…", "Connecting…"), message="the second window")
    return first, driver.current_window_handle


def close_window(driver, handle, back_to):
    driver.switch_to.window(handle)
    driver.close()
    driver.switch_to.window(back_to)


# Every toast text shown from now on, kept after the toast leaves: a window looked at later
# than another may have shown its (6 s) toast and let it go meanwhile.
TOAST_RECORDER = """
window.toastsSeen = [];
const note = () => { for (const t of document.querySelectorAll('#toasts .toast-text')) if (!window.toastsSeen.includes(t.textContent)) window.toastsSeen.push(t.textContent); };
new MutationObserver(note).observe(document.querySelector('#toasts'), { childList: true, subtree: true, characterData: true });
"""


def toasts_seen(driver):
    return driver.execute_script("return window.toastsSeen || []")


def toast_texts(driver):
    return driver.execute_script("return [...document.querySelectorAll('#toasts .toast-text')].map(t => t.textContent)")


def page_words(driver):
    """Every text a person reads now, outside Details (where the technical words belong)."""
    return driver.execute_script("""
        const texts = [];
        const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
        while (walker.nextNode()) {
          const node = walker.currentNode, parent = node.parentElement;
          if (!parent || parent.closest('details.error-details, script, style, [hidden]') || !parent.getClientRects().length) continue;
          if (node.textContent.trim()) texts.push(node.textContent.trim());
        }
        return texts;""")


def agreeing(driver):
    """What the page's parts say about where syncing stands, read at one moment."""
    return driver.execute_script("""
        const q = (s) => document.querySelector(s);
        return { label: q('#connection-text').textContent, pillTone: q('#connection').dataset.state, barTone: q('#banner').dataset.tone,
                 bar: q('#banner-text').textContent, title: document.title, toggle: q('#engine-toggle').hidden ? '' : q('#engine-toggle').textContent,
                 dialog: q('#alert').open ? q('#alert-title').textContent : '' };""")


def check_agreement(driver, moment):
    said = agreeing(driver)
    assert said["pillTone"] == said["barTone"], f"{moment}: the header and the bar differ: {said}"
    assert said["title"].endswith(f"{said['label']} · Chat dashboard"), f"{moment}: the title says otherwise: {said}"
    if said["label"] != "Live":
        assert not said["bar"].startswith("Up to date"), f"{moment}: 'up to date' while {said['label']}: {said}"
    if said["dialog"]:
        assert said["bar"].startswith(said["dialog"]), f"{moment}: the bar does not say what the dialog says: {said}"
    if said["label"] == "Stopped":
        assert said["toggle"] == "Start syncing", said
    elif said["toggle"]:
        assert said["toggle"] == "Stop syncing", said
    return said


# MARK: A restart, two windows


def test_a_restart_is_picked_up_by_itself_and_a_new_token_is_said_once_in_every_window(context):
    folder = tempfile.mkdtemp()
    options = {"port": free_port(), "db": os.path.join(folder, "store.sqlite")}
    dashboard, driver = start(context, **options)
    dashboard.sim("/sim/messages", {"account": "primary", "count": 5, "text": "kept across the restart"})
    wait(driver, lambda: loaded(driver, "primary") == 5, message="stored")
    first, second = second_window(driver, dashboard.base + "/")
    try:
        for round_number in (1, 2):
            dashboard.stop()
            for window in (first, second):
                driver.switch_to.window(window)
                wait(driver, lambda: status_text(driver) == "Not answering", seconds=20, message="the process is gone")
                driver.execute_script(TOAST_RECORDER)
            context.dashboard = dashboard = Dashboard(BINARY, **options)
            for window in (first, second):
                driver.switch_to.window(window)
                # The page tries again on its own backoff; on a loaded machine the new process takes longer to answer.
                wait(driver, lambda: status_text(driver) == "Live", seconds=40, message=f"picked up by itself ({round_number})")
                wait(driver, lambda: any("restarted" in text for text in toasts_seen(driver)), message=lambda: f"said once: {toasts_seen(driver)}")
                assert not visible(driver, "#load-view"), "no lock-out"
                assert loaded(driver, "primary") == 5, "the messages are all there"
                check_agreement(driver, "after a restart")
        # A new token: said once, in words; the messages stay; the other window follows by itself.
        dashboard.stop()
        context.dashboard = dashboard = Dashboard(BINARY, "--new-token", **options)
        for window in (first, second):
            driver.switch_to.window(window)
            wait(driver, lambda: status_text(driver) == "Needs the new address", seconds=30, message="the new token is said")
            words = " ".join(page_words(driver))
            assert "new access token" in words and "does not answer" not in words, words[:400]
            assert loaded(driver, "primary") == 5 and not visible(driver, "#load-view"), "the stored messages stay visible"
        shot(driver, SHOTS, "new-token")
        driver.switch_to.window(first)
        driver.get(dashboard.url)
        wait(driver, lambda: status_text(driver) == "Live", message="the first window with the new address")
        driver.switch_to.window(second)
        wait(driver, lambda: status_text(driver) == "Live", seconds=30, message="the second window follows by itself")
    finally:
        close_window(driver, second, first)


# MARK: Every part agrees, in every fault


def test_every_part_of_the_page_says_the_same_in_each_fault(context):
    dashboard, driver = start(context, "--backoff-base-ms", "500", "--backoff-cap-ms", "1500")
    first, second = second_window(driver, dashboard.base + "/")
    try:
        for mode in ("error500", "offline", "malformed", "drop", "conflict", "unauthorized", "slow"):
            dashboard.sim("/sim/faults", {"mode": mode, "delayMs": 30000} if mode == "slow" else {"mode": mode})
            driver.switch_to.window(first)
            if mode == "slow":
                dashboard.sim("/sim/expire-token", {})
                wait(driver, lambda: driver.execute_script("return document.querySelector('#banner').dataset.kind") == "slow", seconds=40,
                     message="slow is said")
            else:
                wait(driver, lambda: status_text(driver) != "Live", seconds=20, message=f"{mode}: said")
            for _ in range(6):
                for window in (first, second):
                    driver.switch_to.window(window)
                    check_agreement(driver, mode)
                time.sleep(0.25)
            # The second window's simulator line shows the fault too, and that it was cleared.
            driver.switch_to.window(second)
            wait(driver, lambda: "no fault" not in text_of(driver, "#sim-now"), message="the other window's simulator line")
            dashboard.sim("/sim/faults", {"mode": "none"})
            wait(driver, lambda: "no fault" in text_of(driver, "#sim-now"), message="cleared in the other window too")
            for window in (first, second):
                driver.switch_to.window(window)
                if dialog_open(driver, "#alert"):
                    click_while_shown(driver, '#alert-actions button[data-option="try-again"]')
                wait(driver, lambda: status_text(driver) == "Live", seconds=30, message=f"{mode}: live again")
                check_agreement(driver, f"{mode} cleared")
    finally:
        close_window(driver, second, first)


def test_after_expire_the_session_with_no_fault_it_is_plainly_live(context):
    dashboard, driver = start(context)
    # Twice, the second while the first renewal's poll is held; then through a whole hold and more.
    end = time.monotonic() + 34
    expiries = [time.monotonic(), time.monotonic() + 3]
    while time.monotonic() < end:
        if expiries and time.monotonic() >= expiries[0]:
            dashboard.sim("/sim/expire-token", {})
            expiries.pop(0)
        assert driver.execute_script("return document.querySelector('#banner').dataset.kind") == "live", agreeing(driver)
        time.sleep(0.5)


# MARK: The first screen


def test_the_first_screen_says_what_this_is_with_a_short_history_in_named_chats(context):
    folder = tempfile.mkdtemp()
    dashboard, driver = start(context, db=os.path.join(folder, "store.sqlite"), demo=True)
    for width, height in WIDTHS[:2]:
        driver.set_window_size(width, height)
        intro = driver.execute_script("return document.querySelector('#demo-title').getBoundingClientRect().top")
        assert 0 < intro < height / 2, f"at {width} px the line that says what this is is at {intro} px"
        shot(driver, SHOTS, f"first-screen-{width}")
    driver.set_window_size(1280, 900)
    wait(driver, lambda: loaded(driver, "primary") >= 20, message="the demo's history")
    names = driver.execute_script("return [...document.querySelectorAll('#chats .chat-name')].map(n => n.textContent)")
    assert {"Family", "Work", "Book club", "Climbing trip", "Chloé"} <= set(names), names
    assert "Message " not in " ".join(page_words(driver)), "people's words, not test texts"
    assert abs(dashboard.sim("/sim/stats")["autoPerSecond"] - 1 / 30) < 1e-6, "a message now and then"
    click(driver, find(driver, "#demo-stop"))
    wait(driver, lambda: dashboard.sim("/sim/stats")["autoPerSecond"] == 0 and not visible(driver, "#demo-stop"), message="off with one click")


def test_faults_have_names_in_words_and_apply_at_once(context):
    dashboard, driver = start(context, "--backoff-base-ms", "60000", "--backoff-cap-ms", "60000")
    open_simulator(driver)
    names = driver.execute_script("return [...document.querySelectorAll('#sim-fault option')].map(o => o.textContent)")
    assert not any(re.fullmatch(r"[a-z0-9]+", name) for name in names), f"ids, not words: {names}"
    for round_number in (1, 2):
        driver.execute_script("const s = document.querySelector('#sim-fault'); s.value = 'error500'; s.dispatchEvent(new Event('change'))")
        assert text_of(driver, "#sim-fault-does") == "Answers every call with an error (500).", text_of(driver, "#sim-fault-does")
        applied = time.monotonic()
        click_selector(driver, '#sim-faults button[type="submit"]')
        wait(driver, lambda: status_text(driver) == "Reconnecting…", seconds=5, message="it takes effect now, not at the next hold")
        print(f"  round {round_number}: in effect after {time.monotonic() - applied:.1f} s")
        assert "Server errors on every call" in text_of(driver, "#sim-now"), text_of(driver, "#sim-now")
        dashboard.sim("/sim/faults", {"mode": "none"})
        # The engine's own retry (full jitter, anywhere in 0-60 s) may win and close the error first.
        try_again = '#banner-actions button[data-option="try-again"]'
        wait(driver, lambda: visible(driver, try_again) or status_text(driver) == "Live", seconds=10, message="the error's Try again in the bar")
        click_while_shown(driver, try_again)
        wait(driver, lambda: status_text(driver) == "Live", seconds=15, message="live again")


# MARK: Storage as a person means it


def test_storage_is_said_as_it_is_free_space_leaves_room_and_looks_destructive(context):
    dashboard, driver = start(context)
    for round_number in (1, 2):
        fill_storage(dashboard, driver, stored=40, waiting=10)
        storage = text_of(driver, "#storage-text")
        percent = int(re.search(r"\((\d+) %\)", storage).group(1))
        title = text_of(driver, '[data-view-for="primary"] .view-title')
        assert title == ("Storage is full" if percent >= 95 else "New messages don't fit in your storage"), (title, storage)
        free = find(driver, '[data-view-for="primary"] button[data-option="free-space"]')
        assert free.get_attribute("data-role") == "destructive"
        colour = driver.execute_script("return getComputedStyle(arguments[0]).color", free)
        bad = driver.execute_script("return getComputedStyle(document.documentElement).getPropertyValue('--bad').trim()")
        assert colour != driver.execute_script("return getComputedStyle(document.querySelector('[data-option=\"buy-space\"]')).color"), "not like the rest"
        click(driver, free)
        question = text_of(driver, "#confirm-detail")
        assert "deletes" in question and "to make room for the new messages" in question and "to spare" in question, question
        click_selector(driver, '#confirm-actions button[data-role="default"]')
        wait(driver, lambda: status_text(driver) == "Live", seconds=15, message="room made")
        wait(driver, lambda: text_of(driver, "#storage-news").startswith("Deleted the "), message="what Free space did")
        news = text_of(driver, "#storage-news")
        assert "to spare" in news and "making room for the new messages" in news, news
        # The headroom is real: the next messages fit without storage being full again.
        dashboard.sim("/sim/messages", {"account": "primary", "count": 2})
        time.sleep(1)
        assert not visible(driver, '[data-view-for="primary"] .error-view'), f"full again at once (round {round_number}, colour {bad})"


def test_fill_storage_fills_and_a_purchase_is_told_in_every_window(context):
    dashboard, driver = start(context)
    first, second = second_window(driver, dashboard.base + "/")
    try:
        for round_number in (1, 2):
            driver.switch_to.window(first)
            open_simulator(driver)
            quota = dashboard.api("/api/state")["storage"]["quotaBytes"]
            click(driver, find(driver, "#sim-fill"))
            wait(driver, lambda: visible(driver, '[data-view-for="primary"] button[data-option="buy-space"]'), seconds=40, message="full")
            assert dashboard.api("/api/state")["storage"]["quotaBytes"] == quota, "filled, not shrunk"
            click_selector(driver, '[data-view-for="primary"] button[data-option="buy-space"]')
            click_selector(driver, '#confirm-actions button[data-role="default"]')
            wait(driver, lambda: status_text(driver) == "Live", seconds=30, message="bought")
            driver.switch_to.window(second)
            wait(driver, lambda: text_of(driver, "#storage-news").startswith("Added 10 MB of storage"), message="told in the other window")
            print(f"  round {round_number}: quota {quota} -> {dashboard.api('/api/state')['storage']['quotaBytes']}")
    finally:
        close_window(driver, second, first)


# MARK: Notices that add something


def test_an_interruption_and_being_away_are_told_as_they_were(context):
    dashboard, driver = start(context)
    for round_number in (1, 2):
        # The last round's toasts are dismissed as a person does: what shows next is new.
        for dismiss in find_all(driver, "#toasts .toast-dismiss"):
            click(driver, dismiss)
        dashboard.sim("/sim/faults", {"mode": "offline"})
        wait(driver, lambda: status_text(driver) != "Live", seconds=20, message="interrupted")
        dashboard.sim("/sim/messages", {"account": "primary", "count": 4})
        dashboard.sim("/sim/faults", {"mode": "none"})
        # The engine's own retry may reconnect first: the button may go while it is being clicked.
        if visible(driver, '#banner-actions button[data-option="try-again"]'):
            click_while_shown(driver, '#banner-actions button[data-option="try-again"]')
        wait(driver, lambda: "4 messages arrived while syncing was interrupted" in toast_texts(driver), seconds=30,
             message=lambda: f"the catch-up in its words (round {round_number}): {toast_texts(driver)} {status_text(driver)}")
        assert not any("away" in text for text in toast_texts(driver)), f"the person never left: {toast_texts(driver)}"
        # Hidden, then shown: that is being away.
        noticed = lambda: driver.execute_script("return Number(document.querySelector('[data-messages-for=\"primary\"]').dataset.noticed ?? 0)")
        before = noticed()
        driver.minimize_window()
        wait(driver, lambda: driver.execute_script("return document.visibilityState") == "hidden", message="hidden")
        dashboard.sim("/sim/messages", {"account": "primary", "count": 3})
        # The hidden page has decided what to do about all three (keep them for later) before it is shown.
        wait(driver, lambda: noticed() >= before + 3, seconds=20, message=lambda: f"decided while hidden ({round_number}): {noticed()} after {before}")
        driver.set_window_rect(width=1280, height=900)
        wait(driver, lambda: "3 new messages while you were away" in toast_texts(driver), message=lambda: f"away ({round_number}): {toast_texts(driver)}")


def test_a_counting_toast_stops_and_leaves_and_never_covers_a_control(context):
    dashboard, driver = start(context)
    dashboard.sim("/sim/messages", {"account": "primary", "count": 40})
    wait(driver, lambda: loaded(driver, "primary") == 40, message="a pane to scroll")
    driver.execute_script("document.querySelector('[data-scroll-for=\"primary\"]').scrollTop = 400")
    dashboard.sim("/sim/auto", {"perSecond": 5})
    try:
        wait(driver, lambda: any("new messages" in text for text in toast_texts(driver)), message="a counting toast")
        oldest = 0
        end = time.monotonic() + 14
        while time.monotonic() < end:
            ages = driver.execute_script("return [...document.querySelectorAll('#toasts .toast')].map(t => Date.now() - t.shownAt)")
            oldest = max([oldest, *ages])
            time.sleep(0.25)
        assert oldest <= 9000, f"a toast stayed {oldest} ms while messages kept coming"
        for width, height in ((1280, 900), (390, 844)):
            driver.set_window_size(width, height)
            # No part of a control that is on screen (inside its scrolling boxes and the window) is under a toast.
            covered = driver.execute_script("""
                const toasts = [...document.querySelectorAll('#toasts .toast')].map(t => t.getBoundingClientRect());
                const hit = (a, b) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
                const shown = (control) => {
                  let r = control.getBoundingClientRect();
                  let box = { left: r.left, right: r.right, top: Math.max(r.top, 0), bottom: Math.min(r.bottom, innerHeight) };
                  for (let up = control.parentElement; up; up = up.parentElement) {
                    if (!/(auto|scroll|hidden)/.test(getComputedStyle(up).overflowY)) continue;
                    const c = up.getBoundingClientRect();
                    box = { left: Math.max(box.left, c.left), right: Math.min(box.right, c.right), top: Math.max(box.top, c.top), bottom: Math.min(box.bottom, c.bottom) };
                  }
                  return box.right > box.left && box.bottom > box.top ? box : null;
                };
                return [...document.querySelectorAll('button, a, input, select, summary')].filter(c => !c.closest('#toasts') && c.getClientRects().length)
                  .filter(c => { const box = shown(c); return box && toasts.some(t => hit(t, box)); })
                  .map(c => c.id || c.textContent.trim().slice(0, 30));""")
            if width == 1280:
                assert covered == [], f"at {width} px toasts cover {covered}"
                continue
            # On a narrow window the page's end can always be brought above them.
            driver.execute_script("window.scrollTo(0, document.documentElement.scrollHeight)")
            last = driver.execute_script("""
                const controls = [...document.querySelectorAll('.side button, .side select, .side a')].filter(c => c.getClientRects().length);
                const bottom = Math.max(...controls.map(c => c.getBoundingClientRect().bottom));
                const tops = [...document.querySelectorAll('#toasts .toast')].map(t => t.getBoundingClientRect().top);
                return [bottom, tops.length ? Math.min(...tops) : Infinity];""")
            assert last[0] <= last[1], f"at {width} px the last control ({last[0]}) stays under a toast ({last[1]})"
        driver.set_window_size(1280, 900)
    finally:
        dashboard.sim("/sim/auto", {"perSecond": 0})


# MARK: A calm layout


def test_the_layout_stays_calm_at_5_messages_a_second_and_through_a_minute_of_failures(context):
    dashboard, driver = start(context, "--backoff-base-ms", "400", "--backoff-cap-ms", "2500")
    first, second = second_window(driver, dashboard.base + "/", size=(390, 844))
    windows = {"1280": first, "390": second}
    try:
        for phase, seconds in (("5 messages a second", 60), ("server errors", 60)):
            for window in windows.values():
                driver.switch_to.window(window)
                driver.execute_script(SHIFT_OBSERVER)
            if phase == "server errors":
                dashboard.sim("/sim/faults", {"mode": "error500"})
            else:
                dashboard.sim("/sim/auto", {"perSecond": 5})
            time.sleep(seconds)
            dashboard.sim("/sim/auto", {"perSecond": 0})
            dashboard.sim("/sim/faults", {"mode": "none"})
            for width, window in windows.items():
                driver.switch_to.window(window)
                total, burst, count = driver.execute_script(CUMULATIVE_SHIFT)
                print(f"  {width} px, a minute of {phase}: {count} layout shifts, total {total:.4f}, CLS {burst:.4f}")
                assert total <= 0.1, f"{width} px, {phase}: layout shift {total:.3f}; moved most: {shift_sources(driver)}"
            driver.switch_to.window(first)
            wait(driver, lambda: status_text(driver) == "Live", seconds=30, message="live again")
    finally:
        close_window(driver, second, first)


# MARK: Reading, searching, the title


def test_the_tab_title_carries_the_unread_count_and_the_connection(context):
    dashboard, driver = start(context, "--backoff-base-ms", "60000", "--backoff-cap-ms", "60000")
    dashboard.sim("/sim/messages", {"account": "primary", "count": 3})
    wait(driver, lambda: driver.title == "(3) Live · Chat dashboard", message=lambda: driver.title)
    dashboard.sim("/sim/faults", {"mode": "error500"})
    wait(driver, lambda: driver.title == "(3) Reconnecting… · Chat dashboard", seconds=20, message=lambda: driver.title)
    dashboard.sim("/sim/faults", {"mode": "none"})
    click_selector(driver, '#banner-actions button[data-option="try-again"]')
    wait(driver, lambda: driver.title == "(3) Live · Chat dashboard", seconds=15, message=lambda: driver.title)


def test_search_puts_the_message_asked_for_first_and_says_about_how_many(context):
    dashboard, driver = start(context)
    dashboard.sim("/sim/messages", {"account": "primary", "count": 1600})
    wait(driver, lambda: loaded(driver, "primary") >= 50, seconds=30, message="stored")
    wait(driver, lambda: (dashboard.api("/api/state")["accounts"]["primary"] or {}).get("cursor") == "1600", seconds=30, message="all stored")
    field = find(driver, "#search-field")
    first_three = "return [...document.querySelectorAll('#search-results .search-open')].slice(0, 3).map(b => b.dataset.message)"
    for query in ("Message 150", "message 150 "):
        field.clear()
        field.send_keys(query)
        wait(driver, lambda: driver.execute_script(
            "return document.querySelector('#search-results .search-open')?.dataset.message") == "150",
            message=lambda: f"{query!r}: {driver.execute_script(first_three)}")
    field.clear()
    field.send_keys("primary ")
    wait(driver, lambda: text_of(driver, "#search-count") == "The best 20 of more than 1,000 matches.", message=lambda: text_of(driver, "#search-count"))


def test_a_chat_opened_at_a_search_result_is_read_only_up_to_what_was_shown(context):
    dashboard, driver = start(context)
    dashboard.sim("/sim/messages", {"account": "primary", "count": 60})
    wait(driver, lambda: loaded(driver, "primary") >= 50, message="live messages")
    chats = driver.execute_script("return [...document.querySelectorAll('#chats .chat-row')].map(r => [r.dataset.chat, r.getAttribute('aria-label')])")
    wait(driver, lambda: driver.execute_script("return document.querySelectorAll('#chats .unread').length") >= 1, message="unread chats")
    state = dashboard.api("/api/chats?account=primary")
    chat = max(state["chats"], key=lambda item: item["unread"])
    messages = dashboard.api(f"/api/messages?account=primary&chat={chat['id']}&limit=500")["messages"]
    target = sorted(message["id"] for message in messages)[1]  # an early one: most of the chat comes after it
    newer = sum(1 for message in messages if message["id"] > target)
    field = find(driver, "#search-field")
    field.send_keys(f"Message {target} ")
    wait(driver, lambda: driver.execute_script("return document.querySelector('#search-results .search-open')?.dataset.message") == str(target),
         message="the result")
    click(driver, find(driver, "#search-results .search-open"))
    wait(driver, lambda: dialog_open(driver, "#chat-view"), message="the chat")
    wait(driver, lambda: next(c for c in dashboard.api("/api/chats?account=primary")["chats"] if c["id"] == chat["id"])["unread"] == min(chat["unread"], newer),
         message=f"read up to the result only ({chats})")
    click(driver, find(driver, "#chat-newest"))
    wait(driver, lambda: next(c for c in dashboard.api("/api/chats?account=primary")["chats"] if c["id"] == chat["id"])["unread"] == 0,
         message="all read once the newest are shown")
    click(driver, find(driver, "#chat-close"))


def test_end_goes_to_the_true_end_and_show_older_is_not_tabbed_to(context):
    dashboard, driver = start(context)
    dashboard.sim("/sim/messages", {"account": "primary", "count": 700})
    wait(driver, lambda: loaded(driver, "primary") >= 50, message="stored")
    scroller = find(driver, '[data-scroll-for="primary"]')
    driver.execute_script("arguments[0].focus()", scroller)
    scroller.send_keys(Keys.TAB)
    assert driver.switch_to.active_element.get_attribute("data-older-for") is None, "Tab does not land on an off-screen load button"
    driver.execute_script("arguments[0].focus()", scroller)
    scroller.send_keys(Keys.END)
    wait(driver, lambda: loaded_range(driver, "primary") == (700, 1, 700), seconds=20, message="one End: every page")
    wait(driver, lambda: visible(driver, '[data-start-for="primary"]') and driver.execute_script(
        "const s = arguments[0]; return s.scrollTop + s.clientHeight >= s.scrollHeight - 2", scroller), message="at the very end")


def test_a_chat_takes_the_whole_narrow_screen_and_the_history_has_a_legend(context):
    dashboard, driver = start(context)
    dashboard.sim("/sim/messages", {"account": "primary", "count": 5})
    wait(driver, lambda: find_all(driver, "#chats .chat-row"), message="chats")
    legend = text_of(driver, ".history-legend")
    assert all(word in legend for word in ("live", "reconnecting", "offline", "stopped")), legend
    assert text_of(driver, "#history-words").startswith("Live since"), text_of(driver, "#history-words")
    driver.set_window_size(390, 844)
    try:
        click(driver, find(driver, "#chats .chat-row"))
        wait(driver, lambda: dialog_open(driver, "#chat-view"), message="the chat")
        box = driver.execute_script("const r = document.querySelector('#chat-view').getBoundingClientRect(); return [r.width, r.height, innerWidth, innerHeight]")
        assert box[0] >= box[2] - 1 and box[1] >= box[3] - 1, f"not the whole screen: {box}"
        click(driver, find(driver, "#chat-close"))
    finally:
        driver.set_window_size(1280, 900)


# MARK: Words, dates, accessibility


def test_every_text_is_written_for_a_person_and_dates_have_one_style(context):
    dashboard, driver = start(context, "--backoff-base-ms", "60000", "--backoff-cap-ms", "60000")
    dashboard.sim("/sim/messages", {"account": "primary", "count": 8})
    wait(driver, lambda: loaded(driver, "primary") == 8, message="messages")
    moments = []
    for mode in (None, "error500", "unauthorized"):
        if mode:
            dashboard.sim("/sim/faults", {"mode": mode})
            dashboard.sim("/sim/expire-token", {})
            wait(driver, lambda: status_text(driver) != "Live", seconds=20, message=mode)
            if dialog_open(driver, "#alert"):
                click_selector(driver, '#alert-actions button[data-option="try-again"]')
            else:
                click_selector(driver, '#banner-actions button[data-option="try-again"]')
            time.sleep(1.5)
        words = " | ".join(page_words(driver))
        for pattern in (r"/problems/", r"attempt \d", r"[Pp]rocess [0-9a-f]{8}", r"\{\"", r"error500|malformed|rate 1\b", r"Still failing",
                        r"(\w+) · \1 ·"):
            assert not re.search(pattern, words), f"{mode}: {pattern!r} in what a person reads: {words[:600]}"
        moments += driver.execute_script("return [...document.querySelectorAll('time[data-when]')].map(t => t.textContent)")
        dashboard.sim("/sim/faults", {"mode": "none"})
        if dialog_open(driver, "#alert"):
            click_while_shown(driver, '#alert-actions button[data-option="try-again"]')
        elif visible(driver, '#banner-actions button[data-option="try-again"]'):
            click_while_shown(driver, '#banner-actions button[data-option="try-again"]')
        wait(driver, lambda: status_text(driver) == "Live", seconds=20, message="live")
    style = re.compile(r"just now|\d+ min ago|\d{1,2}:\d{2}( [AP]M)?|Yesterday \d{1,2}:\d{2}( [AP]M)?|\d{1,2} \w{3}( \d{4})? \d{1,2}:\d{2}( [AP]M)?")
    odd = [moment for moment in moments if not style.fullmatch(moment)]
    assert moments and odd == [], f"dates in another style: {odd[:5]}"


def test_axe_is_clean_at_three_widths_in_light_and_dark(context):
    dashboard, driver = start(context, "--backoff-base-ms", "60000", "--backoff-cap-ms", "60000")
    dashboard.sim("/sim/messages", {"account": "primary", "count": 12})
    dashboard.sim("/sim/messages", {"account": "linked", "count": 4})
    wait(driver, lambda: loaded(driver, "primary") == 12, message="messages")
    states = [("live", None), ("trouble", "error500")]
    for name, mode in states:
        if mode:
            dashboard.sim("/sim/faults", {"mode": mode})
            dashboard.sim("/sim/expire-token", {})
            wait(driver, lambda: status_text(driver) != "Live", seconds=20, message=mode)
        for scheme in ("light", "dark"):
            driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": scheme}]})
            try:
                for width, height in WIDTHS:
                    driver.set_window_size(width, height)
                    time.sleep(0.2)
                    problems = accessibility_problems(driver)
                    assert problems == [], f"{name}, {scheme}, {width} px: {accessibility_details(driver)}"
                    shot(driver, SHOTS, f"page-{name}-{scheme}-{width}")
            finally:
                driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})
        dashboard.sim("/sim/faults", {"mode": "none"})
    driver.set_window_size(1280, 900)


if __name__ == "__main__":
    run_suite(globals(), SHOTS, dashboard=None, size=(1280, 900))
