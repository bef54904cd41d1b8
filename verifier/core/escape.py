"""The text format's escape, below every stage that may print or store a path.

verifier.reports.safe_text holds one escaping function per output format; this is the text
format's (`one_line`), kept here so that the stages below the output layer (an importer's
`source` label, a proof's places) can use the same one. Import it from safe_text elsewhere.
"""

from __future__ import annotations

import re

# C0 and C1 controls, DEL, and the Unicode line and paragraph separators.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def visible(match: re.Match[str]) -> str:
    """One character as a visible escape: `\\xNN` below U+0100, else `\\uNNNN`."""
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def one_line(text: str) -> str:
    """Text format: `text` with every control or line-breaking character written as `\\xNN` / `\\uNNNN`."""
    return _UNSAFE.sub(visible, text)
