"""The command line's list of observation formats is the readers' list, and importing it reads no reader."""

from __future__ import annotations

import subprocess
import sys

from verifier.sources.observed.identity import KEYS
from verifier.sources.observed.names import FORMATS, MATCH_KEYS
from verifier.sources.observed.sniff import READERS


def test_every_reader_is_offered_and_nothing_else() -> None:
    assert tuple(sorted(READERS)) == FORMATS


def test_the_match_keys_are_identity_s() -> None:
    assert MATCH_KEYS == KEYS


def test_verify_options_import_no_reader() -> None:
    # A verify without --observed must not pay for the readers (or prometheus_client's parser).
    script = (
        "import sys, verifier.cli.verify_commands\n"
        "print(sorted(m for m in sys.modules if m.startswith(('verifier.sources.observed.', 'prometheus_client'))))"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120)
    assert done.stdout.strip() == "['verifier.sources.observed.names']"
