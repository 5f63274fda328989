"""The local copy read, searched and taken away, in a real headless Chromium, as a person does it:
the chat list says which chats have unread messages (only those that arrived live: a first sync
of three days of history leaves nothing unread), a chat opens with a heading for each day and
goes back to its oldest message, opening it marks it read here and in another tab, a search
result opens in its chat at the message, and the account and a chat download as JSON Lines
that hold exactly what is stored. axe-core is clean at 390 and 1280 px with a chat open.

    python3 Tests/Browser/history_test.py DASHBOARD_BINARY CHAT_SERVER_BINARY SCREENSHOT_DIR
"""
import datetime
import glob
import json
import os
import sqlite3
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from browser_support import (  # noqa: E402
    WIDE, ChatServer, Dashboard, accessible_at_both_widths, browser, click, click_selector, console_errors, find, find_all, free_port, run_suite,
    shot, status_text, text_of, visible, wait,
)
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support.ui import Select  # noqa: E402

BINARY, CHAT_SERVER, SHOTS = sys.argv[1], sys.argv[2], sys.argv[3]
os.makedirs(SHOTS, exist_ok=True)


def start(context, *arguments, world=None, **options):
    """A chat server (keeping its world in `world`, if given), a dashboard syncing with it (with
    `arguments` and `options`, as `Dashboard` takes them), the page live."""
    stop(context)
    context.server = ChatServer(CHAT_SERVER, *(["--data", world] if world else []))
    context.dashboard = Dashboard(BINARY, *arguments, upstream=context.server.url, **options)
    context.dashboard.simulator = context.server.url.rstrip("/")
    context.driver.set_window_size(*WIDE)
    context.driver.get(context.dashboard.url)
    wait(context.driver, lambda: status_text(context.driver) == "Live", message="live")
    console_errors(context.driver)  # read and dropped: the last test's dashboard went away under its page
    return context.dashboard, context.driver


def stop(context):
    for other in getattr(context, "others", []):
        other.quit()
    context.others = []
    if context.dashboard:
        context.dashboard.stop()
        context.dashboard = None
    if getattr(context, "server", None):
        context.server.stop()
        context.server = None


