"""`dcgmi diag` (DCGM's active diagnostic) as the GPUs whose hardware tests failed.

Both forms the tool prints are read (samples and their sources: tests/sources/observed/samples/dcgmi-diag/):
- the table (`dcgmi diag -r N`): a two-column box, one row per test under a category header
  (`+-----  Hardware  ---...`). DCGM 3.x gives a test's result as `Pass - All`, `Fail - GPU: 0` or
  `Fail - GPUs: 0, 1` (one row per status), DCGM 4.x as the test's own status and then one row per
  entity (`GPU0: Fail`). A message (`Warning`, `Error`, `Info`) is cut into rows of 45 characters, mid-word,
  continued in rows with an empty name: the cuts are joined back without a space;
- the JSON (`dcgmi diag -r N -j`): `DCGM GPU Diagnostic` (3.x; a result names its `gpu_id`) or
  `DCGM Diagnostic` (4.x; `entity_group` GPU and `entity_id`), each test's results with `status` and
  `warnings`.
`--iterations N` prints each run's table (or, with -j, each run's document in an `iterations` list): every run is
read, and a GPU that failed in any of them is judged.

What makes a finding (one per GPU and file, OBS004, the tests and messages in its reason):
- a GPU test (Integration, Hardware and Stress categories; TESTS below) whose result is Fail for the GPU,
  and a failure message of that test that names the GPU (`GPU 0 ...`). DCGM fails every GPU of the run
  when one fails (`Fail - All` beside messages naming GPU 0 only, DCGM#145): a GPU no message names is
  not judged;
- not the Deployment (software) checks: persistence mode, the denylist, environment variables,
  permissions, libraries are the host's configuration, not the GPU (a pending page retirement or row
  remapping they also check is what nvidia-smi -q and dcgm-exporter show, read there);
- not a message that an NVLink is down: DCGM 2.4 failed PCIe on every GPU of hosts without NVLink for
  that (DCGM#49); the NVLink readers judge links against the inventory (OBS002/OBS003);
- not Context Create (a GPU busy or in exclusive mode fails it), nvbandwidth (fails on the utilisation
  left by the test before it, DCGM#272) or the CPU EUD: not the GPU's hardware.
A result value other than Pass, Fail, Skip or Warn, a category or a failed test this reader does not know,
or a row it cannot read is refused at its line: a diagnostic is never guessed at.
DCGM numbers GPUs by its own id, which is the driver's index on a host DCGM has not been told otherwise; in a
container given some of the host's GPUs it numbers those from 0. -j output names each id's board serial (3.x
`GPU Device Serials`, 4.x `entity_groups`): a failed GPU carries it, so it is matched by serial where the node
declares serials or the host's nvidia-smi listing shows them, whatever the numbering. The table prints no serial.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from verifier.core.errors import SourceLocation, TopologError
from verifier.sources.observed.model import (
    DIAG_FAILED,
    CounterObservation,
    GpuRef,
    Observations,
    ObservedFile,
    host_of_file,
)
from verifier.sources.observed.tool_json import tool_json

FORMAT = "dcgmi-diag"
METRIC = DIAG_FAILED
"""The observation's metric name: one per GPU with a failed hardware test; its label `reason` says which."""

STATUSES = frozenset({"Pass", "Fail", "Skip", "Warn"})
_CATEGORIES = {"metadata": False, "deployment": False, "integration": True, "hardware": True, "stress": True}
"""Category header -> whether its tests are GPU tests (False: facts about the host or the run)."""


def _key(name: str) -> str:
    return re.sub(r"[\s_]+", " ", name.strip().lower())


