"""Validate the shipped policies into verifier/authorization/shipped_policies.json: run after any change
to policies/, to the validating code (policies.py, observed.py, shipped_policies.py) or to cedarpy.

    python -m verifier.authorization.compile_policies          # writes the file
    python -m verifier.authorization.compile_policies --check  # exit 1 when the file is not current

The file is committed: a release carries it (verifier.authorization.shipped_policies says why and
how it is trusted), and tests/authorization/test_shipped_policies.py fails when it lags behind.
Validated under the default limits, which a run's own limits must equal for the data to be used.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from verifier.authorization.policies import SCHEMA_FILE, _read_cedar, _validated, encoded, policy_files
from verifier.authorization.shipped_policies import DATA_NAME, FORMAT, cedar_release, policies_digest
from verifier.core.compiled_data import write_or_check
from verifier.core.errors import SourceLocation, TopologError
from verifier.core.limits import Limits, use_limits
from verifier.core.resources import package_file, shipped_policies_dir


def compiled_text() -> str:
    """The data file's text for the shipped policies as they are on disk now (TopologError if they
    do not validate, or when the installed cedarpy's release cannot be told).
    """
    directory = shipped_policies_dir()
    with use_limits(Limits()) as limits:
        files = policy_files(directory)
        schema_path = directory / SCHEMA_FILE
        schema_text = _read_cedar(schema_path, "Cedar schema")
        bundle = _validated(directory, files, schema_path, schema_text, "")
        texts = [_read_cedar(path, "policy file") for path in files]
    cedar = cedar_release()
    if cedar is None:
        raise TopologError.at(
            SourceLocation(str(directory)),
            "cannot tell the installed cedarpy's release (no single cedarpy-*.dist-info)",
        )
    names = [path.relative_to(directory).as_posix() for path in files]
    data = {
        "format": FORMAT,
        "digest": policies_digest(repr(limits), cedar, schema_text, list(zip(names, texts, strict=True))),
        "cedarpy": cedar,
        "files": names,
        **encoded(bundle, files),
    }
    return json.dumps(data, ensure_ascii=False, indent=1)


def data_path() -> Path:
    """Where the data file lives in this checkout (the package folder of verifier.authorization)."""
    return package_file("verifier.authorization", DATA_NAME)


def main(argv: list[str]) -> int:
    return write_or_check(
        argv, data_path(), compiled_text() + "\n", "python -m verifier.authorization.compile_policies"
    )


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
