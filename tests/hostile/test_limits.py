"""The limits: defaults that real clusters stay within, exact parsing of user overrides, scoping."""

from __future__ import annotations

import pytest

from verifier.core.limits import LimitError, Limits, current_limits, parse_limit_value, use_limits


def test_names_are_the_flag_names() -> None:
    assert Limits.names() == (
        "file_size",
        "yaml_size",
        "id_length",
        "nesting_depth",
        "template_count",
        "expanded_objects",
        "hostlist_size",
        "list_length",
        "matrix_cells",
        "derived_tuples",
        "fixpoint_rounds",
        "policy_count",
        "engine_memory",
    )


def test_defaults_leave_room_for_the_largest_real_inputs() -> None:
    limits = Limits()
    # A 131,072-GPU fleet (benchmarks/verify_bench.py) expands to 1,483,280 objects and links, as
    # the loader counts them. It stays accepted by default (it peaks at 1.1 GiB); twice that size
    # would pass 2 GiB and is refused.
    assert 1_483_280 <= limits.expanded_objects < 2 * 1_483_280
    assert limits.template_count >= 16_384
    # A 100,000-node Slurm tree, named by one hostlist per leaf or all at once.
    assert limits.hostlist_size >= 100_000
    # The 1,450-GPU nvidia-smi matrix of issue 18 is 10 MB: read (file_size), then refused by its
    # 2,102,500 cells (matrix_cells), as importing it needed 6 GB (issue 45).
    assert limits.file_size >= 10 * 10**7
    assert limits.matrix_cells < 1450 * 1450


@pytest.mark.parametrize(
    ("name", "text", "value"),
    [
        ("file_size", "64MiB", 64 * 2**20),
        ("file_size", "1 GiB", 2**30),
        ("file_size", "500MB", 500 * 10**6),
        ("file_size", "1.5KiB", 1536),
        ("file_size", "4096", 4096),
        ("engine_memory", "16GiB", 16 * 2**30),
        ("derived_tuples", "500_000_000", 500_000_000),
        ("derived_tuples", "5M", 5_000_000),
        ("hostlist_size", "2k", 2000),
        ("id_length", " 4096 ", 4096),
    ],
)
def test_overrides_read_exact_values(name: str, text: str, value: int) -> None:
    assert getattr(Limits().with_overrides({name: text}), name) == value


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("file_size", "64M", "cannot read '64M' for limit file_size; expected a number of bytes or a size"),
        ("file_size", "64 megabytes", "cannot read '64 megabytes' for limit file_size"),
        ("file_size", "1.0001KB", "'1.0001KB' for limit file_size is not a whole number"),
        ("file_size", "1.5", "cannot read '1.5' for limit file_size"),
        ("derived_tuples", "1,000", "cannot read '1,000' for limit derived_tuples; expected a whole number"),
        ("derived_tuples", "5MB", "cannot read '5MB' for limit derived_tuples"),
        ("derived_tuples", "1e9", "cannot read '1e9' for limit derived_tuples"),
        ("derived_tuples", "0", "limit derived_tuples must be at least 1"),
        ("derived_tuples", "-5", "cannot read '-5' for limit derived_tuples"),
        ("derived_tuples", str(2**64), "does not fit 64 bits"),
        ("file_sise", "1GiB", "unknown limit 'file_sise'; did you mean 'file_size'?"),
    ],
)
def test_overrides_that_cannot_be_read_exactly_are_refused(name: str, text: str, message: str) -> None:
    with pytest.raises(LimitError) as err:
        Limits().with_overrides({name: text})
    assert message in err.value.problem
    assert str(err.value).startswith("--input-limit: ")


def test_flag_text_and_dashed_names() -> None:
    limits = Limits().with_override_text(["file-size=1GiB", "derived_tuples=10"])
    assert (limits.file_size, limits.derived_tuples) == (2**30, 10)
    with pytest.raises(LimitError, match="expected NAME=VALUE"):
        Limits().with_override_text(["file_size"])


def test_use_limits_scopes_and_restores() -> None:
    outer = current_limits()
    with use_limits(Limits(id_length=5)):
        assert current_limits().id_length == 5
        with use_limits(Limits(id_length=7)):
            assert current_limits().id_length == 7
        assert current_limits().id_length == 5
    assert current_limits() == outer


def test_a_limit_must_be_positive() -> None:
    with pytest.raises(LimitError, match="must be a positive whole number"):
        Limits(file_size=0)
    assert parse_limit_value("list_length", 10) == 10
