"""NODE013 counts sockets, not NUMA domains (review of round 60's NODE013).

`topolog import nccl-xml` writes one `cpu<numaid>` per NUMA domain, labelled `numa`, as NCCL's
dump lists them (verifier/sources/importers/nccl_xml.py). azure-ndv4-topo.xml (the Azure
ND A100 v4 dump of tests/sources/importers/fixtures, source in that folder's README) has four
`<cpu numaid="0".."3">` elements, all AuthenticAMD family 23 model 49 (Zen 2 EPYC): a two-socket
EPYC box split into four NUMA domains, so the import holds cpu0..cpu3 straight in the node.

An engineer who then writes the CPU model on those four CPUs (`model: EPYC-7742`, catalogue
max_sockets 2) has written no CPU too many: NUMA domains of one model are at least one socket
(how many domains a package gives is a BIOS setting: NPS1/2/4), so the node holds at least 1
socket, not more than 2 -> no NODE013. The round's version counted 4 CPUs > 2 and reported all four.

The same import with one of the four written as a Ryzen-9-7950X instead (max_sockets 1): the
domains are of two models, so at least two packages -> 2 sockets > 1 -> NODE013 on that CPU
alone (cpu3); 2 is not above EPYC-7742's 2, so no EPYC is named.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from verifier.cli import main as cli
from verifier.session.verify_run import VerifyRun, verify

DUMP = Path(__file__).resolve().parents[1] / "sources" / "importers" / "fixtures" / "azure-ndv4-topo.xml"


def _imported_with_models(tmp_path: Path, models: dict[str, str]) -> Path:
    out = tmp_path / "imported.yaml"
    result = CliRunner().invoke(cli.main, ["import", "nccl-xml", str(DUMP), "-o", str(out)])
    assert result.exit_code == 0, result.output
    doc: dict[str, Any] = yaml.safe_load(out.read_text(encoding="utf-8"))
    (node,) = doc["objects"]
    cpus = [c for c in node["children"] if c["kind"] == "cpu"]
    # The import's CPUs are the dump's four NUMA domains, each labelled with its number.
    assert sorted((c["name"], c["labels"]["numa"]) for c in cpus) == [
        ("cpu0", "0"),
        ("cpu1", "1"),
        ("cpu2", "2"),
        ("cpu3", "3"),
    ]
    for c in cpus:
        c["model"] = models[c["name"]]
    path = tmp_path / "inv.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


def _node013(path: Path, engine: str) -> set[tuple[str, ...]]:
    report = verify([path], VerifyRun(authorize=False, engine=engine))
    return {r.finding.subjects for r in report.results if r.finding.rule == "NODE013"}


@pytest.mark.parametrize("engine", ["duckdb", "memory"])
def test_nccl_numa_domains_of_a_two_socket_epyc_are_no_excess(engine: str, tmp_path: Path) -> None:
    path = _imported_with_models(tmp_path, {f"cpu{i}": "EPYC-7742" for i in range(4)})
    assert _node013(path, engine) == set()


@pytest.mark.parametrize("engine", ["duckdb", "memory"])
def test_nccl_numa_domains_of_two_models_are_two_sockets(engine: str, tmp_path: Path) -> None:
    models = {"cpu0": "EPYC-7742", "cpu1": "EPYC-7742", "cpu2": "EPYC-7742", "cpu3": "Ryzen-9-7950X"}
    path = _imported_with_models(tmp_path, models)
    assert _node013(path, engine) == {("azure-ndv4-topo/cpu3",)}
