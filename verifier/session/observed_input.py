"""Observations given to a run (`--observed`): read once, turned into facts per inventory."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from verifier.core.errors import SourceLocation, TopologError
from verifier.engine.ast import Row
from verifier.facts.observed import ObservedSettings, observed_facts
from verifier.facts.observed_network import network_facts, sort_key
from verifier.session.inputs import Inputs
from verifier.sources.observed.load import read_observations
from verifier.sources.observed.model import Observations
from verifier.sources.thresholds import load_thresholds


@dataclass(frozen=True)
class ObservedRun:
    """`--observed PATH...`, `--observed-format`, `--observed-match`, `--observed-now`."""

    paths: tuple[Path, ...]
    fmt: str | None = None
    settings: ObservedSettings = field(default_factory=ObservedSettings)

    def read(self) -> Observations:
        """Every file read (TopologError, exit 2, naming each file that cannot be)."""
        return read_observations(list(self.paths), self.fmt)


def observed_rows(observed: ObservedRun, observations: Observations, inputs: Inputs) -> dict[str, list[Row]]:
    """The observed relations' rows for one inventory, judged with its thresholds."""
    thresholds = load_thresholds(inputs.paths, inputs.side.thresholds)
    rows = observed_facts(inputs.inventory, observations, thresholds, observed.settings)
    out = {name: list(r) for name, r in rows.items()}
    for name, more in network_facts(inputs.inventory, observations, observed.settings).items():
        out[name] = sorted({*out.get(name, ()), *more}, key=sort_key) if name in out else list(more)
    return out


def parse_time(text: str, source: str = "--observed-now") -> datetime:
    """An ISO 8601 time (`2024-07-15T13:45:00Z`; without a zone: UTC). TopologError naming `source` otherwise."""
    try:
        when = datetime.fromisoformat(text.strip())
    except ValueError:
        raise TopologError.at(
            SourceLocation(source), f"{text!r} is not a time; expected ISO 8601, e.g. 2024-07-15T13:45:00Z"
        ) from None
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


OUT_OF_SERVICE = ("observed_out_of_service", "observed_gpu_missing", "observed_gpu_of_lost_node")
"""The derived relations naming GPUs their tools say are out of service (rules/observed/lib/out_of_service.dl)."""
LINKS_OUT = ("observed_access_link_out",)
"""The derived relation naming the NVLink access links of GPUs observed out of their domain (OBS002)."""


@dataclass(frozen=True)
class ObservedOutages:
    """What a revision of `topolog serve` marks failed in its inventory, from the observations, sorted."""

    gpus: list[str]
    """GPUs out of service (OBS004) or no longer listed (OBS006): never placed on."""
    links: list[str]
    """NVLink access links of GPUs that left their domain (OBS002): the GPU keeps single-GPU work only."""


def observed_outages(
    observed: ObservedRun, observations: Observations, inputs: Inputs, facts: dict[str, list[Row]] | None = None
) -> ObservedOutages:
    """What the observations take out of service, so that no admit places on it as `place --observed` would not.

    `facts`: the observed rows of `inputs` when the caller has them already (observed_rows), not worked out again.
    """
    from verifier.engine.queries import program_for
    from verifier.session.session import evaluate, load_rules

    wanted = (*OUT_OF_SERVICE, *LINKS_OUT)
    program = program_for(load_rules(), set(wanted))
    if facts is None:
        facts = observed_rows(observed, observations, inputs)
    with evaluate(program, inputs, extra_facts=facts, judge_checks=False, also_read=wanted) as evaluation:

        def first_column(names: tuple[str, ...]) -> list[str]:
            return sorted({str(row[0]) for name in names for row in evaluation.engine.query(name)})

        return ObservedOutages(first_column(OUT_OF_SERVICE), first_column(LINKS_OUT))
