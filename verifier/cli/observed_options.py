"""--observed, --observed-format, --observed-match, --observed-now: observations for verify, place and reconcile."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import click

from verifier.sources.observed.names import FORMATS, MATCH_KEYS

if TYPE_CHECKING:
    from verifier.session.observed_input import ObservedRun

_F = TypeVar("_F", bound=Callable[..., object])
DEFAULT_MATCH = ",".join(MATCH_KEYS)
"""--observed-match when not given: every identity key, in MATCH_KEYS' order."""


def observed_options(f: _F) -> _F:
    """The four observation flags; the command receives observed, observed_format, observed_match, observed_now."""
    f = click.option(
        "--observed-now",
        "observed_now",
        metavar="TIME",
        default=None,
        help="Judge the observations' age at this time (ISO 8601, e.g. 2026-12-06T09:00:00Z) instead of now: "
        "a file older than threshold observed_max_age_s is stale (OBS007) and not trusted.",
    )(f)
    f = click.option(
        "--observed-match",
        "observed_match",
        metavar="KEYS",
        default=DEFAULT_MATCH,
        show_default=True,
        help="Identity keys an observed GPU is matched to a declared one by, in order (the first key both "
        "state decides): uuid, serial, pci_bus_id (the GPU's labels) and index (gpu{i}). docs/observed.md.",
    )(f)
    f = click.option(
        "--observed-format",
        "observed_format",
        type=click.Choice(FORMATS),
        default=None,
        help="The format of every observation file (default: recognised from each file's content).",
    )(f)
    f = click.option(
        "--observed",
        "observed",
        type=click.Path(path_type=Path),
        multiple=True,
        metavar="PATH",
        help="Observations of the hardware (repeatable): a folder with a sub-folder per host (DIR/dgx03/...) "
        "or files named HOST.anything, from nvidia-smi -q -x, nvidia-smi nvlink -s/-e, dcgm-exporter and more "
        "(docs/observed.md). Checked by rules/observed/ (OBS...).",
    )(f)
    return f


def observed_run_of(
    observed: tuple[Path, ...], observed_format: str | None, observed_match: str, observed_now: str | None
) -> ObservedRun | None:
    """The observations the flags name, or None without --observed (TopologError on a bad --observed-match/-now)."""
    if not observed:
        if observed_format is not None or observed_now is not None:
            raise click.UsageError("--observed-format and --observed-now need --observed")
        if observed_match != DEFAULT_MATCH:  # set in a config file, say: still refused when wrong
            from verifier.sources.observed.identity import MatchSettings

            MatchSettings.parse(observed_match)
        return None
    # Imported here, not at the top: the readers and their facts cost every verify ~30 ms of start-up,
    # though only a run with --observed needs them.
    from verifier.facts.observed import ObservedSettings
    from verifier.session.observed_input import ObservedRun, parse_time
    from verifier.sources.observed.identity import MatchSettings

    settings = ObservedSettings(
        match=MatchSettings.parse(observed_match),
        now=parse_time(observed_now) if observed_now is not None else None,
    )
    return ObservedRun(tuple(observed), observed_format, settings)
