"""Text that came from an input, made safe for the format it is printed in: one function per format.

An id, a label, a waiver reason or a path (a folder may be named `a\\n::error file=x::forged`)
may hold a newline or a control character. Printed as is, it would start a line that GitHub
Actions runs as a workflow command, add a report line that was never a finding, or send
the terminal an escape sequence. Every value from outside goes through the function of the
format it is printed in:

- text (terminal, logs, stderr): `one_line`, each control or line-breaking character as a
  visible `\\xNN` / `\\uNNNN` (defined in verifier.core.escape, so the stages below use it too);
- github (workflow commands): `github_data` for a message, `github_property` for `file=` and
  `title=`, escaped as the runner unescapes them (`%0A`), other controls visible;
- markdown: `markdown_cell`, markup escaped, `<br>` for a line break, controls visible;
- junit (XML 1.0): `xml_safe`, each character XML 1.0 forbids written visibly (ElementTree
  escapes the rest);
- json and sarif: json.dumps escapes every control character itself;
- html: `html.escape`, and JSON inside the page, whose script builds the DOM with textContent.

So a path prints in text as Python would spell it inside quotes, for the characters that
matter: `a\\x0a::error file=x::forged` is one line naming a folder whose name holds a newline.
"""

from __future__ import annotations

import functools
import re

from verifier.core.escape import one_line, visible

__all__ = ["github_data", "github_property", "markdown_cell", "one_line", "xml_safe"]

# C0 controls but tab and the line breaks each format encodes itself, and DEL.
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
# C1 controls (NEL among them) and the Unicode line and paragraph separators, where a viewer may break a line.
_WIDE = re.compile("[\x80-\x9f\u2028\u2029]")


@functools.cache
def _not_xml_char() -> re.Pattern[str]:
    """Everything outside XML 1.0's Char production: C0 controls but tab, LF and CR; lone
    surrogates; U+FFFE and U+FFFF. Compiled on first use: the class spans most of Unicode, and
    only a JUnit report needs it.
    """
    return re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


# CommonMark lets any ASCII punctuation be backslash-escaped; these are the ones that can
# start markup inside a table cell ('$' is GitHub's math). Without '[' no link or image
# forms, so '(' and '!' may stay. '&', '<' and '>' become entities: no tag, no entity.
_MARKUP = re.compile(r"([\\`*_\[\]|~$])")


def github_data(text: str) -> str:
    """GitHub workflow commands: `text` as a command's message, escaped as the runner unescapes it
    (actions/toolkit command.ts), so a line break cannot end the command early or start another.
    """
    # '%' first, so that the escapes added after it are not escaped again.
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    # Other control characters (ESC starts the colour codes the log viewer obeys) are shown, not sent.
    return _WIDE.sub(visible, _CONTROL.sub(visible, text))


def github_property(text: str) -> str:
    """GitHub workflow commands: `text` as a property value (`file=`, `title=`)."""
    # Properties end at ',' and the property list at '::', so those are escaped as well.
    return github_data(text).replace(":", "%3A").replace(",", "%2C")


def markdown_cell(text: str) -> str:
    """Markdown: `text` as the literal content of one GFM table cell (or a paragraph of one line)."""
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = _MARKUP.sub(r"\\\1", text)
    # The backslash of a visible escape is itself escaped, so Markdown shows it.
    text = _WIDE.sub(lambda m: "\\" + visible(m), _CONTROL.sub(lambda m: "\\" + visible(m), text))
    return re.sub(r"\r\n|\r|\n", "<br>", text)


def xml_safe(text: str) -> str:
    """JUnit XML: `text` with each character XML 1.0 forbids written out as a visible escape (\\x01, \\uffff)."""
    return _not_xml_char().sub(visible, text)
