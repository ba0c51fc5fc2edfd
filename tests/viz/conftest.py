"""Fixtures for the view tests: built stores, and headless Chromium driven over the DevTools protocol.

Chromium is started with ``--remote-debugging-pipe`` (commands on fd 3, replies and events on fd 4, each
message NUL-terminated), so the tests need no port, no websocket package and no downloaded browser.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from kg.build import build
from kg.extract.pipeline import Extractor
from kg.store.embedded import EmbeddedStore

ROOT = Path(__file__).resolve().parents[2]
SEEDS = ROOT / "seeds"
ARTIFACTS = ROOT / "tests" / "artifacts"
DOCS_SHOT_BYTES = 200_000  # a screenshot this size or more stays out of docs/
INSTALL_HINT = "install it with `apt-get install -y chromium` (Debian), or point KG_CHROMIUM at a Chrome binary"

# Markup that must show as text and run nothing, in both a title and an abstract.
XSS_SCRIPT = "<script>window.__pwned=1</script>"
XSS_IMG = '<img src=x onerror="window.__pwned=1">'
EVIL_ID = "evil-1"
EVIL_TITLE = f"Evil {XSS_SCRIPT} transformer {XSS_IMG} paper"
EVIL_ABSTRACT = (
    f"We propose EvilNet {XSS_IMG}, a transformer model for image classification {XSS_SCRIPT}. "
    "We evaluate EvilNet on ImageNet and CIFAR-10 and report accuracy. "
    "EvilNet uses self-attention and outperforms ResNet on ImageNet."
)


# -- stores ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def extractor() -> Extractor:
    return Extractor()


@pytest.fixture(scope="session")
def seeds_store(tmp_path_factory: pytest.TempPathFactory, extractor: Extractor) -> EmbeddedStore:
    path = tmp_path_factory.mktemp("seeds-store")
    with EmbeddedStore(path, writable=True) as store:
        build([SEEDS], store, extractor=lambda: extractor)
    return EmbeddedStore(path)


@pytest.fixture(scope="session")
def evil() -> dict[str, str]:
    """The crafted paper's id, title and the two pieces of markup (test modules can't import conftest)."""
    return {"id": EVIL_ID, "title": EVIL_TITLE, "script": XSS_SCRIPT, "img": XSS_IMG}


@pytest.fixture(scope="session")
def evil_store(tmp_path_factory: pytest.TempPathFactory, extractor: Extractor) -> EmbeddedStore:
    """A tiny corpus whose title and abstract carry script and image-handler markup."""
    path = tmp_path_factory.mktemp("evil-store")
    corpus = path / "evil.jsonl"
    rows = [
        {"id": EVIL_ID, "title": EVIL_TITLE, "abstract": EVIL_ABSTRACT, "year": 2024, "venue": "XSSConf",
         "authors": [f"Mallory {XSS_IMG}"]},
        {"id": "plain-1", "title": "A plain paper on ImageNet",
         "abstract": "We train ResNet on ImageNet for image classification and report accuracy.", "year": 2023},
    ]
    corpus.write_bytes(b"\n".join(orjson.dumps(r) for r in rows) + b"\n")
    with EmbeddedStore(path / "store", writable=True) as store:
        build([corpus], store, extractor=lambda: extractor)
    return EmbeddedStore(path / "store")


# -- Chromium over CDP ----------------------------------------------------------------------------------


def find_chromium() -> str | None:
    env = os.environ.get("KG_CHROMIUM")
    if env:  # an explicit choice: no falling back to another browser
        return shutil.which(env)
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    return None


class CDPError(RuntimeError):
    pass


class Browser:
    """One headless Chromium; ``send`` a CDP command and wait for its reply; events are collected."""

    def __init__(self, exe: str, profile: Path, log: Path) -> None:
        cmd_r, self._cmd_w = os.pipe()  # we write commands; Chromium reads them on fd 3
        self._ev_r, ev_w = os.pipe()  # Chromium writes replies and events on fd 4

        def child_fds() -> None:
            # Lift both ends above 4 first, so placing one on 3 cannot clobber the other.
            a, b = fcntl.fcntl(cmd_r, fcntl.F_DUPFD, 10), fcntl.fcntl(ev_w, fcntl.F_DUPFD, 10)
            os.dup2(a, 3)
            os.dup2(b, 4)
            os.close(a)
            os.close(b)

        self._log = open(log, "wb")  # noqa: SIM115 - closed in close()
        self.proc = subprocess.Popen(
            [exe, "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--disable-extensions", "--disable-default-apps", "--no-first-run", "--no-default-browser-check",
             "--mute-audio", "--hide-scrollbars", "--remote-debugging-pipe", f"--user-data-dir={profile}",
             "--window-size=1400,900", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=self._log, stderr=self._log, preexec_fn=child_fds, close_fds=False)
        os.close(cmd_r)
        os.close(ev_w)
        self._next = 0
        self._lock = threading.Lock()
        self._cond = threading.Condition()
        self._replies: dict[int, dict[str, Any]] = {}
        self.events: list[dict[str, Any]] = []
        self._closed = False
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self.send("Browser.getVersion", timeout=30)

    def _read(self) -> None:
        buf = b""
        while True:
            chunk = os.read(self._ev_r, 1 << 16)
            if not chunk:
                break
            buf += chunk
            *messages, buf = buf.split(b"\0")
            for raw in messages:
                msg = json.loads(raw)
                with self._cond:
                    if "id" in msg:
                        self._replies[msg["id"]] = msg
                    else:
                        self.events.append(msg)
                    self._cond.notify_all()
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    def send(self, method: str, params: dict[str, Any] | None = None, *, session: str | None = None,
             timeout: float = 30) -> dict[str, Any]:
        with self._lock:
            self._next += 1
            mid = self._next
            msg: dict[str, Any] = {"id": mid, "method": method, "params": params or {}}
            if session:
                msg["sessionId"] = session
            os.write(self._cmd_w, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout
        with self._cond:
            while mid not in self._replies:
                left = deadline - time.monotonic()
                if left <= 0 or self._closed:
                    raise CDPError(f"{method}: no reply ({'browser exited' if self._closed else 'timeout'})")
                self._cond.wait(left)
            reply = self._replies.pop(mid)
        if "error" in reply:
            raise CDPError(f"{method}: {reply['error']}")
        result: dict[str, Any] = reply.get("result", {})
        return result

    def new_page(self, width: int = 1400, height: int = 900) -> Page:
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        return Page(self, target, session, width, height)

    def close(self) -> None:
        with contextlib.suppress(CDPError):
            self.send("Browser.close", timeout=5)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._cmd_w)
        self._log.close()


class Page:
    """A tab: navigate, evaluate JavaScript, read its console errors, take screenshots."""

    def __init__(self, browser: Browser, target: str, session: str, width: int, height: int) -> None:
        self.browser, self.target, self.session = browser, target, session
        self.width, self.height = width, height
        for domain in ("Page", "Runtime", "Log"):
            self.send(f"{domain}.enable")
        self.send("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})

    def send(self, method: str, params: dict[str, Any] | None = None, timeout: float = 30) -> dict[str, Any]:
        return self.browser.send(method, params, session=self.session, timeout=timeout)

    def goto(self, url: str) -> None:
        r = self.send("Page.navigate", {"url": url})
        if r.get("errorText"):
            raise CDPError(f"cannot open {url}: {r['errorText']}")

    def eval(self, expression: str) -> Any:
        r = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in r:
            raise CDPError(f"{expression!r} threw: {r['exceptionDetails']}")
        return r["result"].get("value")

    def wait_for(self, expression: str, timeout: float = 60) -> Any:
        deadline = time.monotonic() + timeout
        while True:
            value = self.eval(expression)
            if value:
                return value
            if time.monotonic() > deadline:
                raise CDPError(f"waited {timeout:.0f} s for {expression!r}; errors: {self.errors()}")
            time.sleep(0.1)

    def errors(self) -> list[str]:
        """Uncaught exceptions, console.error calls and browser log errors (CSP refusals, failed loads)."""
        out = []
        for ev in list(self.browser.events):
            if ev.get("sessionId") != self.session:
                continue
            p = ev.get("params", {})
            if ev["method"] == "Runtime.exceptionThrown":
                d = p["exceptionDetails"]
                out.append(f"exception: {d.get('exception', {}).get('description') or d.get('text')}")
            elif ev["method"] == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                out.append("console.error: " + " ".join(str(a.get("value", a.get("description", "")))
                                                          for a in p.get("args", [])))
            elif ev["method"] == "Log.entryAdded" and p["entry"].get("level") == "error":
                out.append(f"log: {p['entry'].get('text')} {p['entry'].get('url', '')}")
        return out

    def mouse_move(self, x: float, y: float) -> None:
        self.send("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x, "y": y})

    def screenshot(self, path: Path, clip: dict[str, float] | None = None) -> None:
        """The page as a PNG; ``clip`` (x, y, width, height in CSS pixels) takes only that part."""
        path.parent.mkdir(parents=True, exist_ok=True)
        params: dict[str, Any] = {"format": "png"}
        if clip:
            params["clip"] = {**clip, "scale": 1}
        data = self.send("Page.captureScreenshot", params)["data"]
        path.write_bytes(base64.b64decode(data))

    def shot(self, name: str, clip: dict[str, float] | None = None, *, docs: bool = False) -> Path:
        """A screenshot in tests/artifacts/; one for ``docs``, with KG_UPDATE_DOCS=1 and under 200 KB, also in
        docs/screenshots/."""
        path = ARTIFACTS / f"{name}.png"
        self.screenshot(path, clip)
        if docs and os.environ.get("KG_UPDATE_DOCS") and path.stat().st_size < DOCS_SHOT_BYTES:
            (ROOT / "docs" / "screenshots").mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, ROOT / "docs" / "screenshots" / path.name)
        return path

    def close(self) -> None:
        self.browser.send("Target.closeTarget", {"targetId": self.target})


@pytest.fixture(scope="session")
def chromium() -> str:
    exe = find_chromium()
    if exe is None:
        if os.environ.get("CI"):
            pytest.fail(f"headless Chromium is required in CI but was not found; {INSTALL_HINT}")
        pytest.skip(f"headless Chromium not found; {INSTALL_HINT}")
    return exe


@pytest.fixture(scope="session")
def browser(chromium: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    tmp = tmp_path_factory.mktemp("chromium")
    b = Browser(chromium, tmp / "profile", tmp / "chromium.log")
    yield b
    b.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    p = browser.new_page()
    yield p
    p.close()


# -- the API, served for real ---------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.fixture(scope="session")
def api_url(seeds_store: EmbeddedStore) -> Iterator[str]:
    """The views router served by uvicorn on a free local port, over the seeds store."""
    import uvicorn
    from fastapi import FastAPI

    from api import errors
    from api.routes import views

    app = FastAPI()
    app.state.store = seeds_store
    errors.install(app)
    app.include_router(views.router)
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=10)


@pytest.fixture(scope="session")
def landscape_focus(seeds_store: EmbeddedStore) -> str:
    """The task or dataset of the seeds whose landscape has the most cells (what the landscape tests draw)."""
    g = seeds_store.graph
    focus = [e for e in seeds_store.entity_ids() if g.nodes[e]["label"] in ("Task", "Dataset")]
    return max(sorted(focus), key=lambda e: len(seeds_store.landscape(e).cells))