TESTS: dict[str, bool] = {
    **dict.fromkeys(
        (
            "pcie",
            "gpu memory",
            "memory",
            "diagnostic",
            "sm stress",
            "targeted stress",
            "targeted power",
            "memory bandwidth",
            "memtest",
            "pulse test",
            "eud test",
            "eud",
        ),
        True,
    ),
    **dict.fromkeys(("context create", "nvbandwidth", "cpu eud test", "cpu eud"), False),
}
"""A test of a GPU category (3.x display name or 4.x plugin name, lower case, `_` as space) -> whether its
failure is the GPU's hardware fault."""

_HEADER = re.compile(r"^\|\s*Diagnostic\s*\|\s*Result\s*\|$")
_RULE = re.compile(r"^\+-+\+-+\+$")
_DOUBLE = re.compile(r"^\+=+\+=+\+$")
# A category's name is words with one space between (a lazy `.*?` before `\s+` took time quadratic in a long
# row of spaces: 40,000 spaces, 26 s).
_SECTION = re.compile(r"^[|+]-+ +(\S+(?: \S+)*) +-+\+-+[|+]$")
_ROW = re.compile(r"^\| (.{25}) \| (.*?)(?: \|)?$")
# ASCII digits only: a GPU id in another script's digits is no id DCGM prints. The cells matched are stripped,
# so a result ends the cell (a lazy `.*?` before `\s*$` was quadratic in a row of spaces).
_GROUPED = re.compile(r"^(Pass|Fail|Skip|Warn|[A-Za-z]+) - (All|GPUs?: (\d+(?:, \d+)*))\s*$", re.ASCII)
_ENTITY = re.compile(r"^(GPU|CPU) ?(\d+): (\S.*)$", re.ASCII)
_CODE = re.compile(r"^Code: \(\d+\)$", re.ASCII)
_CUT_LIST = re.compile(r"^(Pass|Fail|Skip|Warn) - GPUs: [\d, ]*\.\.\.$", re.ASCII)
"""A GPU list dcgmi cut: a value wider than its 46-character column is cut to 43 and `...` (ReplaceTag in
dcgmi/CommandOutputController.cpp), so `Pass - GPUs: 0, 1, ..., 10` of eleven GPUs or more ends `9, ...`."""
_NAMES_GPU = re.compile(r"\bGPU ?(\d+)", re.ASCII)
_NVLINK_DOWN = re.compile(r"NvLink link \d+ is currently down", re.IGNORECASE)
_CONDITIONS = re.compile(
    r"thermal violations totaling|Clocks are being throttled for GPU|Clocks event for GPU \d+ because of event"
    r"|did not reach desired power minimum"
    r"|did not reach desired stress level|Enforced power limit on GPU|Couldn't allocate at least",
    re.IGNORECASE,
)
"""Messages of the conditions a GPU ran under, not of a fault in it: thermal violations, clock throttling, power
or stress short of the target, a power limit set below the target, memory other processes hold. DCGM ranks each
DCGM_ERROR_MONITOR, "can perform workload" (DCGM_FR_THERMAL_VIOLATIONS(_TS), _THROTTLING_VIOLATION, _TARGET_POWER,
_STRESS_LEVEL, _ENFORCED_POWER_LIMIT, _MEMORY_ALLOC in dcgmlib/src/dcgm_errors.c; a throttle's next step is
"This GPU can still perform workload"): cooling, power caps and a busy GPU are the site's to judge, not a GPU to
take out of service (DCGM#242: a 0.0 s thermal violation failed the test). DCGM 4.x renamed throttling "clocks
event" (DCGM_FR_THROTTLING_VIOLATION became DCGM_FR_CLOCKS_EVENT_VIOLATION, "Clocks event for GPU %u because of
event starting %.1f seconds into the test. %s", in NVIDIA/DCGM's own message tests): both wordings are read."""
_RANKED_BELOW_A_FAULT = re.compile(
    r"(?:GPU \d+ )?"  # the GPU's number DCGM writes before a message (`GPU 0 Error using CUDA API ...`)
    r"(?:Error using CUDA API \w"
    r"|Cannot reliably read the power usage for GPU"
    r"|Detected (?:clock throttling|clocks event) due to (?:thermal|power) violation in GPU"
    r"|Temperature -?\d+ of (?:HBM Memory on )?GPU \d+ exceeded user-specified maximum allowed temperature"
    r"|More than \d+ single-bit ECC error\(s\) detected in GPU"
    r"|Could not query field .* for GPU \d"
    r"|Error calling NVML API"
    r"|ECC memory for GPU \d+ is in a pending state"
    r"|GPU \d+ is running at PCI link width \d+X, which is below the minimum allowed"
    r"|Skipping test \S+ because ECC is not enabled on GPU"
    r"|The \S+(?: \S+){0,3} test is skipped for this GPU)",
    re.ASCII,
)
"""DCGM's own messages for the failures it ranks DCGM_ERROR_MONITOR ("can perform workload, but needs to be
monitored") or DCGM_ERROR_CONFIG, as dcgm_errors.h words them (DCGM_FR_CUDA_API, _POWER_UNREADABLE,
_CLOCK_THROTTLE_THERMAL / _POWER, _TEMP_VIOLATION, _VOLATILE_SBE_DETECTED, _FIELD_QUERY, _NVML_API, _ECC_PENDING;
config: _PCIE_WIDTH, _ECC_DISABLED, _TEST_DISABLED; severities in dcgmlib/src/dcgm_errors.c). DCGM 4.x words the
two throttles "Detected clocks event due to thermal (power) violation in GPU %u." (DCGM_FR_CLOCKS_EVENT_THERMAL /
_POWER, the same codes 10 and 12) and adds an HBM reading to _TEMP_VIOLATION ("Temperature %lld of HBM Memory on
GPU %u exceeded ..."): read as the older words are. The table prints no
severity, so a message in one of these words is read as -j's `error_severity` 1 or 5 is: no GPU fault. A PCIe link
trained narrower is judged by the PCIe checks against the declared link (OBS001/OBS101), not here. Matched from the
message's start (review R-RT): a triage message quoting such words (`There was an internal error during the test:
'Error using CUDA API ...'`) stays a fault; and only in the table: -j's own `error_severity` is never overruled."""
_ITERATION = re.compile(r"^Running iteration (\d{1,9}) of (\d{1,9})\.\.\.$", re.ASCII)
_ITERATIONS_END = re.compile(
    r"^(?:Passed all (\d{1,9}) runs of the diagnostic"
    r"|Aborting the iterative runs of the diagnostic due to failure: .*)$",
    re.ASCII,
)
"""`dcgmi diag --iterations N` (RunStartDiag in dcgmi/Diag.cpp): each run's table after `Running iteration K of N...`,
then `Passed all N runs of the diagnostic`, or, where a run failed (the runs stop there), `Aborting the iterative runs
of the diagnostic due to failure: ...`."""
_MESSAGE_ROWS = ("warning", "error", "info")
_CUT = 45
"""Characters of a message per table row (dcgmi's DATA_INFO_TAG_LEN)."""


