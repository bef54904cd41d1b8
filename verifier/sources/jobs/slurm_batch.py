"""Slurm batch scripts as topolog jobs: the `#SBATCH` lines (docs/jobs.md, "Slurm").

As sbatch reads them (sbatch(1)): options on lines that start with `#SBATCH`, before the first
line that is neither a comment nor blank; later `#SBATCH` lines are ignored by sbatch, and a
note says so. Read:

    -N, --nodes=N[-M]            nodes (the minimum N is placed; N > 1 bounds the job to N nodes, and
                                 with GPUs per node it runs on exactly N: min_nodes too)
    --gres=gpu[:type][:n]        GPUs per node (n defaults to 1)
    --gpus-per-node=[type:]n     GPUs per node
    --gpus-per-task=[type:]n     GPUs per task, with -n/--ntasks, -N with --ntasks-per-node, or --gpus
                                 (its total over n is the tasks); with none of these refused, as sbatch does
    -G, --gpus=[type:]n          GPUs for the whole job
    -n, --ntasks, --ntasks-per-node
    -C, --constraint=features    GPU model features ("a100", "h100|a100"); other features are noted
    --switches=n[@time]          noted: topolog has no leaf-switch scope
    -p, --partition, -A, --account  what --principal-from may read (partition also noted)
    -J, --job-name               the job's name (default: the script's file name, as sbatch does)

A GRES type or feature names GPU models through verifier/sources/jobs/gpu_words.py; a MIG
profile as a type ("gpu:1g.10gb:2") asks for MIG instances. Every other option is listed in a
note as not judged.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import PurePath

from verifier.core.errors import Diagnostic, SourceLocation
from verifier.sources.inventory.catalog import mig_memory_mb
from verifier.sources.inventory.validate import Problems
from verifier.sources.jobs import gpu_words
from verifier.sources.jobs.principal_rules import PrincipalRule, resolve
from verifier.sources.jobs.spec import BATCH_JOB_NAME, Job

SHORT = {
    "N": "nodes",
    "G": "gpus",
    "p": "partition",
    "A": "account",
    "J": "job-name",
    "C": "constraint",
    "n": "ntasks",
    # Not read, named in full in the notes:
    "a": "array",
    "c": "cpus-per-task",
    "d": "dependency",
    "D": "chdir",
    "e": "error",
    "o": "output",
    "q": "qos",
    "t": "time",
    "w": "nodelist",
    "x": "exclude",
}
ALIASES = {"tasks-per-node": "ntasks-per-node", "tasks": "ntasks"}
"""sbatch's other spellings of an option read here."""
SHORT_FLAGS = frozenset("HOsvQWhV")
"""sbatch's short options that take no value (-H hold, -O overcommit, -s oversubscribe, ...)."""
LONG_FLAGS = frozenset(
    {
        "exclusive",
        "requeue",
        "no-requeue",
        "hold",
        "contiguous",
        "overcommit",
        "oversubscribe",
        "spread-job",
        "use-min-nodes",
        "wait",
        "test-only",
        "verbose",
        "quiet",
        "parsable",
        "ignore-pbs",
        "reboot",
        "no-kill",
        "nice",
        "get-user-env",
        "help",
        "usage",
        "version",
    }
)
"""sbatch's long options that take no value (or only one written with '=')."""
READ = (
    "nodes",
    "gpus",
    "gpus-per-node",
    "gpus-per-task",
    "tres-per-task",
    "gres",
    "ntasks",
    "ntasks-per-node",
    "constraint",
    "switches",
    "partition",
    "account",
    "job-name",
)
_GPU_COUNT = re.compile(r"^(?:(?P<type>[^:,]+):)?(?P<n>[0-9]+)$")
_MIG = re.compile(r"^[0-9]+g\.[0-9]+gb$")
_TYPED_MIG = re.compile(r"^(?P<model>[a-z0-9_-]+)_(?P<profile>[0-9]+g\.[0-9]+gb)$")
_FIGURE = re.compile(r"[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?|[-+]?(?:nan|inf|infinity)", re.IGNORECASE)
"""What reads as a number (a GRES count field), whole or not: never a GPU type."""


@dataclass
class _Opt:
    value: str
    loc: SourceLocation
    written: str | None = None
    """The option as the script wrote it, for one read from another (`--tres-per-task=gres/gpu:0` for the
    GPUs per task it gives): messages name what the user wrote, never an option the script lacks."""

    def said(self, name: str) -> str:
        """`--name=value`, or the option the script wrote instead."""
        return self.written or f"--{name}={self.value}"


@dataclass
class _Script:
    opts: dict[str, _Opt] = field(default_factory=dict)
    other: dict[str, SourceLocation] = field(default_factory=dict)
    notes: list[Diagnostic] = field(default_factory=list)
    step_gpus: SourceLocation | None = None  # the first srun/salloc line of the body that asks for GPUs


