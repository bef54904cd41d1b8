"""Stamped nodes for the engine's tests of deferred symbol batches (verifier.engine.symbol_ids) and
the keys told from blocks: four names a node, the two links between them, and the memory engine's
answers to compare the DuckDB engine's with; lists of names that say which of their slots are read
once or have bases (ReadOnce, Based: as facts.inventory's _NodeNames); and a two-node inventory
stamped from one template (FLEET: two GPUs and an NVSwitch a node, each GPU linked to the switch)
for the lists of names the facts hand the engine.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from verifier.core.stamped_rows import StampBlock
from verifier.engine.ast import Row
from verifier.engine.engines import make_backend
from verifier.engine.parser import parse_program

# n0 and n1, both stamped whole from box: n{0,1}/gpu0, gpu1, nvsw0 and links gpu{0,1}<->nvsw0.
FLEET = """
apiVersion: topolog.dev/v1
templates:
  box:
    kind: node
    children:
      - {name: "gpu{i}", kind: gpu, count: 2}
      - {name: nvsw0, kind: nvswitch}
    links:
      - {a: "gpu{n}", b: nvsw0, kind: nvlink, bandwidth: 450 GB/s, foreach: {n: 0..1}}
objects:
  - {template: box, name: "n{i}", count: 2}
"""


class ReadOnce(list[Sequence[str]]):
    """Names that say from which slot on (`read_once_from`) they are read by their own blocks alone, a
    plan's link ids, as facts.inventory's _NodeNames do; without bases."""

    def __init__(self, names: list[Sequence[str]], read_once_from: int) -> None:
        super().__init__(names)
        self.read_once_from = read_once_from


class Based(ReadOnce):
    """Names with `bases` as well (per node, the sequence its names start with), as facts.inventory's
    _NodeNames: below `read_once_from` a node's names are its base's."""

    def __init__(self, names: list[Sequence[str]], bases: list[Sequence[str]], read_once_from: int) -> None:
        super().__init__(names, read_once_from)
        self.bases = bases


def stamp_names(nodes: int, prefix: str) -> list[Sequence[str]]:
    """Per node n its names by slot: links <prefix><n>/l0 and /l1 (slots 0, 1), GPUs /g0 and /g1 (2, 3)."""
    return [[f"{prefix}{n}/l0", f"{prefix}{n}/l1", f"{prefix}{n}/g0", f"{prefix}{n}/g1"] for n in range(nodes)]


def link_block(names: list[Sequence[str]], mbps: tuple[int, int] = (100, 50)) -> StampBlock:
    """link(id, a, b, mbps) per node: l0 from g0 to g1, l1 from g1 to g0, at `mbps`."""
    return StampBlock(((0, 1), (2, 3), (3, 2), None), (None, None, None, mbps), names)


def memory_answers(
    text: str, relations: Sequence[str], loads: Iterable[tuple[str, Sequence[Row]]]
) -> dict[str, list[Row]]:
    """The memory engine's answers for `relations` of the program `text`, after `loads` in order."""
    memory = make_backend("memory")
    try:
        memory.load(parse_program(text, "t.dl"))
        for relation, rows in loads:
            memory.add_facts(relation, list(rows))
        memory.evaluate()
        return {r: memory.query(r) for r in relations}
    finally:
        memory.close()
