#!/usr/bin/env python3
"""Drives a headless Chromium over the DevTools protocol for the web page's tests.

Only the Python standard library: Chromium is started with --remote-debugging-pipe and speaks
DevTools on its fd 3 (what it reads) and fd 4 (what it writes), as JSON messages each ended by
a NUL byte. One page target is created and attached to (flat sessions).

The test talks to this driver as a line protocol: each line on stdin is a JSON command, each
answer is one JSON line on stdout, `{"ok": true, "value": ...}` or `{"ok": false, "error": "..."}`.

  {"op": "navigate", "url": U}                      loads U, answers when its load event fired
  {"op": "eval", "expression": E}                   the value of E (promises awaited)
  {"op": "wait", "expression": E, "timeout": S}     polls E until it is truthy; its value
  {"op": "click", "selector": S}                    a mouse click in the middle of the element S
  {"op": "type", "selector": S, "text": T}          types T at the end of the text field S
  {"op": "screenshot", "path": P}                   writes a PNG of the page to P
  {"op": "console"}                                 console messages, exceptions, log entries so far
  {"op": "quit"}                                    closes the browser and exits

Usage: cdp_driver.py CHROMIUM USER_DATA_DIR [WIDTH HEIGHT]. The browser goes away with this
process (PR_SET_PDEATHSIG), and this process with its stdin (the test).
"""

import base64
import ctypes
import json
import os
import select
import signal
import subprocess
import sys
import time

CALL_TIMEOUT = 30.0


class Failure(Exception):
    pass


def die_with_parent():
    """In the browser's process, before exec: SIGKILL when the driver dies."""
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


