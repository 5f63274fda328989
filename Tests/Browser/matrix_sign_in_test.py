"""A Matrix account on a real Synapse, as a person meets it in the page: the dashboard knows no
password, so the page asks to sign in again; they cancel, type a wrong password, then the right
one, and see their room's messages arrive live. Then what another client does to a room shows as
there: an edit changes its message in place, a deletion takes it out of the pane and the search.

Usage: python3 matrix_sign_in_test.py DASHBOARD_BINARY SYNAPSE_PYTHON SCREENSHOT_DIR
"""
import base64
import os
import re
import sys
import urllib.parse
import tempfile

from browser_support import (Dashboard, assert_accessible, click, click_selector, enabled, find, run_suite, shot, status_text, text_of,
                             texts, visible, wait)
from synapse_support import Synapse
from selenium.webdriver.common.keys import Keys

DASHBOARD, SYNAPSE_PYTHON, SHOTS = sys.argv[1], sys.argv[2], sys.argv[3]
ALICE_PASSWORD = "alice correct horse"


def dialog_open(driver, selector):
    return driver.execute_script("return document.querySelector(arguments[0]).open", selector)


def sign_in_with(driver, password):
    """Clicks Sign in again in the alert, types `password` and presses Enter, as a person does."""
    click(driver, find(driver, '#alert-actions button[data-option="sign-in"]'))
    wait(driver, lambda: dialog_open(driver, "#sign-in"), message="the password form opens")
    field = find(driver, "#sign-in-password")
    assert driver.switch_to.active_element == field, "the focus is in the password field"
    field.send_keys(password + "\n")


def test_signing_in_again_from_the_page(context):
    driver, synapse = context.driver, context.synapse
    bob = synapse.login("bob", "bob password")
    room = synapse.create_room(bob, "Lunch", ["@alice:localhost"])
    synapse.join(synapse.login("alice", ALICE_PASSWORD), room)
    synapse.send(bob, room, "hello alice")

    dashboard = Dashboard(DASHBOARD, "--matrix-user", "@alice:localhost", "--always-on", upstream=f"matrix+{synapse.url}",
                          db=os.path.join(tempfile.mkdtemp(), "store.sqlite"), environment={"LP_MATRIX_PASSWORD": ""})
    context.dashboard = dashboard
    driver.get(dashboard.url)
    wait(driver, lambda: dialog_open(driver, "#alert") and "Sign in" in text_of(driver, "#alert-title"), seconds=15,
         message=lambda: f"the sign-in alert; title {text_of(driver, '#alert-title')!r}")
    assert "not stored" in text_of(driver, "#alert-suggestion")
    assert not visible(driver, "#pane-linked"), "Matrix has no linked account: its pane stays hidden"
    assert not visible(driver, "#search-account"), "nor is it offered to search"
    assert_accessible(driver)

    # Changing their mind: Cancel in the password form leaves the alert as it was.
    click(driver, find(driver, '#alert-actions button[data-option="sign-in"]'))
    wait(driver, lambda: dialog_open(driver, "#sign-in"), message="the password form opens")
    assert_accessible(driver)
    shot(driver, SHOTS, "matrix-sign-in-form")
    click(driver, find(driver, "#sign-in-cancel"))
    wait(driver, lambda: not dialog_open(driver, "#sign-in"), message="the form closes")
    assert dialog_open(driver, "#alert"), "the alert stays"
    assert driver.switch_to.active_element.get_attribute("data-option") == "sign-in", "the focus goes back to the button"

    # A wrong password: it says so, and the button works again.
    sign_in_with(driver, "not my password")
    wait(driver, lambda: "didn't help" in text_of(driver, "#alert-note"), seconds=20, message="the failure is said")
    assert "did not accept the password" in text_of(driver, "#alert-note")
    wait(driver, lambda: enabled(driver, '#alert-actions button[data-option="sign-in"]'), message="Sign in again is on again")
    assert find(driver, "#sign-in-password").get_attribute("value") == "", "the page keeps no copy of what was typed"

    # The right one: the alert goes, the connection is live and the room's messages are there.
    sign_in_with(driver, ALICE_PASSWORD)
    wait(driver, lambda: not dialog_open(driver, "#alert"), seconds=20, message="the alert closes")
    wait(driver, lambda: "hello alice" in texts(driver, "primary"), seconds=15, message=lambda: f"history shown; {texts(driver, 'primary')}")
    wait(driver, lambda: status_text(driver).startswith("Live"), seconds=15, message=lambda: f"live; status {status_text(driver)!r}")
    synapse.send(bob, room, "are you there?")
    wait(driver, lambda: "are you there?" in texts(driver, "primary"), seconds=15, message="a new message arrives live")
    metas = driver.execute_script("return [...document.querySelectorAll('[data-messages-for=primary] .meta')].map(e => e.textContent)")
    assert all("· Lunch ·" in meta for meta in metas), f"each message says its room by name: {metas}"
    assert not visible(driver, "#storage-meter"), "no quota, nothing to measure against: no meter"
    assert text_of(driver, "#storage-text").endswith("used, no quota")
    assert_accessible(driver)
    shot(driver, SHOTS, "matrix-live")


