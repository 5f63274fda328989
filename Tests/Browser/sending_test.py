"""Writing back in a real headless Chromium, as a person does it: type in an open chat and press
Enter, see the message at once marked "Sending…" and then sent; a refused message says "Not sent"
with the reason and Try again / Delete beside it, Try again clicked twice is two real tries, Delete
takes it away; the chat's row says "1 not sent"; a reload and a second window show the same;
Shift+Enter is a new line; text typed but not sent survives a reload; text typed while an earlier
message waits for an answer that never comes is kept, and the earlier one stays as "Not sent" with
Try again, Edit and Delete, across a restart and a reload; nothing is announced for one's own
messages. axe-core is clean with a message not sent.

    python3 Tests/Browser/sending_test.py DASHBOARD_BINARY SCREENSHOT_DIR
"""
import os
import signal
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from browser_support import (  # noqa: E402
    WIDE, Dashboard, accessible_at_both_widths, browser, click, console_errors, enabled, find, find_all, free_port, run_suite, shot, start_dashboard,
    status_text, text_of, wait,
)
from selenium.webdriver.common.keys import Keys  # noqa: E402

BINARY, SHOTS = sys.argv[1], sys.argv[2]
os.makedirs(SHOTS, exist_ok=True)


def open_first_chat(context, **options):
    """A dashboard whose primary account has chats, the page live, the first chat open; its id."""
    dashboard, _ = start_dashboard(context, BINARY, "--always-on", size=WIDE, **options)
    driver = context.driver
    console_errors(driver)  # read and dropped: the last test's dashboard went away under its page
    dashboard.sim("/sim/messages", {"account": "primary", "count": 3})
    wait(driver, lambda: find_all(driver, "#chats [data-chat]"), message="chats listed")
    row = find_all(driver, "#chats [data-chat]")[0]
    chat = int(row.get_attribute("data-chat"))
    click(driver, row)
    wait(driver, lambda: find(driver, "#chat-view").get_attribute("open") is not None, message="chat open")
    wait(driver, lambda: find_all(driver, "#chat-messages .message"), message="messages shown")
    return dashboard, driver, chat


def echoes(driver):
    """The open chat's local echoes: (text, mark), read in one go (the list may be drawn again meanwhile)."""
    return [tuple(pair) for pair in driver.execute_script(
        "return [...document.querySelectorAll('#chat-outbox .message')].map((item) => "
        "[item.querySelector('.text').textContent, item.querySelector('.mark').textContent])")]


def chat_texts(driver):
    return driver.execute_script("return [...document.querySelectorAll('#chat-messages .message .text')].map((node) => node.textContent)")


def written(dashboard):
    return [message["text"] for message in dashboard.sim("/sim/written")["messages"]]


def click_option(driver, option):
    """Clicks an unsent message's option once it can be clicked, as a person does."""
    selector = f'#chat-outbox button[data-option="{option}"]'
    wait(driver, lambda: find_all(driver, selector) and enabled(driver, selector), message=f"{option} can be clicked")
    click(driver, find(driver, selector))


def type_and_send(driver, text):
    box = find(driver, "#chat-text")
    box.click()
    box.send_keys(text)
    box.send_keys(Keys.ENTER)


def test_a_message_typed_and_sent_shows_at_once_then_as_sent_and_once(context):
    dashboard, driver, chat = open_first_chat(context)
    toasts_before = len(find_all(driver, ".toast"))
    # Slow answers: the echo is seen saying Sending… before it is sent.
    dashboard.sim("/sim/faults", {"mode": "slow", "delayMs": 1500})
    type_and_send(driver, "Hello from the dashboard")
    wait(driver, lambda: echoes(driver) == [("Hello from the dashboard", "Sending…")], seconds=3, message="the echo at once")
    assert find(driver, "#chat-text").get_attribute("value") == "", "the box is empty once the dashboard has it"
    shot(driver, SHOTS, "sending")
    wait(driver, lambda: echoes(driver) == [] and chat_texts(driver)[-1] == "Hello from the dashboard", seconds=15, message="sent")
    dashboard.sim("/sim/faults", {"mode": "none"})
    assert chat_texts(driver).count("Hello from the dashboard") == 1, "shown once"
    assert written(dashboard) == ["Hello from the dashboard"]
    assert len(find_all(driver, ".toast")) == toasts_before, "one's own message is not announced"
    # Shift+Enter is a new line, Enter sends the two lines as one message.
    box = find(driver, "#chat-text")
    box.send_keys("first line")
    box.send_keys(Keys.SHIFT, Keys.ENTER)
    box.send_keys("second line")
    box.send_keys(Keys.ENTER)
    wait(driver, lambda: "first line\nsecond line" in chat_texts(driver), seconds=10, message="two lines sent")
    assert written(dashboard) == ["Hello from the dashboard", "first line\nsecond line"]
    # Empty or blank: nothing goes.
    box.send_keys("   ")
    box.send_keys(Keys.ENTER)
    assert written(dashboard) == ["Hello from the dashboard", "first line\nsecond line"]
    errors = console_errors(driver)
    assert errors == [], errors


