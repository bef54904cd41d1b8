"""The GPUs of each placement profile, read from an evaluation all at once or node by node on demand.

A placement profile (place_profile's columns but the GPU: node, figures, authorization class, tag)
is a node's. Ranking names a profile's GPUs only for the shapes it works out (a handful), the
placements it shows, and the few NVLink domains that hold part of a profile; it needs the profiles
themselves, with how many GPUs each has, for every domain. At 131,072 GPUs reading every GPU's row
(place_profile) was a fifth of ranking, while the profiles with their counts (place_node_profile,
aggregated by the rules from the same rows) are a row per node.

`GpusByProfile` is the mapping profile -> its GPUs, sorted. Given the counts, it reads a node's
GPUs the first time one of that node's profiles is asked for (one query bound to the node), and
every GPU's at once past READ_ALONE nodes or when its values are iterated: the same lists either way.
A profile that holds every GPU of a node alike to one already read (`twins`: same class, same
figures) is named from that node's, with no query: a rack or pod of alike nodes reads one.
Without counts it reads every GPU's at once (a service keeps its profiles past its evaluation).
"""

from __future__ import annotations

from collections.abc import Callable, ItemsView, Iterator, Mapping, Sequence, ValuesView
from operator import itemgetter

from verifier.engine.ast import Program, Row, Value
from verifier.engine.backend import Backend
from verifier.engine.records import Columns

ProfileKey = tuple[str | int, ...]
"""place_profile's columns after the GPU: node, model, hbm_mb, hbm_mbps, fp64, ok, fabric_mbps, class, tag."""

READ_ALONE = 64
"""Nodes whose GPUs are read one query each before every GPU's are read at once."""


class AloneFirst:
    """Reads one query each (a node's GPUs, an NVLink domain's) for the first READ_ALONE keys
    asked, then every key's at once: a few keys cost a few small queries, many cost one read.
    """

    def __init__(self) -> None:
        self.asked = 0

    def alone(self) -> bool:
        """Whether the next key is read alone (and counted), or every key's are read now."""
        if self.asked >= READ_ALONE:
            return False
        self.asked += 1
        return True


def row_getter(columns: Columns, names: Sequence[str]) -> Callable[[Row], tuple[Value, ...]]:
    """The values of `names` of a row, in that order (Columns.pick at C speed, for bulk reads)."""
    positions = [columns.index[n] for n in names]
    if len(positions) == 1:
        only = positions[0]
        return lambda row: (row[only],)
    if not positions:
        return lambda row: ()
    first = positions[0]
    if positions == list(range(first, first + len(positions))):
        # A run of columns: one slice beats picking each (a key per GPU of a fleet is read so).
        run: Callable[[Row], tuple[Value, ...]] = itemgetter(slice(first, first + len(positions)))
        return run
    get: Callable[[Row], tuple[Value, ...]] = itemgetter(*positions)
    return get


def profile_counts(engine: Backend, program: Program, key_columns: Sequence[str]) -> dict[ProfileKey, int]:
    """Every placement profile with its number of GPUs (place_node_profile: a row per profile)."""
    cols = Columns.of(program, "place_node_profile", (*key_columns, "gpus"))
    key_of, at_gpus = row_getter(cols, key_columns), cols.index["gpus"]
    return {key_of(row): int(row[at_gpus]) for row in engine.query("place_node_profile", None, False)}


