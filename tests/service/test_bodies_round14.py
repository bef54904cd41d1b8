"""Request bodies the gate refuses, round 14: the 400 says what was wrong without echoing the body.

- A whole number of 100,000 digits was sent back whole in its 400 (up to --max-body, 1 MiB, of
  echo in a message meant for a log line). It is shown by its first 20 digits and its length.
- A body that starts with a UTF-8 byte order mark got Python's own advice ("decode using
  utf-8-sig"), words of the reader's internals. RFC 8259 (8.1) forbids a sender to add one; the
  400 now says that is what was wrong.
"""

from __future__ import annotations

import pytest

from verifier.service.bodies import BadRequest, read_json

ASKED = b'{"principal": "alice", "action": "schedule", "resource": "a100-n0/gpu0", "context": {"n": %s}}'


def test_a_huge_number_is_named_by_its_length_not_echoed() -> None:
    with pytest.raises(BadRequest) as err:
        read_json(ASKED % (b"9" * 100_000))
    # 20 nines, then the count: 100,000 digits.
    assert err.value.message == (
        "99999999999999999999... (a number of 100,000 digits) does not fit in 64 bits (a Cedar Long); "
        "expected a whole number in 64 bits"
    )


def test_a_number_just_past_64_bits_is_still_shown_whole() -> None:
    # 2**63 = 9223372036854775808, one past the largest Long: 19 digits, shown as written.
    with pytest.raises(BadRequest) as err:
        read_json(ASKED % b"9223372036854775808")
    assert err.value.message.startswith("9223372036854775808 does not fit in 64 bits")


def test_a_byte_order_mark_is_named() -> None:
    with pytest.raises(BadRequest) as err:
        read_json(b"\xef\xbb\xbf" + ASKED % b"1")
    assert err.value.message == ("the request body starts with a UTF-8 byte order mark; expected JSON text without one")
    assert read_json(ASKED % b"1") == {
        "principal": "alice",
        "action": "schedule",
        "resource": "a100-n0/gpu0",
        "context": {"n": 1},
    }
