"""Parse the built-in catalogue into verifier/sources/inventory/catalog_compiled.json: run after any change
to catalog.yaml or to the code that parses it (catalog.py, model.py, units.py, validate.py, yaml_source.py).

    python -m verifier.sources.inventory.compile_catalog          # writes the file
    python -m verifier.sources.inventory.compile_catalog --check  # exit 1 when the file is not current

The file is committed: a cold run reads the models from it instead of parsing the YAML. One that lags
behind is not used (its digest names other bytes), so the answers stay the parsed catalogue's, and
tests/sources/inventory/test_compiled_catalog.py fails.
"""

from __future__ import annotations

import json
import sys

from verifier.core.compiled_data import write_or_check
from verifier.core.limits import Limits, use_limits
from verifier.core.resources import package_file
from verifier.sources.inventory.catalog import (
    _PACKAGE,
    COMPILED,
    _catalogue_bytes,
    _parse_builtin_models,
    models_to_json,
    source_digest,
)


def compiled_text() -> str:
    """The data file's text for the catalogue as it is on disk now, one model a line."""
    data = _catalogue_bytes()
    with use_limits(Limits()):
        models = _parse_builtin_models(data.decode("utf-8"))
    rows = ",\n".join(json.dumps(row, ensure_ascii=False, separators=(",", ":")) for row in models_to_json(models))
    return f'{{"digest":{json.dumps(source_digest(data))},\n"models":[\n{rows}\n]}}\n'


def main(argv: list[str]) -> int:
    path = package_file(_PACKAGE, COMPILED)
    return write_or_check(argv, path, compiled_text(), "python -m verifier.sources.inventory.compile_catalog")


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
