"""Request bodies read and checked before anything is decided: a malformed one is a 4xx, never a decision.

Each problem is one sentence saying what was wrong and what was expected, with the place in
the body (`requests[3].context`) where there is one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from verifier.authorization.evaluate import ACTIONS
from verifier.core.exact_json import InexactJSON, loads_exact
from verifier.core.limits import INT64_MAX, INT64_MIN, current_limits

AUTHORIZE_KEYS = ("principal", "action", "resource", "context")
UID_EXTRA = 32
"""Characters a `Type::"id"` uid adds to its id (the longest entity type and `::""`), over id_length."""
LOGGED_CONTEXT = 4096
"""The most characters of a request context's JSON text the decision log keeps (a real context, such
as `{"incident":true}`, is tens of characters)."""


class BadRequest(ValueError):
    """A request the service will not decide: HTTP `status` with `message`."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


@dataclass(frozen=True)
class AuthorizeRequest:
    principal: str
    action: str
    resource: str
    context: dict[str, object] = field(default_factory=dict)

    def to_log(self) -> dict[str, object]:
        """The request as the decision log keeps it: a context whose JSON text is over
        LOGGED_CONTEXT characters is kept as its first LOGGED_CONTEXT and its length
        (`context_cut`), not whole: ids are bounded (id_length), but a context could fill a body
        (--max-body, 1 MiB) and was logged whole, each such request a megabyte of the rotation.
        """
        logged: dict[str, object] = {"principal": self.principal, "action": self.action, "resource": self.resource}
        if not self.context:
            logged["context"] = self.context
            return logged
        text = json.dumps(self.context, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        if len(text) <= LOGGED_CONTEXT:
            logged["context"] = self.context
        else:
            logged["context_cut"] = f"{text[:LOGGED_CONTEXT]}... ({len(text):,} characters of JSON)"
        return logged


def _long(digits: str) -> int:
    value = int(digits) if len(digits) <= 20 else None
    if value is None or not INT64_MIN <= value <= INT64_MAX:
        # A number of a million digits was sent back whole in the 400 (a body's worth of echo).
        shown = digits if len(digits) <= 40 else f"{digits[:20]}... (a number of {len(digits):,} digits)"
        raise BadRequest(f"{shown} does not fit in 64 bits (a Cedar Long); expected a whole number in 64 bits")
    return value


def read_json(body: bytes) -> object:
    """The JSON document of a body (BadRequest when it is not one exactly: bad UTF-8, a repeated key, NaN)."""
    if not body.strip():
        raise BadRequest("the request body is empty; expected a JSON object")
    if body.startswith(b"\xef\xbb\xbf"):
        raise BadRequest("the request body starts with a UTF-8 byte order mark; expected JSON text without one")
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as err:
        raise BadRequest(f"the request body is not UTF-8 (byte {err.start}); expected JSON text") from None
    try:
        return loads_exact(text, parse_int=_long)
    except json.JSONDecodeError as err:
        raise BadRequest(f"the request body is not JSON: {err.msg} at line {err.lineno} column {err.colno}") from None
    except InexactJSON as err:
        raise BadRequest(f"the request body: {err}") from None
    except RecursionError:
        raise BadRequest("the request body is nested too deeply to be read; expected a flat JSON object") from None


def authorize_request(doc: object, where: str = "the request") -> AuthorizeRequest:
    """One authorize request from its JSON object (BadRequest naming the field that is wrong)."""
    if not isinstance(doc, dict):
        raise BadRequest(f"{where} is a JSON {_kind(doc)}; expected an object with principal, action and resource")
    unknown = sorted(k for k in doc if k not in AUTHORIZE_KEYS)
    if unknown:
        raise BadRequest(f"{where} has unknown field {unknown[0]!r}; expected only {', '.join(AUTHORIZE_KEYS)}")
    values: dict[str, str] = {}
    for key in ("principal", "action", "resource"):
        value = doc.get(key)
        if value is None:
            raise BadRequest(f"{where} has no {key!r}; expected a string")
        if not isinstance(value, str) or not value:
            raise BadRequest(f"{where}.{key} is a {_kind(value)}; expected a non-empty string")
        longest = current_limits().id_length + UID_EXTRA
        if len(value) > longest:
            # No principal, object or action is longer (the loaders refuse an id past id_length): a
            # megabyte principal was decided (DENY) and kept whole in the decision log, one such
            # request a megabyte of the log's rotation, pushing real decisions out of it. Not echoed.
            raise BadRequest(
                f"{where}.{key} is {len(value):,} characters long; expected an id of at most "
                f'{longest - UID_EXTRA:,} characters (id_length), or its Type::"id" uid'
            )
        values[key] = value
    if values["action"] not in ACTIONS:
        raise BadRequest(f"{where}.action {values['action']!r} is not an action; expected one of {', '.join(ACTIONS)}")
    context = doc.get("context", {})
    if not isinstance(context, dict):
        raise BadRequest(f"{where}.context is a JSON {_kind(context)}; expected an object")
    return AuthorizeRequest(values["principal"], values["action"], values["resource"], context)


def batch_requests(doc: object, max_batch: int) -> list[AuthorizeRequest]:
    """The requests of a batch body `{"requests": [...]}`, at most `max_batch` of them."""
    if not isinstance(doc, dict) or set(doc) != {"requests"}:
        raise BadRequest('the batch is not {"requests": [...]}; expected an object with one field, requests')
    items = doc["requests"]
    if not isinstance(items, list) or not items:
        raise BadRequest("requests is not a non-empty list; expected a list of authorize requests")
    if len(items) > max_batch:
        raise BadRequest(f"the batch holds {len(items)} requests; expected at most {max_batch} (--max-batch)", 413)
    return [authorize_request(item, f"requests[{i}]") for i, item in enumerate(items)]


def _kind(value: object) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "list"
    if isinstance(value, dict):
        return "object"
    return "null"


LIMIT_DIGITS = 9
"""Digits of `?limit=`: a billion placements is more than any fleet has (and a longer number is no count)."""


def admit_limit(values: list[str], default: int) -> int:
    """The `limit` query parameter of an admit (`values`: each one given), or `default` without one.

    A whole number of placements per job, 0 for all; anything else is a BadRequest (a scheduler
    that asked for 5 and got 16,384 would not notice until its memory did).
    """
    if not values:
        return default
    if len(values) > 1:
        raise BadRequest(f"limit is given {len(values)} times; expected it once")
    (text,) = values
    if not (text.isascii() and text.isdigit() and len(text) <= LIMIT_DIGITS):
        raise BadRequest(f"limit {text!r} is not a count; expected a whole number of placements per job (0: all)")
    return int(text)
