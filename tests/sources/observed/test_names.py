"""The command line's list of observation formats is the readers' list, and importing it reads no reader."""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import fields
from pathlib import Path

from verifier.sources.observed import identity
from verifier.sources.observed.identity import KEYS
from verifier.sources.observed.model import GpuObservation
from verifier.sources.observed.names import FORMATS, MATCH_KEYS
from verifier.sources.observed.sniff import READERS

ROOT = Path(__file__).resolve().parents[3]


def test_every_reader_is_offered_and_nothing_else() -> None:
    assert tuple(sorted(READERS)) == FORMATS


def test_the_match_keys_are_identity_s() -> None:
    # identity.KEYS is names.MATCH_KEYS itself (an equality check could not fail); what can drift is the
    # order identity's docstring documents (uuid, serial, pci_bus_id, index) and the fields an
    # observed GPU must carry for each key to be compared.
    assert KEYS is MATCH_KEYS
    assert tuple(re.findall(r"^- `(\w+)`:", identity.__doc__ or "", re.MULTILINE)) == MATCH_KEYS
    assert set(MATCH_KEYS) <= {f.name for f in fields(GpuObservation)}


def test_a_verify_without_observations_imports_no_reader() -> None:
    # A verify without --observed must not pay for the readers (or prometheus_client's parser).
    script = (
        "import sys\n"
        "from verifier.cli.main import run\n"
        "sys.argv = ['topolog', '--quiet', 'verify', 'inventories/edge-soc.yaml']\n"
        "try:\n"
        "    run()\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(sorted(m for m in sys.modules if m.startswith(('verifier.sources.observed.', 'prometheus_client'))),"
        " file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=False, timeout=300
    )
    assert done.stderr.strip().splitlines()[-1] == "['verifier.sources.observed.names']", done.stderr
