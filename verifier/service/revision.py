"""One revision of the gate: the inventory, policies and principals read, checked and built once.

A revision is built whole, beside the live one, by the session code the commands run
(verifier.session.inputs): the inventory read as `place` reads it, the policies validated against
the schema, the entities built from the inventory and checked as `authorize` builds them, and the
NVLink domains found at once, so no request waits for them. Its id is a digest of the bytes of
every file it was built from: replicas that read the same files serve the same revision id.

`admit` places on the revision's own inventory and principals, already in memory, and on a copy
of its policy files and thresholds (a snapshot folder), so a placement never reads a file that
changed after the revision was built. The folder is removed when the revision is no longer referenced (an admit
still running on an old revision keeps it alive), and every one left when the gate stops (remove_snapshots).
The placement rules are evaluated on the fleet once per revision, without any job, for every admit to
add its job to (verifier.service.placing).

Observations (docs/observed.md) in a `topolog.observed/` folder beside the first inventory file are part
of the revision: read with the inventory (their files watched and digested as its files are), and the
GPUs they say are out of service (OBS004, OBS006) are marked failed in the revision's inventory, as
`place --observed` never places on them, so no admit does; so are the NVLink access links of a GPU they
say left its NVLink domain (OBS002), which the platform rules then take out of the domain. The revision
keeps the observations as read then (KeptObservations), which every admit's placement reads as `place
--observed` reads its folder: a GPU whose NIC has a port observed down (OBS103) has no fabric share there
either. Kept read, not as a copy of the files: an admit then neither reads the folder again nor parses them.

An observation's age is judged at one clock per revision, read when it is built (Judged.now) and used
by every admit's placement too: which files were then stale (older than observed_max_age_s) is part
of what the revision id covers, so one id is one answer, whenever and by whichever replica it was built.
A reload judges the ages again (a file gone stale is a new revision, as an edited one is). A file of a
host the inventory lacks is not silently passed over: the revision names it (`observations` in
/v1/revision, a warning in the log), as `verify --observed` reports it (OBS005).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import tempfile
import time
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path

from verifier.authorization.evaluate import Authorizer
from verifier.authorization.policies import SCHEMA_FILE, load_policies, policy_files
from verifier.authorization.setup import AuthzSetup
from verifier.core.errors import Diagnostic, SourceLocation, TopologError
from verifier.core.limits import read_regular
from verifier.engine.ast import Row
from verifier.facts.observed import ObservedSettings
from verifier.service.config import ServeConfig
from verifier.service.placing import PlacingSlot
from verifier.session.inputs import Inputs, authorization_for, read_inventory
from verifier.session.observed_input import ObservedRun, observed_outages, observed_rows
from verifier.session.side_files import SideFiles, discover
from verifier.sources.observed.load import observation_files
from verifier.sources.observed.model import Observations
from verifier.sources.scenario import apply_scenario, scenario_from
from verifier.sources.thresholds import load_thresholds

ROLES = ("inventory", "principals", "policies", "thresholds", "observed")
HELD_MAX = 256
"""The most files a reload's quiet wait holds open to tell a file written in place from one renamed
over (more, written at once, are told apart by name, device and inode: see _quiet)."""
OBSERVED_DIR = "topolog.observed"
"""Observations of the served hosts, one sub-folder per host, beside the first inventory file."""


@dataclass(frozen=True)
class Snapshot:
    """The revision's side files, copied: what `admit` reads besides the inventory and principals in memory."""

    policies: Path
    thresholds: Path | None
    """The thresholds file that `place` reads next to the inventory (topolog.thresholds.yaml), if any."""
    names: dict[str, str]
    """A copy's path -> the name of the file it copies, for messages about the copies."""


@dataclass(frozen=True)
class KeptObservations(ObservedRun):
    """A revision's observations as read when it was built, from the files it digested: what every admit's
    placement reads, as `place --observed` reads its folder, without the folder read again. At 32,768 GPUs
    (4,096 `nvidia-smi -q -x` files, 353 MB) reading them takes about 3 s of CPU, and kept read they are
    about 25 MiB.
    """

    kept: Observations | None = None

    def read(self) -> Observations:
        assert self.kept is not None  # always made with them (_observed)
        return self.kept


