"""Check metadata: required keys, validation with locations, subjects and messages."""

from __future__ import annotations

import pytest

from verifier.checks.check import checks_from_program
from verifier.core.errors import ProgramError
from verifier.engine.parser import parse_program

GOOD = """# @id: BW002
# @severity: warning
# @summary: A GPU's nearest NIC is across the CPU interconnect.
# @remediation: Attach a NIC under the GPU's PCIe switch.
# @reports: far_nic
# @message: GPU {gpu} reaches NIC {nic} only at {gbps} GB/s.
.input pair(g: symbol, n: symbol, b: number)
.decl far_nic(gpu: symbol, nic: symbol, gbps: number)
far_nic(G, N, B) :- pair(G, N, B).
"""


def test_check_reads_metadata_and_formats_messages() -> None:
    [check] = checks_from_program(parse_program(GOOD, "rules/far.dl"))
    assert (check.id, check.severity, check.reports, check.file) == ("BW002", "warning", "far_nic", "rules/far.dl")
    assert check.subjects == (0, 1)  # the two symbol columns, not the number
    row = ("n1/gpu0", "n1/nic3", 25)
    assert check.subjects_of(row) == ("n1/gpu0", "n1/nic3")
    assert check.message_for(row) == "GPU n1/gpu0 reaches NIC n1/nic3 only at 25 GB/s."


def test_explicit_subjects() -> None:
    text = GOOD.replace("# @reports", "# @subjects: nic\n# @reports")
    [check] = checks_from_program(parse_program(text, "f.dl"))
    assert check.subjects == (1,)


def test_files_without_id_are_libraries() -> None:
    assert checks_from_program(parse_program(".decl x(a: symbol)\n", "lib.dl")) == []


def _errors(text: str) -> list[str]:
    with pytest.raises(ProgramError) as info:
        checks_from_program(parse_program(text, "f.dl"))
    return [str(d) for d in info.value.diagnostics]


def test_missing_keys_are_listed() -> None:
    text = "\n".join(line for line in GOOD.splitlines() if "@remediation" not in line and "@message" not in line)
    assert _errors(text) == ["f.dl:1:1: check metadata is missing '@remediation', '@message'"]


def test_bad_severity_unknown_key_bad_placeholder() -> None:
    text = (
        GOOD.replace("warning", "fatal").replace("{gbps}", "{speed}").replace("# @reports", "# @owner: me\n# @reports")
    )
    assert _errors(text) == [
        "f.dl:2:1: severity 'fatal'; expected error, warning or note",
        "f.dl:5:1: unknown metadata key '@owner'; expected one of: id, severity, summary, remediation, "
        "reports, message, subjects, needs, group",
        "f.dl:7:1: '@message' uses {speed}, which is not a column of far_nic (gpu, nic, gbps)",
    ]


def test_reports_must_be_declared() -> None:
    assert _errors(GOOD.replace("@reports: far_nic", "@reports: near_nic")) == [
        "f.dl:5:1: '@reports' names relation 'near_nic', which is not declared"
    ]


def test_duplicate_ids_across_files() -> None:
    program = parse_program(GOOD, "a.dl").merge(parse_program(GOOD.replace("far_nic", "far2"), "b.dl"))
    with pytest.raises(ProgramError) as info:
        checks_from_program(program)
    assert [str(d) for d in info.value.diagnostics] == ["b.dl:1:1: check id BW002 is already used by a.dl"]


def test_needs_is_a_query_checked_against_the_rules() -> None:
    """`@needs` names what a check judges; a mistyped relation there is bad input at its line."""
    from verifier.session.session import needs_queries

    text = GOOD.replace("# @id: BW002", '# @id: BW002\n# @needs: object(_, "nicc")')
    program = parse_program(".input object(id: symbol, kind: symbol)\n" + text, "f.dl")
    [check] = checks_from_program(program)
    assert check.needs == 'object(_, "nicc")'
    assert list(needs_queries([check], program)) == ["BW002"]
    broken = parse_program(".input object(id: symbol, kind: symbol)\n" + text.replace("object(_", "objekt(_"), "f.dl")
    with pytest.raises(ProgramError) as info:
        needs_queries(checks_from_program(broken), broken)
    assert str(info.value.diagnostics[0]).startswith("f.dl:3:1: '@needs' of BW002:")
