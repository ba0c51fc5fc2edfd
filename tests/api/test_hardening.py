"""Small holes an attacker found: a guessable token, the token in the access log, ids with '/' in the views,
a path the schema accepts but the server refused, and a literal of 10,000 zeros."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient

from api.middleware import RedactTokens
from api.settings import MIN_TOKEN_CHARS, Settings
from kg.errors import InputError

DOI = "10.1000/xyz.123"  # one of the papers tests/api/conftest.py adds to the seeds

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "s3cret-Token_0123456789"


@pytest.mark.parametrize("token", ["x", "a" * (MIN_TOKEN_CHARS - 1)])
def test_a_short_token_is_refused_off_loopback(token: str) -> None:
    with pytest.raises(InputError, match=f"at least {MIN_TOKEN_CHARS} characters"):
        Settings(host="0.0.0.0", token=token)
    assert Settings(host="127.0.0.1", token=token).token == token  # loopback: any token is the user's choice
    assert Settings(host="0.0.0.0", token="a" * MIN_TOKEN_CHARS).host == "0.0.0.0"


def test_the_access_log_never_holds_the_token() -> None:
    # uvicorn's access log record: the path with its query is an argument.
    record = logging.LogRecord("uvicorn.access", logging.INFO, __file__, 1, '%s - "%s %s HTTP/%s" %d',
                               ("127.0.0.1:5", "GET", f"/view?top=5&token={TOKEN}&x=1", "1.1", 200), None)
    assert RedactTokens().filter(record)
    assert record.getMessage() == '127.0.0.1:5 - "GET /view?top=5&token=[redacted]&x=1 HTTP/1.1" 200'


@pytest.mark.slow
def test_kg_serve_logs_view_requests_without_the_token(store_dir: Path) -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "kg", "serve", "--store-dir", str(store_dir), "--port", str(port),
                             "--log-level", "info", "--cypher-workers", "0"], cwd=ROOT,
                            env={**os.environ, "KG_API_TOKEN": TOKEN}, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                r = httpx.get(f"http://127.0.0.1:{port}/view", params={"token": TOKEN, "top": 3}, timeout=30)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline and proc.poll() is None
                time.sleep(0.2)
        assert r.status_code == 200
    finally:
        proc.terminate()
        out = proc.communicate(timeout=30)[0].decode()
    assert "GET /view?token=[redacted]&top=3" in out, out
    assert TOKEN not in out


def test_views_open_papers_whose_ids_hold_slashes(client: TestClient) -> None:
    doi = DOI
    r = client.get(f"/view/paper/{doi}")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    # A doubled or trailing slash is a different id, not found: never a redirect to some other paper.
    for url in (f"/view/paper/{doi}//", f"/view/paper/{doi}/", f"/view/paper/{doi.replace('/', '//')}"):
        r = client.get(url, follow_redirects=False)
        assert r.status_code == 404, (url, r.status_code, r.headers.get("location"))


@pytest.mark.parametrize("path", ["/entities/%C2%85", "/papers/%C2%85", "/entities/%20", "/view/paper/%C2%85"])
def test_a_segment_the_schema_accepts_is_looked_up_not_refused(client: TestClient, path: str) -> None:
    r = client.get(path)
    assert r.status_code == 404, r.text
    assert r.json()["error"] == "NotFoundError"
    spec = client.get("/openapi.json").json()
    for p in spec["paths"]["/entities/{entity_ref}"]["get"]["parameters"]:
        assert "pattern" not in p["schema"]


def test_leading_zeros_do_not_make_a_literal_too_large(client: TestClient) -> None:
    r = client.post("/cypher", json={"query": "RETURN " + "0" * 9_980 + " AS zero"})
    assert r.status_code == 200 and r.json()["rows"] == [[0]]
    r = client.post("/cypher", json={"query": "RETURN 0" + "0" * 30 + "12 AS twelve"})
    assert r.json()["rows"] == [[12]]
    r = client.post("/cypher", json={"query": "RETURN 123456789012345678901"})
    assert r.status_code == 400 and "integer literal too large" in r.json()["detail"]