@dataclass
class _Test:
    name: str
    gpu_test: bool | None
    """True: a GPU hardware test; False: not one; None: a test this reader does not know."""
    line: int
    failed: set[int | None] = field(default_factory=set)
    """GPU ids whose result is Fail (None: `Fail - All`)."""
    messages: list[tuple[str, int]] = field(default_factory=list)
    """Failure messages (Warning / Error rows, JSON warnings) with their line."""
    entities: bool = False
    """Whether results name their GPUs (3.x `Fail - GPU: 0`, 4.x `GPU0: Fail`, JSON)."""
    summary_failed: bool = False
    """A 4.x table's own result row for the test says Fail (its GPUs' rows, if any, say which)."""
    summary_warned: bool = False
    """A 4.x table's own result row for the test says Warn: dcgmi 4.x prints a GPU's Warn as `GPU0: Fail` (its
    entity rows show Warn as Fail; only the test's own row shows Warn: HelperDisplayDiagResult in dcgmi/Diag.cpp),
    so that test's `Fail` rows are warnings, not failures."""

    def failed_gpus(self) -> set[int | None]:
        """GPUs whose result is Fail; {None}: every GPU of the run (`Fail - All`, or a failed test whose
        result names no GPU).
        """
        if self.summary_warned and not self.summary_failed:
            return set()
        if self.entities:
            return self.failed
        return {None} if self.summary_failed else set()


