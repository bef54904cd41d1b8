"""`load_jobs(paths)`: read job files (kind: Jobs), merge them, validate (docs/jobs.md).

Every problem in every file is collected and raised together as one TopologError, each
with file:line and a plain sentence (exit code 2 at the CLI). Unknown keys get a
did-you-mean. Job names share one namespace across the files loaded together.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from pathlib import Path

from verifier.core.errors import SourceLocation, TopologError
from verifier.core.limits import INT64_MAX
from verifier.core.numerals import underscore_problem
from verifier.sources.inventory import units
from verifier.sources.inventory.catalog import mig_memory_mb
from verifier.sources.inventory.software import release_shape_problem, version_number
from verifier.sources.inventory.validate import (
    Problems,
    did_you_mean,
    name_problem,
    one_of,
    read_document_text,
    read_documents,
    text_problem,
)
from verifier.sources.inventory.yaml_source import YList, YMap
from verifier.sources.jobs.spec import (
    DEFAULT_UTILIZATION,
    JOB_NAME,
    MODES,
    OPTIMIZERS,
    PRECISION_BYTES,
    SCOPES,
    Job,
    Jobs,
    ModelSpec,
    StackOption,
)
from verifier.sources.principals import principal_id_problem

API_VERSION = "topolog.dev/v1"
DOC_KIND = "Jobs"
TOP_KEYS = ("apiVersion", "kind", "metadata", "jobs")
JOB_KEYS = (
    "name",
    "principal",
    "gpus",
    "replicas",
    "description",
    "gpu",
    "topology",
    "software",
    "exclude",
    "model",
)
GPU_KEYS = ("accepts", "min_hbm", "min_hbm_bandwidth", "fp64", "mig")
TOPOLOGY_KEYS = ("scope", "max_nodes", "min_gpu_bandwidth", "min_network_bandwidth", "rail_aligned")
MODEL_KEYS = (
    "parameters",
    "active_parameters",
    "mode",
    "weight_precision",
    "kv_precision",
    "optimizer",
    "layers",
    "kv_heads",
    "head_dim",
    "context",
    "batch",
    "activations",
    "attention_heads",
    "gpu_memory_utilization",
)
KV_KEYS = ("layers", "kv_heads", "head_dim", "context")
PRINCIPAL_TYPES = ("Team", "User", "ServiceAccount")

_NAME_RE = JOB_NAME
_UID_RE = re.compile(r'^\s*(?P<type>[A-Za-z_][A-Za-z0-9_]*)\s*::\s*"(?P<id>[^"\\]+)"\s*$')
_COUNT_RE = re.compile(r"^\s*(?P<num>[0-9][0-9_]*(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)\s*(?P<suffix>[kKMBGT])?\s*$")
_COUNT_SUFFIX = {"": 1, "k": 10**3, "K": 10**3, "M": 10**6, "B": 10**9, "G": 10**9, "T": 10**12}
_REQ_RE = re.compile(r"^\s*(?P<op>>=|==|<=|>|<|=|~=|\^|~)?\s*(?P<version>[^\s]+)\s*$")
_FRACTION_RE = re.compile(r"^\s*[0-9]{1,3}(?:\.[0-9]{1,6})?\s*$")
_SYMBOL_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.+-]*$")


def load_jobs(paths: Iterable[str | Path]) -> Jobs:
    """Load and merge job files; a directory means every *.yaml / *.yml in it, sorted.

    Raises TopologError listing every problem found. A folder without job files, or
    files that define no job at all, are an error too: "0 of 0 jobs placeable" with exit
    0 would pass a CI run that checked nothing.
    """
    problems = Problems()
    files = _expand(paths, problems)
    docs, names = read_documents(files, problems)
    jobs = _build(docs, names, problems)
    if not jobs.jobs:
        where = SourceLocation(names[0]) if names else SourceLocation("<jobs>")
        raise TopologError.at(where, "no jobs to place: the job files define none; expected at least one job")
    return jobs


def load_jobs_text(text: str, filename: str = "<jobs>") -> Jobs:
    """The same from a string (tests)."""
    problems = Problems()
    return _build(read_document_text(text, filename, problems), [filename], problems)


def folder_job_files(folder: Path, suffixes: tuple[str, ...]) -> tuple[list[Path], list[Path]]:
    """A jobs folder's entries named like a job file: those read, and the hidden ones left out (both sorted).

    Not only regular files are read: a pipe or a dangling link named like a job file is refused
    where it is read, never skipped (a job left out without a word is never judged). A hidden
    entry (its name starts with '.') is left out, as the shell's `jobs/*.yaml` leaves it out (POSIX
    pathname expansion matches a leading period only when the pattern writes it): what editors
    and copies leave there is no job file (Emacs's lock `.#a.yaml`, a link to user@host.pid that
    never exists; macOS's `._a.yaml` resource forks on a non-Apple disk). The caller names each in
    a note, and a hidden file named on the command line is read.
    """
    named = sorted(q for q in folder.iterdir() if q.suffix in suffixes and not q.is_dir())
    return [q for q in named if not q.name.startswith(".")], [q for q in named if q.name.startswith(".")]


def hidden_note(hidden: list[Path]) -> str:
    """What a folder's hidden job-named entries are, for the note (or the error) that names them."""
    names = ", ".join(q.name for q in hidden)
    return (
        f"hidden entries not read: {names} (a name starting with '.', as an editor's lock or "
        "backup; the shell's *.yaml leaves them out too); name a file on the command line to read it"
    )


def _expand(paths: Iterable[str | Path], problems: Problems) -> list[Path]:
    out: list[Path] = []
    for p in paths:
        path = Path(p)
        if path.is_dir():
            found, hidden = folder_job_files(path, (".yaml", ".yml"))
            if not found:
                also = f" ({hidden_note(hidden)})" if hidden else ""
                problems.add(
                    SourceLocation(str(path)), f"folder holds no job files; expected *.yaml or *.yml files{also}"
                )
            out.extend(found)
        else:
            out.append(path)
    return out


def _build(docs: list[YMap], files: list[str], problems: Problems) -> Jobs:
    jobs: dict[str, Job] = {}
    for doc in docs:
        _read_doc(doc, problems, jobs)
    problems.raise_if_any()
    return Jobs(jobs=jobs, files=tuple(files))


def read_topolog_document(doc: YMap, p: Problems, jobs: dict[str, Job]) -> None:
    """One `kind: Jobs` document's jobs into `jobs` (verifier/sources/jobs/read.py reads every format)."""
    _read_doc(doc, p, jobs)


def _read_doc(doc: YMap, p: Problems, jobs: dict[str, Job]) -> None:
    where = "the job file"
    p.keys(doc, TOP_KEYS, where, required=("apiVersion", "kind", "jobs"))
    api = doc.get("apiVersion")
    if api is not None and api != API_VERSION:
        p.add(doc.key_loc("apiVersion"), f"apiVersion is {api!r}; expected {API_VERSION!r}")
    kind = doc.get("kind")
    if kind is not None and kind != DOC_KIND:
        hint = " (inventories are loaded by 'topolog verify', not as jobs)" if kind == "Inventory" else ""
        p.add(doc.key_loc("kind"), f"kind is {kind!r}; expected {DOC_KIND!r}{hint}")
    if "metadata" in doc:
        p.mapping(doc, "metadata", where)
    items = p.seq(doc, "jobs", where)
    if items is None:
        return
    for i, item in enumerate(items):
        loc = items.item_loc(i)
        if not isinstance(item, YMap):
            p.add(loc, "each item of 'jobs' must be a mapping with at least 'name' and 'principal'")
            continue
        job = _read_job(item, p)
        if job is None:
            continue
        first = jobs.get(job.name)
        if first is not None:
            p.add(
                item.key_loc("name"),
                f"job {job.name!r} is defined twice (first at {first.loc}); job names must be unique",
            )
            continue
        jobs[job.name] = job


def _read_job(m: YMap, p: Problems) -> Job | None:
    before = len(p.items)
    name = p.text(m, "name", "a job")
    what = f"job {name!r}" if name else "a job"
    p.keys(m, JOB_KEYS, what, required=("name", "principal"))
    if name is not None and not _NAME_RE.match(name):
        p.add(
            m.key_loc("name"),
            f"job name {name!r} must start with a letter or digit and hold only letters, digits, '.', '_' and '-'",
        )
    principal, ptype = _principal(m, p, what)
    description = p.text(m, "description", what, multiline=True)

    gpus = _count(m, "gpus", what, p)
    replicas = _count(m, "replicas", what, p)
    model = _model(m, p, what)

    accepts: tuple[str, ...] = ()
    min_hbm_mb = min_hbm_mbps = None
    mig: str | None = None
    fp64 = False
    gpu = p.mapping(m, "gpu", what)
    if gpu is not None:
        gw = f"gpu of {what}"
        p.keys(gpu, GPU_KEYS, gw)
        accepts = _words(gpu, "accepts", gw, p)
        min_hbm_mb = p.unit(gpu, "min_hbm", gw, units.size_mb)
        min_hbm_mbps = p.unit(gpu, "min_hbm_bandwidth", gw, units.bandwidth_mbps)
        fp64 = _flag(gpu, "fp64", gw, p)
        mig = p.text(gpu, "mig", gw)
        if mig is not None and mig_memory_mb(mig) is None:
            p.add(
                gpu.key_loc("mig"), f"'mig' in {gw} must be a MIG profile such as '1g.10gb' or '3g.40gb', got {mig!r}"
            )
        if mig is not None and model is not None:
            p.add(
                gpu.key_loc("mig"),
                f"{what} has both 'mig' and 'model'; a MIG job states 'gpus' as the number of instances it needs",
            )

    scope = "any"
    max_nodes = min_pair = min_fabric = None
    rail_aligned = False
    topo = p.mapping(m, "topology", what)
    if topo is not None:
        tw = f"topology of {what}"
        p.keys(topo, TOPOLOGY_KEYS, tw)
        scope = p.choice(topo, "scope", tw, SCOPES) or "any"
        max_nodes = _count(topo, "max_nodes", tw, p)
        min_pair = p.unit(topo, "min_gpu_bandwidth", tw, units.bandwidth_mbps)
        min_fabric = p.unit(topo, "min_network_bandwidth", tw, units.bandwidth_mbps)
        rail_aligned = _flag(topo, "rail_aligned", tw, p)

    stack = _software(m, p, what)
    exclude = _exclude(m, p, what)

    if model is not None and replicas is None:
        replicas = 1
    if gpus is None:
        if replicas is None:
            if "gpus" not in m and "model" not in m:  # a model written but refused was reported already
                p.add(m.loc, f"{what} has no 'gpus'; it is required unless a 'model' sizes the job")
        else:
            gpus = replicas
        declared = False
    else:
        declared = True
        if replicas is not None and replicas > gpus:
            p.add(
                m.key_loc("replicas"),
                f"{what} asks for {replicas} replicas on {gpus} GPUs; each replica needs at least one GPU",
            )
    if replicas is not None and model is None and "replicas" in m:
        p.add(m.key_loc("replicas"), f"'replicas' in {what} needs a 'model' to size each replica")
    if topo is not None and max_nodes is not None and max_nodes > 1 and scope == "node":
        p.add(
            topo.key_loc("max_nodes"),
            f"{what} has scope 'node' and max_nodes {max_nodes}; a node-scoped job uses exactly one node",
        )

    if len(p.items) > before or name is None or principal is None or gpus is None:
        return None
    return Job(
        name=name,
        principal=principal,
        principal_type=ptype,
        gpus=gpus,
        gpus_declared=declared,
        replicas=replicas,
        accepts=accepts,
        min_hbm_mb=min_hbm_mb,
        min_hbm_mbps=min_hbm_mbps,
        fp64=fp64,
        scope=scope,
        max_nodes=max_nodes,
        min_pair_mbps=min_pair,
        min_fabric_mbps=min_fabric,
        rail_aligned=rail_aligned,
        stack=stack,
        exclude=exclude,
        model=model,
        description=description,
        mig=mig,
        loc=m.key_loc("name"),
        mig_loc=gpu.key_loc("mig") if gpu is not None and mig is not None else None,
    )


def _principal(m: YMap, p: Problems, what: str) -> tuple[str | None, str | None]:
    raw = m.get("principal")
    if raw is None:
        return None, None
    if not isinstance(raw, str) or not raw.strip():
        p.add(
            m.key_loc("principal"),
            f"'principal' in {what} must be a principal id such as 'hpc' or a Cedar uid such as 'Team::\"hpc\"'",
        )
        return None, None
    if "::" in raw:
        u = _UID_RE.match(raw)
        if u is None:
            p.add(
                m.key_loc("principal"),
                f"cannot read principal {raw!r} in {what}; "
                "expected a Cedar uid such as 'Team::\"hpc\"' or 'User::\"alice\"'",
            )
            return None, None
        if u.group("type") not in PRINCIPAL_TYPES:
            p.add(
                m.key_loc("principal"),
                f"principal type {u.group('type')!r} in {what} is not a principal"
                f"{did_you_mean(u.group('type'), PRINCIPAL_TYPES)} "
                f"(expected one of: {one_of(PRINCIPAL_TYPES)})",
            )
            return None, None
        pid, ptype = u.group("id"), u.group("type")
    else:
        pid, ptype = raw.strip(), None
    problem = principal_id_problem(pid)
    if problem is not None:
        p.add(m.key_loc("principal"), f"principal {pid!r} in {what} {problem}")
        return None, None
    return pid, ptype


def _count(m: YMap, key: str, what: str, p: Problems) -> int | None:
    if key not in m:
        return None
    raw = m[key]
    if isinstance(raw, int) and not isinstance(raw, bool) and 1 <= raw <= INT64_MAX:
        return raw
    fits = f" that fits in 64 bits (at most {INT64_MAX})" if isinstance(raw, int) and raw > INT64_MAX else ""
    p.add(m.key_loc(key), f"{key!r} in {what} is {raw!r}; expected a whole number of at least 1{fits}")
    return None


def _flag(m: YMap, key: str, what: str, p: Problems) -> bool:
    value = m.get(key)
    if value is None:
        return False
    if not isinstance(value, bool):
        p.add(m.key_loc(key), f"{key!r} in {what} must be true or false, got {value!r}")
        return False
    return value


def _words(m: YMap, key: str, what: str, p: Problems) -> tuple[str, ...]:
    value = m.get(key)
    if value is None:
        return ()
    if isinstance(value, str):  # a single word for a one-item list
        value_list: list[object] = [value]
        locs = [m.key_loc(key)]
    elif isinstance(value, YList):
        value_list = list(value)
        locs = [value.item_loc(i) for i in range(len(value))]
    else:
        p.add(m.key_loc(key), f"{key!r} in {what} must be a list of words")
        return ()
    out: list[str] = []
    for item, loc in zip(value_list, locs, strict=True):
        if isinstance(item, bool) or not isinstance(item, str | int) or not str(item).strip():
            p.add(loc, f"items of {key!r} in {what} must be plain words, got {item!r}")
        elif isinstance(item, str) and (problem := name_problem(item)) is not None:
            p.add(loc, f"item {item!r} of {key!r} in {what} {problem}")
        elif str(item) in out:
            p.add(loc, f"{item!r} is listed twice in {key!r} of {what}")
        else:
            out.append(str(item).strip())
    if isinstance(value, YList) and not value:
        p.add(m.key_loc(key), f"{key!r} in {what} is empty; leave it out to accept any GPU")
    return tuple(out)


def _software(m: YMap, p: Problems, what: str) -> tuple[StackOption, ...]:
    raw = m.get("software")
    if raw is None:
        return ()
    sw = f"software of {what}"
    if isinstance(raw, YMap):
        options: list[tuple[YMap, SourceLocation]] = [(raw, raw.loc)]
    elif isinstance(raw, YList):
        options = []
        for i, item in enumerate(raw):
            if not isinstance(item, YMap):
                p.add(
                    raw.item_loc(i),
                    f"each alternative in {sw} must be a mapping such as {{cuda: '>=12.4', nccl: '>=2.18'}}",
                )
            else:
                options.append((item, raw.item_loc(i)))
        if not raw:
            p.add(m.key_loc("software"), f"{sw} is an empty list; leave it out to accept any stack")
    else:
        p.add(
            m.key_loc("software"),
            f"{sw} must be a list of alternatives such as [{{cuda: '>=12.4'}}, {{rocm: '>=6.1'}}]",
        )
        return ()
    firsts = [next(iter(o), None) for o, _ in options]
    out: list[StackOption] = []
    for i, (opt, loc) in enumerate(options, start=1):
        if not opt:
            p.add(loc, f"alternative {i} in {sw} is empty; expected components such as cuda: '>=12.4'")
            continue
        first = firsts[i - 1]
        name = first if first is not None and firsts.count(first) == 1 else f"option{i}"
        reqs: list[tuple[str, int]] = []
        for component, value in opt.items():
            kloc = opt.key_loc(component)
            if not _SYMBOL_RE.match(component):
                p.add(kloc, f"software component {component!r} in {sw} must be a plain word such as 'cuda'")
                continue
            number = _min_version(value, kloc, f"{component} in {sw}", p, component)
            if number is not None:
                reqs.append((component, number))
        out.append(StackOption(name=name, requires=tuple(reqs), loc=loc))
    return tuple(out)


def _min_version(raw: object, loc: SourceLocation, what: str, p: Problems, component: str) -> int | None:
    expected = "a minimum version such as '>=12.4' (major.minor; patch levels are not compared)"
    if isinstance(raw, bool) or not isinstance(raw, str | int):
        p.add(loc, f"{what} must be {expected}, got {raw!r}")
        return None
    m = _REQ_RE.match(str(raw))
    if m is None:
        p.add(loc, f"cannot read {what} {raw!r}; expected {expected}")
        return None
    op = m.group("op") or ">="
    if op != ">=":
        p.add(loc, f"{what} uses {op!r}; only minimum versions ('>=') are supported, expected {expected}")
        return None
    text = m.group("version")
    parts = text.split(".")
    # A patch level other than zero (read as digits: Python will not read a number of more than 4,300).
    if len(parts) > 2 and any(x.isascii() and x.isdigit() and x.strip("0") for x in parts[2:]):
        p.add(
            loc,
            f"{what} {raw!r} names a patch level; node versions are compared as major.minor only, "
            f"so write '>={parts[0]}.{parts[1]}'",
        )
        return None
    if (problem := release_shape_problem(component, text, minimum=True)) is not None:
        p.add(loc, f"{what}: {problem}")
        return None
    number = version_number(text) if len(text) <= 40 else None
    if number is None or number > INT64_MAX:
        p.add(loc, f"cannot read version {text!r} of {what}; expected {expected}")
        return None
    return number


def _exclude(m: YMap, p: Problems, what: str) -> tuple[tuple[str, str], ...]:
    ex = p.mapping(m, "exclude", what)
    if ex is None:
        return ()
    xw = f"exclude of {what}"
    out: list[tuple[str, str]] = []
    for key, value in ex.items():
        kloc = ex.key_loc(key)
        if (problem := name_problem(key)) is not None:
            p.add(kloc, f"label {key!r} in {xw} {problem}")
            continue
        values: list[object] = list(value) if isinstance(value, YList) else [value]
        if isinstance(value, YList) and not value:
            p.add(kloc, f"{key!r} in {xw} is an empty list; expected label values to refuse")
        for v in values:
            if isinstance(v, bool):
                out.append((key, "true" if v else "false"))
            elif isinstance(v, str) and (problem := text_problem(v)) is not None:
                p.add(kloc, f"{key!r} in {xw}: {v!r} {problem}")
            elif isinstance(v, str | int) and str(v).strip():
                out.append((key, str(v)))
            else:
                p.add(kloc, f"{key!r} in {xw} must be a label value or a list of them, got {v!r}")
    return tuple(dict.fromkeys(out))


def parse_count(raw: object) -> int:
    """Parameter counts: `70B` -> 70_000_000_000, `1.5T`, `13B`, `350M`, `7e9`, or a whole number."""
    if isinstance(raw, bool):
        raise units.UnitError(f"expected a parameter count such as '70B', got {raw!r}")
    if isinstance(raw, int):
        value = Fraction(raw)
    elif isinstance(raw, str) and (problem := units.comma_problem(raw, "parameter count")) is not None:
        raise units.UnitError(problem)  # `1,5B`: 1.5 billion or 15? never guessed
    elif isinstance(raw, str) and (m := _COUNT_RE.match(raw)):
        if (problem := underscore_problem(m.group("num"))) is not None:
            raise units.UnitError(f"parameter count {problem}")
        try:
            exact = Decimal(m.group("num").replace("_", ""))
        except InvalidOperation:
            raise units.UnitError(f"cannot read parameter count {raw!r}") from None
        if exact and abs(exact.adjusted()) > 30:  # `1e99999999` would build a hundred-million-digit integer
            raise units.UnitError(f"parameter count {raw!r} is out of range; expected at most {INT64_MAX}")
        number = Fraction(exact)
        value = number * _COUNT_SUFFIX[m.group("suffix") or ""]
    else:
        raise units.UnitError(
            f"cannot read parameter count {raw!r}; expected a count such as '70B', '1.5T', '350M' or a whole number"
        )
    if value.denominator != 1 or value < 1:
        raise units.UnitError(f"parameter count {raw!r} is not a positive whole number of parameters")
    if value > INT64_MAX:
        raise units.UnitError(f"parameter count {raw!r} does not fit in 64 bits; expected at most {INT64_MAX}")
    return int(value)


def _model(m: YMap, p: Problems, what: str) -> ModelSpec | None:
    mm = p.mapping(m, "model", what)
    if mm is None:
        return None
    mw = f"model of {what}"
    before = len(p.items)
    p.keys(mm, MODEL_KEYS, mw, required=("parameters",))
    params = _param_count(mm, "parameters", mw, p)
    active = _param_count(mm, "active_parameters", mw, p)
    if params is not None and active is not None and active > params:
        p.add(mm.key_loc("active_parameters"), f"active_parameters ({active:,}) exceed parameters ({params:,}) in {mw}")
    mode = p.choice(mm, "mode", mw, MODES) or "inference"
    wprec = p.choice(mm, "weight_precision", mw, tuple(PRECISION_BYTES)) or "bf16"
    kvprec = p.choice(mm, "kv_precision", mw, tuple(PRECISION_BYTES)) or "fp16"
    optimizer = p.choice(mm, "optimizer", mw, OPTIMIZERS)
    shape = {k: _count(mm, k, mw, p) for k in (*KV_KEYS, "batch")}
    activations = p.unit(mm, "activations", mw, lambda raw: units.size_mb(raw, allow_zero=True))
    attention_heads = _count(mm, "attention_heads", mw, p)
    utilization = _utilization(mm, mw, p)
    kv_heads = shape["kv_heads"]
    if attention_heads is not None and kv_heads is not None and attention_heads % kv_heads:
        p.add(
            mm.key_loc("attention_heads"),
            f"{mw} has {attention_heads} attention heads and {kv_heads} KV heads; grouped-query attention "
            "shares each KV head among a whole number of attention heads, so attention_heads must be a "
            "multiple of kv_heads",
        )
    if mode == "training":
        if optimizer is None:
            optimizer = "adam"
        if wprec not in ("fp32", "bf16", "fp16"):
            p.add(
                mm.key_loc("weight_precision"),
                f"training in {mw} is sized for fp32 or mixed bf16/fp16 precision, not {wprec!r}",
            )
        for k in (*KV_KEYS, "batch", "kv_precision"):
            if k in mm:
                p.add(
                    mm.key_loc(k),
                    f"{k!r} in {mw} sizes an inference KV cache; training activations are not derived "
                    "from the model's shape, give 'activations' per replica instead",
                )
    else:
        if "optimizer" in mm:
            p.add(mm.key_loc("optimizer"), f"'optimizer' in {mw} applies to mode 'training' only")
        written = [k for k in KV_KEYS if k in mm]
        if (written and len(written) < len(KV_KEYS)) or ("batch" in mm and not written):
            missing = [k for k in KV_KEYS if k not in mm]
            p.add(
                mm.loc,
                f"{mw} gives part of the KV cache shape; it needs all of {', '.join(KV_KEYS)} "
                f"(missing: {', '.join(missing)})",
            )
    if len(p.items) > before or params is None:
        return None
    return ModelSpec(
        parameters=params,
        active_parameters=active,
        mode=mode,
        weight_precision=wprec,
        kv_precision=kvprec,
        optimizer=optimizer if mode == "training" else None,
        layers=shape["layers"],
        kv_heads=shape["kv_heads"],
        head_dim=shape["head_dim"],
        context=shape["context"],
        batch=shape["batch"] or 1,
        activations_mb=activations,
        attention_heads=attention_heads,
        gpu_memory_utilization=utilization if utilization is not None else DEFAULT_UTILIZATION,
        loc=mm.loc,
    )


def _utilization(m: YMap, what: str, p: Problems) -> Fraction | None:
    """`gpu_memory_utilization`: the share of each GPU's memory the engine may use, 0 < u <= 1."""
    if "gpu_memory_utilization" not in m:
        return None
    raw = m["gpu_memory_utilization"]
    expected = "a fraction above 0 and at most 1, such as 0.9 (vLLM's default: 10% of the memory kept free)"
    value: Fraction | None = None
    # Numbers with a dot stay text in job files (yaml_source.py): read them exactly, never as floats.
    if (isinstance(raw, int) and not isinstance(raw, bool)) or (isinstance(raw, str) and _FRACTION_RE.match(raw)):
        value = Fraction(Decimal(str(raw).strip()))
    if value is None or not 0 < value <= 1:
        p.add(
            m.key_loc("gpu_memory_utilization"), f"'gpu_memory_utilization' in {what} is {raw!r}; expected {expected}"
        )
        return None
    return value


def _param_count(m: YMap, key: str, what: str, p: Problems) -> int | None:
    if key not in m:
        return None
    try:
        return parse_count(m[key])
    except units.UnitError as err:
        p.add(m.key_loc(key), f"{key!r} in {what}: {err}")
        return None