def plain_texts(driver):
    """The primary pane's texts, without the encrypted room's placeholder."""
    return [text for text in texts(driver, "primary") if not text.startswith("Encrypted message")]


def test_an_edit_changes_the_message_in_place_and_a_deletion_leaves_the_pane_and_the_search(context):
    driver, synapse = context.driver, context.synapse
    bob = synapse.login("bob", "bob password")
    room = synapse.create_room(bob, "Plans", ["@carol:localhost"])
    carol = synapse.login("carol", "carol password")
    synapse.join(carol, room)
    secret = synapse.create_room(bob, "Secret", ["@carol:localhost"], encrypted=True)
    synapse.join(carol, secret)
    synapse.send_encrypted(bob, secret)
    first = synapse.send(bob, room, "picnic on saturday")
    dashboard = Dashboard(DASHBOARD, "--matrix-user", "@carol:localhost", "--always-on", upstream=f"matrix+{synapse.url}",
                          db=os.path.join(tempfile.mkdtemp(), "store.sqlite"), environment={"LP_MATRIX_PASSWORD": "carol password"})
    if context.dashboard:
        context.dashboard.stop()
    context.dashboard = dashboard
    driver.get(dashboard.url)
    wait(driver, lambda: "picnic on saturday" in texts(driver, "primary"), seconds=20, message=lambda: f"history; {texts(driver, 'primary')}")
    wait(driver, lambda: status_text(driver).startswith("Live"), seconds=15, message="live")
    second = synapse.send(bob, room, "bring a blanket")
    wait(driver, lambda: "bring a blanket" in texts(driver, "primary"), seconds=15, message="live message")
    field = find(driver, "#search-field")
    field.send_keys("blanket")
    wait(driver, lambda: driver.execute_script("return document.querySelectorAll('#search-results .search-open').length") == 1,
         message="the message found")

    synapse.edit(bob, room, first, "picnic on sunday")
    wait(driver, lambda: plain_texts(driver) == ["bring a blanket", "picnic on sunday"], seconds=15,
         message=lambda: f"the edit in place, no '* ' message: {texts(driver, 'primary')}")
    metas = driver.execute_script("return [...document.querySelectorAll('[data-messages-for=primary] .message')]"
                                  ".map(e => [e.querySelector('.text').textContent, e.querySelector('.meta').textContent])")
    marks = {text: meta.endswith("(edited)") for text, meta in metas}
    assert marks["picnic on sunday"] and not marks["bring a blanket"], metas

    synapse.redact(bob, room, second)
    wait(driver, lambda: plain_texts(driver) == ["picnic on sunday"], seconds=15,
         message=lambda: f"the deleted message leaves the pane: {texts(driver, 'primary')}")
    wait(driver, lambda: driver.execute_script("return document.querySelectorAll('#search-results .search-open').length") == 0,
         message="and the search results")
    field.clear()
    field.send_keys("saturday")
    wait(driver, lambda: text_of(driver, "#search-count").startswith("No stored message matches."), message=lambda: text_of(driver, "#search-count"))
    assert_accessible(driver)
    shot(driver, SHOTS, "matrix-edited")

    # The encrypted room says what it is, in the list and in the chat, and search says it was not searched.
    assert "1 encrypted room was not searched" in text_of(driver, "#search-count"), text_of(driver, "#search-count")
    encrypted = driver.execute_script("""return [...document.querySelectorAll('#chats [data-chat]')]
        .filter(b => b.querySelector('.encrypted-badge')).map(b => b.querySelector('.chat-name').textContent)""")
    assert encrypted == ["Secret"], encrypted
    click(driver, find(driver, "#chats [data-chat] .encrypted-badge"))
    wait(driver, lambda: visible(driver, "#chat-encrypted"), message="the chat says it cannot be read here")
    assert "cannot read them" in text_of(driver, "#chat-encrypted")
    assert "Encrypted message: this dashboard cannot read it." in driver.execute_script(
        "return [...document.querySelectorAll('#chat-messages .text')].map(e => e.textContent)")
    assert_accessible(driver)
    shot(driver, SHOTS, "matrix-encrypted")