def looks_like(text: str) -> bool:
    """`dcgmi diag` output: its table's banner or header, or its JSON root.

    Tried before the other text formats on every observation file: one scan of the first KiB for a word both
    markers share ("iagnostic") turns every other tool's file away, and only a file that has it is looked at.
    """
    head = text[:1024]
    if "iagnostic" not in head:
        return False
    if head[:256].lstrip().startswith("{"):
        return '"DCGM GPU Diagnostic"' in head or '"DCGM Diagnostic"' in head
    if "Successfully ran diagnostic for group." in head:
        return True
    return any(_HEADER.match(line.strip()) for line in head.splitlines())


def _status(value: str, loc: SourceLocation) -> str:
    if value not in STATUSES:
        raise TopologError.at(loc, f"diagnostic result {value!r}; expected Pass, Fail, Skip or Warn")
    return value


def _category(name: str, loc: SourceLocation) -> str:
    key = _key(name)
    if key not in _CATEGORIES:
        raise TopologError.at(
            loc, f"diagnostic category {name!r}; expected Metadata, Deployment, Integration, Hardware or Stress"
        )
    return key


def _read_table(text: str, filename: str) -> list[_Test]:
    tests: list[_Test] = []
    state = "before"  # before the header, in the table, after its footer
    category: str | None = None
    test: _Test | None = None
    message: list[str] | None = None  # the message being joined back from its rows
    keep = False  # whether it is a failure message (Warning, Error) of a test, or an Info to pass over
    message_line = 0
    header_rows = 0
    iteration: tuple[int, int] | None = None  # `--iterations N`: the run being read (K, N)

    def close_message() -> None:
        nonlocal message
        if message is not None and keep and test is not None:
            test.messages.append(("".join(message).strip(), message_line))
        message = None

    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.rstrip()
        loc = SourceLocation(filename, number)
        if state == "before":
            if iteration is not None and tests and header_rows == 0 and _ITERATIONS_END.match(line):
                # A run that stopped before its table (dcgmi printed its error instead): the runs end here.
                state = "done"
                continue
            run = _ITERATION.match(line)
            if run and header_rows == 0 and iteration is None and not tests:
                iteration = (int(run.group(1)), int(run.group(2)))
                if iteration[0] != 1 or iteration[1] < 2:
                    raise TopologError.at(loc, f"{line!r}; expected 'Running iteration 1 of N...' (N of 2 or more)")
                continue
            if _RULE.match(line) and header_rows == 0:
                header_rows = 1
            elif header_rows == 1 and _HEADER.match(line):
                header_rows = 2
            elif header_rows == 2 and _DOUBLE.match(line):
                state = "table"
            elif header_rows or line.startswith("|"):
                raise TopologError.at(loc, "not the dcgmi diag table's header; expected '| Diagnostic | Result |'")
            continue  # a banner, prompt or container note before the table
        if state == "after":
            run = _ITERATION.match(line)
            if (
                iteration is not None
                and run
                and (int(run.group(1)), int(run.group(2))) == (iteration[0] + 1, iteration[1])
            ):
                # The next run of `--iterations N`: its table follows, read as the runs before it were.
                iteration = (iteration[0] + 1, iteration[1])
                state, header_rows, category, test = "before", 0, None, None
                continue
            end = _ITERATIONS_END.match(line)
            if (
                iteration is not None
                and end
                and (end.group(1) is None or int(end.group(1)) == iteration[1] == iteration[0])
            ):
                state = "done"
                continue
            if line.strip():
                if iteration is None:
                    expected = "one diagnostic per file"
                elif iteration[0] < iteration[1]:
                    expected = f"'Running iteration {iteration[0] + 1} of {iteration[1]}...' or the end of the runs"
                else:
                    expected = f"'Passed all {iteration[1]} runs of the diagnostic'"
                raise TopologError.at(loc, f"text after the dcgmi diag table; expected {expected}")
            continue
        if state == "done":
            if line.strip():
                raise TopologError.at(loc, "text after the end of the iterative runs; expected one dcgmi diag per file")
            continue
        if _RULE.match(line):
            close_message()
            state = "after"
            continue
        section = _SECTION.match(line)
        if section:
            close_message()
            category, test = _category(section.group(1), loc), None
            continue
        row = _ROW.match(line)
        if not row:
            raise TopologError.at(loc, "not a row of the dcgmi diag table; expected '| name | result |'")
        name, cell = row.group(1).strip(), row.group(2)
        info = cell.strip()
        # A message row holds 45 characters of it, cut mid-word: a row with an empty name after one continues
        # it, unless it reads as a result row and the row before it was not full (the message had ended).
        if not name and message is not None:
            full = len(message[-1]) >= _CUT and message[-1][_CUT - 1] != " "
            # After a full row, a 4.x GPU's own result (`GPU1: Fail`, shorter than a row of message) is that GPU's
            # row: a message of a multiple of 45 characters (one in 45) swallowed the next GPU's failure before.
            entity = _ENTITY.match(info)
            own = entity is not None and entity.group(3) in STATUSES and len(info) < _CUT
            if (full and not own) or not (_GROUPED.match(info) or entity or _CODE.match(info)):
                message.append(cell[:_CUT])
                continue
        close_message()
        kind = _key(name.split(":", 1)[0])
        if kind in _MESSAGE_ROWS:
            message, message_line = [cell[:_CUT]], number
            keep = kind != "info" and test is not None
            entity = _NAMES_GPU.search(name)
            if entity and not _NAMES_GPU.search(info):  # a name such as `Warning: GPU0` says whose it is
                message.insert(0, f"GPU {entity.group(1)} ")
            continue
        if category is None:
            raise TopologError.at(loc, "a row before any category header; expected '+-----  Hardware  ...'")
        if category == "metadata":
            continue
        if name:
            test = _Test(name, TESTS.get(_key(name)) if _CATEGORIES[category] else False, number)
            tests.append(test)
        elif test is None:
            raise TopologError.at(loc, "a result row without a test; expected the test's name in the first column")
        if _CODE.match(info):
            continue
        cut = _CUT_LIST.match(info)
        if cut:
            # The GPUs of a Pass, Skip or Warn row fail nothing: its cut list is read as no failure. A failed
            # list that is cut does not say which GPUs failed: refused, not guessed.
            if cut.group(1) == "Fail":
                raise TopologError.at(
                    loc, "the list of failed GPUs is cut short by dcgmi ('...'); expected it whole (use dcgmi diag -j)"
                )
            test.entities = True
            continue
        grouped, entity_row = _GROUPED.match(info), _ENTITY.match(info)
        if grouped:
            status = _status(grouped.group(1), loc)
            ids: list[int | None] = (
                [None] if grouped.group(2) == "All" else [int(x) for x in grouped.group(3).split(", ")]
            )
            test.entities = True
        elif entity_row:
            status = _status(entity_row.group(3), loc)
            ids = [int(entity_row.group(2))] if entity_row.group(1) == "GPU" else []
            test.entities = True
        else:
            status = _status(info, loc)
            ids = []
            test.summary_failed = test.summary_failed or status == "Fail"
            test.summary_warned = test.summary_warned or status == "Warn"
        if status == "Fail":
            test.failed.update(ids)
    close_message()
    if state == "before":
        raise TopologError.at(
            SourceLocation(filename, 1), "no dcgmi diag table; expected '| Diagnostic | Result |' and its rows"
        )
    if state == "after" and iteration is not None and iteration[0] < iteration[1]:
        # The runs stop at a run that failed, and dcgmi says so last: without that line the output was cut short.
        raise TopologError.at(
            SourceLocation(filename, max(1, len(text.splitlines()))),
            f"run {iteration[0]} of {iteration[1]} ends the file; expected the next run or the line ending the runs",
        )
    if state == "table":
        raise TopologError.at(
            SourceLocation(filename, max(1, len(text.splitlines()))),
            "the dcgmi diag table does not end; expected its closing '+---+---+' row (the output was cut short?)",
        )
    return tests


