"""/v1/admit names an unknown job principal without comparing it with every principal (HI2, round 16).

A job's unknown principal was given the nearest id by difflib (session.require_job_principals),
once per job: about 3 ms per name at 1,000 principals, so one body naming a thousand unknown
principals held a worker for seconds, past --admit-timeout for its own jobs and those of others
(as /v1/authorize/batch did before ce5639e8). serve now gives the look-alike hint alone (an index
of the principals' skeletons, built once); the CLI's `place` still suggests the nearest id.

Hand derivation, inventories/principals.yml: `ivan` is a user; `ivam` is one letter off (difflib
ratio 0.75, over the 0.6 cutoff: the CLI suggests 'ivan'); `iv\u0430n` holds a Cyrillic a
(U+0430), drawn as `ivan`; `nobody-N` is drawn as no id.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import run_cli
from service.serve_helpers import ROOT, copy_inputs, serving

from verifier.core.errors import TopologError
from verifier.session.session import require_job_principals
from verifier.sources.jobs.loader import load_jobs_text
from verifier.sources.principals import load_principals

LOOK_ALIKE = "iv\u0430n"


def _body(principals: list[str]) -> bytes:
    jobs = "".join(
        f"  - {{name: j{i}, principal: '{p}', gpus: 1, gpu: {{accepts: [RTX-4090]}}}}\n"
        for i, p in enumerate(principals)
    )
    return f"apiVersion: topolog.dev/v1\nkind: Jobs\njobs:\n{jobs}".encode()


def test_admit_gives_the_look_alike_hint_alone(tmp_path: Path) -> None:
    inventory = copy_inputs(tmp_path)
    names = ["ivam", LOOK_ALIKE, *(f"nobody-{i}" for i in range(200)), "ivam"]
    with serving(tmp_path) as server:
        doc = server.post("/v1/admit", _body(names)).json()
    assert doc["admitted"] is False and doc["placement"] is None, doc
    lines = doc["errors"]
    # One line per job naming an unknown principal: 203 jobs, every one unknown.
    assert sum("is not in " in line for line in lines) == len(names), lines[:5]
    slips = [line for line in lines if "principal 'ivam' is not in " in line]
    # The ASCII slip (twice): no nearest id (the CLI's difflib suggestion), the line ends at the file.
    assert len(slips) == 2 and all(line.endswith("principals.yml") for line in slips), slips
    # The look-alike: named with the letter that differs.
    (drawn,) = [line for line in lines if f"principal {LOOK_ALIKE!r} is not in " in line]
    assert drawn.endswith(
        "principals.yml; did you mean 'ivan'? (it looks the same but holds U+0430 CYRILLIC SMALL LETTER A)"
    ), drawn
    # The CLI's `place` still suggests the nearest id for the slip (one run, its user at the terminal).
    job = tmp_path / "one.yaml"
    job.write_bytes(_body(["ivam"]))
    code, _out, err = run_cli("place", str(inventory), str(job))
    assert code == 2 and "principal 'ivam' is not in" in err and "did you mean 'ivan'?" in err, err


def test_require_job_principals_without_nearest_compares_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_args: object, **_kwargs: object) -> str | None:
        raise AssertionError("an unknown principal was compared with every known one")

    monkeypatch.setattr("verifier.core.suggest.closest", refuse)
    principals = load_principals(ROOT / "inventories" / "principals.yml")
    jobs = load_jobs_text(_body(["ivam", LOOK_ALIKE, "ivam"]).decode(), "jobs.yaml")
    with pytest.raises(TopologError) as caught:
        require_job_principals(jobs, principals, nearest=False)
    said = [d.message.replace(str(principals.file), "principals.yml") for d in caught.value.diagnostics]
    assert said == [
        "job j0: principal 'ivam' is not in principals.yml",
        f"job j1: principal {LOOK_ALIKE!r} is not in principals.yml; did you mean 'ivan'? "
        "(it looks the same but holds U+0430 CYRILLIC SMALL LETTER A)",
        "job j2: principal 'ivam' is not in principals.yml",
    ], said