_STEP = re.compile(r"(?:^|[;&|(`]|\s)(?:srun|salloc)\s")
_STEP_GPUS = re.compile(r"\s(?:--gres[= ]\S*gpu|--gpus(?:-per-[a-z]+)?[= ]|-G\s*[0-9])")
"""An srun or salloc command in a script's body and a GPU option on it (--gres=gpu..., --gpus*, -G):
the fallback for a line the shell's quoting rules cannot split (a quote that a later line closes)."""
_COMMAND_PREFIXES = frozenset({"exec", "time", "nohup", "command", "builtin", "!", "{", "if", "then", "else", "elif"})
_COMMAND_PREFIXES |= frozenset({"do", "while", "until"})
"""Words after which the shell reads the next word as the command (`exec srun ...`, `if srun ...`)."""
_PRINTING = frozenset({"echo", "printf", "print", ":"})
"""Commands that print their words (or do nothing with them): an srun among those words is text."""
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_STEP_LONG_FLAGS = frozenset(
    {
        "pty",
        "exclusive",
        "overlap",
        "overcommit",
        "oversubscribe",
        "unbuffered",
        "label",
        "quiet",
        "verbose",
        "exact",
        "whole",
        "multi-prog",
        "no-kill",
        "hold",
        "spread-job",
        "use-min-nodes",
        "disable-status",
        "preserve-env",
        "test-only",
        "x11",
        "contiguous",
        "kill-on-bad-exit",
        "no-allocate",
        "immediate",
        "wait-all-nodes",
        "help",
        "usage",
        "version",
    }
)
"""srun's and salloc's long options that take no value unless written with '='."""
_STEP_SHORT_FLAGS = frozenset("luvQXZkEHOshIK")
"""Their short options that take no value (-l label, -u unbuffered, -X disable-status, ...)."""
_STEP_GPU_OPTIONS = frozenset({"gpus", "gpus-per-node", "gpus-per-task", "gpus-per-socket", "G"})


def is_batch_script(text: str) -> bool:
    """A shell script (`#!` first) or any text with an `#SBATCH` line."""
    return text.startswith("#!") or any(line.startswith("#SBATCH") for line in text.splitlines())


def read_batch_script(
    text: str, filename: str, rules: tuple[PrincipalRule, ...], p: Problems, cpu_only: list[Diagnostic] | None = None
) -> Job | None:
    """The job of one batch script; problems added to `p` where it cannot be read. A script that
    asks for no GPU goes to `cpu_only` where given (the caller decides), else is refused.
    """
    before = len(p.items)
    script = _directives(text, filename, p)
    job = _job(script, filename, rules, p, cpu_only)
    return job if len(p.items) == before else None


def _directives(text: str, filename: str, p: Problems) -> _Script:
    script = _Script()
    reading = True
    continued: tuple[SourceLocation, str] | None = None  # a command line ending in '\\' and its start
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        loc = SourceLocation(filename, number)
        if continued is not None or not line.startswith("#SBATCH"):
            if stripped and not stripped.startswith("#") and reading:
                reading = False  # sbatch stops at the first command
            # `srun \` on one line and its options on the next are one command to the shell.
            # (A comment's last '\\' continues nothing.)
            start, command = continued if continued is not None else (loc, "")
            command += line
            comment = continued is None and stripped.startswith("#")
            continued = (start, command[:-1]) if command.endswith("\\") and not comment else None
            if continued is None and script.step_gpus is None and _step_asks_gpus(command):
                script.step_gpus = start
            continue
        if not reading:
            script.notes.append(
                Diagnostic(loc, "#SBATCH after the first command: sbatch ignores it, and so does topolog")
            )
            continue
        try:
            tokens = shlex.split(line[len("#SBATCH") :], comments=True)
        except ValueError as err:
            p.add(loc, f"cannot read this #SBATCH line ({err}); expected options such as --nodes=2")
            continue
        _options(tokens, loc, script, p)
    return script


def _step_asks_gpus(line: str) -> bool:
    """Whether a line of the script's body runs srun or salloc with an option that asks for GPUs.

    Only the command word counts, as the shell splits the line: `echo "srun --gpus=1"` prints, and
    `python train.py --gpus=4` after `srun` hands --gpus to the program, not to srun. A count of 0
    (`--gres=gpu:0`, as a step inside a CPU allocation writes it) asks for none. A command
    substitution runs its command wherever it stands, inside double quotes too
    (`out="$(srun --gpus=1 nvidia-smi)"`, `` n=`srun ...` ``), where the splitting keeps it in one
    word: each is read as a line of its own, nested ones too, one after another (no recursion: a
    line of thousands of nested `$(` is hostile input, not a reason to fail).
    """
    pending = [line]
    read = 0
    budget = 2 * len(line) + 20_000  # characters split in all: a nested substitution is read again
    while pending:
        text = pending.pop()
        budget -= len(text)
        if budget < 0:
            plain = " " + line.split("#", 1)[0]
            return bool(_STEP.search(plain) and _STEP_GPUS.search(plain))
        asks = _commands_ask_gpus(text)
        if asks is None:
            # A quote that a later line closes: the line cannot be split alone, so the plain pattern decides.
            plain = " " + text.split("#", 1)[0]
            asks = bool(_STEP.search(plain) and _STEP_GPUS.search(plain))
        if asks:
            return True
        inner = _substitutions(_without_comment(text))  # a comment runs nothing, `$(...)` in it neither
        read += len(inner)
        if read > _MAX_SUBSTITUTIONS:
            # More substitutions (or nested text, the budget above) than any script writes on one
            # line: the plain pattern decides, as it does for a line that cannot be split, in time
            # linear in the line.
            plain = " " + line.split("#", 1)[0]
            return bool(_STEP.search(plain) and _STEP_GPUS.search(plain))
        pending.extend(inner)
    return False


_MAX_SUBSTITUTIONS = 64
"""Command substitutions read on one line, nested ones included, before the plain pattern decides."""