def _status_lines(text: str) -> list[int]:
    """The line of each `"status"` key, in text order: json.loads keeps keys in that order, so the n-th one
    met walking the document in order is the n-th here.
    """
    return [text.count("\n", 0, m.start()) + 1 for m in re.finditer(r'(?<!\\)"status"\s*:', text)]


_NO_SERIAL = re.compile(r"(?:<<<[A-Z_]{1,40}>>>|\[?N/A\]?)\Z", re.ASCII)
"""DCGM's words for a string field it could not read (DCGM_STR_BLANK `<<<NULL>>>`, `<<<NOT_SUPPORTED>>>`,
`<<<NOT_FOUND>>>`, `<<<NOT_PERM>>>`, dcgm_structs.h), and nvidia-smi's `N/A`: no serial, not a board's (review
R-RT: a board without one was matched by that word and found in no listing)."""


def _serials(run: dict[str, object], filename: str, found: dict[int, str]) -> None:
    """The board serial of each GPU id a -j run names (into `found`): 3.x's `GPU Device Serials` (`{"0": "..."}`,
    HelperJsonBuildOutput in dcgmi/Diag.cpp), 4.x's `entity_groups` (GPU entities' `entity_id` and `serial_num`,
    NVIDIA/DCGM testing/python3/dcgm_diag_schema.json). Either beside the run's results, not inside them.
    """
    pairs: list[tuple[object, object]] = []
    old = run.get("GPU Device Serials")
    if old is not None:
        if not isinstance(old, dict):
            raise TopologError.at(SourceLocation(filename, 1), "'GPU Device Serials' is not an object of GPU ids")
        pairs.extend(old.items())
    groups = run.get("entity_groups")
    if groups is not None:
        if not isinstance(groups, list) or not all(isinstance(g, dict) for g in groups):
            raise TopologError.at(SourceLocation(filename, 1), "'entity_groups' is not a list of entity groups")
        for group in groups:
            entities = group.get("entities") or []
            if str(group.get("entity_group")) != "GPU":
                continue
            if not isinstance(entities, list) or not all(isinstance(e, dict) for e in entities):
                raise TopologError.at(SourceLocation(filename, 1), "a GPU entity group's 'entities' is not a list")
            pairs.extend((e.get("entity_id"), e.get("serial_num")) for e in entities if "serial_num" in e)
    for key, serial in pairs:
        gpu = _json_gpu({"gpu_id": key}, SourceLocation(filename, 1))
        if gpu is None or not isinstance(serial, str):
            raise TopologError.at(SourceLocation(filename, 1), f"GPU serial {serial!r} of GPU {key!r}; expected text")
        if not serial.strip() or _NO_SERIAL.match(serial.strip()):
            continue  # no serial printed: the GPU is known by its id alone
        if found.setdefault(gpu, serial.strip()) != serial.strip():
            raise TopologError.at(
                SourceLocation(filename, 1),
                f"GPU {gpu} has serial {found[gpu]!r} in one run and {serial.strip()!r} in another; expected one board",
            )