@dataclass(frozen=True)
class Judged:
    """How a revision judged its observations: at one clock, fixed when it was built."""

    now: datetime
    """The clock every observation's age is judged at, for the revision's outages and every admit."""
    stale: tuple[str, ...] = ()
    """The observation files older than observed_max_age_s at `now` (sorted): nothing in them is trusted."""
    unknown_hosts: tuple[tuple[str, str], ...] = ()
    """(host, file) of each observation of a host that no node of the inventory is named (sorted)."""

    def describe(self) -> dict[str, object]:
        return {
            "judged_at": _iso(self.now.timestamp()),
            "stale": list(self.stale),
            "unknown_hosts": [{"host": h, "file": f} for h, f in self.unknown_hosts],
        }

    def warnings(self) -> list[str]:
        """What an operator is told of the observations the revision does not use (file: why)."""
        at = _iso(self.now.timestamp())
        return [
            f"{f}: host {h!r} is no node of the served inventory; its observations are not judged"
            for h, f in self.unknown_hosts
        ] + [f"{f}: observed longer ago than observed_max_age_s at {at}; nothing in it is trusted" for f in self.stale]


@dataclass
class Revision:
    id: str
    """The first 16 hex digits of the SHA-256 over every file's role, name and digest, and the
    observation files judged stale (Judged.stale)."""
    files: dict[str, dict[str, str]]
    """role -> file name (as given) -> SHA-256 of its bytes."""
    inputs: Inputs
    """The inventory and principals as `place` reads them (the whole inventory): what `admit` places on."""
    setup: AuthzSetup
    snapshot: Snapshot
    built_at: float
    build_seconds: float
    placing: PlacingSlot
    """The placement rules evaluated on this revision's fleet, for admits (built once, by the first or ahead of it)."""
    judged: Judged | None = field(default=None)
    """How its observations were judged (None: it has none)."""

    def warnings(self) -> list[str]:
        """What the operator is told about this revision's files that it does not use (logged when it goes live)."""
        return self.judged.warnings() if self.judged is not None else []

    @property
    def placing_inputs(self) -> Inputs:
        """`inputs` with the revision's copies of the policies and thresholds: what `admit` places on."""
        return placing_inputs(self.inputs, self.snapshot)

    def describe(self) -> dict[str, object]:
        return {
            "revision": self.id,
            "files": {role: dict(sorted(self.files[role].items())) for role in ROLES},
            "built_at": _iso(self.built_at),
            "build_seconds": round(self.build_seconds, 3),
            "placement": self.placing.describe(),
            "observations": self.judged.describe() if self.judged is not None else None,
            "warnings": self.warnings(),
        }


def placing_inputs(inputs: Inputs, snapshot: Snapshot) -> Inputs:
    side = replace(inputs.side, policies=snapshot.policies, thresholds=snapshot.thresholds)
    return replace(inputs, side=side)