class GpusByProfile(Mapping[ProfileKey, tuple[str, ...]]):
    """Profile -> its GPUs' ids, sorted (see the module): every profile is a key from the start."""

    def __init__(
        self,
        engine: Backend,
        program: Program,
        key_columns: Sequence[str],
        counts: Mapping[ProfileKey, int] | None = None,
    ) -> None:
        profile = Columns.of(program, "place_profile", ("gpu", "node", *key_columns))
        self._engine = engine
        self._gpu_at, self._node_at = profile.index["gpu"], profile.index["node"]
        self._key_of = row_getter(profile, key_columns)
        self._key_node = list(key_columns).index("node")
        self._lists: dict[ProfileKey, tuple[str, ...]] = {}
        self._every = False
        self._alone = AloneFirst()
        if counts is None:
            self.read_every()
            counts = {key: len(gpus) for key, gpus in self._lists.items()}
        self.counts: Mapping[ProfileKey, int] = counts
        """Each profile's number of GPUs, whether or not they were read."""
        self._twins: Mapping[ProfileKey, int] = {}
        self._twin_read: dict[int, ProfileKey] = {}  # per twin number, a profile of it whose GPUs were read

    def twins(self, twins: Mapping[ProfileKey, int]) -> None:
        """Profiles that hold every GPU of their node, numbered so that two with one number hold the
        same GPUs but for the node's name (nodes of one class, the same figures: Profiles.info's local
        ids). Once one profile of a number is read, the others' GPUs are its GPUs renamed, without a
        query: a rack or pod of alike nodes costs one node's read, not one per node.
        """
        self._twins = twins
        for key in self._lists:
            self._note_twin(key)

    def _note_twin(self, key: ProfileKey) -> None:
        number = self._twins.get(key)
        if number is not None and number not in self._twin_read:
            node = str(key[self._key_node])
            if all(g.startswith(node + "/") for g in self._lists[key]):
                self._twin_read[number] = key

    def _from_twin(self, key: ProfileKey) -> tuple[str, ...] | None:
        """`key`'s GPUs from a read profile of its twin number (twins), or None."""
        number = self._twins.get(key)
        twin = self._twin_read.get(number) if number is not None else None
        if twin is None:
            return None
        cut, node = len(str(twin[self._key_node])), str(key[self._key_node])
        # The twin's GPUs are sorted; the same names under another node's sort the same way.
        gpus = tuple(node + g[cut:] for g in self._lists[twin])
        if len(gpus) != self.counts.get(key):
            return None
        self._lists[key] = gpus
        return gpus

    def read_every(self) -> None:
        """Every GPU's profile read at once (a fleet's rows), if not done yet."""
        if self._every:
            return
        grouped: dict[ProfileKey, list[str]] = {}
        # A node's GPUs mostly come one after another and share a profile: a run of them is added to
        # one list, its key compared (its strings are the same objects) rather than hashed per GPU.
        last: ProfileKey = ()
        held: list[str] = []
        key_of, gpu_at = self._key_of, self._gpu_at
        for row in self._engine.query("place_profile", None, False):
            key = key_of(row)
            if key != last:
                last = key
                held = grouped.setdefault(key, [])
            held.append(str(row[gpu_at]))
        self._lists = {key: tuple(sorted(gpus)) for key, gpus in grouped.items()}
        self._every = True

    def _read_node(self, node: str) -> None:
        """The GPUs of every profile of `node` (one query), or of every node once READ_ALONE were read so."""
        if not self._alone.alone():
            self.read_every()
            return
        grouped: dict[ProfileKey, list[str]] = {}
        key_of, gpu_at = self._key_of, self._gpu_at
        for row in self._engine.query("place_profile", {self._node_at: node}, False):
            grouped.setdefault(key_of(row), []).append(str(row[gpu_at]))
        for key, gpus in grouped.items():
            self._lists[key] = tuple(sorted(gpus))
            self._note_twin(key)

    def __getitem__(self, key: ProfileKey) -> tuple[str, ...]:
        found = self._lists.get(key)
        if found is None and not self._every and key in self.counts:
            found = self._from_twin(key)
            if found is None:
                self._read_node(str(key[self._key_node]))
                found = self._lists.get(key)
        if found is None:
            raise KeyError(key)
        return found

    def __contains__(self, key: object) -> bool:
        return key in self.counts

    def __iter__(self) -> Iterator[ProfileKey]:
        return iter(self.counts)

    def __len__(self) -> int:
        return len(self.counts)

    def values(self) -> ValuesView[tuple[str, ...]]:
        self.read_every()
        return self._lists.values()

    def items(self) -> ItemsView[ProfileKey, tuple[str, ...]]:
        self.read_every()
        return self._lists.items()