def _commands_ask_gpus(line: str) -> bool | None:
    """Whether a simple command of the line runs a GPU step (None where the line cannot be split)."""
    try:
        lexer = shlex.shlex(_without_comment(line), posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        lexer.commenters = ""  # shlex would end a word at any '#' ($#, a#b): comments are cut above
        tokens = list(lexer)
    except ValueError:
        return None
    command: list[str] = []
    for token in [*tokens, ";"]:
        if token and set(token) <= set(";&|()"):
            if _runs_step_with_gpus(command):
                return True
            command = []
        else:
            command.append(token)
    return False


def _substitutions(line: str) -> list[str]:
    """The text of each `$(...)`, `<(...)`, `>(...)` and backquoted command of a line, outside single
    quotes (where the shell reads them as written). An unclosed one runs to the line's end.
    """
    found: list[str] = []
    quote = ""
    i = 0
    while i < len(line):
        ch = line[i]
        if ch == "\\" and quote != "'":
            i += 2
            continue
        if quote == "'":
            quote = "" if ch == "'" else quote
        elif ch == "'" and not quote:
            quote = ch
        elif ch == '"':
            quote = "" if quote else ch
        elif ch == "`":
            end = line.find("`", i + 1)
            found.append(line[i + 1 : end if end >= 0 else len(line)])
            i = end if end >= 0 else len(line)
        elif ch in "$<>" and line[i + 1 : i + 2] == "(" and line[i + 2 : i + 3] != "(":
            i += 1  # onto the '(' (an escaped '\\$' was stepped over above and opens nothing)
            depth, j = 1, i + 1
            while j < len(line) and depth:
                depth += {"(": 1, ")": -1}.get(line[j], 0)
                j += 1
            found.append(line[i + 1 : j - 1 if depth == 0 else j])
            i = j - 1
        i += 1
    return found


def _without_comment(line: str) -> str:
    """The line up to its comment, as the shell reads one: a '#' that starts a word, outside quotes."""
    quote = ""
    escaped = False
    for i, ch in enumerate(line):
        if escaped:
            escaped = False
        elif ch == "\\" and quote != "'":
            escaped = True
        elif quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1].isspace() or line[i - 1] in ";&|()"):
            return line[:i]
    return line


def _runs_step_with_gpus(words: list[str]) -> bool:
    """Whether one simple command runs srun or salloc with an option that asks for GPUs.

    srun may be the command or a word a wrapper runs (`timeout 1h srun`, `env X=1 srun`, `xargs
    srun`, a function's body after `function f {`): any word that names srun counts, unless the
    command only prints its words (`echo srun --gpus=1`). A GPU srun missed would pass a GPU script
    as CPU-only.
    """
    i = 0
    while i < len(words) and (words[i] in _COMMAND_PREFIXES or _ASSIGNMENT.match(words[i])):
        i += 1
    if i >= len(words) or PurePath(words[i]).name in _PRINTING:
        return False
    names = [PurePath(word.lstrip("`$")).name for word in words]
    if "srun" not in names[i:] and "salloc" not in names[i:]:
        return False
    i = next(j for j in range(i, len(words)) if names[j] in ("srun", "salloc")) + 1
    while i < len(words):
        word = words[i]
        if word.isdigit() and i + 1 < len(words) and set(words[i + 1]) <= set("<>&"):
            i += 1  # the descriptor of `2>err`
            continue
        if set(word) <= set("<>&") and word:
            i += 2  # a redirection and its file (`srun >log --gpus=1 ...`)
            continue
        if word == "--" or not _is_option(word):
            break
        i += 1
        if word.startswith("--"):
            name, eq, value = word[2:].partition("=")
            if not eq and name not in _STEP_LONG_FLAGS and i < len(words) and not _is_option(words[i]):
                value, i = words[i], i + 1
        else:
            # Short options may be bundled (`-lG4`): flags first, then at most one that takes a value.
            rest = word[1:]
            while rest and rest[0] in _STEP_SHORT_FLAGS:
                rest = rest[1:]
            if not rest or rest.lstrip("=").isdigit():
                continue  # flags alone, or the value of one that takes it attached (-K1, -I60)
            name, value = rest[0], rest[1:].lstrip("=")
            if not value and i < len(words) and not _is_option(words[i]):
                value, i = words[i], i + 1
        # --gres=gpu:2 and --tres-per-task=gres/gpu=1 (or gres/gpu:a100:1): a gpu entry whose count is not 0.
        if name in ("gres", "tres-per-task") and any(
            parts[0].removeprefix("gres/") == "gpu" and parts[-1] != "0"
            for parts in (item.replace("=", ":").split(":") for item in value.split(","))
        ):
            return True
        if name in _STEP_GPU_OPTIONS and value.rsplit(":", 1)[-1].strip() != "0":
            return True  # a count not written as a number ($NGPUS) asks for GPUs too
    return False


def _is_option(word: str) -> bool:
    """A word that is an option, not the value of the one before: an option that takes no value and
    that we do not know of (`--propagate`, `--reboot`) must not swallow a GPU option after it.
    """
    return word.startswith("-") and len(word) > 1


