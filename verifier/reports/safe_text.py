"""Text that came from an input, made safe for a line-oriented report.

An id, a label or a waiver reason may hold a newline or a control character. Printed as is,
`reason: ok\n::error file=x::forged` would start a line that GitHub Actions runs as a
workflow command, and any newline adds a report line that was never a finding. Such
characters are written as visible escapes instead, so one finding stays one line.
"""

from __future__ import annotations

import re

# C0 and C1 controls, DEL, and the Unicode line and paragraph separators.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def one_line(text: str) -> str:
    """`text` with every control or line-breaking character written as `\\xNN` / `\\uNNNN`."""
    return _UNSAFE.sub(
        lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100 else f"\\u{ord(m.group()):04x}", text
    )
