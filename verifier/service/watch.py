"""Reload on file change: watchfiles (inotify, FSEvents, ReadDirectoryChangesW; polling where none works).

The folders holding the served files are watched, not the files: editors and `kubectl`'s
ConfigMap updates replace a file by renaming another over it, which a watch on the old file
would miss. A batch of changes to files the gate reads starts one reload.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from pathlib import Path

import watchfiles

from verifier.core.errors import TopologError
from verifier.service.config import ServeConfig
from verifier.service.revision import observed_dir, side_files, watched_files

LOG = logging.getLogger("topolog.serve")


def served_paths(config: ServeConfig) -> tuple[set[Path], set[Path]]:
    """(files the gate reads, folders a new policy file may appear in), absolute.

    Absolute, not resolved: a ConfigMap's files are links into a folder that each update replaces,
    and the change to watch for is the link's, under the name the gate reads.
    """
    try:
        side = side_files(config)
    except TopologError:
        return set(), set()
    try:
        files = {_absolute(p) for _role, p in watched_files(config, side)}
    except TopologError:  # an observation folder that cannot be listed: a change under it reloads, which says why
        files = set()
    if config.token_file is not None:
        files.add(_absolute(config.token_file))
    # The observation folder is watched like the policy folder: a host's sub-folder or file may appear.
    # (A folder made after the start is read at the next reload: SIGHUP or POST /v1/reload.)
    observed = observed_dir(config)
    return files, {_absolute(side.policy_dir), *([_absolute(observed)] if observed is not None else [])}


def _absolute(path: str | Path) -> Path:
    return Path(os.path.abspath(path))


def _relevant(config: ServeConfig, changed: set[tuple[watchfiles.Change, str]]) -> bool:
    files, policy_dirs = served_paths(config)
    parents = {f.parent for f in files}
    for _change, name in changed:
        path = _absolute(name)
        # `..data` and its timestamped folders: the kubelet updates a mounted ConfigMap or Secret
        # by swapping the `..data` link that every file of the mount points through.
        if path in files or (path.name.startswith("..") and path.parent in parents):
            return True
        # Anything under the policy folder, subfolders included: a policy file in any case of its
        # suffix, a folder of policies moved in, a ConfigMap's `..data` swap. A reload that finds
        # the same bytes keeps the same revision, so reloading too often costs only its time.
        if any(path.is_relative_to(folder) for folder in policy_dirs):
            return True
    return False


def start_watching(config: ServeConfig, reload: Callable[[str], object], stop: threading.Event) -> threading.Thread:
    """A daemon thread that calls `reload("watch")` after each batch of changes to the served files."""
    files, policy_dirs = served_paths(config)
    # The policy folder is watched with its subfolders (every *.cedar under it is read); the
    # other files' folders alone (an inventory's folder may be a whole repository).
    policy_tree = sorted(policy_dirs)
    folders = sorted({p.parent for p in files} - set(policy_tree) - {p.parent for p in files if _under(p, policy_tree)})
    thread = _watch_thread(config, reload, stop, folders, recursive=False, name="topolog-watch")
    if policy_tree:
        _watch_thread(config, reload, stop, policy_tree, recursive=True, name="topolog-watch-policies")
    return thread


def _under(path: Path, folders: list[Path]) -> bool:
    return any(path.is_relative_to(folder) for folder in folders)


def _watch_thread(
    config: ServeConfig,
    reload: Callable[[str], object],
    stop: threading.Event,
    folders: list[Path],
    *,
    recursive: bool,
    name: str,
) -> threading.Thread:
    def run() -> None:
        if not folders:
            return
        try:
            for changed in watchfiles.watch(
                *folders, stop_event=stop, recursive=recursive, debounce=400, rust_timeout=1000, raise_interrupt=False
            ):
                if _relevant(config, changed):
                    reload("watch")
        except Exception as err:  # the gate keeps serving; reloads are still possible by SIGHUP and the API
            LOG.error(
                "topolog serve: file watching stopped (%s: %s); reload with SIGHUP or POST /v1/reload",
                type(err).__name__,
                err,
            )

    thread = threading.Thread(target=run, name=name, daemon=True)
    thread.start()
    return thread