def test_a_refused_message_says_why_and_try_again_and_delete_work_every_time(context):
    dashboard, driver, chat = open_first_chat(context)
    dashboard.sim("/sim/faults", {"mode": "refuse-send"})
    type_and_send(driver, "Not allowed here")
    wait(driver, lambda: echoes(driver) == [("Not allowed here", "Not sent")], seconds=10, message="not sent")
    reason = text_of(driver, "#chat-outbox .reason")
    assert "does not let this account write" in reason, reason
    buttons = [button.text for button in find_all(driver, "#chat-outbox .echo-actions button")]
    assert sorted(buttons) == ["Delete", "Try again"], buttons
    assert not find_all(driver, '[data-view-for="primary"] .error-view'), "shown at the message, not in the pane"
    shot(driver, SHOTS, "not-sent")
    accessible_at_both_widths(driver, "a message not sent")
    # Try again, twice: each a real try, refused again with the reason.
    for round in (1, 2):
        before = dashboard.sim("/sim/stats")["faultsInjected"]
        click_option(driver, "try-again")
        wait(driver, lambda: dashboard.sim("/sim/stats")["faultsInjected"] == before + 1, seconds=10, message=f"try {round} reached the server")
        said = "Try again didn't help (just now)" if round == 1 else "Try again didn't help (2 tries, the last just now)"
        wait(driver, lambda: said in text_of(driver, "#chat-outbox .attempt-note"), seconds=10, message=f"try {round} said: {said}")
        assert echoes(driver) == [("Not allowed here", "Not sent")]
    # The chat list says so, and a second window and a reload show the same.
    driver.execute_script("document.querySelector('#chat-view').close()")
    wait(driver, lambda: "1 not sent" in text_of(driver, f'#chats [data-chat="{chat}"]'), message="the row says 1 not sent")
    other = browser(*WIDE)
    context.others = [other]
    other.get(dashboard.url)
    wait(other, lambda: "1 not sent" in text_of(other, f'#chats [data-chat="{chat}"]'), message="the other window says so too")
    driver.refresh()
    wait(driver, lambda: "1 not sent" in text_of(driver, f'#chats [data-chat="{chat}"]'), message="after a reload too")
    click(driver, find(driver, f'#chats [data-chat="{chat}"]'))
    wait(driver, lambda: echoes(driver) == [("Not allowed here", "Not sent")], message="the echo after a reload")
    # Now the server takes it: Try again sends it.
    dashboard.sim("/sim/faults", {"mode": "none"})
    click_option(driver, "try-again")
    wait(driver, lambda: echoes(driver) == [] and chat_texts(driver)[-1] == "Not allowed here", seconds=10, message="sent on Try again")
    assert written(dashboard) == ["Not allowed here"]
    wait(other, lambda: "not sent" not in text_of(other, f'#chats [data-chat="{chat}"]'), message="the other window follows")
    # Delete: refused again, then deleted at once; it never reaches the chat.
    dashboard.sim("/sim/faults", {"mode": "refuse-send"})
    type_and_send(driver, "Delete me")
    wait(driver, lambda: echoes(driver) == [("Delete me", "Not sent")], seconds=10, message="not sent")
    click_option(driver, "discard")
    wait(driver, lambda: echoes(driver) == [], seconds=10, message="deleted")
    # A long text is work one would lose: Delete asks first, and Cancel keeps it.
    long_text = "A long answer. " * 20
    type_and_send(driver, long_text)
    wait(driver, lambda: echoes(driver) == [(long_text, "Not sent")], seconds=10, message=lambda: f"the long one not sent: {echoes(driver)} server: {dashboard.api('/api/outbox')}")
    click_option(driver, "discard")
    wait(driver, lambda: find(driver, "#confirm").get_attribute("open") is not None, message="Delete asks first")
    shot(driver, SHOTS, "delete-asks-first")
    assert "300 characters" in text_of(driver, "#confirm-detail"), text_of(driver, "#confirm-detail")
    click(driver, find(driver, '#confirm-actions button[data-role="cancel"]'))
    wait(driver, lambda: find(driver, "#confirm").get_attribute("open") is None, message="the question closed")
    assert echoes(driver) == [(long_text, "Not sent")], "Cancel kept it"
    click_option(driver, "discard")
    wait(driver, lambda: find(driver, "#confirm").get_attribute("open") is not None, message="asked again")
    click(driver, find(driver, '#confirm-actions button[data-role="default"]'))
    wait(driver, lambda: echoes(driver) == [], seconds=10, message="the long one deleted")
    assert dashboard.api("/api/outbox")["outbox"] == []
    dashboard.sim("/sim/faults", {"mode": "none"})
    assert written(dashboard) == ["Not allowed here"]
    errors = console_errors(driver)
    assert errors == [], errors


def box_text(driver):
    return find(driver, "#chat-text").get_attribute("value")


