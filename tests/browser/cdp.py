"""A minimal Chrome DevTools Protocol client over ``--remote-debugging-pipe``.

Why a pipe and not a port or Playwright: no extra dependency, no TCP port to race for on a
shared machine, and nothing that could download a browser.  Chromium reads NUL-terminated JSON
commands on fd 3 and writes replies and events on fd 4.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
    "--disable-quic",
    "--disable-extensions",
    "--disable-default-apps",
    "--disable-domain-reliability",
    "--disable-client-side-phishing-detection",
    "--no-default-browser-check",
    "--metrics-recording-only",
    "--mute-audio",
    "--hide-scrollbars",
    "--allow-file-access-from-files",
)


class CdpError(RuntimeError):
    pass


class Browser:
    """Headless Chromium with one page attached (flattened session).

    ``events`` collects every event (method, params) so a test can assert on the network
    requests, console messages and exceptions after the fact.
    """

    def __init__(self, executable: str, width: int = 1400, height: int = 900) -> None:
        self._profile = tempfile.mkdtemp(prefix="accel-drc-chromium-")
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()

        def wire() -> None:  # runs in the child between fork and exec
            os.dup2(to_child_r, 3)
            os.dup2(from_child_w, 4)

        args = [
            executable,
            *FLAGS,
            f"--user-data-dir={self._profile}",
            f"--window-size={width},{height}",
            "--remote-debugging-pipe",
            "about:blank",
        ]
        self.proc = subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            preexec_fn=wire,  # noqa: PLW1509 - single-threaded at this point
            pass_fds=(3, 4),  # the child's numbers after wire(): kept open across exec
        )
        os.close(to_child_r)
        os.close(from_child_w)
        self._next = 0
        self._lock = threading.Lock()
        self._replies: dict[int, dict[str, Any]] = {}
        self._cond = threading.Condition(self._lock)
        self.events: list[tuple[str, dict[str, Any]]] = []
        self._closed = False
        self._reader = threading.Thread(target=self._read_loop, daemon=True)
        self._reader.start()
        self._stderr: list[bytes] = []
        threading.Thread(target=self._drain_stderr, daemon=True).start()
        self.session = self._attach_page()
        self.send(
            "Emulation.setDeviceMetricsOverride",
            width=width,
            height=height,
            deviceScaleFactor=1,
            mobile=False,
        )

    # -- transport ---------------------------------------------------------------------------

    def _drain_stderr(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self._stderr.append(line)

    def _read_loop(self) -> None:
        buf = b""
        while True:
            try:
                chunk = os.read(self._from_child, 1 << 20)
            except OSError:
                break
            if not chunk:
                break
            buf += chunk
            while b"\0" in buf:
                raw, buf = buf.split(b"\0", 1)
                msg = json.loads(raw)
                with self._cond:
                    if "id" in msg:
                        self._replies[msg["id"]] = msg
                    else:
                        self.events.append((msg.get("method", ""), msg.get("params", {})))
                    self._cond.notify_all()
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    def send(
        self, method: str, session: bool = True, timeout: float = 60.0, **params: Any
    ) -> dict[str, Any]:
        with self._lock:
            self._next += 1
            mid = self._next
        msg: dict[str, Any] = {"id": mid, "method": method, "params": params}
        if session and getattr(self, "session", None):
            msg["sessionId"] = self.session
        os.write(self._to_child, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout
        with self._cond:
            while mid not in self._replies:
                left = deadline - time.monotonic()
                if left <= 0 or self._closed:
                    raise CdpError(
                        f"{method}: no reply ({'closed' if self._closed else 'timeout'})"
                    )
                self._cond.wait(left)
            reply = self._replies.pop(mid)
        if "error" in reply:
            raise CdpError(f"{method}: {reply['error']}")
        return reply.get("result", {})

    def _attach_page(self) -> str:
        deadline = time.monotonic() + 30
        while True:
            targets = self.send("Target.getTargets", session=False)["targetInfos"]
            pages = [t for t in targets if t.get("type") == "page"]
            if pages:
                break
            if time.monotonic() > deadline:
                raise CdpError("no page target")
            time.sleep(0.1)
        res = self.send(
            "Target.attachToTarget", session=False, targetId=pages[0]["targetId"], flatten=True
        )
        return res["sessionId"]

    # -- page helpers ------------------------------------------------------------------------

    def enable(self, domains: Iterable[str] = ("Page", "Runtime", "Network", "Log")) -> None:
        for d in domains:
            self.send(f"{d}.enable")

    def navigate(self, url: str, timeout: float = 60.0) -> None:
        """Navigate and wait for the load event."""
        start = len(self.events)
        self.send("Page.navigate", url=url)
        deadline = time.monotonic() + timeout
        while True:
            with self._cond:
                if any(m == "Page.loadEventFired" for m, _ in self.events[start:]):
                    return
                left = deadline - time.monotonic()
                if left <= 0:
                    raise CdpError(f"load of {url} timed out")
                self._cond.wait(min(left, 0.2))

    def eval(self, expression: str, timeout: float = 60.0) -> Any:
        res = self.send(
            "Runtime.evaluate",
            expression=expression,
            returnByValue=True,
            awaitPromise=True,
            timeout=timeout,
        )
        if "exceptionDetails" in res:
            raise CdpError(f"JS exception: {res['exceptionDetails']}")
        return res.get("result", {}).get("value")

    def wait_for(self, expression: str, timeout: float = 30.0) -> Any:
        deadline = time.monotonic() + timeout
        while True:
            v = self.eval(expression)
            if v:
                return v
            if time.monotonic() > deadline:
                raise CdpError(f"timed out waiting for {expression}")
            time.sleep(0.05)

    def screenshot(
        self, path: str | Path, clip: dict[str, float] | None = None, full: bool = False
    ) -> None:
        params: dict[str, Any] = {"format": "png"}
        if clip:
            params["clip"] = {**clip, "scale": 1}
        if full:
            params["captureBeyondViewport"] = True
            size = self.eval(
                "[document.documentElement.scrollWidth, document.documentElement.scrollHeight]"
            )
            params["clip"] = {"x": 0, "y": 0, "width": size[0], "height": size[1], "scale": 1}
        data = self.send("Page.captureScreenshot", **params)["data"]
        Path(path).write_bytes(base64.b64decode(data))

    def click(self, x: float, y: float) -> None:
        """A real mouse click at viewport coordinates (pointer and click events, as a user's)."""
        for kind in ("mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1)

    def key(self, key: str, code: str, vk: int) -> None:
        for kind in ("rawKeyDown", "keyUp"):
            self.send(
                "Input.dispatchKeyEvent", type=kind, key=key, code=code, windowsVirtualKeyCode=vk
            )

    # -- what happened ------------------------------------------------------------------------

    def requests(self) -> list[str]:
        return [p["request"]["url"] for m, p in self.events if m == "Network.requestWillBeSent"]

    def console_errors(self) -> list[str]:
        out = []
        for m, p in self.events:
            if m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                out.append(
                    " ".join(
                        str(a.get("value", a.get("description", ""))) for a in p.get("args", [])
                    )
                )
            elif m == "Runtime.exceptionThrown":
                d = p.get("exceptionDetails", {})
                out.append(str(d.get("exception", {}).get("description") or d.get("text")))
            elif m == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
                out.append(str(p["entry"].get("text")))
        return out

    def close(self) -> None:
        with contextlib.suppress(CdpError):
            self.send("Browser.close", session=False, timeout=5)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)
        for fd in (self._to_child, self._from_child):
            with contextlib.suppress(OSError):
                os.close(fd)
        shutil.rmtree(self._profile, ignore_errors=True)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