def _options(tokens: list[str], loc: SourceLocation, script: _Script, p: Problems) -> None:
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        i += 1
        if tok in ("hetjob", "packjob"):
            # Slurm starts the components together, each with its own nodes and GPUs: placed one by one,
            # two components could both count the same free GPUs, so the script is refused, not split.
            p.add(
                loc,
                f"heterogeneous jobs (#SBATCH {tok}: components that start together) are not read; expected one "
                "job per script",
            )
            continue
        if tok.startswith("--"):
            name, eq, value = tok[2:].partition("=")
            if not eq and name not in LONG_FLAGS and name in READ:
                if i >= len(tokens):
                    p.add(loc, f"--{name} needs a value")
                    continue
                value, i = tokens[i], i + 1
            elif not eq and name not in LONG_FLAGS and i < len(tokens) and not tokens[i].startswith("-"):
                value, i = tokens[i], i + 1
        elif tok.startswith("-") and len(tok) > 1:
            letter = tok[1]
            if letter in SHORT_FLAGS:
                script.other.setdefault(f"-{letter}", loc)
                continue
            value = tok[2:].lstrip("=")
            if not value:
                if i >= len(tokens):
                    p.add(loc, f"-{letter} needs a value")
                    continue
                value, i = tokens[i], i + 1
            name = SHORT.get(letter, f"-{letter}")
        else:
            p.add(loc, f"{tok!r} is not an sbatch option; expected options such as --nodes=2 or -N 2")
            continue
        name = ALIASES.get(name, name)
        if name in READ:
            if name in script.opts and script.opts[name].value != value:
                script.notes.append(
                    Diagnostic(loc, f"--{name} given again: the last one ({value}) counts, as in sbatch")
                )
            script.opts[name] = _Opt(value, loc)
        else:
            shown = name if name.startswith("-") else f"--{name}"
            script.other.setdefault(shown, loc)


def _int(opt: _Opt, name: str, p: Problems) -> int | None:
    v = opt.value.strip()
    if v.isascii() and v.isdigit() and 0 < int(v) <= 1_000_000:
        return int(v)
    p.add(opt.loc, f"--{name}={opt.value} is not a count; expected a whole number from 1 to 1,000,000")
    return None


def _gpu_count(opt: _Opt, name: str, p: Problems) -> tuple[str | None, int] | None:
    """`[type:]n` of --gpus, --gpus-per-node and --gpus-per-task; n may be 0, an explicit "no GPU"."""
    m = _GPU_COUNT.match(opt.value.strip())
    if m is None or not 0 <= int(m.group("n")) <= 1_000_000:
        p.add(opt.loc, f"--{name}={opt.value}: expected [type:]count such as 8 or a100:8 (one GPU type)")
        return None
    return m.group("type"), int(m.group("n"))


def _gres(opt: _Opt, script: _Script, p: Problems) -> tuple[str | None, int] | None:
    """The GPUs of `--gres=gpu[:type][:n][,other...]`; other GRES are noted."""
    found: tuple[str | None, int] | None = None
    for item in opt.value.split(","):
        if "(" in item:
            # "gpu:8(S:0-1)" is how Slurm lists a node's GRES with its sockets (gres.conf, scontrol
            # show node), not a request: the count cannot be read from it exactly.
            p.add(
                opt.loc,
                f"--gres={opt.value}: '{item.strip()}' carries a socket or index binding in brackets, as "
                "Slurm lists a node's GRES; expected a request gpu[:type][:count] such as gpu:a100:4",
            )
            return None
        parts = item.strip().split(":")
        if parts[0] in _SHARED_GRES and not (len(parts) > 1 and parts[-1] == "0"):  # shard alone: 1
            p.add(
                opt.loc,
                f"--gres={opt.value}: {item.strip()} is {_SHARED_GRES[parts[0]]}; expected whole GPUs, such as gpu:1",
            )
            return None
        if parts[0] != "gpu":
            script.notes.append(Diagnostic(opt.loc, f"GRES {item.strip()} not judged"))
            continue
        # gpu, gpu:n, gpu:type or gpu:type:n. A last field that reads as a figure but is no count
        # (nan, -1, 1.5, 1e3) is refused: taken for a type, the job was read as asking 1 GPU.
        last = parts[-1] if len(parts) > 1 else "1"
        gtype: str | None
        if len(parts) == 2 and not _FIGURE.fullmatch(last):
            gtype, count = last, "1"
        else:
            gtype, count = (parts[1] if len(parts) == 3 else None), last
        if len(parts) > 3 or found is not None or gtype == "":
            p.add(opt.loc, f"--gres={opt.value}: expected one gpu[:type][:count] entry such as gpu:a100:4")
            return None
        # A count of 0 (gpu:0) is how scripts say "no GPU" on clusters whose partitions ask every job
        # to name its GPUs: read, and the script is then CPU-only.
        if not (count.isascii() and count.isdigit() and 0 <= int(count) <= 1_000_000):
            p.add(
                opt.loc,
                f"--gres={opt.value}: {count!r} is not a GPU count; expected gpu[:type][:count] with a whole "
                "count from 0 to 1,000,000, such as gpu:a100:4",
            )
            return None
        found = (gtype, int(count))
    return found


_TRES_GPU = re.compile(r"^gres/gpu(?::(?P<type>[^:=,]+))?[:=](?P<n>[^:=,]*)$")
"""A GPU entry of --tres-per-task: `gres/gpu=N` (sbatch(1)) or `gres/gpu:N`, with a type before the
count (`gres/gpu:a100=2`, `gres/gpu:a100_80gb_pcie:1`); SchedMD's own tests write the `:` form
(`-N1 -n4 --tres-per-task=gres/gpu:1` is allocated gpu:4)."""
_TRES_GRES = re.compile(r"^gres[/:]([^:=/,]*)", re.IGNORECASE)
"""The GRES name of a --tres-per-task entry (`gres/gpu:2` -> gpu), any case, `/` or `:` after `gres`."""
_SHARED_GRES = {
    "shard": "a shard of a GPU (Slurm's GRES sharing: how many GPUs N shards take depends on the shards "
    "gres.conf gives each GPU, which the script does not say)",
    "mps": "a CUDA MPS share of a GPU (Slurm's mps GRES: a percentage of one GPU, shared with other jobs)",
}
"""GRES that are a part of a GPU: read as "no GPU", a GPU job went through unjudged."""


