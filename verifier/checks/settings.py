"""What shaped a run besides its inputs: the configuration file, what it set, and the waivers' date.

A `.topolog.yaml` in a parent folder that skips checks, raises `fail-on` or moves `today:`
changes the verdict without a word on the command line. Every report of `verify` therefore
carries these settings, so a reader of any format sees which file shaped it and how.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from verifier.core.errors import SourceLocation
from verifier.core.frozen import Frozen


@dataclass(frozen=True, repr=False, eq=False)
class ConfigSetting(Frozen):
    """One option whose value came from the configuration file (no flag on the command line replaced it)."""

    option: str
    """As typed on the command line: `--fail-on`."""
    value: str
    """The value in effect, as text (a list's items joined by ", ")."""
    where: SourceLocation
    """The file and line that set it."""


@dataclass(frozen=True, repr=False, eq=False)
class ChecksKept(Frozen):
    """A configuration's `check`/`skip` left some checks out of the report."""

    kept: tuple[str, ...]
    """Ids of the checks still reported (waiver checks included), sorted."""
    loaded: int
    """How many checks the rules define (and the waiver checks), before the selection."""
    left_out: tuple[str, ...] = ()
    """Ids of the checks the selection left out, sorted."""


@dataclass(frozen=True, repr=False, eq=False)
class RunSettings(Frozen):
    """The run's configuration, as the reports name it; empty when no file and no waivers shaped it."""

    config_file: str | None = None
    """The configuration file read, as messages name it; None without one (or with --no-config)."""
    config_above: bool = False
    """The file was found in a folder above the working directory, not in it or named by --config."""
    from_config: tuple[ConfigSetting, ...] = ()
    checks_kept: ChecksKept | None = None
    """Set when the configuration's check/skip left checks out."""
    waiver_date: date | None = None
    """The date waivers were judged against; None when no waivers file was read."""
    waiver_date_from: str = ""
    """Where that date came from: 'the clock', '--today', 'TOPOLOG_TODAY', or a file:line."""

    @property
    def empty(self) -> bool:
        return self.config_file is None and self.waiver_date is None

    def config_line(self) -> str | None:
        """The sentence naming the file and what it set; None without a file."""
        if self.config_file is None:
            return None
        where = " (found in a folder above the working directory)" if self.config_above else ""
        if not self.from_config:
            return f"configuration {self.config_file}{where}: sets nothing this run uses"
        parts = ", ".join(f"{s.option} {s.value} (line {s.where.line})" for s in self.from_config)
        return f"configuration {self.config_file}{where} sets {parts}"

    def checks_line(self) -> str | None:
        """The warning when the configuration left checks out of the report; None when it did not."""
        if self.checks_kept is None or self.config_file is None:
            return None
        kept = self.checks_kept
        head = f"configuration {self.config_file} keeps {len(kept.kept)} of {kept.loaded} checks"
        if kept.left_out and len(kept.left_out) < len(kept.kept):
            # Whichever list is shorter is the one a reader can check at a glance.
            return f"{head}; it leaves out {', '.join(kept.left_out)} (not reported)"
        return f"{head}: {', '.join(kept.kept)}; the others are not reported"

    def date_line(self) -> str | None:
        """Which date waivers expired against and where it came from; None when no waivers were read."""
        if self.waiver_date is None:
            return None
        return f"waivers judged on {self.waiver_date.isoformat()} (from {self.waiver_date_from})"

    def lines(self) -> list[str]:
        """Every sentence, in a fixed order: the file, the checks it kept, the waivers' date."""
        return [line for line in (self.config_line(), self.checks_line(), self.date_line()) if line is not None]
