"""Compile the shipped rule pack into verifier/engine/shipped_program.json: run after any change to rules/.

    python -m verifier.engine.compile_pack          # writes the file
    python -m verifier.engine.compile_pack --check  # exit 1 when the file is not current

The file is committed: a release carries it (see verifier.engine.shipped_program for why and how
it is trusted), and tests/engine/test_shipped_program.py fails when it lags behind the rules.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from verifier.core.compiled_data import write_or_check
from verifier.core.resources import package_file, shipped_rules_dir
from verifier.engine.loader import load_program
from verifier.engine.program_data import FORMAT, encode_program, prepared
from verifier.engine.rule_pack import shipped_files
from verifier.engine.shared_terms import share_terms
from verifier.engine.shipped_program import DATA_NAME, pack_digest, relative_names


def compiled_text() -> str:
    """The data file's text for the shipped pack as it is on disk now (ProgramError if it does not check)."""
    root = shipped_rules_dir()
    files = shipped_files(root)
    names = relative_names(files, root)
    digest = pack_digest([(name, f.read_bytes()) for name, f in zip(names, files, strict=True)])
    program = prepared(share_terms(load_program(files)))
    data = {
        "format": FORMAT,
        "digest": digest,
        "files": names,
        "program": encode_program(program, [str(f) for f in files]),
    }
    return _dumped(data)


def _dumped(data: dict[str, Any]) -> str:
    """Deterministic JSON with one rule, declaration or term a line, so a rule's change is a small diff."""
    lines = ["{"]
    for i, (key, value) in enumerate(data.items()):
        end = "," if i < len(data) - 1 else ""
        if isinstance(value, dict):
            lines.append(f"{json.dumps(key)}:{_dumped(value)}{end}")
        elif isinstance(value, list) and value:
            items = ",\n".join(json.dumps(item, ensure_ascii=False, separators=(",", ":")) for item in value)
            lines.append(f"{json.dumps(key)}:[\n{items}\n]{end}")
        else:
            lines.append(f"{json.dumps(key)}:{json.dumps(value, separators=(',', ':'))}{end}")
    lines.append("}")
    return "\n".join(lines)


def data_path() -> Path:
    """Where the data file lives in this checkout (the package folder of verifier.engine)."""
    found = package_file("verifier.engine", DATA_NAME)
    return Path(str(found))


def main(argv: list[str]) -> int:
    return write_or_check(argv, data_path(), compiled_text() + "\n", "python -m verifier.engine.compile_pack")


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