# Installed before the page's own scripts, so no text of the progress line is missed however fast
# history comes.
PROGRESS_RECORDER = """
window.progressSeen = [];
document.addEventListener('DOMContentLoaded', () => {
  const line = document.querySelector('#history-progress');
  const storage = document.querySelector('#storage-text');
  window.storageWhileFetching = [];
  const note = () => { if (line.textContent && !window.progressSeen.includes(line.textContent)) window.progressSeen.push(line.textContent); };
  // The storage figure as each progress line shows it: it must move as pages are stored.
  const figure = () => { if (!line.hidden && line.textContent && !window.storageWhileFetching.includes(storage.textContent)) window.storageWhileFetching.push(storage.textContent); };
  new MutationObserver(note).observe(line, { childList: true, subtree: true, characterData: true });
  new MutationObserver(figure).observe(storage, { childList: true, subtree: true, characterData: true });
});
"""


def room_with(synapse, user, name):
    """A new user `@user:localhost` (password "<user> password") in a new room `name` that bob
    made; returns bob's token and the room."""
    bob = synapse.login("bob", "bob password")
    synapse.register(user, f"{user} password")
    room = synapse.create_room(bob, name, [f"@{user}:localhost"])
    synapse.join(synapse.login(user, f"{user} password"), room)
    return bob, room


def dashboard_of(context, user, always_on=True):
    """The dashboard syncing `@user:localhost` through its password, the suite's one. Without
    `always_on` it syncs (and fetches history) only once a page of it is open and visible."""
    dashboard = Dashboard(DASHBOARD, "--matrix-user", f"@{user}:localhost", *(["--always-on"] if always_on else []),
                          upstream=f"matrix+{context.synapse.url}",
                          db=os.path.join(tempfile.mkdtemp(), "store.sqlite"), environment={"LP_MATRIX_PASSWORD": f"{user} password"})
    if context.dashboard:
        context.dashboard.stop()
    context.dashboard = dashboard
    return dashboard