def _iso(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


def side_files(config: ServeConfig) -> SideFiles:
    """The principals, policies and thresholds of the served inventory, found as every other command finds them."""
    return discover(list(config.inventory), principals=config.principals, policies=config.policies)


def watched_files(config: ServeConfig, side: SideFiles) -> list[tuple[str, Path]]:
    """(role, file) of every file a revision is built from."""
    out = [("inventory", p) for p in config.inventory]
    if side.principals is not None:
        out.append(("principals", side.principals))
    policy_dir = side.policy_dir
    schema = policy_dir / SCHEMA_FILE
    # Every policy file the CLI reads (subfolders, any case of the suffix: policy_files), so the
    # snapshot that `admit` places on holds every forbid that `authorize` obeys.
    out += [("policies", p) for p in sorted([*policy_files(policy_dir), schema]) if p.is_file()]
    if side.thresholds is not None:  # placement reads it: a change to it is a new revision too
        out.append(("thresholds", side.thresholds))
    folder = observed_dir(config)
    if folder is not None:
        # The files `place --observed` reads in the folder, no other: a host's sub-folder that is a
        # link (a mount) is read through it, so it is digested, copied and judged as well.
        try:
            listed = observation_files(folder)
        except OSError as err:
            raise TopologError.at(
                SourceLocation(str(folder)), f"cannot list the observation folder: {err.strerror or err}"
            ) from None
        out += [("observed", p) for p in sorted(listed)]
    return out


def observed_dir(config: ServeConfig) -> Path | None:
    """The served inventory's observation folder (OBSERVED_DIR beside its first file), if there is one."""
    folder = Path(config.inventory[0]).parent / OBSERVED_DIR if config.inventory else None
    return folder if folder is not None and folder.is_dir() else None


def _observed(inputs: Inputs, config: ServeConfig) -> tuple[Inputs, KeptObservations | None, Judged | None]:
    """`inputs` with the GPUs its observations take out of service failed (unchanged without observations),
    the observations read (None without any), and how they were judged (None without any).
    """
    folder = observed_dir(config)
    if folder is None or not observation_files(folder):
        return inputs, None, None  # an empty folder (a mount its collector has not written to yet): nothing is observed
    # One clock for the revision: its outages here and every admit's placement judge ages at it.
    settings = ObservedSettings(now=datetime.now(UTC))
    kept = KeptObservations((folder,), settings=settings, kept=ObservedRun((folder,), settings=settings).read())
    facts = observed_rows(kept, kept.read(), inputs)
    judged = _judged(settings, facts)
    out = observed_outages(kept, kept.read(), inputs, facts)
    if not out.gpus and not out.links:
        return inputs, kept, judged
    changes = scenario_from(fail=out.gpus, fail_links=out.links)
    return replace(inputs, inventory=apply_scenario(inputs.inventory, changes), digest_parts=None), kept, judged


def _judged(settings: ObservedSettings, facts: dict[str, list[Row]]) -> Judged:
    """The verdicts of `facts` (observed_rows judged with `settings`) that the revision id and status carry."""
    assert settings.now is not None
    stale = tuple(sorted({str(row[1]) for row in facts["observed_stale"]}))
    unknown = tuple(sorted({(str(row[0]), str(row[1])) for row in facts["observed_unknown_host"]}))
    return Judged(settings.now, stale, unknown)


def _still_judged(live: Revision) -> bool:
    """Whether `live`'s observations, judged at the clock now, are stale in the same files (then its
    outages stand, and a build from the same files may keep them); True without observations.
    """
    kept, judged = live.placing.observed, live.judged
    if not isinstance(kept, KeptObservations) or judged is None:
        return True
    settings = ObservedSettings(now=datetime.now(UTC))
    now = _judged(settings, observed_rows(replace(kept, settings=settings), kept.read(), live.inputs))
    return now.stale == judged.stale


def _quiet(listed: Callable[[], list[tuple[str, Path]]], quiet_s: float, max_s: float) -> list[tuple[str, Path]]:
    """Wait until no file of `listed()` was modified within `quiet_s` seconds (at most `max_s`:
    ServeConfig.reload_quiet_s and reload_quiet_max_s, `--reload-quiet` and `--reload-quiet-max`);
    the files then. They are listed again after each wait: a file added meanwhile (a second policy
    file copied in a moment after the first) is read and waited for too, where the list made before
    the wait had the build refused as changed under it.

    A policy file rewritten in place, its first policy written, then its forbid a second later,
    reloaded (the watcher waits 0.4 s of silence) between the two: the gate allowed what the
    forbid denies for that second, every check of the build passed on a file that parsed. A write
    paused past `quiet_s` is not caught: docs/serve.md asks for a rename. A file that never rests
    is read at the deadline, `max_s` after the wait began, when each such file was replaced
    whole (renamed over) during the wait; one seen written in place during the wait refuses the
    reload (TopologError), the live revision kept: read at the deadline it may be caught between
    two of its writes (its permit written, its forbid not yet), a revision no check can tell from
    a whole one.
    """
    deadline = time.monotonic() + max_s
    seen: dict[Path, tuple[int, int, int]] = {}
    # A file written a moment ago is held open until the next look, which then sees whether that
    # very file (not the name) was written again: in place. A file renamed over it leaves the one
    # held unwritten. Held, its inode cannot be freed and its number given to the next file made,
    # which two looks by name could not tell from the same file written again (ext4 gives a file
    # replaced every second, by rename, the same two inode numbers in turn).
    held: dict[Path, tuple[int, int]] = {}
    in_place: set[Path] = set()
    try:
        while True:
            for path, (fd, mtime) in held.items():
                if os.fstat(fd).st_mtime_ns != mtime:
                    in_place.add(path)
            watched = set(held)
            _close(held)
            files = listed()
            now = time.time()
            stats = {path: _stat(path) for _role, path in files}
            for path, st in stats.items():
                was = seen.get(path)
                # Not held (an older write, or more than HELD_MAX): the same device and inode with
                # another modification time is read as written in place, whichever it was.
                if path not in watched and st is not None and was is not None and was[:2] == st[:2] and was != st:
                    in_place.add(path)
                if st is not None:
                    seen[path] = st
            # A time ahead of the clock (a file copied with its times, a skewed mount) says nothing
            # of a write going on now: left out rather than waited for.
            times = {path: st[2] / 1e9 if st is not None else 0.0 for path, st in stats.items()}
            recent = sorted(p for p, m in times.items() if now - quiet_s < m <= now + 1.0)
            newest = max((m for m in times.values() if m <= now + 1.0), default=0.0)
            wait = newest + quiet_s - now
            left = deadline - time.monotonic()
            if wait <= 0:
                return files
            if left <= 0:
                restless = [p for p in recent if p in in_place]
                if restless:
                    raise TopologError(
                        [
                            Diagnostic(
                                SourceLocation(str(path)),
                                f"written in place again and again, never {quiet_s:g} s without a write in "
                                f"{max_s:g} s: read now it may be half-written, so the live revision is "
                                "kept; expected the file written whole under another name and renamed over it "
                                f"(as editors and kubectl do), or {quiet_s:g} s without a write",
                            )
                            for path in restless
                        ]
                    )
                return files
            held = _hold(recent[:HELD_MAX], stats)
            # Never past the deadline, and read at it, not at the wake-up before it: a file replaced
            # every second (a period dividing `quiet_s`) had each wake-up fall on its next write, and
            # the last one, read then, was refused as changed under the build every time; the
            # deadline falls anywhere between two writes.
            time.sleep(min(wait, left))
    finally:
        _close(held)


def _hold(paths: list[Path], stats: dict[Path, tuple[int, int, int] | None]) -> dict[Path, tuple[int, int]]:
    """Each of `paths` (a regular file, still the one `stats` saw) open for reading: path -> (fd, its
    modification time in ns). One that cannot be opened, or changed meanwhile, is not held.
    """
    held: dict[Path, tuple[int, int]] = {}
    for path in paths:
        try:
            # Never waits: a fifo named like a policy file is opened without a writer, then let go.
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError:
            continue
        st = os.fstat(fd)
        if stat.S_ISREG(st.st_mode) and (st.st_dev, st.st_ino, st.st_mtime_ns) == stats.get(path):
            held[path] = (fd, st.st_mtime_ns)
        else:
            os.close(fd)
    return held


def _close(held: dict[Path, tuple[int, int]]) -> None:
    for fd, _mtime in held.values():
        os.close(fd)
    held.clear()


def _stat(path: Path) -> tuple[int, int, int] | None:
    """(device, inode, modification time in ns) of `path`; None when gone or unreadable (the read says why)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino, st.st_mtime_ns


def _read(files: Sequence[tuple[str, Path]]) -> list[tuple[str, Path, bytes]]:
    return [(role, path, _read_one(role, path)) for role, path in files]


def _read_one(role: str, path: Path) -> bytes:
    # A pipe in the observation folder is refused, not read: the revision keeps a copy of what it
    # judged, and a pipe's bytes, read once, are gone (a writer that never writes would hold the reload).
    if role == "observed":
        try:
            mode = os.stat(path).st_mode
        except OSError as err:
            raise TopologError.at(
                SourceLocation(str(path)), f"cannot read observation file: {err.strerror or err}"
            ) from None
        if not stat.S_ISREG(mode):
            raise TopologError.at(
                SourceLocation(str(path)), "cannot read observation file: it is not a regular file; expected one"
            )
    # Every role is read as a regular file only, never waited on: a build reads each file twice (before
    # and after, to see a change under it), so a pipe's bytes could never be built from, and a fifo that
    # a process held open without writing had the reload, and every reload behind it, wait for ever.
    return read_regular(path, str(path), "observation file" if role == "observed" else "file")


def build_revision(config: ServeConfig, live: Revision | None = None) -> Revision:
    """A new revision from the files as they are now; TopologError (every problem, file:line) when any is invalid.

    When the inventory and principals are byte for byte those of `live`, its entity graph is
    kept and only the policies are loaded and checked against it (a policy edit on a
    131,072-GPU fleet is then live in milliseconds, not seconds): the graph is built from
    those two files alone.
    """
    start = time.perf_counter()
    side = side_files(config)
    if live is not None:
        _still_in_place(live, config, side)
    if live is None:
        files = watched_files(config, side)
    else:
        files = _quiet(lambda: watched_files(config, side), config.reload_quiet_s, config.reload_quiet_max_s)
    before = _read(files)
    digests: dict[str, dict[str, str]] = {role: {} for role in ROLES}
    overall = hashlib.sha256()
    for role, path, data in before:
        digest = hashlib.sha256(data).hexdigest()
        digests[role][str(path)] = digest
        overall.update(f"{role}\0{path}\0{digest}\n".encode())
    same_graph = live is not None and all(live.files[r] == digests[r] for r in ("inventory", "principals", "observed"))
    observed: ObservedRun | None
    judged: Judged | None
    if live is not None and same_graph and _still_judged(live):
        inputs, setup = live.inputs, _with_policies(live.setup, side.policy_dir)
        observed, judged = live.placing.observed, live.judged  # the same files, read once, judged alike
    else:
        # As `place` reads them (the whole inventory, its links too), so that `admit` places on
        # this very inventory; the entities are the ones `authorize` builds from it.
        inputs, observed, judged = _observed(read_inventory(list(config.inventory), side, principals=True), config)
        built = authorization_for(inputs, required=" to serve the gate")
        assert built is not None  # required: no principals file is a TopologError
        setup = built
        setup.graph.domains()  # found now, at build time, not by the first request that names a domain
    if side.thresholds is not None:
        load_thresholds(inputs.paths, side.thresholds)  # read by every admit: refused here, not there
    after = _read(files)
    changed = [str(p) for (_r, p, a), (_r2, _p2, b) in zip(before, after, strict=True) if a != b]
    # A file that appeared or went meanwhile too: the observations were read above, from the folder,
    # and must be those of the files digested (`place --observed` reads no other).
    changed += sorted(str(p) for _r, p in set(watched_files(config, side)) ^ set(files))
    if changed:
        # Built from a file that changed under it: this build may mix two versions of it.
        raise TopologError.at(SourceLocation(changed[0]), "changed while the revision was built; it is built again")
    folder = tempfile.mkdtemp(prefix="topolog-revision-")
    try:
        snapshot = _write_snapshot(Path(folder), before)
    except OSError as err:
        shutil.rmtree(folder, True)
        raise TopologError.at(SourceLocation(folder), f"cannot keep the revision's files: {err}") from None
    # Its own authorizer over the copied policies: the placement's Cedar questions and memo are
    # kept apart from the authorize thread's, as a `place` run's are.
    # The placement reads the observations kept as `place --observed` reads its folder: a NIC port
    # observed down (OBS103) leaves its GPUs no fabric share on every admit path, as in `place`.
    placing = PlacingSlot(placing_inputs(inputs, snapshot), lambda: _with_policies(setup, snapshot.policies), observed)
    # Which observation files were judged stale is part of the id: the same files judged at two
    # clocks on either side of a file's expiry are two revisions, with two answers.
    for stale in judged.stale if judged is not None else ():
        overall.update(f"stale\0{stale}\n".encode())
    revision = Revision(
        overall.hexdigest()[:16],
        digests,
        inputs,
        setup,
        snapshot,
        time.time(),
        time.perf_counter() - start,
        placing,
        judged,
    )
    _KEPT_FOLDERS.add(folder)
    weakref.finalize(revision, _remove_folder, folder)
    return revision


def _still_in_place(live: Revision, config: ServeConfig, side: SideFiles) -> None:
    """TopologError when the policy folder or principals file the live revision decides by was found
    under its conventional name, is gone, and the search now finds another in its stead.

    The next place is the working folder's, or for policies the shipped ones: a policies/ beside the
    inventory removed, renamed or unmounted had a reload put the shipped policies in force (a site's
    forbid gone: DENY became ALLOW, reload 200). One the gate was started with can only be given up by
    starting it again; one that was not there (the next place was read) may still be added.
    """
    gone: list[tuple[str, str, str]] = []
    was = str(live.setup.bundle.directory)
    if config.policies is None and was != str(side.policy_dir) and not os.path.lexists(was):
        now = str(side.policy_dir) if side.policies is not None else f"the shipped policies ({side.policy_dir})"
        gone.append((was, "the policy folder", now))
    for name in live.files["principals"]:
        if config.principals is None and name != str(side.principals) and not os.path.lexists(name):
            gone.append((name, "the principals file", str(side.principals) if side.principals else "no other"))
    if gone:
        raise TopologError(
            [
                Diagnostic(
                    SourceLocation(path),
                    f"{what} the gate decides by is gone, and the next found is {now}; expected it back "
                    "(the gate keeps deciding by the live revision), or the gate started again to use the next",
                )
                for path, what, now in gone
            ]
        )


_KEPT_FOLDERS: set[str] = set()
"""The snapshot folders of the revisions still alive."""


def _remove_folder(folder: str) -> None:
    _KEPT_FOLDERS.discard(folder)
    shutil.rmtree(folder, True)


def remove_snapshots() -> None:
    """Remove every revision's snapshot folder now: said by `serve` as it stops.

    The finalizer of a revision still alive would remove its folder at the interpreter's exit, but
    the console script ends the process without that teardown (verifier.cli.entry), which left a
    `topolog-revision-*` folder in the temporary directory at every stop of the gate.
    """
    for folder in sorted(_KEPT_FOLDERS):
        _remove_folder(folder)


def _under_policies(path: Path, files: Sequence[tuple[str, Path, bytes]]) -> Path:
    """`path` relative to the policy folder (the schema's folder, which every policy lies under)."""
    folder = next(p.parent for r, p, _d in files if r == "policies" and p.name == SCHEMA_FILE)
    try:
        return path.relative_to(folder)
    except ValueError:  # a link that policy_files followed: it keeps the name it has in the folder
        return Path(path.name)


def _with_policies(setup: AuthzSetup, policy_dir: Path) -> AuthzSetup:
    """`setup`'s inventory, principals and entity graph with the policies of `policy_dir`, validated
    against its schema and the entities checked against it, as verifier.authorization.setup.build_setup does.
    Its decision memo starts empty (AuthzSetup's fields outside __init__ are not copied by replace).
    """
    bundle = load_policies(policy_dir)
    return replace(setup, bundle=bundle, authorizer=Authorizer(bundle, setup.graph))


def _write_snapshot(root: Path, files: Sequence[tuple[str, Path, bytes]]) -> Snapshot:
    names: dict[str, str] = {}
    policies = root / "policies"
    policies.mkdir()
    thresholds: Path | None = None
    for role, path, data in files:
        if role == "policies":
            # Where it lies under the policy folder: two files of one name in two subfolders stay two.
            target = policies / _under_policies(path, files)
            target.parent.mkdir(parents=True, exist_ok=True)
        elif role == "thresholds":
            target = thresholds = root / path.name
        else:  # the inventory, principals and observations are in memory (Revision.inputs, KeptObservations)
            continue
        target.write_bytes(data)
        names[str(target)] = str(path)
    names[str(policies)] = str(next((p.parent for r, p, _d in files if r == "policies"), policies))
    return Snapshot(policies, thresholds, names)