def _tres_per_task(opt: _Opt, script: _Script, p: Problems) -> tuple[str | None, int] | None:
    """The GPUs per task of `--tres-per-task=...,gres/gpu[:type]=N,...`; other entries are noted."""
    found: tuple[str | None, int] | None = None
    for item in (i.strip() for i in opt.value.split(",")):
        # The GRES an entry names, whatever its spelling (gres/gpu, gres:gpu, GRES/GPU, gpu): an entry
        # that names GPUs in a form not read (no count, a type without one) is refused, never noted and
        # passed over as "no GPU" (base refused every --tres-per-task).
        gres = _TRES_GRES.match(item)
        name = (gres.group(1) if gres else re.split(r"[:=]", item, maxsplit=1)[0]).lower()
        if name in _SHARED_GRES:
            p.add(
                opt.loc,
                f"--tres-per-task={opt.value}: {item} is {_SHARED_GRES[name]}; expected whole GPUs, such as gres/gpu=1",
            )
            return None
        if name != "gpu":
            script.notes.append(Diagnostic(opt.loc, f"--tres-per-task entry {item} not judged"))
            continue
        m = _TRES_GPU.match(item)
        count = m.group("n") if m else ""
        if m is None or found is not None or not (count.isascii() and count.isdigit() and int(count) <= 1_000_000):
            p.add(
                opt.loc,
                f"--tres-per-task={opt.value}: expected one GPU entry gres/gpu[:type]=count with a whole count "
                "from 0 to 1,000,000, such as gres/gpu=1 or gres/gpu:a100=2",
            )
            return None
        found = (m.group("type"), int(count))
    return found


def _no_gpu_counts(
    o: dict[str, _Opt],
    per_node: tuple[str | None, int] | None,
    per_task: tuple[str | None, int] | None,
    total: tuple[str | None, int] | None,
    p: Problems,
) -> tuple[tuple[str | None, int] | None, tuple[str | None, int] | None, tuple[str | None, int] | None, str | None]:
    """The GPU requests left once a count of 0 is read, and the option that said 0: `--gres=gpu:0`
    (or `--gpus-per-node=0`, `--gpus=0`, `--gpus-per-task=0`) says the job takes no GPU, so alone it
    leaves none (the script is CPU-only); beside an option that asks for GPUs the two contradict
    each other and are refused.
    """
    given = [
        (name, req)
        for name, req in (
            ("gres" if "gres" in o else "gpus-per-node", per_node),
            ("gpus-per-task", per_task),
            ("gpus", total),
        )
        if req is not None
    ]
    zero = [name for name, req in given if req[1] == 0]
    if not zero:
        return per_node, per_task, total, None
    asking = [(name, req) for name, req in given if req[1] > 0]
    if asking:
        name, req = asking[0]
        p.add(
            o[zero[0]].loc,
            f"{o[zero[0]].said(zero[0])} asks for no GPU, but {o[name].said(name)} asks for {req[1]}; "
            "expected one of the two",
        )
    return None, None, None, o[zero[0]].said(zero[0])


def _task_count(
    o: dict[str, _Opt],
    per_task: tuple[str | None, int],
    total: tuple[str | None, int] | None,
    ntasks: int | None,
    p: Problems,
    source: str = "-n",
    node_range: str | None = None,
) -> int | None:
    """The tasks a job of GPUs per task runs: -n as written; else `--gpus` over the GPUs per task (sbatch(1):
    the task count may be given as "--gpus=X --gpus-per-task=Y"). None, refused: no task count at all
    (-N N with --ntasks-per-node is one, counted by the caller), which sbatch since 23.11
    rejects ("--gpus-per-task or --tres-per-task used without either --gpus or -n/--ntasks is not allowed",
    as torchx's pull request 1100 quotes it from 23.11.10), and a --gpus the tasks do not make up.
    """
    opt = o["gpus-per-task"]
    if total is not None and total[0] is not None and per_task[0] is not None and total[0] != per_task[0]:
        p.add(o["gpus"].loc, f"--gpus={o['gpus'].value} names another GPU type than {opt.said('gpus-per-task')}")
        return None
    if total is not None and ntasks is not None and ntasks * per_task[1] != total[1]:
        p.add(
            o["gpus"].loc,
            f"--gpus={o['gpus'].value} is not the {ntasks} tasks ({source}) times {opt.said('gpus-per-task')} "
            f"({ntasks * per_task[1]}); expected the two to agree",
        )
        return None
    if total is not None and ntasks is None:
        if total[1] % per_task[1]:
            p.add(
                o["gpus"].loc,
                f"--gpus={o['gpus'].value} is no whole number of tasks of {opt.said('gpus-per-task')}; "
                "expected a multiple of the GPUs per task",
            )
            return None
        return total[1] // per_task[1]
    if ntasks is not None:
        return ntasks
    ranged = (
        f" (--nodes={node_range} with --ntasks-per-node counts no tasks: the tasks would depend on the nodes the "
        "job gets)"
        if node_range is not None
        else ""
    )
    p.add(
        opt.loc,
        f"{opt.said('gpus-per-task')} without a task count{ranged}: sbatch (Slurm 23.11 and later) refuses the "
        "job (--gpus-per-task used without either --gpus or -n/--ntasks); expected -n/--ntasks N, "
        "-N N with --ntasks-per-node, or --gpus",
    )
    return None