def _read_json(text: str, filename: str, serials: dict[int, str]) -> list[_Test]:
    doc = tool_json(text, filename, "expected dcgmi diag -j output", "expected dcgmi diag -j output")
    lines = _status_lines(text)
    seen = 0

    def where() -> int:
        return lines[seen - 1] if 0 < seen <= len(lines) else 1

    # `--iterations N -j` prints one document whose `iterations` list holds each run's (RunStartDiag in
    # dcgmi/Diag.cpp), ending at a run that failed: every run's results are read.
    runs = doc.get("iterations") if isinstance(doc, dict) and "iterations" in doc else [doc]
    if not isinstance(runs, list) or not runs:
        raise TopologError.at(SourceLocation(filename, 1), "'iterations' is not a list of the runs' results")
    categories: list[object] = []
    for run in runs:
        root = run.get("DCGM GPU Diagnostic", run.get("DCGM Diagnostic")) if isinstance(run, dict) else None
        if not isinstance(run, dict) or not isinstance(root, dict):
            raise TopologError.at(
                SourceLocation(filename, 1), "no 'DCGM Diagnostic' (4.x) or 'DCGM GPU Diagnostic' (3.x) object"
            )
        _serials(run, filename, serials)
        if root.get("runtime_error"):
            raise TopologError.at(
                SourceLocation(filename, 1),
                f"the diagnostic did not run: {root['runtime_error']}; expected its results",
            )
        found = root.get("test_categories") or []
        if not isinstance(found, list):
            raise TopologError.at(SourceLocation(filename, 1), "'test_categories' is not a list of categories")
        categories.extend(found)
    tests: list[_Test] = []
    for cat in categories:
        if not isinstance(cat, dict) or not isinstance(cat.get("tests", []), list):
            raise TopologError.at(SourceLocation(filename, where()), "a test category is not an object with 'tests'")
        category = _category(str(cat.get("category", "")), SourceLocation(filename, where()))
        for t in cat.get("tests", []):
            if not isinstance(t, dict) or not isinstance(t.get("results", []), list):
                raise TopologError.at(SourceLocation(filename, where()), "a test is not an object with 'results'")
            name = str(t.get("name", ""))
            test = _Test(name, TESTS.get(_key(name)) if _CATEGORIES[category] else False, where() + 1)
            test.entities = True  # each result names its GPU (or is not a GPU's)
            tests.append(test)
            for r in t.get("results", []):
                if not isinstance(r, dict):
                    raise TopologError.at(SourceLocation(filename, where()), f"a result of {name!r} is not an object")
                if "status" in r:
                    seen += 1
                loc = SourceLocation(filename, where())
                status = _status(str(r.get("status")), loc)
                gpu = _json_gpu(r, loc)
                warnings = r.get("warnings") or []
                if not isinstance(warnings, list):
                    raise TopologError.at(loc, f"'warnings' of {name!r} is not a list")
                for w in warnings:
                    words = w.get("warning", w.get("warnings")) if isinstance(w, dict) else w
                    if isinstance(words, str) and words.strip():
                        # JSON names the result's GPU: a message that names none is that GPU's.
                        named = words if gpu is None or _NAMES_GPU.search(words) else f"GPU {gpu} {words}"
                        test.messages.append((named.strip(), loc.line or 1))
                if status == "Fail" and gpu is not None and not _monitor_only(warnings):
                    if not test.failed:
                        test.line = loc.line or 1
                    test.failed.add(gpu)
            if isinstance(t.get("test_summary"), dict) and "status" in t["test_summary"]:
                seen += 1
                _status(str(t["test_summary"]["status"]), SourceLocation(filename, where()))
    return tests