def test_older_history_is_fetched_with_its_progress_said_and_show_older_reaches_the_first_message(context):
    driver, synapse = context.driver, context.synapse
    bob, room = room_with(synapse, "dave", "Archive")
    count = 600
    for number in range(1, count + 1):
        synapse.send(bob, room, f"old message {number}")
    # Not always on: the history is fetched once the page is open, so the page is there to say so
    # however fast the homeserver is.
    dashboard = dashboard_of(context, "dave", always_on=False)
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": PROGRESS_RECORDER})
    driver.get(dashboard.url)
    wait(driver, lambda: dashboard.api("/api/state")["history"]["complete"], seconds=60, message="history complete")
    assert dashboard.api("/api/state")["history"]["fetched"] == count - 50, dashboard.api("/api/state")["history"]
    wait(driver, lambda: not visible(driver, "#history-progress"), seconds=10, message="the progress line goes once history is complete")
    seen = driver.execute_script("return window.progressSeen")
    assert any(re.fullmatch(r"Fetching older history: ([\d,]+ messages? so far, )?1 room left\.", text) for text in seen), seen
    figures = driver.execute_script("return window.storageWhileFetching")
    assert len(figures) >= 2, f"the storage figure moved while history was fetched: {figures}"
    assert dashboard.api("/api/state")["history"]["fetched"] == count - 50, dashboard.api("/api/state")["history"]

    # The pane, loaded before the older history came, reads on into it.
    wait(driver, lambda: visible(driver, '[data-older-for="primary"]') or not visible(driver, '[data-start-for="primary"]'),
         message="the pane offers the older messages that came")

    # The chat reads back to its first message with "Show older", as Element scrolls back.
    click_selector(driver, "#chats [data-chat]")
    wait(driver, lambda: visible(driver, "#chat-older"), message="the chat opened with older messages to show")
    for _ in range(count // 50 + 2):
        if visible(driver, "#chat-start"):
            break
        click_selector(driver, "#chat-older")
        wait(driver, lambda: not driver.execute_script("return document.querySelector('#chat-older').getAttribute('aria-busy')"), message="page loaded")
    wait(driver, lambda: visible(driver, "#chat-start"), message="the oldest message reached")
    shown = driver.execute_script("return [...document.querySelectorAll('#chat-messages .message .text')].map(e => e.textContent)")
    assert shown == [f"old message {number}" for number in range(1, count + 1)], (len(shown), shown[:3], shown[-3:])
    assert_accessible(driver)
    shot(driver, SHOTS, "matrix-history")


# System notifications, recorded (title and body) instead of shown, permission granted.
NOTIFICATION_RECORDER = """
window.__notes = [];
window.Notification = class {
  static permission = "granted";
  static requestPermission() { return Promise.resolve("granted"); }
  constructor(title, options) { window.__notes.push([title, options?.body ?? ""]); }
};
"""


def test_a_mention_is_marked_and_a_room_muted_in_another_client_tells_nothing(context):
    driver, synapse = context.driver, context.synapse
    bob, room = room_with(synapse, "gwen", "Standup")
    gwen = synapse.login("gwen", "gwen password")  # gwen's other client, as Element would be
    synapse.send(bob, room, "good morning")
    dashboard = dashboard_of(context, "gwen")
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": NOTIFICATION_RECORDER})
    driver.get(dashboard.url)
    wait(driver, lambda: "good morning" in texts(driver, "primary"), seconds=20, message="history")
    wait(driver, lambda: status_text(driver).startswith("Live"), seconds=15, message="live")
    # Nobody looks at the dashboard: what the rules say notify becomes a system notification.
    driver.minimize_window()
    wait(driver, lambda: driver.execute_script("return document.visibilityState") == "hidden", message="hidden")
    notes = lambda: [body for _, body in driver.execute_script("return window.__notes")]
    mention = "gwen: can you take the notes?"
    synapse.send_content(bob, room, {"msgtype": "m.text", "body": mention, "m.mentions": {"user_ids": ["@gwen:localhost"]}})
    wait(driver, lambda: notes() == [mention], seconds=15, message=lambda: f"the mention notifies: {notes()}")
    for round_number in (1, 2):
        # Muted in the other client (Element's Mute): nothing of the room is told, then it is again.
        rule = f"/_matrix/client/v3/pushrules/global/override/{urllib.parse.quote(room, safe='')}"
        synapse.call("PUT", rule, {"conditions": [{"kind": "event_match", "key": "room_id", "pattern": room}], "actions": []}, token=gwen)
        synapse.send(bob, room, f"while muted {round_number}")
        synapse.call("DELETE", rule, token=gwen)
        synapse.send(bob, room, f"after the mute {round_number}")
        wait(driver, lambda: notes()[-1:] == [f"after the mute {round_number}"], seconds=15, message=lambda: f"round {round_number}: {notes()}")
        assert not any(body.startswith("while muted") for body in notes()), notes()
    driver.set_window_rect(width=1200, height=900)
    wait(driver, lambda: driver.execute_script("return document.visibilityState") == "visible", message="visible")
    marks = driver.execute_script("return [...document.querySelectorAll('[data-messages-for=primary] .message.mention .text')].map(e => e.textContent)")
    assert marks == [mention], marks
    meta = driver.execute_script("return document.querySelector('[data-messages-for=primary] .message.mention .meta').textContent")
    assert meta.endswith("Mentions you"), meta
    assert_accessible(driver)
    shot(driver, SHOTS, "matrix-mention")


def chips(driver, scope):
    """The reaction chips in `scope` as (text, pressed) pairs, pressed None for a chip that is no button."""
    return driver.execute_script("""return [...document.querySelectorAll(arguments[0] + ' .reaction')]
        .map(c => [c.textContent, c.tagName === 'BUTTON' ? c.getAttribute('aria-pressed') === 'true' : null])""", scope)


def test_reactions_show_as_chips_and_a_click_gives_or_takes_back_the_persons_own(context):
    driver, synapse = context.driver, context.synapse
    bob, room = room_with(synapse, "hana", "Breakfast")
    coffee = synapse.send(bob, room, "coffee?")
    synapse.react(bob, room, coffee, "👍")
    dashboard = dashboard_of(context, "hana")
    driver.get(dashboard.url)
    pane = '[data-messages-for="primary"]'
    wait(driver, lambda: chips(driver, pane) == [["👍 1", None]], seconds=20, message=lambda: f"bob's reaction in the pane: {chips(driver, pane)}")
    wait(driver, lambda: status_text(driver).startswith("Live"), seconds=15, message="live")
    row = driver.execute_script("return [...document.querySelectorAll('#chats [data-chat]')].find(b => b.textContent.includes('Breakfast'))")
    click(driver, row)
    view = "#chat-messages"
    wait(driver, lambda: chips(driver, view) == [["👍 1", False]], message=lambda: f"the chat view's chip: {chips(driver, view)}")
    for round_number in (1, 2):
        # Given: pressed at once, and in the room for every other client.
        click_selector(driver, f"{view} button.reaction[data-react='👍']")
        wait(driver, lambda: chips(driver, view) == [["👍 2", True]], message=lambda: f"round {round_number}: given at once: {chips(driver, view)}")
        wait(driver, lambda: ("👍", "@hana:localhost") in synapse.reactions(bob, room, coffee), seconds=15, message="in the room")
        focused = """const id = document.querySelector('#chat-messages li.message[data-id]').dataset.id;
            return document.activeElement.dataset.key === `react/${id}/👍`"""
        assert driver.execute_script(focused), "the focus stays on the chip clicked, drawn again"
        # Taken back: a redaction, gone for everyone.
        click_selector(driver, f"{view} button.reaction[data-react='👍']")
        wait(driver, lambda: chips(driver, view) == [["👍 1", False]], message=lambda: f"round {round_number}: taken back: {chips(driver, view)}")
        wait(driver, lambda: ("👍", "@hana:localhost") not in synapse.reactions(bob, room, coffee), seconds=15, message="gone from the room")
    # A new one from the quick reactions, and one from another client, live.
    click_selector(driver, f"{view} button[data-react-picker]")
    click_selector(driver, f"{view} .reaction-quick button[data-react='🎉']")
    wait(driver, lambda: ["🎉 1", True] in chips(driver, view), message=lambda: f"the quick reaction: {chips(driver, view)}")
    synapse.react(bob, room, coffee, "😄")
    wait(driver, lambda: ["😄 1", False] in chips(driver, view), seconds=15, message=lambda: f"bob's live reaction: {chips(driver, view)}")
    wait(driver, lambda: chips(driver, pane) == [["👍 1", None], ["🎉 1", None], ["😄 1", None]], seconds=15,
         message=lambda: f"the pane follows: {chips(driver, pane)}")
    label = driver.execute_script(f"return document.querySelector(\"{view} button.reaction[data-react='👍']\").getAttribute('aria-label')")
    assert label == "👍: 1 reaction, from bob", label
    # Refused (reactions need a power hana has not): not sent, said with Try again and Delete, twice.
    levels = synapse.call("GET", f"/_matrix/client/v3/rooms/{urllib.parse.quote(room)}/state/m.room.power_levels", token=bob)
    levels.setdefault("events", {})["m.reaction"] = 50
    synapse.call("PUT", f"/_matrix/client/v3/rooms/{urllib.parse.quote(room)}/state/m.room.power_levels", levels, token=bob)
    synapse.send(bob, room, "no more reactions, please")
    wait(driver, lambda: "no more reactions, please" in texts(driver, "primary"), seconds=15, message="the power change came")
    click_selector(driver, f"{view} li.message[data-id] button[data-react-picker]")
    click_selector(driver, f"{view} .reaction-quick button[data-react='👀']")
    echo = "#chat-outbox .not-sent"
    wait(driver, lambda: visible(driver, echo) and "Your reaction 👀" in text_of(driver, echo), seconds=15, message="not sent, said")
    for round_number in (1, 2):
        again = f"{echo} button[data-option='try-again']"
        wait(driver, lambda: visible(driver, again) and enabled(driver, again), message="Try again can be clicked")
        click_selector(driver, again)
        told = "Try again didn't help" if round_number == 1 else "(2 tries,"
        wait(driver, lambda: told in text_of(driver, echo), seconds=15,
             message=lambda: f"round {round_number}: the try is told: {text_of(driver, echo)}")
    assert all(key != "👀" for key, _ in synapse.reactions(bob, room, coffee))
    assert_accessible(driver)
    shot(driver, SHOTS, "matrix-reactions")
    click_selector(driver, f"{echo} button[data-option='discard']")
    wait(driver, lambda: not visible(driver, echo), message="deleted")


def test_a_thread_is_read_and_answered_in_its_own_view_and_search_opens_a_reply_there(context):
    driver, synapse = context.driver, context.synapse
    bob, room = room_with(synapse, "ines", "Weekend")
    root = synapse.send(bob, room, "hike on Saturday?")
    synapse.reply_in_thread(bob, room, root, "the ridge trail, 9 am")
    synapse.send(bob, room, "in the room itself")
    dashboard = dashboard_of(context, "ines")
    driver.get(dashboard.url)
    wait(driver, lambda: status_text(driver).startswith("Live"), seconds=20, message="live")
    wait(driver, lambda: "in the room itself" in texts(driver, "primary"), seconds=20, message="the history")
    # The stream of every chat shows the reply among the room's messages, said to be in a thread.
    meta = lambda text: driver.execute_script("return [...document.querySelectorAll('[data-messages-for=primary] li.message')].find(li => li.querySelector('.text')?.textContent === arguments[0])?.querySelector('.meta').textContent ?? null", text)
    assert "in a thread" in (meta("the ridge trail, 9 am") or ""), meta("the ridge trail, 9 am")
    assert "in a thread" not in (meta("in the room itself") or "in a thread"), meta("in the room itself")
    row = driver.execute_script("return [...document.querySelectorAll('#chats [data-chat]')].find(b => b.textContent.includes('Weekend'))")
    click(driver, row)
    timeline = lambda: driver.execute_script("return [...document.querySelectorAll('#chat-messages li.message .text')].map(t => t.textContent)")
    wait(driver, lambda: timeline() == ["hike on Saturday?", "in the room itself"], message=lambda: f"the timeline without the reply: {timeline()}")
    summary = "#chat-messages button.thread-summary"
    assert text_of(driver, summary).startswith("1 reply · last reply"), text_of(driver, summary)
    replies = lambda: driver.execute_script("return [...document.querySelectorAll('#thread-messages li.message .text')].map(t => t.textContent)")
    for round_number in (1, 2):
        click_selector(driver, summary)
        wait(driver, lambda: visible(driver, "#thread-view"), message="the thread opens")
        assert text_of(driver, "#thread-root .text") == "hike on Saturday?"
        wait(driver, lambda: replies()[:1] == ["the ridge trail, 9 am"], message=lambda: f"round {round_number}: the replies: {replies()}")
        # Answered here: shown at once, then in the homeserver's thread for every client.
        find(driver, "#thread-text").send_keys(f"I'm in ({round_number})", Keys.ENTER)
        wait(driver, lambda: f"I'm in ({round_number})" in replies(), seconds=20, message=lambda: f"round {round_number}: stored in the thread: {replies()}")
        wait(driver, lambda: (f"I'm in ({round_number})", "@ines:localhost") in synapse.thread_replies(bob, room, root), seconds=15, message="in the room's thread")
        assert timeline() == ["hike on Saturday?", "in the room itself"], f"never in the timeline: {timeline()}"
        wait(driver, lambda: text_of(driver, summary).startswith(f"{1 + round_number} replies"), message=lambda: f"counted: {text_of(driver, summary)}")
        click_selector(driver, "#thread-close")
        wait(driver, lambda: not visible(driver, "#thread-view"), message="closed")
        assert driver.execute_script("return document.activeElement.matches('button.thread-summary')"), "back where the person was"
    # A reply while the thread is closed: its first message says it is unread, as Element's thread
    # dot does, until the thread is opened; the room's own timeline stays read.
    synapse.reply_in_thread(bob, room, root, "who drives?")
    wait(driver, lambda: text_of(driver, summary).endswith("· 1 unread"), seconds=20, message=lambda: f"the thread unread: {text_of(driver, summary)}")
    assert "1 unread" in driver.execute_script(f"return document.querySelector('{summary}').getAttribute('aria-label')")
    shot(driver, SHOTS, "matrix-thread-unread")
    click_selector(driver, summary)
    wait(driver, lambda: replies()[-1:] == ["who drives?"], message=lambda: f"the unread reply: {replies()}")
    wait(driver, lambda: "unread" not in text_of(driver, summary), message=lambda: f"read once opened: {text_of(driver, summary)}")
    # Live from another client, into the open thread: read as it comes.
    synapse.reply_in_thread(bob, room, root, "bring water")
    wait(driver, lambda: replies()[-1:] == ["bring water"], seconds=20, message=lambda: f"the live reply: {replies()}")
    wait(driver, lambda: "unread" not in text_of(driver, summary) and "replies" in text_of(driver, summary),
         message=lambda: f"read while open: {text_of(driver, summary)}")
    assert_accessible(driver)
    shot(driver, SHOTS, "matrix-thread")
    # Refused (writing needs a power ines has not now): not sent, said in the thread with Try again,
    # twice; once the room lets her write again, Try again sends it into the thread.
    levels_path = f"/_matrix/client/v3/rooms/{urllib.parse.quote(room)}/state/m.room.power_levels"
    levels = synapse.call("GET", levels_path, token=bob)
    levels.setdefault("events", {})["m.room.message"] = 50
    synapse.call("PUT", levels_path, levels, token=bob)
    synapse.send(bob, room, "only bob writes now")
    wait(driver, lambda: "only bob writes now" in texts(driver, "primary"), seconds=15, message="the power change came")
    find(driver, "#thread-text").send_keys("can Ann come?", Keys.ENTER)
    echo = "#thread-outbox .not-sent"
    wait(driver, lambda: visible(driver, echo) and "Not sent" in text_of(driver, echo), seconds=15, message=lambda: f"not sent, said: {text_of(driver, '#thread-outbox')}")
    again = f"{echo} button[data-option='try-again']"
    for round_number in (1, 2):
        wait(driver, lambda: visible(driver, again) and enabled(driver, again), message="Try again can be clicked")
        click_selector(driver, again)
        told = "Try again didn't help" if round_number == 1 else "(2 tries,"
        wait(driver, lambda: told in text_of(driver, echo), seconds=15, message=lambda: f"round {round_number}: the try is told: {text_of(driver, echo)}")
    assert ("can Ann come?", "@ines:localhost") not in synapse.thread_replies(bob, room, root)
    levels["events"]["m.room.message"] = 0
    synapse.call("PUT", levels_path, levels, token=bob)
    synapse.send(bob, room, "everyone writes again")
    wait(driver, lambda: "everyone writes again" in texts(driver, "primary"), seconds=15, message="the power change back came")
    wait(driver, lambda: visible(driver, again) and enabled(driver, again), message="Try again can be clicked once more")
    click_selector(driver, again)
    wait(driver, lambda: "can Ann come?" in replies(), seconds=20, message=lambda: f"sent into the thread at last: {replies()}")
    wait(driver, lambda: not visible(driver, echo), message="no longer unsent")
    wait(driver, lambda: ("can Ann come?", "@ines:localhost") in synapse.thread_replies(bob, room, root), seconds=15, message="in the room's thread")
    click_selector(driver, "#thread-close")
    click_selector(driver, "#chat-close")
    # Search finds a reply and opens it in its thread.
    find(driver, "#search-field").send_keys("ridge")
    wait(driver, lambda: visible(driver, "#search-results button.search-open"), seconds=15, message="the reply is found")
    click_selector(driver, "#search-results button.search-open")
    wait(driver, lambda: visible(driver, "#thread-view"), message="the result opens its thread")
    wait(driver, lambda: driver.execute_script("return document.activeElement.closest('#thread-messages li.message')?.textContent ?? ''").find("ridge trail") >= 0,
         message="the reply found has the focus")


PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFklEQVR4nGP8z8DAwMDAxMDAwMDAAAANHQEDasKb6QAAAABJRU5ErkJggg==")


def test_an_image_shows_as_a_thumbnail_and_a_file_as_a_download_link(context):
    driver, synapse = context.driver, context.synapse
    bob, room = room_with(synapse, "frank", "Pictures")
    picture = synapse.upload(bob, PNG, "image/png", "dot.png")
    image_event = synapse.send_content(bob, room, {"msgtype": "m.image", "body": "dot.png", "url": picture,
                                                   "info": {"mimetype": "image/png", "size": len(PNG)}})
    notes = synapse.upload(bob, b"<svg xmlns='http://www.w3.org/2000/svg'/>", "image/svg+xml", "notes.svg")
    synapse.send_content(bob, room, {"msgtype": "m.file", "body": "notes.svg", "url": notes, "info": {"size": 41}})
    dashboard = dashboard_of(context, "frank")
    driver.get(dashboard.url)
    wait(driver, lambda: visible(driver, '[data-messages-for="primary"] img.media-thumb'), seconds=20, message="the thumbnail")
    wait(driver, lambda: driver.execute_script("const i = document.querySelector('img.media-thumb'); return i.complete && i.naturalWidth > 0"),
         message="the thumbnail loaded through the dashboard")
    image = find(driver, '[data-messages-for="primary"] img.media-thumb')
    assert image.get_attribute("alt") == "dot.png"
    link = find(driver, '[data-messages-for="primary"] a.media-file')
    assert link.text.startswith("notes.svg") and link.get_attribute("download") == "notes.svg", link.text
    # A reply, as Element sends it (with the quoted fallback), says what it answers.
    synapse.send_content(bob, room, {"msgtype": "m.text", "body": "> <@bob:localhost> sent an image.\n\nnice dot",
                                     "m.relates_to": {"m.in_reply_to": {"event_id": image_event}}})
    wait(driver, lambda: "nice dot" in texts(driver, "primary"), seconds=15, message="the reply")
    note = driver.execute_script("""return [...document.querySelectorAll('[data-messages-for="primary"] .reply-note')].map(n => n.textContent)""")
    assert note == ["In reply to bob: dot.png"], note
    assert_accessible(driver)
    shot(driver, SHOTS, "matrix-media")


def test_a_room_the_account_was_removed_from_is_an_archive_until_removed_after_a_question(context):
    driver, synapse = context.driver, context.synapse
    bob, room = room_with(synapse, "erin", "Old club")
    for text in ("see you there", "last meeting"):
        synapse.send(bob, room, text)
    dashboard = dashboard_of(context, "erin")
    driver.get(dashboard.url)
    wait(driver, lambda: "last meeting" in texts(driver, "primary"), seconds=20, message="the room's messages")
    synapse.call("POST", f"/_matrix/client/v3/rooms/{urllib.parse.quote(room)}/kick", {"user_id": "@erin:localhost"}, token=bob)
    wait(driver, lambda: text_of(driver, "#chats .archived-badge") == "Left", seconds=20, message="the room is marked as left")
    assert "last meeting" in texts(driver, "primary"), "its messages stay"
    click_selector(driver, "#chats [data-chat]")
    wait(driver, lambda: visible(driver, "#chat-archived"), message="the chat says it is an archive")
    assert "no longer in this room" in text_of(driver, "#chat-archived")
    assert_accessible(driver)
    shot(driver, SHOTS, "matrix-archived")
    confirm_open = lambda: driver.execute_script("return document.querySelector('#confirm').open")

    # Cancel keeps everything: the question closes, the chat and its messages stay.
    click_selector(driver, "#chat-remove")
    wait(driver, confirm_open, message="asked first")
    assert "deletes the 2 stored messages of “Old club”" in text_of(driver, "#confirm-detail"), text_of(driver, "#confirm-detail")
    click_selector(driver, '#confirm-actions button[data-role="cancel"]')
    wait(driver, lambda: not confirm_open(), message="Cancel closes the question")
    assert driver.execute_script("return document.querySelector('#chat-view').open"), "the chat stays open"
    assert dashboard.api("/api/chats")["chats"][0]["messageCount"] == 2, "nothing was removed"

    # The dashboard goes away while the question is open: the removal fails and says so.
    click_selector(driver, "#chat-remove")
    wait(driver, confirm_open, message="asked again")
    port, store = dashboard.base.rsplit(":", 1)[1], dashboard.db
    dashboard.stop()
    click_selector(driver, '#confirm-actions button[data-role="default"]')
    wait(driver, lambda: visible(driver, "#chat-remove-error"), seconds=15, message="the failed removal is said")
    assert "The chat was not removed" in text_of(driver, "#chat-remove-error"), text_of(driver, "#chat-remove-error")
    assert "last meeting" in texts(driver, "primary"), "the messages are still shown"

    # Back on the same port and store: the second try removes it.
    dashboard = context.dashboard = Dashboard(DASHBOARD, "--matrix-user", "@erin:localhost", "--always-on", port=int(port), db=store,
                                              upstream=f"matrix+{synapse.url}", environment={"LP_MATRIX_PASSWORD": "erin password"})
    wait(driver, lambda: enabled(driver, "#chat-remove"), seconds=20, message="Remove works again once the dashboard is back")
    click_selector(driver, "#chat-remove")
    wait(driver, confirm_open, message="asked a third time")
    click_selector(driver, '#confirm-actions button[data-role="default"]')
    wait(driver, lambda: not driver.execute_script("return document.querySelector('#chat-view').open"), message="the chat closes")
    wait(driver, lambda: driver.execute_script("return document.querySelectorAll('#chats [data-chat]').length") == 0, message="and leaves the list")
    wait(driver, lambda: "last meeting" not in texts(driver, "primary"), message="its messages leave the pane")


if __name__ == "__main__":
    os.makedirs(SHOTS, exist_ok=True)
    synapse = Synapse(SYNAPSE_PYTHON)
    try:
        synapse.register("alice", ALICE_PASSWORD)
        synapse.register("bob", "bob password")
        synapse.register("carol", "carol password")

        run_suite(globals(), SHOTS, synapse=synapse)
    finally:
        synapse.stop()