def _same_request(a: tuple[str | None, int], b: tuple[str | None, int]) -> bool:
    """The same count, and the same type where both name one."""
    return a[1] == b[1] and (a[0] is None or b[0] is None or a[0] == b[0])


def _type_words(gtype: str | None, loc: SourceLocation, script: _Script) -> tuple[tuple[str, ...], str | None]:
    """(accepts, MIG profile) of a GRES type."""
    if gtype is None:
        return (), None
    if _MIG.match(gtype) and mig_memory_mb(gtype) is not None:
        # A profile with no GPU before it is no name AutoDetect=nvml writes (it prefixes the GPU's
        # name, _get_system_gpu_list_nvml in gpu_nvml.c): kept as written, never read as a nearby
        # catalogue profile (H200's 1g.18gb is no 1g.20gb, B200's 1g.23gb no H100 NVL 1g.24gb).
        return (), gtype
    typed = _TYPED_MIG.match(gtype.lower())
    if typed is not None and mig_memory_mb(typed.group("profile")) is not None:
        # AutoDetect=nvml names a MIG slice's GRES type after its GPU and profile ("a100_1g.5gb",
        # Slurm's gres.conf documentation): instances of that profile, on that model.
        model = typed.group("model")
        # "nvidia_a100_3g.39gb": the vendor before the model, as nvml names a slice on some sites.
        word = gpu_words.site_word(model) or gpu_words.site_word(model.removeprefix("nvidia_"))
        if word is None:
            # Kept as written, as a plain type is: dropping it would take that profile on any GPU.
            unknown = f"GPU type {model} names no GPU model of topolog's catalogue: no GPU of the inventory matches it"
            script.notes.append(Diagnostic(loc, unknown))
            word = model
            return (word,), typed.group("profile")
        return (word,), _catalogue_profile(typed.group("profile"), word, loc, script)
    word = gpu_words.site_word(gtype)
    if word is None:
        script.notes.append(
            Diagnostic(
                loc, f"GPU type {gtype} names no GPU model of topolog's catalogue: no GPU of the inventory matches it"
            )
        )
        return (gtype,), None
    return (word,), None


def _catalogue_profile(profile: str, word: str | None, loc: SourceLocation, script: _Script) -> str:
    """The catalogue's name of a MIG profile Slurm's nvml detection named (3g.39gb: 3g.40gb), with a
    note when they differ; as written where no profile is clearly meant (placement refuses it then).
    """
    named = gpu_words.nvml_mig_profile(profile, word)
    if named is None or named == profile:
        return profile
    script.notes.append(
        Diagnostic(
            loc,
            f"MIG type {profile} is NVIDIA's profile {named}: Slurm names a slice's memory in GiB, rounded "
            "(AutoDetect=nvml)",
        )
    )
    return named


def _constraint(opt: _Opt, script: _Script, p: Problems) -> tuple[str, ...]:
    """GPU models a --constraint allows: features joined by '|' (any) or '&' (all), one GPU word among ANDs."""
    expr = opt.value.strip()
    if any(ch in expr for ch in "[]*,") or ("|" in expr and "&" in expr):
        script.notes.append(
            Diagnostic(opt.loc, f"--constraint={expr} not judged (counts, brackets or mixed operators)")
        )
        return ()
    words = [w.strip() for w in re.split(r"[|&]", expr) if w.strip()]
    mapped = {w: gpu_words.site_word(w) for w in words}
    gpu = [m for m in mapped.values() if m is not None]
    rest = [w for w, m in mapped.items() if m is None]
    if "|" in expr and rest:
        script.notes.append(
            Diagnostic(opt.loc, f"--constraint={expr} not judged (features {', '.join(rest)} are not GPU models)")
        )
        return ()
    if rest:
        script.notes.append(Diagnostic(opt.loc, f"--constraint features {', '.join(rest)} not judged"))
    if "&" in expr and len(gpu) > 1:
        p.add(opt.loc, f"--constraint={expr} asks for several GPU models at once; expected one (or 'a|b' for any)")
        return ()
    return tuple(dict.fromkeys(gpu))


