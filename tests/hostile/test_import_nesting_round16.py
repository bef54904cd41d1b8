"""`topolog import slurm` of a topology.yaml nested past the YAML composer's recursion (round 16): it was
"internal error (RecursionError)"; now refused at the file's line 1, as the other importers refuse deep
JSON and XML by nesting_depth.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.core.errors import TopologError
from verifier.sources.importers import import_files


def test_deep_topology_yaml_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "topology.yaml"
    path.write_text("- " * 3000 + "x\n", encoding="utf-8")
    with pytest.raises(TopologError) as err:
        import_files("slurm", [path])
    (found,) = err.value.diagnostics
    assert found.location.line == 1 and "nested deeper than the parser can follow" in found.message