def world_of_three_days(count):
    """A chat server's world file holding `count` primary messages sent over the last three days
    (noon, local time, two days ago; yesterday; today), oldest first."""
    folder = tempfile.mkdtemp()
    path = os.path.join(folder, "world.sqlite")
    server = ChatServer(CHAT_SERVER, "--data", path)
    post(server.url.rstrip("/") + "/sim/messages", {"account": "primary", "count": count, "text": "weekly plan"})
    server.stop()
    noon = datetime.datetime.now().astimezone().replace(hour=12, minute=0, second=0, microsecond=0)
    with sqlite3.connect(path) as world:
        for (identifier,) in world.execute("SELECT id FROM messages ORDER BY id").fetchall():
            day = 2 - min(2, (identifier - 1) * 3 // count)
            sent = (noon - datetime.timedelta(days=day) + datetime.timedelta(seconds=identifier)).astimezone(datetime.timezone.utc)
            world.execute("UPDATE messages SET sent_at = ? WHERE id = ?", (sent.strftime("%Y-%m-%dT%H:%M:%S.000Z"), identifier))
    return path


def post(url, body):
    import urllib.request
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST", headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


def chats(driver):
    """The chat rows: (id, name, unread) each."""
    return [tuple(row) for row in driver.execute_script("""
        return [...document.querySelectorAll('#chats [data-chat]')].map(b => [
          Number(b.dataset.chat), b.querySelector('.chat-name').textContent, Number(b.querySelector('.unread')?.textContent ?? 0)])""")]


def unread_of(driver, chat):
    return next((unread for identifier, _, unread in chats(driver) if identifier == chat), None)


def dialog_open(driver):
    return driver.execute_script("return document.querySelector('#chat-view').open")


def chat_view(driver):
    """What the open chat shows: its day headings and its messages' ids, top to bottom."""
    return driver.execute_script("""
        return {days: [...document.querySelectorAll('#chat-messages .day h3')].map(h => h.textContent),
                ids: [...document.querySelectorAll('#chat-messages .message')].map(m => Number(m.dataset.id))}""")


def test_history_is_read_live_messages_are_unread_and_a_chat_opens_with_a_heading_for_each_day(context):
    dashboard, driver = start(context, world=world_of_three_days(150))
    wait(driver, lambda: text_of(driver, "#chats-note") == "5 chats.", message=lambda: f"five chats, none unread: {text_of(driver, '#chats-note')!r}")
    assert all(unread == 0 for _, _, unread in chats(driver)), f"history is not unread: {chats(driver)}"
    names = sorted(name for _, name, _ in chats(driver))
    assert names == sorted(["Family", "Work", "Book club", "Climbing trip", "Chloé"]), names

    dashboard.sim("/sim/messages", {"account": "primary", "count": 10, "text": "fresh news"})
    wait(driver, lambda: text_of(driver, "#chats-note") == "5 chats, 10 unread messages.",
         message=lambda: f"ten unread; {text_of(driver, '#chats-note')!r}")
    chat, name, unread = max(chats(driver), key=lambda row: row[2])
    stored = dashboard.api(f"/api/messages?account=primary&chat={chat}&limit=500")["messages"]
    assert chats(driver)[0][2] > 0, "the chat with the newest message comes first"

    # A second window on the same dashboard shows the same counts, and hears when this one reads.
    other = browser()
    context.others = [other]
    other.get(dashboard.url)
    wait(other, lambda: unread_of(other, chat) == unread, message="the other window has the same count")

    row = find(driver, f'#chats [data-chat="{chat}"]')
    click(driver, row)
    wait(driver, lambda: dialog_open(driver) and len(chat_view(driver)["ids"]) == min(50, len(stored)), message="the chat open")
    assert text_of(driver, "#chat-view-title") == name
    view = chat_view(driver)
    assert view["ids"] == sorted(message["id"] for message in stored)[-50:], "its own messages, oldest at the top"
    expected_days = driver.execute_script("""
        const d = new Date(); d.setDate(d.getDate() - 2);
        return [d.toLocaleDateString(undefined, {weekday: 'long', month: 'long', day: 'numeric'}), 'Yesterday', 'Today'];""")
    assert view["days"] == expected_days[-len(view["days"]):] and len(view["days"]) >= 2, f"a heading for each day: {view['days']}"
    wait(driver, lambda: unread_of(driver, chat) == 0, message="opening the chat marks it read")
    wait(driver, lambda: text_of(driver, "#chats-note") == f"5 chats, {10 - unread} unread messages."
         if unread < 10 else text_of(driver, "#chats-note") == "5 chats.", message=lambda: text_of(driver, "#chats-note"))
    assert next(c for c in dashboard.api("/api/chats?account=primary")["chats"] if c["id"] == chat)["unread"] == 0, "kept by the store"
    wait(other, lambda: unread_of(other, chat) == 0, message="read in one window, read in the other")
    other.quit()
    context.others = []
    shot(driver, SHOTS, "chat-open")
    accessible_at_both_widths(driver, "a chat open")

    # A message arriving while the chat is open shows in it and leaves it read.
    before = len(chat_view(driver)["ids"])
    dashboard.sim("/sim/messages", {"account": "primary", "count": 40, "text": "while reading"})
    in_chat = lambda: len(dashboard.api(f"/api/messages?account=primary&chat={chat}&limit=500")["messages"])  # noqa: E731
    wait(driver, lambda: len(chat_view(driver)["ids"]) == min(before + (in_chat() - len(stored)), 10_000) and in_chat() > len(stored),
         message="the new ones shown in the open chat")
    wait(driver, lambda: unread_of(driver, chat) == 0, message="still read while open")

    find(driver, "#chat-view").send_keys(Keys.ESCAPE)
    wait(driver, lambda: not dialog_open(driver), message="Escape closes the chat")
    # The dialog's close event (which puts the focus back) comes a task after it stops being open.
    wait(driver, lambda: driver.execute_script("return document.activeElement.dataset.chat") == str(chat), message="back on the chat's row")
    # Again, as a person does, and closed with its button this time (the list may re-render as
    # the chat is marked read: the row is found again if so).
    click_selector(driver, f'#chats [data-chat="{chat}"]')
    wait(driver, lambda: dialog_open(driver) and chat_view(driver)["ids"], message="opened again")
    click(driver, find(driver, "#chat-close"))
    wait(driver, lambda: not dialog_open(driver), message="Close closes it")
    errors = console_errors(driver)
    assert errors == [], errors


def test_a_chat_goes_back_to_its_oldest_message_keeping_the_reading_place(context):
    dashboard, driver = start(context)
    dashboard.sim("/sim/messages", {"account": "primary", "count": 400, "text": "a long story"})
    wait(driver, lambda: sum(1 for _ in chats(driver)) == 5, message="five chats")
    chat = max(dashboard.api("/api/chats?account=primary")["chats"], key=lambda c: c["messageCount"])
    assert chat["messageCount"] > 60, chat
    click(driver, find(driver, f'#chats [data-chat="{chat["id"]}"]'))
    wait(driver, lambda: len(chat_view(driver)["ids"]) == 50, message="the newest 50")
    assert visible(driver, "#chat-older") and not visible(driver, "#chat-start")
    first = chat_view(driver)["ids"][0]
    click(driver, find(driver, "#chat-older"))
    wait(driver, lambda: len(chat_view(driver)["ids"]) == chat["messageCount"], message="all of it")
    wait(driver, lambda: driver.execute_script("return document.activeElement.id") == "chat-start",
         message="the note that this is the oldest takes the focus")
    assert not visible(driver, "#chat-older")
    top = driver.execute_script(f"return document.querySelector('#chat-messages [data-id=\"{first}\"]').getBoundingClientRect().top")
    assert top > 0, "what was read stays below the older messages"
    find(driver, "#chat-view").send_keys(Keys.ESCAPE)


def test_a_chat_open_while_the_process_is_gone_keeps_its_messages_and_loads_older_ones_when_it_is_back(context):
    options = {"port": free_port(), "db": os.path.join(tempfile.mkdtemp(), "store.sqlite")}
    dashboard, driver = start(context, "--no-auth", **options)
    dashboard.sim("/sim/messages", {"account": "primary", "count": 400, "text": "a long story"})
    wait(driver, lambda: sum(1 for _ in chats(driver)) == 5, message="five chats")
    chat = max(dashboard.api("/api/chats?account=primary")["chats"], key=lambda c: c["messageCount"])
    click(driver, find(driver, f'#chats [data-chat="{chat["id"]}"]'))
    wait(driver, lambda: len(chat_view(driver)["ids"]) == 50, message="the newest 50")
    shown = chat_view(driver)["ids"]

    dashboard.stop()
    wait(driver, lambda: find(driver, "#chat-older").get_attribute("aria-disabled") == "true", seconds=15,
         message="Show older messages is off while the process is gone")
    for _ in range(2):  # clicked, and clicked again, as a person does when nothing happens
        click(driver, find(driver, "#chat-older"))
        assert chat_view(driver)["ids"] == shown, "an off control does nothing, and what was read stays"
    assert dialog_open(driver) and not find_all(driver, "#chat-error .error-view")
    accessible_at_both_widths(driver, "a chat open, the process gone")

    context.dashboard = Dashboard(BINARY, "--no-auth", upstream=context.server.url, **options)
    wait(driver, lambda: status_text(driver) == "Live", seconds=30, message="live again")
    wait(driver, lambda: find(driver, "#chat-older").get_attribute("aria-disabled") is None, message="on again")
    click(driver, find(driver, "#chat-older"))
    wait(driver, lambda: len(chat_view(driver)["ids"]) == chat["messageCount"], message="all of it, from the store kept on disk")
    assert chat_view(driver)["ids"][-50:] == shown
    find(driver, "#chat-view").send_keys(Keys.ESCAPE)


def test_a_linked_chat_open_when_the_linked_account_goes_closes_and_the_list_is_the_primarys(context):
    dashboard, driver = start(context)
    dashboard.sim("/sim/messages", {"account": "linked", "count": 30, "text": "from the other account"})
    dashboard.sim("/sim/messages", {"account": "primary", "count": 5, "text": "from this one"})
    wait(driver, lambda: visible(driver, "#chats-account"), message="the linked account offered")
    Select(find(driver, "#chats-account")).select_by_value("linked")
    wait(driver, lambda: find_all(driver, "#chats [data-chat]") and "Export all linked messages" == text_of(driver, "#export-account"),
         message="the linked account's chats")
    linked = dashboard.api("/api/chats?account=linked")["chats"]
    wait(driver, lambda: len(chats(driver)) == len(linked), message="all of them listed")
    click(driver, find(driver, f'#chats [data-chat="{linked[0]["id"]}"]'))
    wait(driver, lambda: dialog_open(driver) and chat_view(driver)["ids"], message="the linked chat open")
    assert text_of(driver, "#chat-view-title").endswith("(linked account)")

    dashboard.sim("/sim/linked", {"linked": False})
    wait(driver, lambda: not dialog_open(driver), message="its chat closes with the account")
    wait(driver, lambda: not visible(driver, "#chats-account") and text_of(driver, "#export-account") == "Export all primary messages",
         message="the list is the primary account's again")
    primary = dashboard.api("/api/chats?account=primary")["chats"]
    wait(driver, lambda: sorted(identifier for identifier, _, _ in chats(driver)) == sorted(c["id"] for c in primary),
         message="the primary account's chats")
    wait(driver, lambda: driver.execute_script(
        "const e = document.activeElement; return e.id === 'chats-title' || e.closest('#chats') !== null"),
        message="the focus lands in the chat list, not on the page's body")


def test_a_search_result_opens_in_its_chat_at_the_message(context):
    dashboard, driver = start(context)
    dashboard.sim("/sim/messages", {"account": "primary", "count": 120, "text": "an ordinary message"})
    dashboard.sim("/sim/messages", {"account": "primary", "count": 1, "text": "The pelican brief is on the table"})
    dashboard.sim("/sim/messages", {"account": "primary", "count": 120, "text": "another ordinary message"})
    wait(driver, lambda: text_of(driver, "#chats-note").startswith("5 chats"), message="chats")
    field = find(driver, "#search-field")
    click(driver, field)
    field.send_keys("pelican")
    wait(driver, lambda: text_of(driver, "#search-count") == "1 match.", message=lambda: text_of(driver, "#search-count"))
    found = dashboard.api("/api/search?q=pelican")["results"][0]["message"]
    click(driver, find(driver, "#search-results .search-open"))
    wait(driver, lambda: dialog_open(driver) and found["id"] in chat_view(driver)["ids"], message="the chat at the message")
    focused = driver.execute_script("const e = document.activeElement; return [e.dataset.id, e.classList.contains('found'), e.textContent]")
    assert focused[0] == str(found["id"]) and focused[1] and "pelican brief" in focused[2], focused
    assert chat_view(driver)["ids"][-1] == found["id"], "the message and the ones before it"
    assert text_of(driver, "#chat-view-title") == found["chatName"]
    assert visible(driver, "#chat-newest")
    newest = dashboard.api(f"/api/messages?account=primary&chat={found['chatId']}&limit=50")["messages"][0]["id"]
    click(driver, find(driver, "#chat-newest"))
    wait(driver, lambda: chat_view(driver)["ids"][-1:] == [newest], message="the newest messages")
    assert not visible(driver, "#chat-newest")
    find(driver, "#chat-view").send_keys(Keys.ESCAPE)
    wait(driver, lambda: not dialog_open(driver), message="closed")
    wait(driver, lambda: driver.execute_script("return document.activeElement.dataset.message") == str(found["id"]), message="back on the result")


def test_the_account_and_a_chat_download_as_json_lines_holding_what_is_stored(context):
    dashboard, driver = start(context)
    downloads = tempfile.mkdtemp()
    driver.execute_cdp_cmd("Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": downloads})
    dashboard.sim("/sim/messages", {"account": "primary", "count": 3000, "text": "line \"quoted\"\nsecond line"})
    wait(driver, lambda: sum(c["messageCount"] for c in dashboard.api("/api/chats?account=primary")["chats"]) == 3000, message="stored")

    def downloaded(pattern):
        wait(driver, lambda: [f for f in glob.glob(os.path.join(downloads, pattern)) if not f.endswith(".crdownload")],
             seconds=30, message=f"a file {pattern}")
        path = [f for f in glob.glob(os.path.join(downloads, pattern)) if not f.endswith(".crdownload")][0]
        with open(path, encoding="utf-8") as file:
            return [json.loads(line) for line in file]

    click(driver, find(driver, "#export-account"))
    lines = downloaded("messages-primary-2*.jsonl")
    assert [line["id"] for line in lines] == list(range(1, 3001)), "every message once, oldest first"
    assert all(line["text"] == "line \"quoted\"\nsecond line" and line["account"] == "primary" for line in lines)

    chat = dashboard.api("/api/chats?account=primary")["chats"][0]
    wait(driver, lambda: find_all(driver, f'#chats [data-chat="{chat["id"]}"]'), message="the chat listed")
    click(driver, find(driver, f'#chats [data-chat="{chat["id"]}"]'))
    wait(driver, lambda: dialog_open(driver), message="chat open")
    click(driver, find(driver, "#chat-export"))
    slug = chat["name"].lower().replace(" ", "-").replace("é", "e")
    lines = downloaded(f"messages-primary-{slug}-*.jsonl")
    assert len(lines) == chat["messageCount"] and all(line["chatId"] == chat["id"] for line in lines), (len(lines), chat)
    find(driver, "#chat-view").send_keys(Keys.ESCAPE)
    errors = console_errors(driver)
    assert errors == [], errors


if __name__ == "__main__":
    run_suite(globals(), SHOTS, dashboard=None, size=WIDE)
