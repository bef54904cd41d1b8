"""The shipped rule pack, parsed and checked when topolog is released, read back as plain data.

Every user of a release parses and checks the same rule files: about 0.4 s of a first `verify`
with no cache (the parser, the program checks, stratifying with the graph library), and a CI job
that starts fresh pays it every time. `python -m verifier.engine.compile_pack` writes the checked
program, its strata and its checks' `@needs` queries to `shipped_program.json` beside this module
(JSON: reading it runs nothing it names, unlike the pickles of the per-user cache), and it ships
inside the package like the grammar.

The data is used only when a run loads exactly the shipped files and they are, byte for byte, the
files it was compiled from, read by the same parsing code: the digest below covers each rule
file's name and bytes and this package's parsing code, worked out at compile time and again at
load. A pack edited in place, a user's own rules, or a topolog whose parser changed without the
data being compiled again parse the files as before (tests/engine/test_shipped_program.py fails
in CI when the committed data is not current).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path

from verifier.core.gc_pause import collector_paused
from verifier.core.resources import display_path, package_dir, package_file, shipped_rules_dir
from verifier.engine.ast import Program
from verifier.engine.program_cache import PARSING_CODE
from verifier.engine.program_data import FORMAT, decode_program

DATA_NAME = "shipped_program.json"
CODE = (*PARSING_CODE, "program_data.py")
"""This package's files whose change can change the data a rule pack compiles to."""


def pack_digest(files: Sequence[tuple[str, bytes]]) -> str:
    """The digest of rule `files` ((name relative to the pack, posix), bytes), in load order, and of
    the code that parses and checks them.
    """
    digest = hashlib.sha256(f"topolog shipped program {FORMAT}\0".encode())
    code = package_dir("verifier.engine")
    for name in CODE:
        data = code.joinpath(name).read_bytes()
        digest.update(f"{name}\0{len(data)}\0".encode() + data)
    for name, data in files:
        digest.update(f"{name}\0{len(data)}\0".encode() + data)
    return digest.hexdigest()


def compiled_shipped(files: Sequence[tuple[str, bytes]]) -> Program | None:
    """The compiled shipped program when `files` ((name as the run names it, bytes), in load order)
    are exactly the shipped files it was compiled from; None otherwise (parse them).
    """
    text = _data_bytes()
    if text is None:
        return None
    # Forty thousand syntax nodes and the lists they are read from, and no reference cycle: the
    # cyclic collector, where the caller has it on (the console script has not), would walk the growing
    # heap several times meanwhile: more than half the time.
    with collector_paused():
        return _compiled(text, files)


def _compiled(text: bytes, files: Sequence[tuple[str, bytes]]) -> Program | None:
    """compiled_shipped's answer from the compiled data's bytes `text`."""
    try:
        data = json.loads(text)
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            return None
        names: list[str] = data["files"]
        if len(names) != len(files):
            return None
        # Named from the working directory as reports name them, or by the absolute path (a library call).
        shipped = shipped_rules_dir()
        if not any(
            all(str(root / rel) == name for rel, (name, _) in zip(names, files, strict=True))
            for root in (display_path(shipped), shipped)
        ):
            return None
        if pack_digest([(rel, body) for rel, (_, body) in zip(names, files, strict=True)]) != data["digest"]:
            return None
        return decode_program(data["program"], [name for name, _ in files])
    except (ValueError, KeyError, IndexError, TypeError):  # a damaged install's file: parse the pack instead
        return None


def _data_bytes() -> bytes | None:
    """The compiled data's bytes as shipped; None when there are none (parse)."""
    try:
        return package_file("verifier.engine", DATA_NAME).read_bytes()
    except OSError:  # not compiled (a checkout before its first compile)
        return None


def relative_names(files: Sequence[Path], root: Path) -> list[str]:
    """`files` (under `root`) by their posix names relative to it, as the data names them."""
    return [f.relative_to(root).as_posix() for f in files]
