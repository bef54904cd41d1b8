"""One mistake, one error: a typo in a template or a template name is reported once, at its
place, and the hundreds of errors that follow from it (dangling links to what it would have
made, the same problem on every copy of a template line) are folded into it.

Each case is a real typo in a copy of a shipped inventory; the counts in the expected
messages are worked out by hand from the inventory's contents in each comment.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from verifier.cli.main import main
from verifier.core.errors import TopologError
from verifier.sources.inventory import load_inventory, load_inventory_text

INVENTORIES = Path(__file__).resolve().parent.parent.parent.parent / "inventories"
DGX = "dgx-h100-pod.yaml"
GB200 = "gb200-nvl72.yaml"


def _typo(tmp_path: Path, inventory: str, old: str, new: str) -> Path:
    text = (INVENTORIES / inventory).read_text(encoding="utf-8")
    assert text.count(old) == 1, f"{old!r} must occur once in {inventory}"
    path = tmp_path / inventory
    path.write_text(text.replace(old, new), encoding="utf-8")
    return path


def _errors(path: Path) -> list[tuple[int, int, str]]:
    with pytest.raises(TopologError) as err:
        load_inventory([path])
    return [(d.location.line, d.location.col, d.message) for d in err.value.diagnostics]


# DGX pod: 8 nodes (2 racks x 4) of template dgx-h100. Per node the template's links that
# touch a GPU: 4 NVSwitch lines x 8 GPUs + 8 GPU-PCIe = 40.
GPU_LINKS = 8 * 40
# All of a node's template links: 32 GPU-NVSwitch + 8 GPU-PCIe + 8 NIC-PCIe + 4 PCIe-CPU
# + 1 UPI = 53, two endpoints each; plus the 64 NIC-leaf cables of the pod (one end each).
ALL_NODE_ENDS = 8 * 53 * 2 + 64
# GB200: 72 GPUs x 18 switch chips = 1,296 NVLink cables, one GPU end and one chip end each.
GB_CABLES = 1296
# and 18 trays x 4 NICs = 72 NDR cables to the rail leaves, one NIC end each.
GB_NIC_CABLES = 72


@pytest.mark.parametrize(
    ("inventory", "old", "new", "line", "col", "starts", "hidden"),
    [
        # `kind` misspelt on the template's GPUs: no GPU exists, every link to one follows.
        (
            DGX,
            '{name: "gpu{i}", kind: gpu,',
            '{name: "gpu{i}", knid: gpu,',
            37,
            26,
            "unknown key 'knid' in object 'gpu{i}'; did you mean 'kind'?",
            GPU_LINKS,
        ),
        # `name` misspelt there: the same, and the message still names the object.
        (
            DGX,
            '{name: "gpu{i}", kind: gpu,',
            '{nmae: "gpu{i}", kind: gpu,',
            37,
            10,
            "unknown key 'nmae' in object 'gpu{i}'; did you mean 'name'?",
            GPU_LINKS,
        ),
        # `children` misspelt: the nodes are empty.
        (
            DGX,
            "    children:\n      - name: cpu{i}",
            "    chilren:\n      - name: cpu{i}",
            26,
            5,
            "unknown key 'chilren' in template 'dgx-h100'; did you mean 'children'?",
            ALL_NODE_ENDS,
        ),
        # `count` misspelt on the NICs: each node gets one NIC (named by the node's own {i}),
        # so 7 of 8 NICs are missing: 7 NIC-PCIe links and 7 cables per node.
        (
            DGX,
            "        count: 8\n        labels: {rail",
            "        cuont: 8\n        labels: {rail",
            43,
            9,
            "unknown key 'cuont' in object 'nic{i}'; did you mean 'count'?",
            8 * (7 + 7),
        ),
        # The template's name misspelt where it is used: one error for the one place it is
        # written (not one per node), and the 64 cables to the nodes' NICs follow from it.
        (
            DGX,
            "- template: dgx-h100\n",
            "- template: dgx-h10\n",
            76,
            13,
            "unknown template 'dgx-h10'; did you mean 'dgx-h100'?",
            64,
        ),
        # ... or where it is defined.
        (
            DGX,
            "  dgx-h100:\n    kind: node",
            "  dgx-h1000:\n    kind: node",
            76,
            13,
            "unknown template 'dgx-h100'; did you mean 'dgx-h1000'?",
            64,
        ),
        # A leaf without a name, outside any node: the 64 cables to leaves and the 32
        # leaf-spine cables have a dangling end each.
        (
            DGX,
            "      - name: leaf{i}\n",
            "      - nmae: leaf{i}\n",
            86,
            9,
            "unknown key 'nmae' in object 'leaf{i}'; did you mean 'name'?",
            64 + 32,
        ),
        (
            GB200,
            '{name: "gpu{i}", kind: gpu,',
            '{name: "gpu{i}", knid: gpu,',
            34,
            26,
            "unknown key 'knid' in object 'gpu{i}'; did you mean 'kind'?",
            18 * 4 * 1 + GB_CABLES,
        ),
        # The tray's C2C links: 4 per tray touch a GPU; with the GPUs and NICs gone, so do their cables.
        (
            GB200,
            "    children:\n      - name: grace{i}",
            "    childern:\n      - name: grace{i}",
            23,
            5,
            "unknown key 'childern' in template 'gb200-compute-tray'; did you mean 'children'?",
            18 * 8 * 2 + GB_CABLES + GB_NIC_CABLES,
        ),
        (
            GB200,
            "- template: gb200-compute-tray",
            "- template: gb200-compute-try",
            57,
            9,
            "unknown template 'gb200-compute-try'; did you mean 'gb200-compute-tray'?",
            GB_CABLES + GB_NIC_CABLES,
        ),
        (
            GB200,
            '{name: "chip{i}", kind: nvswitch,',
            '{name: "chip{i}", knd: nvswitch,',
            66,
            31,
            "unknown key 'knd' in object 'chip{i}'; did you mean 'kind'?",
            GB_CABLES,
        ),
        (
            GB200,
            '      - name: "swtray{i}"',
            '      - nme: "swtray{i}"',
            61,
            9,
            "unknown key 'nme' in object 'swtray{i}'; did you mean 'name'?",
            GB_CABLES,
        ),
    ],
)
def test_a_typo_is_one_error_that_counts_what_follows(
    tmp_path: Path, inventory: str, old: str, new: str, line: int, col: int, starts: str, hidden: int
) -> None:
    ((got_line, got_col, message),) = _errors(_typo(tmp_path, inventory, old, new))
    assert (got_line, got_col) == (line, col)
    assert message.startswith(starts)
    assert message.endswith(f" ({hidden} errors that follow from it are not listed)")


def test_copies_of_one_template_line_are_one_error_with_a_count(tmp_path: Path) -> None:
    # NICs named nci{i}: no failed definition, just a wrong name. Each of the four NIC-PCIe
    # lines of the template names 2 NICs in each of 8 nodes (16); the pod's cable line
    # names 8 NICs in each of 8 nodes (64).
    path = _typo(tmp_path, DGX, "      - name: nic{i}\n", "      - name: nci{i}\n")
    assert _errors(path) == [
        (57, 9, "link endpoint 'dgx00/nic0' does not exist; did you mean 'dgx00/nci0'? (and 15 more copies)"),
        (58, 9, "link endpoint 'dgx00/nic2' does not exist; did you mean 'dgx00/nci2'? (and 15 more copies)"),
        (59, 9, "link endpoint 'dgx00/nic4' does not exist; did you mean 'dgx00/nci4'? (and 15 more copies)"),
        (60, 9, "link endpoint 'dgx00/nic6' does not exist; did you mean 'dgx00/nci6'? (and 15 more copies)"),
        (98, 5, "link endpoint 'dgx00/nic0' does not exist; did you mean 'dgx00/nci0'? (and 63 more copies)"),
    ]


def test_unknown_model_in_a_template_is_one_error_for_its_64_gpus(tmp_path: Path) -> None:
    path = _typo(tmp_path, DGX, "model: H100-SXM5-80GB", "model: H100-SXM5-80G")
    ((line, col, message),) = _errors(path)
    assert (line, col) == (37, 9)
    assert message.startswith("unknown model 'H100-SXM5-80G' for 'dgx00/gpu0'; did you mean 'H100-SXM5-80GB'?")
    assert message.endswith("(and 63 more copies)")  # 8 GPUs x 8 nodes, one shown


def test_a_second_unrelated_mistake_is_still_reported(tmp_path: Path) -> None:
    # The GPUs' name typo hides the links to GPUs; the cables to leaves named 'lef{r}' are
    # wrong on their own: 8 leaves missing, one error for the cable line.
    path = _typo(tmp_path, DGX, '{name: "gpu{i}", kind: gpu,', '{nmae: "gpu{i}", kind: gpu,')
    text = path.read_text(encoding="utf-8").replace('b: "leaf{r}"', 'b: "lef{r}"')
    path.write_text(text, encoding="utf-8")
    errors = _errors(path)
    assert [(line, col) for line, col, _ in errors] == [(37, 10), (98, 5)]
    assert errors[1][2] == "link endpoint 'lef0' does not exist; did you mean 'leaf0'? (and 7 more copies)"


def test_an_unknown_template_is_one_error_per_place_it_is_written() -> None:
    text = """\