class Browser:
    def __init__(self, executable, profile, width, height):
        to_chrome_r, self.to_chrome = os.pipe()
        self.from_chrome, from_chrome_w = os.pipe()
        # The child gets them as fd 3 and fd 4 (`_child_fds`); these stay open until it started,
        # so the pipes Popen makes for itself never take those numbers here.
        args = [
            executable, "--headless", "--remote-debugging-pipe", f"--user-data-dir={profile}",
            "--no-first-run", "--no-default-browser-check", "--disable-gpu", "--disable-extensions",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--disable-default-apps", "--no-proxy-server", "--mute-audio", "--hide-scrollbars",
            "--password-store=basic", "--use-mock-keychain", f"--window-size={width},{height}", "about:blank",
        ]
        if os.geteuid() == 0:
            args.insert(1, "--no-sandbox")
        os.makedirs(profile, exist_ok=True)
        self.log = open(os.path.join(profile, "chromium-stderr.txt"), "wb")
        self.process = subprocess.Popen(
            args, stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log, close_fds=True,
            pass_fds=(3, 4), preexec_fn=lambda: self._child_fds(to_chrome_r, from_chrome_w))
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self.buffer = b""
        self.next_id = 0
        self.events = []  # (session, method, params) not yet consumed
        self.console = []
        self.session = None
        self.width, self.height = width, height

    @staticmethod
    def _child_fds(read_end, write_end):
        die_with_parent()
        # fd 3: what Chromium reads; fd 4: what it writes. Move them out of the way first.
        r, w = os.dup(read_end), os.dup(write_end)
        os.dup2(r, 3)
        os.dup2(w, 4)
        os.set_inheritable(3, True)
        os.set_inheritable(4, True)

    def send(self, method, params=None, session=None):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        data = json.dumps(message).encode() + b"\0"
        while data:
            written = os.write(self.to_chrome, data)
            data = data[written:]
        return self.next_id

    def read_message(self, deadline):
        while b"\0" not in self.buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise Failure("Chromium did not answer in time")
            ready, _, _ = select.select([self.from_chrome], [], [], remaining)
            if not ready:
                continue
            chunk = os.read(self.from_chrome, 1 << 20)
            if not chunk:
                raise Failure(f"Chromium closed the DevTools pipe (exit status {self.process.poll()}): {self.log_tail()}")
            self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        message = json.loads(message)
        if "method" in message:
            self.record(message)
        return message

    def log_tail(self):
        """The end of what Chromium wrote on stderr (its profile goes with the test's folder)."""
        try:
            with open(self.log.name, "rb") as file:
                return file.read()[-2000:].decode(errors="replace")
        except OSError:
            return "(no log)"

    def record(self, message):
        method, params = message["method"], message.get("params", {})
        if method == "Runtime.consoleAPICalled":
            text = " ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args", []))
            self.console.append({"kind": "console." + params.get("type", ""), "text": text})
        elif method == "Runtime.exceptionThrown":
            details = params.get("exceptionDetails", {})
            text = details.get("exception", {}).get("description") or details.get("text", "")
            self.console.append({"kind": "exception", "text": text})
        elif method == "Log.entryAdded":
            entry = params.get("entry", {})
            self.console.append({"kind": "log." + entry.get("level", ""), "source": entry.get("source", ""),
                                 "text": entry.get("text", ""), "url": entry.get("url", "")})
        else:
            self.events.append((message.get("sessionId"), method, params))

    def call(self, method, params=None, session=None, timeout=CALL_TIMEOUT):
        ident = self.send(method, params, session)
        deadline = time.monotonic() + timeout
        while True:
            message = self.read_message(deadline)
            if message.get("id") == ident:
                if "error" in message:
                    raise Failure(f"{method}: {message['error'].get('message')}")
                return message.get("result", {})

    def wait_event(self, method, session, timeout=CALL_TIMEOUT):
        deadline = time.monotonic() + timeout
        while True:
            for index, (s, m, params) in enumerate(self.events):
                if s == session and m == method:
                    del self.events[index]
                    return params
            self.read_message(deadline)

    def open_page(self):
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self.call(domain + ".enable", session=self.session)
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": self.width, "height": self.height, "deviceScaleFactor": 1, "mobile": False}, self.session)

    def navigate(self, url):
        self.events = [e for e in self.events if e[1] != "Page.loadEventFired"]
        result = self.call("Page.navigate", {"url": url}, self.session)
        if result.get("errorText"):
            raise Failure(f"navigating to {url}: {result['errorText']}")
        self.wait_event("Page.loadEventFired", self.session)
        return url

    def evaluate(self, expression, timeout=CALL_TIMEOUT):
        result = self.call("Runtime.evaluate", {
            "expression": expression, "awaitPromise": True, "returnByValue": True, "userGesture": True,
        }, self.session, timeout)
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            raise Failure("the page threw: " + (details.get("exception", {}).get("description") or details.get("text", "")))
        return result.get("result", {}).get("value")

    def wait(self, expression, timeout):
        deadline = time.monotonic() + timeout
        value = None
        while True:
            value = self.evaluate(expression)
            if value:
                return value
            if time.monotonic() >= deadline:
                raise Failure(f"still false after {timeout} s: {expression} (last value {json.dumps(value)})")
            time.sleep(0.05)

    def element_center(self, selector):
        """Scrolls the element into view; its centre, or a failure if it can't be clicked or typed in."""
        found = self.evaluate("""(() => {
            const node = document.querySelector(%s);
            if (!node) return 'no element matches';
            if (node.closest('[hidden]')) return 'the element is hidden';
            if (node.disabled) return 'the element is disabled';
            node.scrollIntoView({block: 'center'});
            const box = node.getBoundingClientRect();
            if (box.width === 0 || box.height === 0) return 'the element has no size';
            return [box.left + box.width / 2, box.top + box.height / 2];
        })()""" % json.dumps(selector))
        if isinstance(found, str):
            raise Failure(f"{selector}: {found}")
        return found

    def click(self, selector):
        """A real mouse click in the middle of the element."""
        x, y = self.element_center(selector)
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent",
                      {"type": kind, "x": x, "y": y, "button": "left", "buttons": 1 if kind == "mousePressed" else 0,
                       "clickCount": 0 if kind == "mouseMoved" else 1}, self.session)
        return selector

    def type(self, selector, text):
        """Text typed at the end of a text field, as a keyboard would (input events and all)."""
        self.element_center(selector)
        self.evaluate("""(() => {
            const node = document.querySelector(%s);
            node.focus();
            node.setSelectionRange(node.value.length, node.value.length);
        })()""" % json.dumps(selector))
        self.call("Input.insertText", {"text": text}, self.session)
        return selector

    def screenshot(self, path):
        data = self.call("Page.captureScreenshot", {"format": "png"}, self.session)["data"]
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as file:
            file.write(base64.b64decode(data))
        return path

    def quit(self):
        try:
            self.call("Browser.close", timeout=5)
        except Failure:
            pass
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: cdp_driver.py CHROMIUM USER_DATA_DIR [WIDTH HEIGHT]")
    width, height = (int(sys.argv[3]), int(sys.argv[4])) if len(sys.argv) >= 5 else (1200, 800)
    browser = None

    def answer(**reply):
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()

    try:
        browser = Browser(sys.argv[1], sys.argv[2], width, height)
        browser.open_page()
        answer(ok=True, value="ready")
    except Exception as error:  # noqa: BLE001 - reported to the test as it is
        answer(ok=False, error=f"starting Chromium: {error}")
        if browser:
            browser.process.kill()
        return
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            command = json.loads(line)
            op = command["op"]
            if op == "navigate":
                value = browser.navigate(command["url"])
            elif op == "eval":
                value = browser.evaluate(command["expression"])
            elif op == "wait":
                value = browser.wait(command["expression"], float(command.get("timeout", 10)))
            elif op == "click":
                value = browser.click(command["selector"])
            elif op == "type":
                value = browser.type(command["selector"], command["text"])
            elif op == "screenshot":
                value = browser.screenshot(command["path"])
            elif op == "console":
                value = browser.console
            elif op == "quit":
                browser.quit()
                answer(ok=True, value=None)
                return
            else:
                raise Failure(f"unknown op {op}")
            answer(ok=True, value=value)
        except Exception as error:  # noqa: BLE001 - reported to the test as it is
            answer(ok=False, error=str(error))
    browser.quit()


if __name__ == "__main__":
    main()
