"""The gate over a real loopback socket, sent what no well-behaved client sends.

Every answer is a JSON error that says what was wrong and what was expected: an unknown path or
method (Starlette's plain-text "Not Found" before), a number JSON can write but a float cannot hold
(1e400 had become infinity, and the answer echoing it could not be written: "a bug in topolog"),
and a string holding half a surrogate pair (the same). And the log stays quiet while nothing the
gate reads changes (watchfiles' "1 change detected" lines, written into a watched folder, were
themselves changes: a line a second, for ever).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from service.serve_helpers import copy_inputs, reload_failed, serving

ENDPOINTS = "/v1/authorize, /v1/authorize/batch, /v1/admit, /v1/admission, /v1/reload, /v1/revision"


def test_hostile_requests_get_json_errors_and_the_log_stays_quiet(tmp_path: Path) -> None:
    copy_inputs(tmp_path)
    with serving(tmp_path) as server, server.client() as c:
        # No route: the answer names the path asked for and every path there is.
        r = c.get("/v1/nope")
        assert r.status_code == 404
        assert r.json() == {
            "error": f"no endpoint '/v1/nope'; expected one of {ENDPOINTS}, /healthz, /readyz, /metrics",
            "status": 404,
        }
        # /v1/authorize is a POST route only (Starlette adds nothing to it; GET routes also take HEAD).
        r = c.get("/v1/authorize")
        assert (r.status_code, r.json()["error"]) == (405, "GET is not taken by /v1/authorize; expected POST")
        r = c.request("DELETE", "/v1/revision")
        assert r.status_code == 405 and r.json()["error"] == "DELETE is not taken by /v1/revision; expected GET, HEAD"

        asked = b'{"principal": "alice", "action": "schedule", "resource": "a100-n0/gpu0", "context": {"n": %s}}'
        # 1e400 is over 1.8e308, the largest double: json would read it as infinity.
        r = c.post("/v1/authorize", content=asked % b"1e400")
        assert r.status_code == 400
        assert r.json()["error"] == (
            "the request body: 1e400 is past the largest number a float holds (about 1.8e308); expected a finite number"
        )
        # \ud800 opens a surrogate pair and nothing closes it: no character, no UTF-8 for it.
        r = c.post("/v1/authorize", content=asked % rb'"a\ud800"')
        assert r.status_code == 400
        assert r.json()["error"] == (
            "the request body: the string 'a\\ud800' holds \\ud800, half of a surrogate pair; expected whole characters"
        )
        # A whole pair (U+1F600) is one character: read, and decided (the context is off the schema: denied).
        r = c.post("/v1/authorize", content=asked % rb'"\ud83d\ude00"')
        assert r.status_code == 200 and r.json()["decision"] == "DENY"

        # A file the gate does not read, written beside the inventory (where serve.log is too), then
        # a policy that does not parse: the refused reload is the sync point, and the log holds it
        # and no line about the unrelated file.
        (tmp_path / "notes.txt").write_text("unrelated\n")
        (tmp_path / "policies" / "broken.cedar").write_text("forbid (principal\n")
        reload_failed(server)
        log = server.stderr()
        assert "broken.cedar" in log
        assert "change detected" not in log and "changes detected" not in log


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('{"n": -1e400}', "-1e400 is past the largest number a float holds"),
        ('{"\\udc00": 1}', "the string '\\udc00' holds \\udc00, half of a surrogate pair"),
        ('{"n": ["x", {"y": "\\ud800"}]}', "the string '\\ud800' holds \\ud800"),
    ],
)
def test_read_json_refuses_what_cannot_be_read_exactly(text: str, says: str) -> None:
    from verifier.service.bodies import BadRequest, read_json

    with pytest.raises(BadRequest) as caught:
        read_json(text.encode())
    assert says in caught.value.message and caught.value.status == 400


TOKEN = "s3cret-token-for-the-gate-0123456789"


def test_a_token_file_swapped_for_a_fifo_refuses_the_reload_and_reloads_go_on(tmp_path: Path) -> None:
    # The token file is read again on every reload. Swapped for a fifo with no writer, it had the
    # reload wait for ever, and every reload after it (one reload thread): the gate kept its old
    # policies whatever changed. Now a fifo is refused as no regular file (422, named; R-HI review:
    # read as a pipe, one held open by a writer still waited), the old token still guards, and once
    # the file is back a policy change reloads.
    copy_inputs(tmp_path)
    token = tmp_path / "token"
    token.write_text(TOKEN + "\n")
    with serving(tmp_path, "--token-file", str(token), token=TOKEN) as server:
        before = server.revision()["revision"]
        token.unlink()
        os.mkfifo(token)
        with server.client() as c:
            r = c.post("/v1/reload")
        assert r.status_code == 422
        # (A fifo is refused as one: tests/service/test_serve_token_review58.py.)
        assert r.json()["errors"][0] == f"{token}: cannot read the token file: it is a pipe; expected a regular file"
        assert server.get("/healthz").status_code == 200
        with server.client(token="") as c:
            assert c.get("/v1/revision").status_code == 401
        token.unlink()
        token.write_text(TOKEN + "\n")
        (tmp_path / "policies" / "extra.cedar").write_text(
            '@id("hostile-test-forbid")\nforbid (principal, action, resource) when { false };\n'
        )
        with server.client() as c:
            r = c.post("/v1/reload")
        assert r.status_code == 200 and r.json()["revision"] != before