# DCGM ranks each failure it reports (dcgm_errors.h, dcgmErrorSeverity_enum; -j output carries it as
# `error_severity` beside the message): 0 none, 1 monitor ("can perform workload, but needs to be
# monitored"), 5 config (a software or configuration issue). dcgmi's JSON writes a warning's result
# as "Fail" too, so a failure whose every message is ranked one of these takes no GPU out of service;
# 2 isolate, 3 unknown, 4 triage, 6 reset, or a message without a rank, do.
_NOT_A_GPU_FAULT = frozenset({0, 1, 5})


def _monitor_only(warnings: list[object]) -> bool:
    """Whether every message of a failed JSON result carries a severity below isolating its GPU."""
    ranks = [w.get("error_severity") if isinstance(w, dict) else None for w in warnings]
    return bool(ranks) and all(type(r) is int and r in _NOT_A_GPU_FAULT for r in ranks)


def _json_gpu(result: dict[str, object], loc: SourceLocation) -> int | None:
    """The GPU a JSON result is of (3.x `gpu_id`, 4.x `entity_group` GPU + `entity_id`); None: not a GPU's."""
    if "entity_group" in result:
        if str(result["entity_group"]) != "GPU":
            return None
        value = result.get("entity_id")
    else:
        value = result.get("gpu_id")
    if value is None:
        return None
    if isinstance(value, bool) or not (
        (isinstance(value, int) and value >= 0) or (isinstance(value, str) and value.isascii() and value.isdigit())
    ):
        raise TopologError.at(loc, f"GPU id {value!r}; expected a whole number")
    return int(value)


