"""The version of topolog, as the build that installed it wrote it.

The one place a version is decided is the release's git tag `vX.Y.Z`: setuptools-scm turns it
into the package version when the package is built or installed, and writes it to
verifier/core/_version.py (pyproject.toml [tool.setuptools_scm]; docs/release.md). A build at the
tag is `X.Y.Z`; one N commits past it is `X.Y.(Z+1).devN+g<commit>`, so code past a release
never claims to be that release. A source without git metadata gets its version from
`.git_archival.txt` (a `git archive` tarball) or setuptools-scm's fallback version.

Read from a written module rather than importlib.metadata: that import alone costs every run
about 20 ms.
"""

from __future__ import annotations

try:
    from verifier.core._version import __version__
except ImportError:  # a source folder imported without ever being built or installed
    __version__ = "0.0.0+unknown"

__all__ = ["__version__"]