def _job(
    script: _Script,
    filename: str,
    rules: tuple[PrincipalRule, ...],
    p: Problems,
    cpu_only: list[Diagnostic] | None = None,
) -> Job | None:
    o = script.opts
    first = SourceLocation(filename, 1)
    errors_before = len(p.items)
    name_opt = o.get("job-name")
    name = name_opt.value.strip() if name_opt else PurePath(filename).stem
    if not BATCH_JOB_NAME.match(name):
        p.add(
            name_opt.loc if name_opt else first,
            f"job name {name!r} must start with a letter or digit and hold only letters, digits, '.', '_', '-' "
            "and spaces (at most 200)" + ("" if name_opt else "; name the job with #SBATCH --job-name"),
        )
        return None
    what = f"batch script job {name}"
    nodes = nodes_max = None
    if "nodes" in o:
        low, _, high = o["nodes"].value.partition("-")
        nodes = _int(_Opt(low, o["nodes"].loc), "nodes", p)
        nodes_max = _int(_Opt(high, o["nodes"].loc), "nodes", p) if high else nodes
        if nodes is not None and nodes_max is not None and nodes_max < nodes:
            p.add(
                o["nodes"].loc,
                f"--nodes={o['nodes'].value}: the minimum {nodes} is above the maximum {nodes_max}; "
                "expected N or N-M with N at most M",
            )
        if high:
            # sbatch(1): "as many nodes as possible within the range specified and without delaying
            # the initiation of the job". The least it starts on is what must fit for it to run.
            script.notes.append(
                Diagnostic(
                    o["nodes"].loc,
                    f"--nodes={o['nodes'].value}: placed on {low} nodes, the fewest it starts on (Slurm gives "
                    f"it more, up to {high}, where they are free without delaying its start)",
                )
            )
    ntasks = _int(o["ntasks"], "ntasks", p) if "ntasks" in o else None
    per_node_tasks = _int(o["ntasks-per-node"], "ntasks-per-node", p) if "ntasks-per-node" in o else None
    if nodes is None and ntasks is not None and per_node_tasks is not None:
        nodes = nodes_max = -(-ntasks // per_node_tasks)  # sbatch: enough nodes for the tasks
    per_node = per_task = total = None
    if "gres" in o:
        per_node = _gres(o["gres"], script, p)
    if "gpus-per-node" in o:
        given = _gpu_count(o["gpus-per-node"], "gpus-per-node", p)
        if per_node is not None and given is not None and not _same_request(given, per_node):
            p.add(
                o["gpus-per-node"].loc,
                f"--gpus-per-node={o['gpus-per-node'].value} disagrees with --gres={o['gres'].value}",
            )
        elif per_node is not None and given is not None:
            per_node = (per_node[0] or given[0], per_node[1])  # the typed one of the two
        per_node = per_node or given
    if "--gpus-per-socket" in script.other:
        # GPUs per socket need the sockets per node, which the script does not say.
        p.add(
            script.other["--gpus-per-socket"],
            "--gpus-per-socket is not read: the GPUs it asks for depend on the sockets of each node; "
            "expected --gpus-per-node, --gres=gpu:N, --gpus-per-task or --gpus",
        )
    if "gpus-per-task" in o:
        per_task = _gpu_count(o["gpus-per-task"], "gpus-per-task", p)
    if "tres-per-task" in o:
        tres = _tres_per_task(o["tres-per-task"], script, p)
        if tres is not None and per_task is not None and not _same_request(tres, per_task):
            p.add(
                o["tres-per-task"].loc,
                f"--tres-per-task={o['tres-per-task'].value} disagrees with --gpus-per-task={o['gpus-per-task'].value}",
            )
        elif tres is not None:
            # sbatch(1): --gpus-per-task=N is --tres-per-task=gres/gpu=N; one request, however written.
            written = f"{tres[0]}:{tres[1]}" if tres[0] else str(tres[1])
            tres_opt = o["tres-per-task"]
            o.setdefault("gpus-per-task", _Opt(written, tres_opt.loc, f"--tres-per-task={tres_opt.value}"))
            per_task = (tres[0] or (per_task[0] if per_task else None), tres[1])
    if "gpus" in o:
        total = _gpu_count(o["gpus"], "gpus", p)
    per_node, per_task, total, said_none = _no_gpu_counts(o, per_node, per_task, total, p)
    if per_node is not None and total is not None:
        # --gpus for the job and --gpus-per-node together fix the node count: they must agree.
        if total[0] is not None and per_node[0] is not None and total[0] != per_node[0]:
            p.add(o["gpus"].loc, f"--gpus={o['gpus'].value} names another GPU type than the GPUs per node")
        elif total[1] % per_node[1] == 0 and (nodes is None or nodes <= total[1] // per_node[1] <= (nodes_max or 0)):
            # As slurmctld does: the quotient is the node count, and it must lie within -N N[-M].
            nodes = nodes_max = total[1] // per_node[1]
        else:
            span_text = o["nodes"].value if "nodes" in o and nodes is not None else nodes
            p.add(
                o["gpus"].loc,
                f"--gpus={o['gpus'].value} is not {span_text or 'a whole number of'} node(s) of "
                f"{per_node[1]} GPUs per node; expected --gpus to be the nodes times the GPUs per node",
            )
        per_node = (per_node[0] or total[0], per_node[1])
    # -N N --ntasks-per-node=t: N x t tasks. A node range (-N 2-4) counts none: sbatch sets the task count
    # from them only where the minimum is the maximum (SchedMD/slurm src/sbatch/opt.c, _opt_verify), as the
    # tasks then depend on the nodes the job gets.
    by_node = nodes is not None and per_node_tasks is not None and nodes == nodes_max
    if per_task is not None and per_node is None and per_task[1] > 0 and not (by_node and total is None):
        counted, source = ntasks, "-n"
        if counted is None and nodes is not None and nodes == nodes_max and per_node_tasks is not None:
            # sbatch counts -N N --ntasks-per-node=t as N x t tasks: a --gpus beside them must be their GPUs
            # (-N 2 --ntasks-per-node=4 --gpus-per-task=1 --gpus=6 is no 6-GPU job: 8 tasks need 8).
            counted, source = nodes * per_node_tasks, "-N x --ntasks-per-node"
        ranged = nodes is not None and nodes != nodes_max and per_node_tasks is not None
        ntasks = _task_count(o, per_task, total, counted, p, source, o["nodes"].value if ranged else None)
        if ntasks is None:
            return None
        if total is not None and per_task[0] is None:
            per_task = (total[0], per_task[1])  # the type --gpus names holds for the tasks' GPUs
    kind: tuple[str | None, int] | None = None
    gpus = 0
    span = nodes or 1
    even = per_node is not None  # every node of the job gets the same GPUs (so it runs on exactly N)
    if per_node is not None:
        kind, gpus = per_node, span * per_node[1]
        if nodes_max is not None and nodes is not None and nodes_max > nodes:
            # Every node gets the GPUs per node: the GPUs of the N nodes placed sit on exactly N nodes.
            nodes_max = nodes
    elif per_task is not None:
        tasks = ntasks or span * (per_node_tasks or 1)
        kind, gpus = per_task, tasks * per_task[1]
        # -N N --ntasks-per-node=t --gpus-per-task=g: t x g GPUs on each of the N nodes.
        even = nodes is not None and per_node_tasks is not None and tasks == nodes * per_node_tasks
        if even and nodes_max is not None and nodes is not None and nodes_max > nodes:
            nodes_max = nodes
        if nodes is None and tasks >= 1:
            # A task's GPUs are on its node, so -n t spans at most t nodes (one task: one node):
            # 16 GPUs of 2 tasks never sit 2 on each of 8 nodes.
            nodes_max = tasks
    elif total is not None:
        kind, gpus = total, total[1]
    if kind is None:
        if len(p.items) == errors_before and script.step_gpus is not None:
            # A step asks for GPUs the #SBATCH lines do not: inside sbatch's allocation it cannot
            # have them, run outside one it allocates its own. Either way not "no GPU".
            p.add(
                script.step_gpus,
                f"{what}: this srun/salloc line asks for GPUs, but no #SBATCH line does; topolog reads the "
                "allocation sbatch makes, not a step's options: expected the GPUs on #SBATCH lines "
                "(--gres=gpu:N, --gpus-per-node, --gpus)",
            )
        elif len(p.items) == errors_before and cpu_only is not None:
            asked = (
                f"asks for no GPU ({said_none})"
                if said_none
                else "requests no GPU (--gres=gpu:N, --gpus-per-node, --gpus)"
            )
            cpu_only.append(Diagnostic(first, f"{what} {asked}"))
        elif len(p.items) == errors_before:  # GPU options that could not be read were reported already
            p.add(first, f"{what} requests no GPU; expected --gres=gpu:N, --gpus-per-node, --gpus-per-task or --gpus")
        return None
    where = (o.get("gres") or o.get("gpus-per-node") or o.get("gpus-per-task") or o.get("gpus") or o["nodes"]).loc
    accepts, mig = _type_words(kind[0], where, script)
    if "constraint" in o:
        features = _constraint(o["constraint"], script, p)
        if features and accepts and not set(accepts) & set(features):
            p.add(
                o["constraint"].loc, f"--constraint={o['constraint'].value} and GPU type {kind[0]} allow no common GPU"
            )
        accepts = accepts or features
    if nodes is not None and nodes > 1 and per_node is None and not even:
        # sbatch allocates at least N nodes; a topolog job only bounds its nodes from above (unless
        # every node gets the same tasks of GPUs: then min_nodes holds it to N, and no note is due).
        script.notes.append(
            Diagnostic(
                o["nodes"].loc if "nodes" in o else first,
                f"{what} runs on at least {nodes} nodes in Slurm; placed on at most "
                f"{nodes_max if nodes_max and nodes_max > nodes else nodes}, possibly fewer",
            )
        )
    if "switches" in o:
        script.notes.append(
            Diagnostic(
                o["switches"].loc, f"--switches={o['switches'].value} not judged: topolog has no leaf-switch scope"
            )
        )
    if "partition" in o:
        script.notes.append(
            Diagnostic(o["partition"].loc, f"--partition={o['partition'].value}: which nodes it holds is not judged")
        )
    for option, why in (
        ("--nodelist", "the job is placed on any node, not only on the nodes it names"),
        ("--exclude", "the nodes it names are not kept out of the placement"),
        ("--array", "each array task is placed as this one job"),
    ):
        if option in script.other:
            script.notes.append(Diagnostic(script.other.pop(option), f"{option} not judged: {why}"))
    if script.other:
        first_other = min(script.other.values())
        script.notes.append(Diagnostic(first_other, f"options {', '.join(script.other)} not judged"))
    facts: dict[str, str] = {k: o[k].value.strip() for k in ("account", "partition") if k in o}
    principal = resolve(rules, facts, name_opt.loc if name_opt else first, what, p)
    if principal is None:
        return None
    one_node = (
        nodes_max == 1
        or (nodes is None and total is None and per_task is None)
        or (nodes is None and per_task is not None and ntasks is None)
    )
    return Job(
        name=name,
        principal=principal[0],
        principal_type=principal[1],
        gpus=gpus,
        gpus_declared=True,
        accepts=accepts,
        scope="node" if one_node else "any",
        max_nodes=nodes_max if nodes_max is not None and nodes_max > 1 and not one_node else None,
        # GPUs per node (or tasks per node of GPUs per task) on N nodes: Slurm runs exactly N nodes
        # of that many GPUs each, so N is also the least (an 8-GPU node must not take two 4-GPU
        # nodes' shares).
        min_nodes=nodes if even and nodes is not None and nodes > 1 and not one_node else None,
        mig=mig,
        description=f"{what}: {gpus} {'MIG ' + mig + ' instances' if mig else 'GPUs'}",
        loc=name_opt.loc if name_opt else first,
        notes=tuple(sorted(set(script.notes))),
    )
