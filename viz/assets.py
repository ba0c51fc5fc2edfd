"""What a view inlines: vis-network from the installed pyvis, our page template, script and styles, and the CSP."""

from __future__ import annotations

import base64
import hashlib
from functools import cache
from importlib import resources

from kg.errors import KGError

VIS_VERSION = "9.1.2"  # the copy pyvis 0.3.2 ships under pyvis/lib/


def _read(package: str, name: str, hint: str) -> str:
    try:
        text = (resources.files(package) / name).read_text(encoding="utf-8")
    except (FileNotFoundError, ModuleNotFoundError) as exc:
        raise KGError(f"cannot read the view asset {package}/{name}: {hint}") from exc
    # These are pasted between <script> or <style> tags; a closing tag inside would end the block early.
    if "</script" in text.lower() or "</style" in text.lower():
        raise KGError(f"the view asset {package}/{name} contains a closing tag and cannot be inlined")
    return text


@cache
def vis_js() -> str:
    return _read("pyvis", f"lib/vis-{VIS_VERSION}/vis-network.min.js", "install pyvis==0.3.2")


@cache
def vis_css() -> str:
    return _read("pyvis", f"lib/vis-{VIS_VERSION}/vis-network.css", "install pyvis==0.3.2")


@cache
def app_js() -> str:
    return _read("viz", "app.js", "reinstall kg (`pip install -e .`)")


@cache
def app_css() -> str:
    return _read("viz", "app.css", "reinstall kg (`pip install -e .`)")


@cache
def page_template() -> str:
    return (resources.files("viz") / "template.html").read_text(encoding="utf-8")


def _sha256(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


@cache
def content_security_policy() -> str:
    """The policy every view is sent with: nothing remote, and only our two inline scripts, by hash.

    Hashes rather than 'unsafe-inline' mean that even markup which escaped escaping could run no script
    and no inline event handler.
    """
    return _policy(vis_js(), charts_js(), app_js())


def _policy(*scripts: str) -> str:
    hashes = " ".join(_sha256(s) for s in scripts)
    return ("default-src 'none'; "
            f"script-src {hashes}; "
            "style-src 'unsafe-inline'; "
            "img-src data:; "
            "font-src 'none'; "
            "connect-src 'none'; "
            "base-uri 'none'; "
            "form-action 'none'")


# -- the explore pages (trends, landscapes) and the charts the entity view shares with them -------------------
@cache
def charts_js() -> str:
    return _own("charts.js")


@cache
def explore_js() -> str:
    return _own("explore.js")


@cache
def explore_css() -> str:
    return _own("explore.css")


def _own(name: str) -> str:
    return _read("viz", name, "reinstall kg (`pip install -e .`)")


@cache
def explore_template() -> str:
    return (resources.files("viz") / "explore.html").read_text(encoding="utf-8")


@cache
def explore_content_security_policy() -> str:
    """As ``content_security_policy``, for the pages that run only the charts and the explore script."""
    return _policy(charts_js(), explore_js())