apiVersion: topolog.dev/v1
templates:
  box: {kind: node, children: [{name: "gpu{i}", kind: gpu, count: 2}]}
objects:
  - {name: "a{i}", template: bx, count: 50}
  - {name: "b{i}", template: bx, count: 50}
links:
  - {a: "a{i}/gpu0", b: "b{i}/gpu0", kind: nvlink, bandwidth: 1 GB/s, foreach: {i: 0..49}}
"""
    with pytest.raises(TopologError) as err:
        load_inventory_text(text, "inv.yaml")
    assert [str(d) for d in err.value.diagnostics] == [
        # Each of the 50 links has both ends in entries that failed: 50 x 2, split by
        # which end: 50 are counted at each place. `  - {` and `name: "a{i}", ` put `template` at column 20.
        "inv.yaml:5:20: unknown template 'bx'; did you mean 'box'? (50 errors that follow from it are not listed)",
        "inv.yaml:6:20: unknown template 'bx'; did you mean 'box'? (50 errors that follow from it are not listed)",
    ]


def test_a_misspelt_required_key_is_one_error_not_two() -> None:
    text = """\
apiVersion: topolog.dev/v1
objects:
  - {name: n0, kind: node, children: [{name: g0, kind: gpu}, {name: g1, kind: gpu}]}
