"""verifier.cli.output.emit writes a report as click.echo would: terminal codes stripped when
stdout is not a terminal (CliRunner's is not), every other text written as it is, whole.
"""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from verifier.cli import output


def _emitted(monkeypatch: pytest.MonkeyPatch, text: str) -> str:
    monkeypatch.setattr(output, "render", lambda report, fmt: text)

    @click.command()
    def show() -> None:
        output.emit(object(), "text")

    result = CliRunner().invoke(show, [])
    assert result.exit_code == 0, result.output
    return result.output


def test_text_without_escapes_is_written_as_it_is(monkeypatch: pytest.MonkeyPatch) -> None:
    # No escape character: nothing to strip; non-ASCII text, tabs and a missing final newline kept.
    text = '{\n  "rack": "r\u00e9seau/\u0394",\n\t"n": 1\n}'
    assert _emitted(monkeypatch, text) == text


def test_terminal_codes_are_stripped_off_a_non_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    # "\x1b[31m" and "\x1b[0m" are colour codes click.echo removes when stdout is no terminal:
    # what is left is the plain text between them.
    assert _emitted(monkeypatch, "\x1b[31mred\x1b[0m and plain\n") == "red and plain\n"
