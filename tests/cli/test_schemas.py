"""The shipped JSON Schemas of job, principals, waivers and configuration files (`topolog schema KIND`).

Each schema is checked three ways: every shipped example of its kind is valid; its key lists
equal the ones the loader's code accepts (a key the loader takes but the schema refuses, or
the reverse, would show a user an error one of them does not report); and a misspelt key is
refused. Documents are read as an editor reads them: YAML 1.2 has no date type, so the
waivers' `expires: 2030-01-01` is the string the loader reads.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from click.testing import CliRunner

from verifier.checks.waivers import WAIVER_KEYS
from verifier.cli.config_schema import config_schema_text
from verifier.cli.main import main
from verifier.cli.schema_command import KINDS, schema_text
from verifier.sources import principals
from verifier.sources.jobs import loader
from verifier.sources.jobs.spec import MODES, OPTIMIZERS, SCOPES

ROOT = Path(__file__).resolve().parents[2]


class _EditorLoader(yaml.SafeLoader):
    """safe_load without YAML 1.1 timestamps, as yaml-language-server reads a file."""


_EditorLoader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def _load(text: str) -> Any:
    return yaml.load(text, Loader=_EditorLoader)  # a SafeLoader: no arbitrary objects


def _validator(kind: str) -> jsonschema.Draft202012Validator:
    schema = json.loads(schema_text(kind))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def _errors(kind: str, doc: Any) -> list[str]:
    return sorted(e.message for e in _validator(kind).iter_errors(doc))


def _job_files() -> list[Path]:
    return [p for p in sorted((ROOT / "inventories" / "jobs").rglob("*.y*ml")) if "kind: Jobs" in p.read_text()]


def test_every_kind_is_printed_as_shipped() -> None:
    for kind in KINDS:
        result = CliRunner().invoke(main, ["--no-config", "schema", kind])
        assert result.exit_code == 0 and result.stdout == schema_text(kind)


@pytest.mark.parametrize("path", _job_files(), ids=lambda p: p.name)
def test_shipped_job_files_are_valid(path: Path) -> None:
    assert _errors("jobs", _load(path.read_text())) == []


def test_job_schema_keys_are_the_loaders() -> None:
    schema = json.loads(schema_text("jobs"))
    job = schema["$defs"]["job"]["properties"]
    assert set(schema["properties"]) == set(loader.TOP_KEYS)
    assert set(job) == set(loader.JOB_KEYS)
    assert set(job["gpu"]["properties"]) == set(loader.GPU_KEYS)
    assert set(job["topology"]["properties"]) == set(loader.TOPOLOGY_KEYS)
    assert set(schema["$defs"]["model"]["properties"]) == set(loader.MODEL_KEYS)
    assert job["topology"]["properties"]["scope"]["enum"] == list(SCOPES)
    assert schema["$defs"]["model"]["properties"]["mode"]["enum"] == list(MODES)
    assert schema["$defs"]["model"]["properties"]["optimizer"]["enum"] == list(OPTIMIZERS)


def test_a_misspelt_job_key_is_refused() -> None:
    doc = _load((ROOT / "inventories" / "jobs" / "hpc.yaml").read_text())
    doc["jobs"][0]["gpu"]["min_hmb"] = "80 GiB"
    assert _errors("jobs", doc) == ["Additional properties are not allowed ('min_hmb' was unexpected)"]
    doc["jobs"][0]["gpu"].pop("min_hmb")
    doc["jobs"][0].pop("principal")
    assert _errors("jobs", doc) == ["'principal' is a required property"]


def test_shipped_principals_are_valid_and_the_keys_are_the_loaders() -> None:
    assert _errors("principals", _load((ROOT / "inventories" / "principals.yml").read_text())) == []
    schema = json.loads(schema_text("principals"))
    assert set(schema["properties"]) == {"apiVersion", "kind", "metadata", *principals.SECTIONS}
    assert set(schema["$defs"]["principal"]["properties"]) == set(principals.KEYS)
    assert _errors("principals", {"apiVersion": "topolog.dev/v1", "kind": "Principals", "users": [{"ID": "x"}]}) == [
        "'id' is a required property",
        "Additional properties are not allowed ('ID' was unexpected)",
    ]


def _yaml_blocks(doc: str, having: str) -> list[Any]:
    text = (ROOT / doc).read_text()
    return [_load(b) for b in re.findall(r"```yaml\n(.*?)```", text, re.DOTALL) if having in b]


def test_waivers_files_are_valid_and_the_keys_are_the_loaders() -> None:
    golden = _load((ROOT / "tests" / "golden" / "waivers.yaml").read_text())
    examples = [golden, *_yaml_blocks("docs/ci.md", "waivers:")]
    assert len(examples) >= 2
    for doc in examples:
        assert _errors("waivers", doc) == []
    items = json.loads(schema_text("waivers"))["properties"]["waivers"]["items"]
    assert set(items["properties"]) == set(items["required"]) == set(WAIVER_KEYS)
    bad = {"waivers": [{"rule": "TOPO003", "subject": "x", "reason": "r", "expires": "next week"}]}
    assert _errors("waivers", bad) == ["'next week' does not match '^[0-9]{4}-[0-9]{2}-[0-9]{2}$'"]


def test_shipped_config_schema_is_the_commands_own() -> None:
    """Regenerate with `python -m verifier.cli.config_schema > verifier/schemas/config.schema.json`."""
    assert schema_text("config") == config_schema_text()


def test_configuration_examples_are_valid() -> None:
    # docs/configuration.md's examples of .topolog.yaml (its YAML blocks, each a whole file).
    examples = _yaml_blocks("docs/configuration.md", ":")
    assert len(examples) >= 2
    for doc in examples:
        assert _errors("config", doc) == [], doc
    # fail-on is an option of verify (one of error, warning, note); `fial-on` is no option at all.
    assert _errors("config", {"fail-on": "warning", "verify": {"fail-on": "note"}}) == []
    refused = ["Additional properties are not allowed ('fial-on' was unexpected)"]
    assert _errors("config", {"fial-on": "warning"}) == refused
    assert _errors("config", {"verify": {"fail-on": "critical"}}) != []