links:
  - {a: n0/g0, b: n0/g1, knd: nvlink, bandwidth: 1 GB/s}
"""
    with pytest.raises(TopologError) as err:
        load_inventory_text(text, "inv.yaml")
    (only,) = err.value.diagnostics
    assert str(only).startswith("inv.yaml:5:26: unknown key 'knd' in link n0/g0 - n0/g1; did you mean 'kind'?")


def test_a_name_or_kind_left_empty_is_an_error_not_a_missing_object() -> None:
    # `name:` with nothing after it is YAML null; the entry used to vanish without a word.
    text = """\
apiVersion: topolog.dev/v1
objects:
  - name: n0
    kind: node
    children:
      - name:
        kind: gpu
      - name: gpu1
        kind:
"""
    with pytest.raises(TopologError) as err:
        load_inventory_text(text, "inv.yaml")
    assert [(d.location.line, d.location.col, d.message[:40]) for d in err.value.diagnostics] == [
        (6, 9, "an object has no 'name'; every object ne"),
        (9, 9, "object 'gpu1' has no 'kind' (and no 'tem"),
    ]


def test_a_mistake_inside_a_node_template_names_the_template_not_a_hole(tmp_path: Path) -> None:
    # Both CPUs' memory is named dram0: the second is a duplicate in every node, found
    # once when the template is planned. Ids there are relative to the node.
    path = _typo(tmp_path, DGX, "          - name: dram{i}  ", "          - name: dram0    ")
    assert _errors(path) == [
        (32, 13, f"'<dgx-h100>/dram0' is in two parents: '<dgx-h100>/cpu0' (at {path}:32:13) and '<dgx-h100>/cpu1'"),
    ]


def test_the_cli_prints_one_line_for_one_typo(tmp_path: Path) -> None:
    path = _typo(tmp_path, GB200, '{name: "gpu{i}", kind: gpu,', '{nmae: "gpu{i}", kind: gpu,')
    result = CliRunner().invoke(main, ["verify", str(path)])
    assert result.exit_code == 2
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and errors[0].startswith(f"error: {path}:34:10: unknown key 'nmae'")
    assert result.stdout == ""