def test_text_typed_while_a_message_waits_is_kept_when_the_dashboard_never_answers(context):
    options = {"port": free_port(), "db": os.path.join(tempfile.mkdtemp(), "store.sqlite")}
    dashboard, driver, chat = open_first_chat(context, **options)
    # The process stops answering (its requests wait), the person sends A and goes on typing B,
    # then the process dies: A's request fails with no answer.
    os.kill(dashboard.process.pid, signal.SIGSTOP)
    type_and_send(driver, "first thought")
    wait(driver, lambda: echoes(driver) == [("first thought", "Sending…")], seconds=3, message="the echo at once")
    find(driver, "#chat-text").send_keys("second thought")
    os.kill(dashboard.process.pid, signal.SIGKILL)
    dashboard.process.wait(timeout=10)
    wait(driver, lambda: echoes(driver) == [("first thought", "Not sent")], seconds=10, message=lambda: f"A is not sent: {echoes(driver)}")
    assert box_text(driver) == "second thought", f"B stays in the box as typed: {box_text(driver)!r}"
    note = text_of(driver, "#chat-composer-note")
    assert note.startswith("Not sent: The dashboard process does not answer.") and "kept below" in note, note
    assert "back in the box" not in note, note
    assert "did not take it" in text_of(driver, "#chat-outbox .reason")
    buttons = [button.text for button in find_all(driver, "#chat-outbox .echo-actions button")]
    assert buttons == ["Try again", "Edit", "Delete"], buttons
    shot(driver, SHOTS, "not-taken-while-typing")
    # A new process on the same store, the page reloaded: both are still there.
    context.dashboard = dashboard = Dashboard(BINARY, "--always-on", **options)
    driver.get(dashboard.url)
    wait(driver, lambda: status_text(driver) == "Live", seconds=20, message="live again")
    wait(driver, lambda: find_all(driver, f'#chats [data-chat="{chat}"]'), message="listed again")
    click(driver, find(driver, f'#chats [data-chat="{chat}"]'))
    wait(driver, lambda: box_text(driver) == "second thought", message=lambda: f"B is back in the box: {box_text(driver)!r}")
    wait(driver, lambda: echoes(driver) == [("first thought", "Not sent")], message=lambda: f"A waits below: {echoes(driver)}")
    accessible_at_both_widths(driver, "a message the dashboard did not take")
    # Try again sends A once, and B is sent as typed.
    click(driver, find(driver, '#chat-outbox button[data-writing="retry"]'))
    wait(driver, lambda: "first thought" in chat_texts(driver) and echoes(driver) == [], seconds=10, message="A sent on Try again")
    find(driver, "#chat-text").send_keys(Keys.ENTER)
    wait(driver, lambda: "second thought" in chat_texts(driver), seconds=10, message="B sent")
    assert written(dashboard) == ["first thought", "second thought"], written(dashboard)
    assert text_of(driver, "#chat-composer-note") == ""
    # Not taken again (the dashboard refuses the chat), then Edit: the text comes back before what
    # was typed since, nothing lost; Delete takes a not-taken message away for good.
    os.kill(dashboard.process.pid, signal.SIGSTOP)
    type_and_send(driver, "third")
    find(driver, "#chat-text").send_keys("fourth")
    os.kill(dashboard.process.pid, signal.SIGKILL)
    dashboard.process.wait(timeout=10)
    wait(driver, lambda: echoes(driver) == [("third", "Not sent")], seconds=10, message="third not sent")
    click(driver, find(driver, '#chat-outbox button[data-writing="edit"]'))
    wait(driver, lambda: box_text(driver) == "third\nfourth", message=lambda: f"both in the box: {box_text(driver)!r}")
    assert echoes(driver) == []
    find(driver, "#chat-text").clear()
    type_and_send(driver, "fifth")
    wait(driver, lambda: echoes(driver) == [("fifth", "Not sent")], seconds=10, message="fifth not sent: nothing answers")
    click(driver, find(driver, '#chat-outbox button[data-writing="delete"]'))
    wait(driver, lambda: echoes(driver) == [], message="deleted")
    assert driver.execute_script("return Object.keys(sessionStorage).filter((key) => key.startsWith('draft/'))") == [], "nothing waits"


def test_text_typed_but_not_sent_survives_a_reload(context):
    dashboard, driver, chat = open_first_chat(context)
    box = find(driver, "#chat-text")
    box.send_keys("half a thought")
    driver.refresh()
    wait(driver, lambda: find_all(driver, f'#chats [data-chat="{chat}"]'), message="listed again")
    click(driver, find(driver, f'#chats [data-chat="{chat}"]'))
    wait(driver, lambda: find(driver, "#chat-text").get_attribute("value") == "half a thought", message="the draft is back")
    find(driver, "#chat-text").send_keys(Keys.ENTER)
    wait(driver, lambda: "half a thought" in chat_texts(driver), seconds=10, message="sent")
    assert written(dashboard) == ["half a thought"]


if __name__ == "__main__":
    run_suite(globals(), SHOTS, dashboard=None, size=WIDE)
