"""Memory bounds (issue 45): each kind of input that once needed many GB is refused by a named bound,
with its place, before the memory is spent; a MemoryError is a refusal (exit 2), never a crash.

Small inputs with the bound lowered show the message; one case per kind shows that the default
refuses the representative input at once (counted before anything is expanded or parsed).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import run_cli

from benchmarks.verify_bench import Layout, inventory_yaml
from verifier.core.errors import EngineError, TopologError
from verifier.core.limits import Limits, use_limits
from verifier.engine.backend import OutgrewEngine
from verifier.engine.duckdb_backend import DuckDBBackend
from verifier.engine.memory_backend import MemoryBackend
from verifier.engine.parser import parse_program

SMALL = """\
apiVersion: topolog.dev/v1
kind: Inventory
metadata: {name: small}
objects:
  - name: n1
    kind: node
    children:
      - {name: gpu0, kind: gpu, model: H100-SXM5-80GB}
      - {name: gpu1, kind: gpu, model: H100-SXM5-80GB}
"""

PAIRS = ".input item(x: number)\n.decl pair(x: number, y: number)\npair(X, Y) :- item(X), item(Y).\n"


def _write(folder: Path, name: str, text: str) -> str:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return str(path)


# -- YAML: bytes bounded before parsing ---------------------------------------------------------


def test_a_yaml_document_past_yaml_size_is_refused_at_the_line_that_crosses_it(tmp_path: Path) -> None:
    inv = _write(tmp_path, "inv.yaml", SMALL)
    # Line lengths with their newlines: 27, 16, 24, 9, 13, 15, 14 = 118 bytes after line 7 and
    # 118 + 55 = 173 after line 8, so a limit of 150 bytes is crossed on line 8. SMALL is
    # 118 + 2 x 55 = 228 bytes.
    code, _out, err = run_cli("--no-config", "--input-limit", "yaml_size=150", "verify", inv)
    assert code == 2
    assert f"{inv}:8: this YAML document is 228 bytes (the limit is crossed on this line), " in err
    assert "over the limit yaml_size = 150 bytes; raise it with --input-limit yaml_size=VALUE" in err


def test_the_default_refuses_a_large_written_out_inventory_without_parsing_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An inventory written out in full as an importer writes it costs about 90 bytes per byte once
    # parsed (11 MB took 1.0 GB; issue 45's 50 MB one 4.4 GB): 7 MiB of it is over the 6 MiB default.
    entry = "  - {name: gpu%07d, kind: gpu, model: H100-SXM5-80GB}\n"
    count = 7 * 2**20 // len(entry % 0) + 1
    text = "apiVersion: topolog.dev/v1\nkind: Inventory\nmetadata: {name: flat}\nobjects:\n" + "".join(
        entry % i for i in range(count)
    )
    inv = _write(tmp_path, "flat.yaml", text)

    def parsed(*_args: object) -> None:
        raise AssertionError("the document was parsed before its size was checked")

    monkeypatch.setattr("verifier.sources.inventory.yaml_source._load", parsed)
    code, _out, err = run_cli("--no-config", "verify", inv)
    assert code == 2
    assert f"this YAML document is {len(text):,} bytes" in err
    assert "over the limit yaml_size = 6 MiB" in err


def test_a_baseline_of_many_entries_is_refused_by_yaml_size(tmp_path: Path) -> None:
    inv = _write(tmp_path, "inv.yaml", SMALL)
    # 120,000 entries as --write-baseline writes them (about 140 bytes each, indented JSON) are
    # over 16 MB, past the 6 MiB default: refused before parsing (10^6 entries took GBs).
    rows = [
        {"fingerprint": f"{i:032x}", "rule": "BW001", "subjects": [f"n{i}/gpu0"], "message": "m"}
        for i in range(120_000)
    ]
    text = json.dumps({"schemaVersion": 1, "tool": "topolog", "findings": rows}, indent=2) + "\n"
    assert len(text) > 6 * 2**20
    baseline = _write(tmp_path, "baseline.json", text)
    code, _out, err = run_cli("--no-config", "verify", inv, "--baseline", baseline)
    assert code == 2
    assert f"{baseline}:" in err
    assert "over the limit yaml_size = 6 MiB" in err


# -- inventories: objects and links counted before expanding ------------------------------------


@pytest.mark.slow
def test_the_default_accepts_the_131072_gpu_fleet(tmp_path: Path) -> None:
    # The documented scale (benchmarks/README.md): verifies in about 7 s and 1.1 GiB, with the
    # findings of its deliberate faults (exit 1), under every default bound.
    inv = _write(tmp_path, "fleet.yaml", inventory_yaml(Layout(131_072)))
    code, _out, err = run_cli("--no-config", "verify", inv)
    assert code == 1, err


def test_a_fleet_past_expanded_objects_is_refused_at_once(tmp_path: Path) -> None:
    # 262,144 GPUs: 1,024 scalable units (line 38's entry, `count: 1024`) of 8 racks of 4 nodes.
    # A node is 29 objects (itself, 2 CPUs with a DRAM each, 8 GPUs, 4 NVSwitches, 4 PCIe
    # switches, 8 NICs) and 53 links (32 GPU-NVSwitch, 16 device-PCIe switch, 4 switch-CPU, 1 UPI),
    # plus its 8 cables to the leaves: 90. The entry: 32,768 x 90 + 8,192 racks + 1,024 pods
    # + 8,192 leaves = 2,966,528, over 1,800,000: refused there, before anything is built.
    inv = _write(tmp_path, "fleet.yaml", inventory_yaml(Layout(262_144)))
    code, _out, err = run_cli("--no-config", "verify", inv)
    assert code == 2
    assert f"{inv}:38:5: the inventory would expand to " in err
    assert "objects and links (2,966,528 of them from this entry)" in err
    assert "over the limit expanded_objects = 1,800,000" in err


# -- importers: a device matrix bounded by its header -----------------------------------------


def _matrix(n: int, rows: int) -> str:
    head = "\t" + "\t".join(f"GPU{i}" for i in range(n)) + "\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID"
    lines = [head]
    for i in range(rows):
        cells = ["X" if i == j else "NV18" for j in range(n)]
        lines.append(f"GPU{i}\t" + "\t".join(cells) + "\t0-63\t0\t\tN/A")
    return "\n".join(lines) + "\n"


def test_a_matrix_past_matrix_cells_is_refused_at_its_header(tmp_path: Path) -> None:
    smi = _write(tmp_path, "topo.txt", _matrix(3, 3))
    # 3 GPUs: 3 x 3 = 9 cells, over 8.
    code, _out, err = run_cli("--no-config", "--input-limit", "matrix_cells=8", "import", "nvidia-smi", smi)
    assert code == 2
    assert f"{smi}:1: this `nvidia-smi topo -m` matrix has 3 devices, 9 cells, over the limit matrix_cells = 8" in err
    code, out, _err = run_cli("--no-config", "--input-limit", "matrix_cells=9", "import", "nvidia-smi", smi)
    assert code == 0 and "GPU2" in out


def test_the_default_refuses_a_1450_gpu_matrix_from_its_header_alone(tmp_path: Path) -> None:
    # Issue 45: importing a 1,450-GPU matrix took 6 GB. Only the header and no row is written here:
    # the refusal comes before any row is read. 1,450 x 1,450 = 2,102,500 cells > 250,000.
    smi = _write(tmp_path, "topo.txt", _matrix(1450, 0))
    code, _out, err = run_cli("--no-config", "verify", "--from", "nvidia-smi", smi)
    assert code == 2
    assert f"{smi}:1: this `nvidia-smi topo -m` matrix has 1,450 devices, 2,102,500 cells" in err
    assert "over the limit matrix_cells = 250,000" in err


# -- engines --------------------------------------------------------------------------------------


def test_the_memory_engine_holds_derived_tuples_to_engine_memory() -> None:
    program = parse_program(PAIRS, "t.dl")
    # 4 items derive 4 x 4 = 16 pairs, more than the 10 allowed here (the join itself stays under
    # its binding cap of 100).
    engine = MemoryBackend()
    engine.max_bindings, engine.max_tuples = 100, 10
    engine.load(program)
    engine.add_facts("item", [(i,) for i in range(4)])
    with pytest.raises(TopologError) as caught:
        engine.evaluate()
    assert not isinstance(caught.value, OutgrewEngine)
    message = str(caught.value)
    assert message.startswith("t.dl:2:1: the rules derive 16 tuples (relation 'pair' among them), more than the 10")
    assert "over the limit engine_memory" in message
    # Chosen by --engine auto, the same is the sign to start over in DuckDB.
    auto = MemoryBackend(max_bindings=100, max_rounds=256)
    auto.max_tuples = 10
    auto.load(program)
    auto.add_facts("item", [(i,) for i in range(4)])
    with pytest.raises(OutgrewEngine):
        auto.evaluate()


def test_duckdb_out_of_memory_is_the_engine_memory_bound_not_the_rule() -> None:
    # 20,000 items pair up into 400 million rows: more than 16 MiB can hold.
    with use_limits(Limits(engine_memory=16 * 2**20, derived_tuples=10**9)):
        engine = DuckDBBackend()
        engine.load(parse_program(PAIRS, "t.dl"))
        engine.add_facts("item", [(i,) for i in range(20_000)])
        with pytest.raises(TopologError) as caught:
            engine.evaluate()
    (diagnostic,) = caught.value.diagnostics
    assert str(diagnostic.location) == "<evaluation>"  # not t.dl:2:1, the rule that happened to run
    assert "DuckDB ran out of memory while deriving relation 'pair' (declared at t.dl:2:1)" in diagnostic.message
    assert "this is not a fault in that rule" in diagnostic.message
    assert (
        "over the limit engine_memory = 16 MiB; raise it with --input-limit engine_memory=VALUE" in diagnostic.message
    )


@pytest.mark.parametrize("engine", ["duckdb", "memory"])
def test_an_overflow_in_a_rule_is_reported_at_its_arithmetic(tmp_path: Path, engine: str) -> None:
    inv = _write(tmp_path, "inv.yaml", SMALL)
    # `big(X, N) :- object(X, "gpu"), N = ` is 35 characters: the sum starts in column 36 of line 2.
    rules = _write(
        tmp_path,
        "ovf.dl",
        '.decl big(a: symbol, n: number)\nbig(X, N) :- object(X, "gpu"), N = 9223372036854775807 + 1.\n',
    )
    code, _out, err = run_cli("--no-config", "verify", inv, "--engine", engine, "--rules", rules)
    assert code == 2
    assert f"error: {rules}:2:36: arithmetic overflowed 64-bit integers" in err
    assert "(9223372036854775807 + 1)" in err


def test_duckdb_overflow_names_the_rule_without_sql() -> None:
    program = parse_program(".input item(x: number)\n.decl next(x: number)\nnext(Y) :- item(X), Y = X * 2.\n", "t.dl")
    engine = DuckDBBackend()
    engine.load(program)
    engine.add_facts("item", [(2**62,)])  # 2^62 * 2 = 2^63, one past the largest 64-bit integer
    with pytest.raises(EngineError) as caught:
        engine.evaluate()
    # `next(Y) :- item(X), Y = ` is 24 characters: the product starts in column 25 of line 3.
    assert str(caught.value).startswith(
        "t.dl:3:25: arithmetic overflowed 64-bit integers in (X * 2) while deriving 'next'"
    )


# -- a MemoryError is a refusal -------------------------------------------------------------------


def test_a_memory_error_inside_a_command_is_exit_2_naming_the_bounds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    inv = _write(tmp_path, "inv.yaml", SMALL)

    def exhausted(*_args: object, **_kwargs: object) -> None:
        raise MemoryError

    monkeypatch.setattr("verifier.cli.verify_commands.verify", exhausted)
    code, out, err = run_cli("--no-config", "verify", inv)
    assert code == 2
    assert out == ""
    assert "internal error" not in err and "Traceback" not in err
    assert "ran out of memory before any bound stopped it (engine_memory = 1 GiB, yaml_size = 6 MiB" in err
    assert "--input-limit NAME=VALUE" in err


def test_a_memory_error_outside_a_command_is_exit_2_too(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from verifier.cli import main as cli_main

    def exhausted() -> None:
        raise MemoryError

    monkeypatch.setattr(cli_main, "forget_reads", exhausted)
    with pytest.raises(SystemExit) as done:
        cli_main.run(["--no-config", "rules"])
    assert done.value.code == 2
    err = capsys.readouterr().err
    assert "error: topolog: this run ran out of memory before any bound stopped it" in err
    assert "internal error" not in err


# -- importers write entry by entry ----------------------------------------------------------------


def test_an_import_is_written_entry_by_entry_as_the_one_document_it_was(tmp_path: Path) -> None:
    # Writing each top-level entry on its own (200,000 Slurm hosts: 2.4 GB -> 0.4 GB) must give the
    # text that dumping the whole document at once gives: the same reader sees the same inventory.
    import yaml

    from verifier.sources.importers import import_files, yaml_out

    conf = _write(
        tmp_path,
        "topology.conf",
        "SwitchName=s0 Nodes=n[0-2]\nSwitchName=s1 Nodes=m[0-1]\nSwitchName=top Switches=s[0-1]\n",
    )
    text = yaml_out.to_yaml(import_files("slurm", [conf]).inventory, "t", "slurm: topology.conf")
    body = text.index("apiVersion:")
    whole = yaml.dump(
        yaml_out._plain(yaml.safe_load(text)),
        Dumper=yaml_out._Dumper,
        sort_keys=False,
        default_flow_style=False,
        width=1000,
        allow_unicode=True,
    )
    assert text[body:] == whole
    # Every switch (s0, s1, top) and host (n0-n2, m0-m1) is an entry of its own at the top: 3 + 5.
    assert text.count("\n- name: ") == 3 + 5


# -- Slurm: hosts of one import, all hostlists together ----------------------------------------


def test_hostlists_each_under_the_cap_are_bounded_together(tmp_path: Path) -> None:
    conf = _write(tmp_path, "topology.conf", "SwitchName=s0 Nodes=a[1-3]\nSwitchName=s1 Nodes=b[1-3]\n")
    # Each list names 3 hosts, under 5; line 1 makes a1-a3, line 2 b1 and b2 (5 hosts), and b3 is the 6th.
    code, _out, err = run_cli("--no-config", "--input-limit", "hostlist_size=5", "verify", "--from", "slurm", conf)
    assert code == 2
    assert f"{conf}:2: the Slurm input names 6 hosts or more, all its hostlists together, " in err
    assert "over the limit hostlist_size = 5; raise it with --input-limit hostlist_size=VALUE" in err
    code, _out, err = run_cli("--no-config", "--input-limit", "hostlist_size=6", "import", "slurm", conf)
    assert code == 0, err
