"""--drain, --fail, --fail-link and --scenario: a what-if scenario for `place` and `verify --jobs`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import click

from verifier.sources.scenario import Scenario, scenario_from

_F = TypeVar("_F", bound=Callable[..., object])


def scenario_options(f: _F) -> _F:
    """The four scenario flags; the command receives drain, fail, fail_links and scenario_paths."""
    f = click.option(
        "--scenario",
        "scenario_paths",
        type=click.Path(path_type=Path, dir_okay=False),
        multiple=True,
        help="What-if: a scenario file (kind: Scenario, lists drain, fail, fail_links; docs/placement.md). Repeatable.",
    )(f)
    f = click.option(
        "--fail-link",
        "fail_links",
        multiple=True,
        metavar="LINK",
        help="What-if: the link with this id (its ends joined by '<->', e.g. 'dgx03/gpu2<->dgx03/nvsw1') fails "
        "(state down). Repeatable.",
    )(f)
    f = click.option(
        "--fail",
        "fail",
        multiple=True,
        metavar="ID",
        help="What-if: this device or node fails (state down, and every link at it, except an NVSwitch "
        "chip's where its fabric manager runs nvswitch_failure_mode 1), e.g. dgx01/gpu3 or dgx00/nvsw0. "
        "Repeatable.",
    )(f)
    f = click.option(
        "--drain",
        "drain",
        multiple=True,
        metavar="ID",
        help="What-if: this node (or rack, or GPU) is drained (state drained), e.g. dgx03. Repeatable.",
    )(f)
    return f


def scenario_of(
    drain: tuple[str, ...], fail: tuple[str, ...], fail_links: tuple[str, ...], scenario_paths: tuple[Path, ...]
) -> Scenario:
    """The scenario the flags give (empty: no what-if); TopologError on a bad scenario file."""
    return scenario_from(drain, fail, fail_links, scenario_paths)