def _judge(
    tests: list[_Test], filename: str, host: str, serials: dict[int, str], table: bool
) -> list[CounterObservation]:
    """One observation per GPU a failed GPU test names, in the order first met."""
    reasons: dict[int, tuple[list[str], int]] = {}
    for t in tests:
        failed = t.failed_gpus()
        if not failed or t.gpu_test is False:
            continue
        if t.gpu_test is None:
            raise TopologError.at(
                SourceLocation(filename, t.line),
                f"test {t.name!r} failed and is not a test this reader knows; expected one of "
                + ", ".join(sorted(k for k, v in TESTS.items() if v)),
            )
        for words, line in t.messages:
            if _NVLINK_DOWN.search(words):
                continue  # an NVLink down: the NVLink readers judge it against the declared links
            if _CONDITIONS.search(words) or (table and _RANKED_BELOW_A_FAULT.match(words)):
                continue  # the conditions it ran under (cooling, power, a busy GPU), not a fault of the GPU
            named = _NAMES_GPU.search(words)
            if named is None:
                continue
            gpu = int(named.group(1))
            if gpu not in failed and None not in failed:
                continue  # a message of a GPU whose result is not Fail (a warning beside a pass)
            said, _ = reasons.setdefault(gpu, ([], line))
            entry = f"{t.name}: {words}"
            if entry not in said:
                said.append(entry)
    return [
        CounterObservation(
            SourceLocation(filename, line),
            None,
            GpuRef(host=host, index=gpu, serial=serials.get(gpu)),
            METRIC,
            1,
            (("reason", f"DCGM diagnostic (dcgmi diag) failed on it: {'; '.join(said)}"),),
        )
        for gpu, (said, line) in reasons.items()
    ]


def read(text: str, filename: str, host: str | None) -> Observations:
    """The GPUs of one host's `dcgmi diag` output that failed a hardware test. TopologError at file:line."""
    name = host_of_file(host, filename, "dcgmi diag")
    serials: dict[int, str] = {}
    table = not text.lstrip().startswith("{")
    tests = _read_table(text, filename) if table else _read_json(text, filename, serials)
    if len(set(serials.values())) != len(serials):
        # Two ids printing one serial (a placeholder some boards report): it names no one board, so none is
        # matched by it and each GPU is known by its id, as where no serial is printed (review R-RT).
        serials = {}
    return Observations(
        counters=tuple(_judge(tests, filename, name, serials, table)),
        files=(ObservedFile(filename, FORMAT, name, None),),
        hosts=(name,),
    )
