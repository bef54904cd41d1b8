"""The fast engine: each stratum compiled to SQL, recursion run semi-naively inside DuckDB.

Every tuple carries the global iteration ("stage") in which it first appeared. Input
facts have stage 0 and the counter only grows, across strata too, so each derived fact
has a derivation from strictly older facts: `explain` follows those back to the inputs
and so always terminates with a proof of minimal height.

Symbols are stored as INTEGER ids of one dictionary (see `sql_compiler`): facts are encoded
as they load, rule constants when compiled, and results decoded when read, all in Python; the
`_symbols` table gets only the texts a statement reads (ordering by text), as it runs.
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from itertools import chain, pairwise
from operator import itemgetter
from typing import Any, NoReturn

import duckdb
import numpy
from numpy.typing import NDArray

from verifier.core.errors import EngineError, SourceLocation, TopologError
from verifier.core.limits import current_limits, exceeded
from verifier.core.stamped_rows import StampBlock, StampedRows, names_at
from verifier.engine import sql_compiler as sc
from verifier.engine.ast import (
    Aggregate,
    Atom,
    ColumnType,
    Const,
    Declaration,
    Program,
    Query,
    Row,
    Rule,
    Value,
    Var,
    arithmetic_of,
)
from verifier.engine.backend import EngineStats, Proof, format_fact, out_of_engine_memory, project, sort_rows
from verifier.engine.column_keys import batch_key
from verifier.engine.distinct_rules import bindings_distinct, counted_apart, rows_distinct
from verifier.engine.fact_rows import fact_columns, fits, input_declaration
from verifier.engine.proof_search import Instance, ProofSearch
from verifier.engine.schedule import prerequisites, run_in_pool
from verifier.engine.strata import (
    Stratum,
    combines_stored_values,
    endless_recursion,
    runnable_rules,
    strata_of,
    what_to_derive,
)
from verifier.engine.symbol_ids import SlotIds, SymbolIds, not_utf8, same_below

AGGREGATE_PREMISES = 50
"""An aggregate's proof lists at most this many body instances of its group."""
INSTANCE_ROWS = 4096
"""A proof step's instances up to this many are ordered in Python (`_instance_rows`), more in SQL."""
ROUNDS_VALUES = 1024
"""A proof derives a closure again in rounds for at most this many values of its passed column at
once (`_in_rounds_for`); past that, the whole closure."""
WILDCARD_VALUE = "_"
"""Stands for an unconstrained argument of an absent (negated) fact in a proof."""
LOAD_CHUNK = 16_384
"""Rows checked and encoded per pass (see `DuckDBBackend._encoded`)."""
TEXT_ROWS = 1_000_000
"""A statement's rows read for the ids whose texts it needs, at most (`DuckDBBackend._text_ids`).

Past this many (a REPL question over a cross product, which `holds` stops at its first answer),
the ids of the columns it reads are taken instead, read in a pass over their tables each.
"""
CHAIN_DEPTH = 32
"""A closure over a keyed step (`DuckDBBackend._chain`) deeper than this is run again as a UNION query:
it may run into a cycle. Containment is a few levels deep (4 in a fleet of DGX nodes)."""
CHAIN_CYCLE = "topolog: closure past its chain depth"
"""The message of the error that stops such a closure (DuckDB's `error()`)."""
_C0, _C1, _DEPTH = sc.quote("c0"), sc.quote("c1"), sc.quote("_depth")
COMPRESS_ROWS = 2_000_000
"""Input rows loaded since the last evaluation past which they are compressed before the next one.

DuckDB keeps a table's new rows as plain 32- and 64-bit columns until a checkpoint compresses them
(bit-packing of ids, a constant stage column). At 131,072 GPUs (5.3 M input rows) that took the
loaded facts, with the 1.55 M symbols' texts then copied in as they loaded, from 208 to 43 MiB
(0.42 s, 0.35 s of it compressing the texts). Measured again once no text was copied as it loads:
the run peaked at 900-925 MiB with it, 1,009-1,010 MiB without, too near the 1 GiB the issue allows
(since then the load takes less: COMPRESS_SHARE).
Below this many rows it does not pay: `place` at 131,072 GPUs (1.0 M rows) peaks no lower, and a
32,768-GPU `verify` (1.3 M rows) saved 35 MiB for 0.2-0.3 s. Past it, only where the tables take
a large share of engine_memory (COMPRESS_SHARE).
"""
COMPRESS_SHARE = 6
"""Past COMPRESS_ROWS, the loaded facts are compressed only where DuckDB's tables take at least
1/COMPRESS_SHARE of engine_memory, or where the strata run one after another (one worker, a
program of few strata: no concurrent pass that runs again, compressed, if it runs out of memory;
tests/engine/test_duckdb_eval_adversarial55.py): the checkpoint keeps a large fleet within DuckDB's memory_limit,
and below that it costs time on the evaluation's critical path (no statement runs beside it) for
memory the run does not need. At 131,072 GPUs (5.3 M rows, 134 MiB of plain columns, an eighth
of the default 1 GiB) it took 0.35 s of a 2.4 s evaluation, before either thread starts, and
its 110 MiB less of DuckDB memory at the evaluation's peak (385 against 497 MiB) is 75-110 MiB of
the process's (787-823 against 883-897 MiB, of the 1 GiB issue 46 allows). A fleet's evaluation
took DuckDB's memory to about 3.7 times what the plain loaded tables take: below a sixth of the
limit that stays under two thirds of it uncompressed (below a quarter it could near it). Skipped
at 131,072 GPUs, the whole run took 0.887x the instructions: 2.1 G less compressing, 1.6 G less
decompressing in the evaluation's scans.
"""

WORKERS = min(2, os.cpu_count() or 1)
"""Threads that evaluate independent strata at once, each on its own DuckDB cursor (`_run_concurrently`).

DuckDB releases the GIL while a statement runs, and most of a fleet's statements are small ones
that its own threads do not speed up (at 131,072 GPUs some 300 under 20 ms): two of them at once
on two cores took 0.6x the time of one after the other."""
CONCURRENT_ROWS = 200_000
"""Input rows loaded below which strata run one after another: a shipped example (a few thousand
rows) evaluates in tens of milliseconds, less than threads and cursors cost to set up."""

CONCURRENT_STRATA = 16
"""Strata to evaluate below which they run one after another: a re-evaluation of a few (a REPL's new
facts, a job's placement) took 5 ms more CPU on two threads, for their cursors and settings."""

_Int64s = NDArray[numpy.int64]
_PARAMETER = re.compile(r"\$(p\d+)\b")
"""A named parameter in a statement (`$p3`, see `sc.Params.add`)."""


class DuckDBBackend:
    """Backend protocol implementation on one in-memory DuckDB connection."""

    name = "duckdb"
    proves = True

    def __init__(self) -> None:
        self._here = _Here()
        """What the thread now evaluating a stratum holds: its cursor, stage counter and relation."""
        self._main = duckdb.connect(":memory:")
        """The connection; threads evaluating strata at once use cursors of it (`_con`)."""
        self._fresh = True
        """The connection is the one made here, untouched: the first load() sets it up instead of
        opening another (a connection took 16-24 ms of CPU, a shipped example's whole evaluation tens)."""
        self._program = Program()
        self._schema = sc.Schema(())
        self._strata: list[Stratum] = []
        self._rules_by_head: dict[str, list[Rule]] = {}
        self._total = 0
        """The stages every evaluation so far took, in the sequential order of its strata."""
        self._offsets: dict[str, int] = {}
        """Per derived relation, what its table's stages (its stratum's own, from 1) add up to in the
        order of evaluation: a tuple's stage is its table's plus this (`_stage_of`)."""
        self._lock = threading.Lock()
        """Held by the thread of a stratum for its Python work; let go while DuckDB runs a statement."""
        self._halt = threading.Event()
        """Set when concurrent strata must stop: the next statement of each raises `_Halted` instead."""
        self._cursors: list[duckdb.DuckDBPyConnection] = []
        """The cursors of the threads now evaluating strata (`_run_concurrently`), to interrupt."""
        self._threads: int | None = None
        """DuckDB's threads while strata run concurrently (`_run_concurrently`); None: its default."""
        self.workers = WORKERS
        """Threads for independent strata (1: every stratum in the calling thread, in order)."""
        self.concurrent_rows = CONCURRENT_ROWS
        """Input rows loaded from which independent strata run concurrently."""
        self.concurrent_strata = CONCURRENT_STRATA
        """Strata to evaluate from which they run concurrently."""
        self._input_rows = 0
        """Input rows loaded since load()."""
        self._proofs = ProofSearch({}, self._instance)
        self._loaded: set[str] = set()
        """Input relations that already hold facts."""
        self._keys: dict[str, list[tuple[int, ...]]] = {}
        """Per input relation loaded once, columns that hold no value (or pair) twice (column_keys)."""
        self._filled: set[str] = set()
        """Relations that may hold tuples during evaluate(): new tuples must be checked against them."""
        self._symbol_ids = SymbolIds()
        """The id of every symbol the engine holds: in the dict, or (stamped names never seen before)
        by position in a batch found by hash (`SymbolIds.defer`)."""
        self._symbol_text = self._symbol_ids.text
        """Every symbol the engine holds, at the index that is its id."""
        self._stored_texts = numpy.zeros(0, dtype=numpy.bool_)
        """Per id, whether the `_symbols` table holds its text (`_store_texts`)."""
        self._storing = False
        """A copy of texts into `_symbols` was stopped part way: the table may hold texts not flagged."""
        self._slot_ids: dict[int, SlotIds] = {}
        """Per list of names that StampBlocks share (by id, with the list, so the id stays its): each
        slot's ids, already looked up (`_block_columns`)."""
        self._changed: set[str] | None = None
        """Input relations given facts since the last evaluate(); None: everything must be derived."""
        self.stats = EngineStats()
        self._in_rounds = False
        """Every recursive stratum in semi-naive rounds, so that each tuple's stage is its round."""
        self._coarse: dict[str, tuple[Stratum, int, int | None]] = {}
        """Closures that ran as one recursive query, with the stage their tuples share: too coarse
        for proofs until derived again in rounds, in the stages kept free after it (`_run_closure`);
        and the column every recursive rule passes through unchanged, if one does."""
        self._rounds_for: dict[str, set[Value]] = {}
        """Per coarse closure, the values of that column whose tuples were derived again in rounds."""
        self._unfinished: dict[str, tuple[Stratum, int]] = {}
        """Closures whose derivation in rounds for a proof was stopped part way (Ctrl-C in the REPL):
        some tuples deleted and not derived again yet. Derived again whole before the next read (`_mend`)."""
        self._budget = 0
        """Tuples the current evaluate() may still derive (limit derived_tuples)."""
        self._uncompressed = 0
        """Input rows loaded since the last evaluate() (COMPRESS_ROWS)."""
        self._left_plain = False
        """Whether the last evaluation left past COMPRESS_ROWS loaded rows uncompressed (COMPRESS_SHARE)."""

    @property
    def _con(self) -> duckdb.DuckDBPyConnection:
        """The connection statements run on: a thread evaluating strata at once has a cursor of its own."""
        con = self._here.con
        return self._main if con is None else con

    @_con.setter
    def _con(self, con: duckdb.DuckDBPyConnection) -> None:
        self._main = con

    @property
    def _stage(self) -> int:
        """The stage of the stratum the thread evaluates: its own, counted from 1 (`_offsets`)."""
        return self._here.stage

    @_stage.setter
    def _stage(self, stage: int) -> None:
        self._here.stage = stage

    @property
    def _computing(self) -> str:
        """The relation whose tuples the thread's running statement derives, for a budget or memory error."""
        return self._here.computing

    @_computing.setter
    def _computing(self, relation: str) -> None:
        self._here.computing = relation

    # -- setup -----------------------------------------------------------------------

    def load(self, program: Program) -> None:
        if not self._fresh:
            self._con.close()
            self._con = duckdb.connect(":memory:")
        self._fresh = False
        # A bounded engine: past `engine_memory` a statement fails instead of growing, and
        # nothing spills to a `.tmp` folder in the working directory (which would trade
        # the memory bound for an unbounded disk one).
        self._con.execute(f"SET memory_limit = '{current_limits().engine_memory}B'")
        self._con.execute("SET temp_directory = ''")
        # DuckDB draws a progress bar on stdout for a statement that runs over 2 s: at fleet scale
        # that went into the middle of a JSON or SARIF report.
        self._con.execute("SET enable_progress_bar = false")
        # Once 16 MiB of changes pile up, DuckDB checkpoints even an in-memory database: it
        # compresses every table in one pass, inside whichever statement crossed the line (at
        # 131,072 GPUs one derived relation of 32,770 rows took 0.27 s instead of 0.01 s). The
        # database lives for one run and is never written anywhere; peak memory did not move.
        self._con.execute("SET checkpoint_threshold = '1TB'")
        for macro in sc.MACROS:
            self._con.execute(macro)
        self._con.execute(sc.SYMBOLS_SQL)
        self._symbol_ids = SymbolIds()
        self._symbol_text = self._symbol_ids.text
        self._stored_texts = numpy.zeros(0, dtype=numpy.bool_)
        self._storing = False
        self._slot_ids = {}
        self._program = program
        self._schema = sc.Schema(program.declarations, on_first_use=self._create_table)
        self._strata = strata_of(program)
        self._rules_by_head = {}
        for rule in program.rules:
            self._rules_by_head.setdefault(rule.head.relation, []).append(rule)
        self._total = 0
        self._offsets = {}
        self._input_rows = 0
        self._proofs = ProofSearch(self._rules_by_head, self._instance)
        self._loaded = set()
        self._keys = {}
        self._changed = None
        self._in_rounds = False
        self._coarse = {}
        self._rounds_for = {}
        self._unfinished = {}
        self._uncompressed = 0
        self._left_plain = False
        self.stats = EngineStats()

    def _create_table(self, relation: str) -> None:
        # OR REPLACE: made once already if a Ctrl-C came as this statement returned (Schema.table),
        # or left with rows by a CREATE TABLE AS whose DROP a second Ctrl-C stopped (_insert).
        self._con.execute(self._schema.create_sql(relation, replace=True))

    def add_facts(self, relation: str, rows: Iterable[Row]) -> None:
        try:
            self._add_facts(relation, rows)
        except duckdb.OutOfMemoryException:
            self._computing = relation
            raise self._too_big("loaded", "engine_memory") from None
        except duckdb.Error as err:
            raise EngineError(f"duckdb failed while loading the facts of {relation}: {err}") from err

    def retract(self, relation: str) -> None:
        """Forget every fact of the input `relation`; the next evaluate() derives again what depends on it.

        For an evaluation kept and asked again with other facts of a few small relations (the
        service's placements: the fleet evaluated once, each job's facts added, then retracted),
        so only what depends on them is derived again. Symbols the facts brought stay known.
        """
        self._input_declaration(relation)
        if relation not in self._loaded:
            return
        self._con.execute(f"DELETE FROM {self._schema.table(relation)}")
        self._loaded.discard(relation)
        self._keys.pop(relation, None)
        if self._changed is not None:
            self._changed.add(relation)

    def _add_facts(self, relation: str, rows: Iterable[Row]) -> None:
        started = time.perf_counter()
        decl = self._input_declaration(relation)
        rows = rows if isinstance(rows, list | tuple | StampedRows) else list(rows)
        if not rows:
            return
        if self._changed is not None:
            self._changed.add(relation)
        table = self._schema.table(relation)
        if not decl.arity:
            fact_columns(decl, rows)  # every row must be empty
            self._con.execute(f"INSERT INTO {table} SELECT TRUE, 0 WHERE NOT EXISTS (SELECT 1 FROM {table})")
            self._loaded.add(relation)
            self.stats.load_seconds += time.perf_counter() - started
            return
        arrays, fresh = self._encoded(decl, rows)
        first_load = relation not in self._loaded
        # A column of symbols all new, each once, keys the rows, and none of them is stored yet. A
        # relation loaded once keeps its batch's key (column_keys); rows added later may repeat it.
        if fresh is not None:
            key: tuple[int, ...] | None = (fresh,)
        else:
            key = batch_key(arrays, self._pairs_proven(rows, arrays)) if first_load else None
        names = [f"c{i}" for i in range(decl.arity)]
        # Scanned in place by DuckDB, all columns as one relation: no temp table per column to copy
        # and join back by position.
        self._con.register("_load", dict(zip(names, arrays, strict=True)))
        try:
            if fresh is None and not first_load:
                # Set semantics across calls too; skipped on the first call, where it costs a hash of the table.
                source = f"SELECT DISTINCT * FROM _load EXCEPT SELECT * EXCLUDE ({sc.STAGE}) FROM {table}"
            elif key is not None:
                source = "SELECT * FROM _load"
            else:
                source = "SELECT DISTINCT * FROM _load"
            self._con.execute(f"INSERT INTO {table} SELECT *, 0 FROM ({source})")
        finally:
            self._con.unregister("_load")
        if key is not None and first_load:
            self._keys[relation] = [key]
        else:
            self._keys.pop(relation, None)
        self._loaded.add(relation)
        self._uncompressed += len(arrays[0])
        self.stats.load_seconds += time.perf_counter() - started

    def _encoded(self, decl: Declaration, rows: Sequence[Row] | StampedRows) -> tuple[list[_Int64s], int | None]:
        """Every column of the rows as an int64 array, symbols replaced by their ids (new ones added to
        the dictionary), after checking what `fact_columns` checks (its FactError on any problem, with
        nothing added). The blocks of StampedRows are encoded as blocks (`_block_columns`), after the plain rows.
        Also a column of plain rows (no blocks) whose symbols were all new, each once, if there is one.
        """
        known = self._symbol_ids
        start = len(self._symbol_text)
        plain = rows.plain if isinstance(rows, StampedRows) else rows
        blocks = [b for b in rows.blocks if len(b)] if isinstance(rows, StampedRows) else []
        try:
            # Each column made once at its full length, the plain rows' part and then each block's
            # written in place: joined afterwards, every value was copied once more (the 5.3 M
            # values of a 131,072-GPU fleet's links; joined block by block, once per later block).
            total = len(plain) + sum(map(len, blocks))
            arrays = [numpy.empty(total, dtype=numpy.int64) for _ in range(decl.arity)]
            new = self._plain_columns(decl, plain, [a[: len(plain)] for a in arrays])
            at = len(plain)
            for block in blocks:
                self._block_columns(decl, block, [a[at : at + len(block)] for a in arrays])
                at += len(block)
        except BaseException as err:
            # Forget the symbols of a refused load, and the slots' ids, which may name them: the next
            # load gives those ids to its own new symbols. (The `_symbols` table holds none of them:
            # texts are stored there only as a statement reads them.)
            known.forget_from(start)
            self._slot_ids.clear()
            if isinstance(err, UnicodeEncodeError):
                raise not_utf8(f"while loading the facts of {decl.name}", err) from None
            raise
        return arrays, next((i for i, n in enumerate(new) if n == len(plain)), None) if not blocks else None

    def _plain_columns(self, decl: Declaration, rows: Sequence[Row], arrays: list[_Int64s]) -> list[int]:
        """Write the columns of plain rows into `arrays` (one per column, as long as `rows`); how many
        new symbols each column added.
        """
        arity = decl.arity
        symbolic = [c.type == "symbol" for c in decl.columns]
        wanted = [{str} if s else {int} for s in symbolic]
        getters = [itemgetter(i) for i in range(arity)]
        new = [0] * arity
        # Column by column (ids in order of first appearance, as if each column were interned whole),
        # in chunks, so that each pass over a chunk finds its tuples and strings still in the CPU cache
        # from the one before: at fleet scale a pass over all rows is a cache miss per value.
        for i in range(arity):
            for at in range(0, len(rows), LOAD_CHUNK):
                chunk = rows[at : at + LOAD_CHUNK]
                # The first column's passes see every row before any other column is read.
                if not i and set(map(len, chunk)) != {arity}:
                    _refuse(decl, rows)
                values = list(map(getters[i], chunk))
                # Comparing exact types rejects bool (an int) and str subclasses, as fact_columns does.
                if set(map(type, values)) != wanted[i]:
                    _refuse(decl, rows)
                end = at + len(values)
                if symbolic[i]:
                    new[i] += self._symbol_ids.ids_into(values, arrays[i][at:end])
                else:
                    try:
                        arrays[i][at:end] = values
                    except OverflowError:
                        _refuse(decl, rows)
        return new

    def _block_columns(self, decl: Declaration, block: StampBlock, out: list[_Int64s]) -> None:
        """Write the columns of a block's rows into `out` (one per column, as long as the block): each
        node's names looked up once, then array indexing.
        """
        if len(block.slots) != decl.arity:
            _refuse(decl, list(block.rows()))
        nodes, width = len(block.names), block.width
        used = sorted({s for slots in block.slots if slots is not None for s in slots})
        at = {s: k for k, s in enumerate(used)}
        # Node by node, as the columns are taken from it: slot by slot, every take was a cache miss
        # (0.1 s for the 2.6 M link ends and ids of 16,352 nodes' plan links at 131,072 GPUs).
        ids = numpy.empty((nodes, len(used)), dtype=numpy.int64)
        # Blocks sharing one list of names (a plan's links and their attributes) look each slot up once.
        shared = self._slot_ids.setdefault(id(block.names), SlotIds(block.names))
        assert shared.names is block.names
        known_slots = shared.slots
        if any(s not in known_slots for s in used):
            self._from_same_nodes(shared, used)
        todo = []
        for slot in used:
            done = known_slots.get(slot)
            if done is not None and len(done) == nodes:
                ids[:, at[slot]] = done
            else:
                todo.append(slot)
        # A slot holds names never seen (each node's link ids) or names seen before (the NICs that
        # fabric cables end on), which SymbolIds.ids_into encodes at C speed as long as a chunk does not mix
        # the two: the slots are grouped by whether the first node's name there is new. Within a
        # group the names are read node by node, the order they were made in: read slot by slot,
        # every name is a cache miss (twice as slow at fleet scale).
        first_names = block.names[0] if nodes else ()
        symbols = self._symbol_ids
        fresh = {s for s in todo if isinstance(first_names[s], str) and symbols.find(first_names[s]) is None}
        # New names are deferred (SymbolIds.defer) unless the list of names says that other relations
        # read them too (`read_once_from`, facts.inventory's _NodeNames: below it a plan's nodes' own
        # objects, from it their link ids): the next relation that reads those puts them in the dict
        # after all, and deferring them first cost hashing and sorting them (at 131,072 GPUs 327,000
        # object names of the label and link blocks). Such new names are a group of their own, which
        # ids_into takes in its all-new pass; the ids they get are another order's, as valid.
        once_from = getattr(block.names, "read_once_from", 0)
        deferrable = [s for s in todo if s in fresh and s >= once_from]
        new_elsewhere = [s for s in todo if s in fresh and s < once_from]
        for group in (deferrable, new_elsewhere, [s for s in todo if s not in fresh]):
            if not group:
                continue
            pick, rows = names_at(group), [at[s] for s in group]
            if group is deferrable and symbols.defers(nodes * len(group)):
                # Likely all new (a fleet's link ids): given the ids of their positions, node by node,
                # without a dict entry each, if none is known or comes twice (SymbolIds.defer).
                names = list(chain.from_iterable(map(pick, block.names)))
                if set(map(type, names)) != {str}:
                    _refuse(decl, list(block.rows()))
                base = symbols.defer(names, len(group))
                if base is not None:
                    ids[:, rows] = numpy.arange(base, base + len(names), dtype=numpy.int64).reshape(nodes, len(group))
                    for k, slot in enumerate(group):  # node n's name at slot k of the group: base + n * len + k
                        known_slots[slot] = numpy.arange(base + k, base + len(names), len(group), dtype=numpy.int64)
                        shared.batches[slot] = (base, base + len(names))
                    continue
            step = max(1, LOAD_CHUNK // len(group))
            for first in range(0, nodes, step):
                chunk = block.names[first : first + step]
                names = list(chain.from_iterable(map(pick, chunk)))
                if set(map(type, names)) != {str}:
                    _refuse(decl, list(block.rows()))
                got = numpy.empty(len(names), dtype=numpy.int64)
                self._symbol_ids.ids_into(names, got)
                ids[first : first + len(chunk), rows] = got.reshape(len(chunk), len(group))
            for slot in group:
                known_slots[slot] = ids[:, at[slot]].copy()
                shared.batches.pop(slot, None)  # looked up again (more nodes): no longer one batch's
        for column, slots, consts, into in zip(decl.columns, block.slots, block.constants, out, strict=True):
            per_node = into.reshape(nodes, width)  # a view: row r of node n at n * width + r
            if slots is not None:
                if column.type != "symbol":
                    _refuse(decl, list(block.rows()))
                # mode="clip": the indexes are valid, and with "raise" NumPy takes into a copy first.
                numpy.take(ids, [at[s] for s in slots], axis=1, out=per_node, mode="clip")
                continue
            assert consts is not None
            if set(map(type, consts)) != ({str} if column.type == "symbol" else {int}):
                _refuse(decl, list(block.rows()))
            plan = numpy.empty(width, dtype=numpy.int64)
            if column.type == "symbol":
                self._symbol_ids.ids_into([str(c) for c in consts], plan)  # strings, as checked above
            else:
                try:
                    plan[:] = consts
                except OverflowError:
                    _refuse(decl, list(block.rows()))
            per_node[:] = plan

    def _pairs_proven(
        self, rows: Sequence[Row] | StampedRows, arrays: list[_Int64s]
    ) -> Callable[[int, int], bool] | None:
        """For `batch_key`: whether the rows, as their blocks are made, hold no pair of two columns
        twice (`_keyed_by_blocks`, either column the names'); None for rows without blocks.
        """
        if not isinstance(rows, StampedRows):
            return None
        blocks = [b for b in rows.blocks if len(b)]
        if not blocks:
            return None
        plain = len(rows.plain)

        def proven(i: int, j: int) -> bool:
            return self._keyed_by_blocks(blocks, plain, arrays, i, j) or self._keyed_by_blocks(
                blocks, plain, arrays, j, i
            )

        return proven

    def _keyed_by_blocks(
        self, blocks: Sequence[StampBlock], plain: int, arrays: list[_Int64s], named: int, const: int
    ) -> bool:
        """Whether no (column `named`, column `const`) pair comes twice, told from the blocks' plans
        instead of marking every row (0.2-0.3 s for the 1.8 M link attributes of 131,072 GPUs). So
        when in each block `named` is slots and `const` constants, no plan row repeats another's slot
        and constant, and its slots' names were all taken by one deferred batch (`SlotIds.batches`:
        ids all distinct and no other name's), another than every other block's; and the plain rows
        (the first `plain` of `arrays`) repeat no pair and hold none of those batches' ids there.
        """
        spans: list[tuple[int, int]] = []
        for block in blocks:
            slots, consts = block.slots[named], block.constants[const]
            if slots is None or consts is None or len(set(zip(slots, consts, strict=True))) != len(slots):
                return False
            shared = self._slot_ids.get(id(block.names))
            if shared is None or shared.names is not block.names:
                return False
            taken = {shared.batches.get(s) for s in slots}
            span = taken.pop() if len(taken) == 1 else None
            if span is None:
                return False
            spans.append(span)
        spans.sort()
        if any(end > start for (_, end), (start, _) in pairwise(spans)):
            return False  # two blocks of one batch: their names may be the same
        if plain:
            first, second = arrays[named][:plain], arrays[const][:plain]
            if any(bool(((first >= start) & (first < end)).any()) for start, end in spans):
                return False
            # Sorted by the pair, a repeated pair lies next to itself. (A set of the pairs as Python
            # tuples took 31 ms for link_attr's 68,928 plain rows at 131,072 GPUs and 143 ms, 4.6x,
            # for 4x the rows at 524,288, a cache miss per pair; sorting them 0.4 and 1.6 ms.)
            order = numpy.lexsort((second, first))
            first, second = first[order], second[order]
            if bool(((first[1:] == first[:-1]) & (second[1:] == second[:-1])).any()):
                return False
        return True

    def _from_same_nodes(self, shared: SlotIds, used: Sequence[int]) -> None:
        """Take the ids of `used` slots that another list of names holds for the very same sequences of
        names (relations about a subset of one plan's nodes, each with its list: at 131,072 GPUs
        nearest_nic, rail and scaleup_domain looked up 530,000 names again, a cache miss each).
        """
        for other in list(self._slot_ids.values()):
            # rows_of needs half of these nodes there: a smaller list (a cable run's) cannot hold them.
            if 2 * len(other.names) < len(shared.names):
                continue
            wanted = [s for s in used if s not in shared.slots and s in other.slots]
            # Told the same by their bases (SlotIds.rows_of), two lists' nodes have the same names
            # only in the slots below `same_below` (after them, one list's link ids).
            limits = [b for b in (same_below(shared.names), same_below(other.names)) if b is not None]
            if limits:
                wanted = [s for s in wanted if s < min(limits)]
            if other is shared or not wanted:
                continue
            rows = other.rows_of(shared.names)
            if rows is None:
                continue
            # The few nodes that list lacks (rail's 16,352 against nearest_nic's 16,351) looked up here.
            missing = numpy.flatnonzero(rows < 0).tolist()
            for slot in wanted:
                got = other.slots[slot][numpy.maximum(rows, 0)]
                if missing:
                    try:
                        names = [shared.names[n][slot] for n in missing]
                    except IndexError:
                        continue  # the ordinary path reads them, and fails as it does
                    if set(map(type, names)) != {str}:
                        continue  # the ordinary path refuses them
                    found = numpy.empty(len(names), dtype=numpy.int64)
                    self._symbol_ids.ids_into(names, found)
                    got[missing] = found
                shared.slots[slot] = got

    def _store_texts(self, texts: Sequence[sc.TextIds], values: dict[str, Value]) -> bool:
        """Put into the `_symbols` table the texts of the ids that `texts` name, as a statement that
        reads them is about to run (`sc.Params.bind`); `values`: the statement's parameters. False
        when every one of `texts` has `rows` and they hold none (the bodies they stand for have no row).

        Copying every symbol's text there as it loaded cost 0.65 s at 131,072 GPUs (1.55 M texts),
        and compressing them 0.35 s more, for the 16,388 that a verification's statements read.

        The statements that find the ids run as a rule's do, with the engine's lock let go (a
        stratum's thread): they read tables of finished strata only. At 131,072 GPUs the two of
        TOPO002 (a self-join of 1.06 M links each) took 0.15 s, all that while the other thread
        could start no statement. Another thread may store texts meanwhile: the flags are read again.
        """
        if self._text_flags() is None:
            # Every text is there (a REPL question asked again): no statement to find the ids.
            return True
        with self._unlocked():
            found = [self._text_ids(t, values) for t in texts]
        # An empty answer of `rows` (never cut at TEXT_ROWS) is an empty body: each of its rows gives
        # an id per dictionary join, and no symbol column holds NULL.
        some = not all(t.rows is not None and x is not None and not len(x) for t, x in zip(texts, found, strict=True))
        stored = self._text_flags()
        if stored is None:
            return some
        total = len(self._symbol_text)
        if any(ids is None for ids in found):
            todo = numpy.flatnonzero(~stored[:total])
        else:
            # The ids the answers hold, flagged: sorted and each once, as numpy.unique gave them, without
            # its sort or its masked-array check (which imports numpy.ma: 12 ms CPU of a fleet's run).
            held = numpy.zeros(len(stored), numpy.bool_)
            for ids in found:
                if ids is not None:
                    held[ids] = True
            todo = numpy.flatnonzero(held & ~stored)
        if not len(todo):
            return some
        text = self._symbol_text.__getitem__
        added = numpy.fromiter(map(text, todo.tolist()), dtype=object, count=len(todo))
        self._storing = True
        self._con.register("_load_s", {"id": todo, "s": added})
        try:
            self._con.execute(f"INSERT INTO {sc.SYMBOLS} SELECT id, s FROM _load_s")
        finally:
            self._con.unregister("_load_s")
        stored[todo] = True
        self._storing = False
        return some

    def _text_flags(self) -> NDArray[numpy.bool_] | None:
        """`_stored_texts`, one flag per symbol; None when every symbol's text is stored."""
        if self._storing:
            # A copy stopped part way (Ctrl-C as its INSERT returned): the table may hold texts the
            # flags do not name, which a second copy would repeat (a join would count them twice).
            self._con.execute(f"DELETE FROM {sc.SYMBOLS}")
            self._stored_texts[:] = False
            self._storing = False
        total = len(self._symbol_text)
        stored = self._stored_texts
        if len(stored) < total:
            stored = self._stored_texts = numpy.concatenate([stored, numpy.zeros(total - len(stored), numpy.bool_)])
        elif stored[:total].all():
            return None
        return stored

    def _text_ids(self, texts: sc.TextIds, values: dict[str, Value]) -> _Int64s | None:
        """The ids `texts` names (None: any): those in its rows, or, past TEXT_ROWS of them, in its columns."""
        if texts.rows is not None:
            named = {name: values[name] for name in _PARAMETER.findall(texts.rows)}
            select = f"SELECT * FROM ({texts.rows}) AS _i(id) WHERE id IS NOT NULL LIMIT {TEXT_ROWS + 1}"
            ids = self._con.execute(select, named or None).fetchnumpy()["id"]
            if len(ids) <= TEXT_ROWS:
                return numpy.asarray(ids, dtype=numpy.int64)
        if texts.columns is None:
            return None
        select = f"SELECT DISTINCT id FROM ({texts.columns}) AS _i(id) WHERE id IS NOT NULL"
        return numpy.asarray(self._con.execute(select).fetchnumpy()["id"], dtype=numpy.int64)

    def _intern(self, symbol: str) -> int:
        """The id of a symbol, adding it to the dictionary when new (a lone surrogate is refused)."""
        return self._symbol_ids.intern(symbol)

    def _params(self) -> sc.Params:
        return sc.Params(self._intern, store_texts=self._store_texts)

    def _encode(self, value: Value) -> Value | None:
        """A value as stored: a symbol's id (None if unknown, so nothing holds it), a number as is."""
        return self._symbol_ids.find(value) if isinstance(value, str) else value

    def _input_declaration(self, relation: str) -> Declaration:
        return input_declaration(self._schema.declarations, relation)

    # -- evaluation ------------------------------------------------------------------

    def evaluate(self) -> None:
        """Derive everything; after an earlier evaluation, only what the new facts can change.

        Re-evaluation (e.g. after authorization decisions are added as facts) recomputes the
        strata that depend, through any path, on a relation that received facts, and keeps
        the rest. Stages keep counting up, so proofs stay well-founded across both runs.

        On a fleet (`concurrent_rows`), strata that read nothing of each other run at the same
        time on `workers` threads (`_run_concurrently`); the tuples, their stages and so every
        proof are those of the sequential order, and so is any error: a failure there evaluates
        again one stratum after another, which fails the same way as it always did.
        """
        self._mend()
        started = time.perf_counter()
        self._slot_ids.clear()  # for loading only: let the fleet's lists of names go
        self._proofs = ProofSearch(self._rules_by_head, self._instance)
        self._input_rows += self._uncompressed
        workers = self.workers if self._input_rows >= self.concurrent_rows else 1
        try:
            try:
                self._evaluate(workers)
            except _Again:
                # A stratum failed (or, at once, two big statements ran out of memory where one
                # after the other would not): the sequential order gives the error of the first
                # stratum that fails in it, a derived_tuples limit counted over the strata before
                # it, and where none fails, the answers.
                self._evaluate(1, again=True)
        except duckdb.OutOfMemoryException:
            raise self._too_big("", "engine_memory") from None
        except duckdb.OutOfRangeException as err:
            raise self._overflowed(err) from None
        except duckdb.Error as err:
            raise EngineError(f"duckdb failed while evaluating the program: {err}") from err
        except sc.UnboundVariable as err:
            raise EngineError(f"variable {err} is never bound; was the program checked?") from err
        finally:
            self.stats.eval_seconds += time.perf_counter() - started

    def _evaluate(self, workers: int, again: bool = False) -> None:
        """`evaluate` on `workers` threads (1: in this one, stratum by stratum in order); `again`:
        after a concurrent attempt that failed (`_Again`).
        """
        self._budget = current_limits().derived_tuples
        affected, self._filled = what_to_derive(self._program, self._changed, self._loaded)
        # Before the first evaluation since load() no table holds a derived tuple to delete.
        for relation in affected or ():
            self._coarse.pop(relation, None)
            self._rounds_for.pop(relation, None)
            if relation in self._schema.used:
                self._con.execute(f"DELETE FROM {self._schema.table(relation)} WHERE {sc.STAGE} > 0")
        if affected is None:
            # A first evaluation that failed part way (past a limit) left derived tuples: one
            # asked again derives everything anew, so none may stay (each would be there twice).
            for decl in self._program.declarations:
                if not decl.is_input and decl.name in self._schema.used:
                    if again:
                        # After a failed concurrent attempt: dropped, for a deleted row keeps its
                        # memory (until a checkpoint) and the sequential order must have all of
                        # engine_memory, as it always had (a 150^3 relation in 160 MiB, tests).
                        self._schema.used.discard(decl.name)
                        self._con.execute(f"DROP TABLE IF EXISTS {self._schema.tables[decl.name]}")
                    else:
                        self._con.execute(f"DELETE FROM {self._schema.table(decl.name)} WHERE {sc.STAGE} > 0")
            self._total = 0
            self._offsets = {}
            self._coarse = {}
            self._rounds_for = {}
        todo = [s for s in self._strata if affected is None or not affected.isdisjoint(s.relations)]
        concurrent = workers > 1 and len(todo) >= max(2, self.concurrent_strata)
        plain = self._uncompressed >= COMPRESS_ROWS
        # Left plain only where the concurrent pass runs: one that runs out of memory is run again,
        # compressed first (below). One stratum after another nothing runs again: an evaluation
        # that fit with the checkpoint must get it (one worker, or a program of few strata).
        rerun = again and (affected is not None or self._left_plain)
        if rerun or (plain and not concurrent) or self._worth_compressing():
            # The derived tables grow into the memory the loaded facts' plain columns held. (A
            # re-evaluation run again: the tuples the failed attempt derived, deleted above, keep
            # their memory until a checkpoint. Any evaluation run again: the facts the failed
            # attempt left plain are compressed, as that attempt may have run out of memory.)
            self._con.execute("CHECKPOINT")
            plain = False
        self._left_plain = plain
        self._uncompressed = 0
        if concurrent:
            self._run_concurrently(todo, workers)
        else:
            for stratum in todo:
                # Its stages follow those of the strata before it, as it runs (a failure part way
                # leaves its tuples so far readable at their stages, as a REPL may ask).
                for relation in stratum.relations:
                    self._offsets[relation] = self._total
                try:
                    self._run_stratum(stratum)
                finally:
                    self._total += self._stage
        self._changed = set()

    def _worth_compressing(self) -> bool:
        """Whether the facts loaded since the last evaluation are compressed before this one
        (COMPRESS_ROWS, COMPRESS_SHARE): DuckDB's tables' memory is read only past that many rows.
        """
        if self._uncompressed < COMPRESS_ROWS:
            return False
        tables = "SELECT memory_usage_bytes FROM duckdb_memory() WHERE tag = 'IN_MEMORY_TABLE'"
        found = _first(self._con.execute(tables))
        return found is not None and int(found[0]) * COMPRESS_SHARE >= current_limits().engine_memory

    def _run_stratum(self, stratum: Stratum) -> int:
        """Evaluate one stratum, its stages counted from 1; how many stages it took (kept free included)."""
        self._stage = 0
        (self._run_recursive if stratum.recursive else self._run_once)(stratum)
        return self._stage

    def _run_concurrently(self, todo: Sequence[Stratum], workers: int) -> None:
        """Evaluate the strata `todo` (in evaluation order) on `workers` threads, each stratum once
        every stratum it reads has ended; raise `_Again` if one fails (Ctrl-C is raised itself).

        Each stratum counts its own stages from 1 and its table's stages stay its own: only once all
        have ended are they placed one after the other in the sequential order (`_offsets`), so the
        stage of every tuple, and so every proof, is the same whichever thread ran what, and when.
        A thread holds the engine's lock for its Python work (the symbol dictionary, `_filled`, the
        budget, the schema), and lets go of it while DuckDB runs a statement.
        """
        counts = [0] * len(todo)
        guard = threading.Lock()  # the cursors: `stop` may come while a thread holds the engine's lock
        self._halt.clear()

        @contextlib.contextmanager
        def per_thread() -> Iterator[None]:
            cursor = self._main.cursor()
            try:
                # A connection's own setting (the others are the database's: memory_limit, threads).
                cursor.execute("SET enable_progress_bar = false")
                with guard:
                    self._cursors.append(cursor)
                self._here.con = cursor
                yield
            finally:
                self._here.con = None
                with guard:
                    if cursor in self._cursors:
                        self._cursors.remove(cursor)
                cursor.close()

        def run(index: int) -> None:
            with self._lock:
                self._here.locked = True
                try:
                    counts[index] = self._run_stratum(todo[index])
                finally:
                    self._here.locked = False

        def stop() -> None:
            self._halt.set()
            with guard:
                for cursor in self._cursors:
                    with contextlib.suppress(duckdb.Error):
                        cursor.interrupt()

        try:
            # DuckDB's threads (the database's setting) are the cores the other workers leave: on two
            # cores each statement runs in its own worker alone, where a thread of DuckDB's own cost
            # CPU and saved little (at 131,072 GPUs 4.4 s of CPU on two threads, 4.0 s on one).
            self._threads = max(1, (os.cpu_count() or 1) - workers + 1)
            self._con.execute(f"SET threads = {self._threads}")
            run_in_pool(prerequisites(todo), workers, run, per_thread, stop)
        except Exception as err:
            raise _Again from err
        finally:
            self._halt.clear()
            self._threads = None
            self._con.execute("RESET threads")
        for stratum, count in zip(todo, counts, strict=True):
            for relation in stratum.relations:
                self._offsets[relation] = self._total
            self._total += count

    @contextlib.contextmanager
    def _unlocked(self) -> Iterator[None]:
        """The engine's lock let go for a statement DuckDB runs, where a stratum's thread holds it."""
        if not self._here.locked:
            yield
            return
        self._lock.release()
        try:
            yield
        finally:
            self._lock.acquire()

    def _run_once(self, stratum: Stratum) -> None:
        live = runnable_rules(stratum, self._filled)
        if not live:
            return
        self._stage += 1
        # One statement per relation: every rule's tuples together, de-duplicated once (unless
        # distinct_rules shows they hold no tuple twice: hashing 2 M rows is most of such a statement).
        by_head: dict[str, list[Rule]] = {}
        for rule in live:
            by_head.setdefault(rule.head.relation, []).append(rule)
        for relation, rules in by_head.items():
            params = self._params()
            selects = [
                sc.rule_select(rule, self._schema, params, distinct=False, apart=self._apart(rule)) for rule in rules
            ]
            repeats = not rows_distinct(rules, self._keys)
            self._insert(relation, self._new_rows(relation, selects, distinct=repeats), params)

    def _apart(self, rule: Rule) -> sc.Apart:
        """What distinct_rules proves of an aggregate rule's body, for `sql_compiler.aggregate_query`."""
        if rule.head.aggregate is None:
            return (False, False)
        return (bindings_distinct(rule, self._keys), counted_apart(rule, self._keys))

    def _insert(self, relation: str, source: str, params: sc.Params, staged: bool = False) -> int:
        """Add the rows of the SELECT `source` to `relation` at the current stage, counting them; how many.
        `staged`: `source` gives each row's stage, as a last column (`_chain`).

        A relation whose table no statement has named yet gets it made with its first rows, in one
        statement (CREATE TABLE AS): a CREATE TABLE of its own costs DuckDB about 0.9 M instructions
        (parsing, the catalog, a transaction), and a fleet's evaluation makes some 280 tables.
        """
        self._computing = relation
        made = self._schema.claim(relation)
        if made:
            statement = self._schema.create_as_sql(relation, source, None if staged else self._stage)
        else:
            stage = "" if staged else f", {self._stage}"
            statement = f"INSERT INTO {self._schema.table(relation)} SELECT *{stage} FROM ({source})"
        try:
            values = params.bind()
            if params.nothing:  # its bodies have no rows (sc.Params.nothing): no statement to run
                if made:
                    self._con.execute(self._schema.create_sql(relation, replace=True))
                return 0
            if self._halt.is_set():
                raise _Halted(relation)
            with self._unlocked():
                inserted = _first(self._con.execute(statement, values))
        except BaseException:
            if made:
                # Not made, or made as the statement was stopped (Ctrl-C as it returned): either way
                # the next statement naming it makes it afresh, with no rows of a run that failed.
                self._schema.used.discard(relation)
                with contextlib.suppress(duckdb.Error):  # the first error is the one to report
                    self._con.execute(f"DROP TABLE IF EXISTS {self._schema.tables[relation]}")
            raise
        count = int(inserted[0]) if inserted is not None else 0
        if count > 0:
            self._filled.add(relation)
            self._spend(relation, count)
        return count

    def _new_rows(self, relation: str, selects: Sequence[str], held: str = "", distinct: bool = True) -> str:
        """SQL for the distinct tuples that `selects` derive and `relation` does not hold yet.

        `held`: a condition on the relation's rows (`_t`) that every derived tuple meets, so that
        the anti join hashes only those rows (a closure derived again for one value). Without
        `distinct`, the selects are known to derive no tuple twice (distinct_rules).
        """
        union = " UNION ALL ".join(f"({s})" for s in selects)
        columns = self._schema.columns(relation)
        source = f"SELECT {'DISTINCT ' if distinct else ''}* FROM ({union}) AS _n({', '.join(columns)})"
        if relation not in self._filled:
            return source
        # An anti join probes the relation's hash table; EXCEPT would hash all of it every round.
        match = " AND ".join([*(f"_t.{c} = _n.{c}" for c in columns), *([held] if held else [])])
        return f"{source} WHERE NOT EXISTS (SELECT 1 FROM {self._schema.table(relation)} AS _t WHERE {match})"

    def _run_recursive(self, stratum: Stratum, only: tuple[int, Sequence[Value]] | None = None) -> None:
        """Semi-naive: a first full round, then rounds where one recursive atom reads the last delta.

        Each round is one INSERT per relation, at the round's stage: the last round's delta is the
        relation's rows of the stage before (no table per delta to create, count, rename and drop:
        five statements a round, each a fixed cost however few its rows). `only` (column, stored
        values): derive just the tuples holding one of those values there, in a stratum whose rules
        pass that column through (a closure derived again for a proof, `_in_rounds_for`).
        """
        live = runnable_rules(stratum, self._filled)
        if not live:
            return
        if not self._in_rounds and _closure_shaped(stratum, live):
            self._run_closure(stratum, live)
            return
        members = set(stratum.relations)
        # With several relations, each round's INSERTs run one after another: a rule must not read
        # the tuples another relation of the stratum gained in the same round (they belong to the
        # next one, as in the memory engine). One relation's INSERT reads the table as it was.
        apart = len(stratum.relations) > 1
        # Parameters of each relation's statement, made afresh every round (below): a round's
        # statement names only the parameters its own selects added (the first round's rules that
        # read no member of the stratum, with a constant such as `X >= "a"`, run in that round only).
        params: dict[str, sc.Params]

        # Derived again for a proof (`only`), the rows of these rounds are those above the stage
        # before them: the closure's other rows all hold that one stage (`_derive_in_rounds`), so
        # a scan for these rounds' rows skips every row group of those by its stage range.
        floor = self._stage

        def rows_of(relation: str, condition: str) -> str:
            """A member relation's rows that meet `condition` (given `only`, of this derivation), as a FROM item."""
            if only is not None:
                condition += f" AND {sc.STAGE} > {floor} AND {self._holding(relation, only, params[relation])}"
            return f"(SELECT * FROM {self._schema.table(relation)} WHERE {condition})"

        def selects(relation: str, first: bool) -> list[str]:
            """The SELECTs of a round of `relation`'s rules (the first round's, or a later one's)."""
            out = []
            for rule in live:
                if rule.head.relation != relation:
                    continue
                atoms = list(rule.positive_atoms())
                recursive = sc.recursive_positions(rule, members)
                before = f"{sc.STAGE} < {self._stage}"
                older = {p: rows_of(atoms[p].relation, before) for p in recursive if apart or only is not None}
                # Rules reading no member of the stratum derive everything in the first round.
                delta = f"{sc.STAGE} = {self._stage - 1}"  # the last round's new tuples
                variants = [older] if first else [{**older, p: rows_of(atoms[p].relation, delta)} for p in recursive]
                for overrides in variants:
                    select = sc.rule_select(rule, self._schema, params[relation], overrides, distinct=False)
                    if only is not None:
                        columns = ", ".join(self._schema.columns(relation))
                        kept = self._holding(relation, only, params[relation])
                        select = f"SELECT * FROM ({select}) AS _o({columns}) WHERE {kept}"
                    out.append(select)
            return out

        count = 0
        limit = current_limits().fixpoint_rounds if not combines_stored_values(stratum) else None
        while True:
            count += 1
            if limit is not None and count > limit:
                raise endless_recursion(stratum, self._schema.declarations, limit)
            self._stage += 1
            grew = False
            params = {r: self._params() for r in stratum.relations}
            for relation in stratum.relations:
                found = selects(relation, count == 1)
                if not found:
                    continue
                # Restricted to some values, the anti join need hash only the rows that hold them.
                held = ""
                if only is not None:
                    held = f"_t.{sc.STAGE} > {floor} AND {self._holding(relation, only, params[relation], '_t.')}"
                grew |= self._insert(relation, self._new_rows(relation, found, held), params[relation]) > 0
            self._filled.update(stratum.relations)
            if not grew:
                break

    def _run_closure(self, stratum: Stratum, live: Sequence[Rule]) -> None:
        """A linear recursion that only combines stored values, as one recursive query.

        DuckDB's WITH RECURSIVE keeps the tuples seen so far in a hash table, so a round costs
        what its new tuples cost; a round of statements hashes the whole relation again for
        its anti join (a chain of 4,000 links takes 4,000 rounds). Every tuple gets the same
        stage, so a proof that reads it derives it again in rounds first (`_in_rounds_for`).
        Rounds would take at most one stage per new tuple (and one that finds none and stores
        nothing): that many stages are kept free after this one, where the rounds go, so the later
        strata's stages stay above the rounds' and nothing else needs deriving again (proofs
        compare stages by order only).
        """
        relation = stratum.relations[0]
        params = self._params()
        name = "_closure"
        anchor: list[str] = []
        step: list[str] = []
        for rule in live:
            positions = sc.recursive_positions(rule, {relation})
            if positions:
                overrides = {positions[0]: sc.quote(name)}
                step.append(sc.rule_select(rule, self._schema, params, overrides, distinct=False))
            else:
                anchor.append(sc.rule_select(rule, self._schema, params, distinct=False))
        columns = ", ".join(self._schema.columns(relation))
        body = " UNION ALL ".join(f"({s})" for s in anchor)
        if step:
            body = f"({body}) UNION ({' UNION ALL '.join(f'({s})' for s in step)})"
        query = f"WITH RECURSIVE {sc.quote(name)}({columns}) AS ({body}) SELECT * FROM {sc.quote(name)}"
        self._stage += 1
        start = self._stage
        # One thread: each iteration of a recursive query is a pipeline of its own, and a second
        # thread waits to be woken for every one of them. The recursive query of a chain of 4,000
        # (4,000 iterations) took 2.7-12.7 s of wall time on two threads against 1.1-1.8 s on one
        # (DuckDB 2.0.1, benchmarks/README.md); the fleet's closures, a few wide iterations, take
        # the same time either way. (A database's setting: concurrent strata on more cores than two
        # run with one DuckDB thread while it does.)
        alone = self._threads != 1
        if alone:
            self._con.execute("SET threads = 1")
        try:
            done = exact = False
            keyed = self._chain_step(relation, live)
            if keyed is not None:
                # Into a relation that holds no tuple yet, each tuple at its round's stage (its depth
                # past `start`, as `_derive_in_rounds` would give it): no proof derives it again.
                exact = relation not in self._filled
                try:
                    chain = self._chain(keyed, start if exact else None)
                    source = chain if exact else self._from_filled(relation, chain)
                    self._stage += self._insert(relation, source, params, staged=exact)
                    done = True
                except duckdb.InvalidInputException as err:
                    if CHAIN_CYCLE not in str(err):
                        raise
            if not done:
                # UNION makes the recursive query's rows distinct already; only tuples the table holds
                # (a re-evaluation keeps those of lower stages) need the anti join. With no step that
                # can run there is no UNION: the first rules' UNION ALL may hold a tuple twice.
                source = self._from_filled(relation, query) if step else self._new_rows(relation, [query])
                self._stage += self._insert(relation, source, params)
        finally:
            if alone:
                self._con.execute("RESET threads" if self._threads is None else f"SET threads = {self._threads}")
        if not (done and exact):
            self._coarse[relation] = (stratum, start, _passed_through(relation, live))

    def _from_filled(self, relation: str, query: str) -> str:
        """`query`'s tuples that `relation` does not hold yet (a re-evaluation keeps those of lower stages)."""
        return self._new_rows(relation, [query]) if relation in self._filled else query

    def _chain_step(self, relation: str, live: Sequence[Rule]) -> str | None:
        """The input relation S of a closure whose rules are `R(X, Y) :- S(X, Y).` and `R(X, Z) :- R(X, Y),
        S(Y, Z).` (containment: `within` over `parent`), where S's first column holds no value twice
        (column_keys); else None.

        Each tuple then has one successor at most, so the closure derives no tuple twice unless a
        chain runs into a cycle: `_chain` needs no UNION, whose hash of every tuple was two thirds of
        the query (at 131,072 GPUs `within`'s 1.45 M tuples, 0.14-0.21 -> 0.05-0.08 s).
        """
        anchors = [r for r in live if not sc.recursive_positions(r, {relation})]
        steps = [r for r in live if sc.recursive_positions(r, {relation})]
        if len(anchors) != 1 or len(steps) != 1:
            return None
        anchor, step = anchors[0], steps[0]
        if len(anchor.body) != 1 or len(step.body) != 2 or not all(isinstance(b, Atom) for b in step.body):
            return None
        base = anchor.body[0]
        if not isinstance(base, Atom) or (0,) not in self._keys.get(base.relation, ()):
            return None
        own = [a for a in step.body if isinstance(a, Atom) and a.relation == relation]
        other = [a for a in step.body if isinstance(a, Atom) and a.relation != relation]
        if len(own) != 1 or len(other) != 1 or other[0].relation != base.relation:
            return None
        terms = [anchor.head.args, base.args, step.head.args, own[0].args, other[0].args]
        names = [_var_names(t) for t in terms]
        if any(len(n) != 2 or None in n for n in names):
            return None
        (x, y), base_xy, (hx, hz), (rx, ry), (sy, sz) = names
        shaped = base_xy == (x, y) and x != y and hx == rx and ry == sy and hz == sz and len({hx, ry, hz}) == 3
        return base.relation if shaped else None

    def _chain(self, keyed: str, start: int | None = None) -> str:
        """The closure of `_chain_step`'s rules over `keyed` (S), without UNION's hash of every tuple;
        given `start`, with each tuple's stage (`start` + its depth) as a last column.

        Each tuple carries its depth; one at CHAIN_DEPTH makes the statement fail (`error`), so a
        chain that runs into a cycle (which would go on for ever) is caught before its rows pile up,
        and so is one deeper than that: both run again as the UNION query. Short of a cycle a tuple
        has one depth, the round in which semi-naive evaluation first derives it.
        """
        table = self._schema.table(keyed)
        name = sc.quote("_chain")
        recurse = (
            f"(SELECT s.{_C0}, s.{_C1}, 1 FROM {table} AS s) UNION ALL "
            f"(SELECT r.{_C0}, s.{_C1}, r.{_DEPTH} + 1 FROM {name} AS r, {table} AS s "
            f"WHERE s.{_C0} = r.{_C1} AND r.{_DEPTH} < {CHAIN_DEPTH})"
        )
        check = f"CASE WHEN {_DEPTH} < {CHAIN_DEPTH} THEN TRUE ELSE error('{CHAIN_CYCLE}') END"
        closure = f"WITH RECURSIVE {name}({_C0}, {_C1}, {_DEPTH}) AS ({recurse})"
        stage = "" if start is None else f", {_DEPTH} + {start}"
        return f"{closure} SELECT {_C0}, {_C1}{stage} FROM {name} WHERE {check}"

    def _in_rounds_for(self, reads: Iterable[tuple[str, Mapping[int, Value]]]) -> None:
        """Derive again in semi-naive rounds the closures among the relations a proof reads, where
        they ran as one query, each in the stages kept free after its own: every tuple's stage is
        then its round, as in the memory engine. `reads` are (relation, the values the proof fixes
        at some of its columns).

        Only what a proof reads is derived again, when it first reads it: a closure's rounds read
        the tuples of lower strata, not their stages, and its stages lie below every later
        stratum's either way, so each closure can be derived again alone. Where every recursive
        rule passes a column through, only the tuples holding the values there that the proof can
        read are: the value it fixes (`scaleup_reach(G, _)` for one GPU), or, when it fixes other
        columns (`within(_, N)` for one node), the values of the tuples holding those (the devices
        within N, read from the closure as it stands: the same tuples, only their stages change).
        Their rounds are the same as in the whole closure.
        """
        self._mend()
        coarse = self._coarse
        for relation, fixed in reads:
            found = coarse.get(relation)
            if found is None:
                continue
            stratum, start, column = found
            values = None if column is None else self._passed_values(relation, column, fixed)
            if column is not None and values is not None:
                done = self._rounds_for.setdefault(relation, set())
                todo = sorted(set(values) - done)
                if len(todo) <= ROUNDS_VALUES:
                    if todo:  # marked done only once derived: a stop part way leaves it to `_mend`
                        self._again(relation, stratum, start, (column, todo))
                    done.update(todo)
                    continue
            self._again(relation, stratum, start, None)

    def _again(self, relation: str, stratum: Stratum, start: int, only: tuple[int, Sequence[Value]] | None) -> None:
        """`_derive_in_rounds` for a proof, the closure `_unfinished` until it returns; derived again
        whole (`only` None), it no longer runs as one query (`_coarse`).
        """
        self._unfinished[relation] = (stratum, start)
        self._derive_in_rounds(relation, stratum, start, only)
        del self._unfinished[relation]
        if only is None:
            self._coarse.pop(relation, None)
            self._rounds_for.pop(relation, None)

    def _mend(self) -> None:
        """Derive again whole, in rounds, every closure a stopped proof left part way (`_unfinished`)."""
        for relation, (stratum, start) in list(self._unfinished.items()):
            self._again(relation, stratum, start, None)

    def _passed_values(self, relation: str, column: int, fixed: Mapping[int, Value]) -> list[Value] | None:
        """The stored values at `column` of the tuples of `relation` that hold `fixed`'s values (where
        the proof fixes that column, its value alone); None when `fixed` leaves every tuple possible.
        A value that fits no tuple (a symbol never seen, a number for a symbol) leaves none.
        """
        decl = self._schema.declarations[relation]
        stored: dict[int, Value] = {}
        for at, value in fixed.items():
            if not fits(value, decl.columns[at].type):
                # No tuple holds it; a passed column of the wrong type is derived whole, as it was.
                return None if at == column else []
            found = self._encode(value)
            if found is None:
                return []  # a symbol never seen is in no tuple
            stored[at] = found
        if column in stored:
            return [stored[column]]
        if not stored:
            return None
        params = self._params()
        columns = self._schema.columns(relation)
        where = " AND ".join(f"{columns[at]} = {params.literal(value)}" for at, value in sorted(stored.items()))
        select = f"SELECT DISTINCT {columns[column]} FROM {self._schema.table(relation)} WHERE {where}"
        found_rows = self._con.execute(select, params.bind()).fetchall()
        return [row[0] for row in found_rows]

    def _derive_in_rounds(
        self, relation: str, stratum: Stratum, start: int, only: tuple[int, Sequence[Value]] | None
    ) -> None:
        """Delete a closure's derived tuples (those holding one of `only`'s values, given it) and derive them
        again in rounds from stage `start` on.
        """
        stage, budget = self._stage, self._budget
        # The same tuples again: the budget they passed once is not spent twice.
        self._budget = current_limits().derived_tuples
        self._in_rounds = True
        params = self._params()
        holding = "" if only is None else f" AND {self._holding(relation, only, params)}"
        try:
            self._con.execute(
                f"DELETE FROM {self._schema.table(relation)} WHERE {sc.STAGE} > 0{holding}", params.bind()
            )
            # Rounds from the stage after the query's (the stages kept free): the tuples not derived
            # again keep the query's stage, below every round's, and scans for the rounds' tuples
            # skip their row groups by stage (`_run_recursive`).
            self._stage = start
            self._run_recursive(stratum, only)
        except duckdb.OutOfMemoryException:
            raise self._too_big("", "engine_memory") from None
        except duckdb.OutOfRangeException as err:
            raise self._overflowed(err) from None
        except duckdb.Error as err:
            raise EngineError(f"duckdb failed while deriving proof stages: {err}") from err
        finally:
            self._in_rounds = False
            self._stage, self._budget = stage, budget

    def _holding(self, relation: str, only: tuple[int, Sequence[Value]], params: sc.Params, alias: str = "") -> str:
        """SQL: the `relation` row (under `alias`) holds one of `only`'s stored values at `only`'s column."""
        column, values = only
        name = f"{alias}{self._schema.columns(relation)[column]}"
        if len(values) == 1:
            return f"{name} = {params.literal(values[0])}"
        return f"{name} IN ({', '.join(params.literal(v) for v in values)})"

    def _spend(self, relation: str, tuples: int) -> None:
        """Count `tuples` new tuples of `relation` against the derived_tuples budget."""
        self._budget -= tuples
        if self._budget < 0:
            raise self._too_big(f"{self.count(relation):,}", "derived_tuples")

    def _too_big(self, found: str, limit: str) -> TopologError:
        """The error for `limit` passed while computing a relation. `found`: for derived_tuples the
        relation's tuples so far; for engine_memory what could not be done ("loaded", else derived).
        """
        relation = self._computing or "?"
        decl = self._schema.declarations.get(relation)
        where = decl.loc if decl is not None else SourceLocation("<rules>")
        if limit == "derived_tuples":
            total = current_limits().derived_tuples - self._budget
            found = f"the rules derive {total:,} tuples (relation {relation!r} holds {found} of them so far)"
        else:
            doing = "loading the facts of" if found == "loaded" else "deriving"
            at = decl.loc if decl is not None else None
            return out_of_engine_memory("DuckDB", self._computing, at, self._safe_count(relation), doing)
        return TopologError.at(where, exceeded(limit, found))

    def _overflowed(self, err: duckdb.Error) -> EngineError:
        """A statement's arithmetic left 64 bits: the error at the arithmetic of the rules it ran, as the
        memory engine reports it (`rules.dl:2:36: arithmetic overflowed ...`), never a bare SQL message.
        """
        relation = self._computing
        terms = [t for rule in self._rules_by_head.get(relation, ()) for t in arithmetic_of(rule)]
        said = str(err).split("\n", 1)[0]
        if not terms:
            return EngineError(f"duckdb failed while deriving {relation or 'the rules'!r}: {said}")
        first = terms[0]
        which = str(first) if len(terms) == 1 else f"{first} or another of the {len(terms)} expressions deriving it"
        return EngineError(
            f"{first.loc}: arithmetic overflowed 64-bit integers in {which} while deriving {relation!r} ({said})"
        )

    def _safe_count(self, relation: str) -> str:
        try:
            return f"{self.count(relation):,}"
        except (duckdb.Error, KeyError):
            return "an unknown number of"

    # -- reading -----------------------------------------------------------------------

    def query(
        self,
        relation: str,
        bound: Mapping[int, Value] | None = None,
        ordered: bool = True,
        columns: Sequence[int] | None = None,
    ) -> list[Row]:
        self._mend()
        decl = self._declaration(relation)
        params = self._params()
        conditions = []
        names = self._schema.columns(relation)
        project([], columns, decl.arity)  # a position the relation lacks is refused before any SQL
        for pos, value in sorted((bound or {}).items()):
            if not 0 <= pos < decl.arity:
                raise ValueError(f"{relation} has no argument position {pos} (arity {decl.arity})")
            stored = self._encode(value) if fits(value, decl.columns[pos].type) else None
            if stored is None:
                return []
            conditions.append(f"{names[pos]} = {params.literal(stored)}")
        if relation not in self._schema.used:
            # No statement ever named its table, so none put a tuple there (a check's relation that no
            # rule could derive): no table made and read for nothing, two statements of about 3.5 M
            # instructions together (63 of a fleet's verification's checks).
            return []
        where = f" WHERE {' AND '.join(conditions)}" if conditions else ""
        kinds = _kinds(decl)
        if columns:
            # Only the columns asked for are selected and decoded (a fleet's eligible rows: three of twelve).
            names, kinds = [names[pos] for pos in columns], [kinds[pos] for pos in columns]
        select = f"SELECT {', '.join(names)} FROM {self._schema.table(relation)}{where}"
        found = self._fetch_text(select, kinds, params)
        # Rows come back as tuples already; a zero-arity relation's rows (or none of the columns
        # asked for) hold its unit column (or the first column) only.
        rows: list[Row] = found if decl.arity and (columns is None or columns) else [() for _ in found]
        return sort_rows(rows) if ordered else rows

    def _fetch_text(self, select: str, kinds: Sequence[ColumnType | None], params: sc.Params) -> list[tuple[Any, ...]]:
        """The rows of a SELECT of ids and numbers, with symbol ids replaced by their text.

        Decoded here, by list index: joining the dictionary in SQL builds a hash table of every
        symbol for each query, which at a REPL prompt on a big fleet costs more than the query.
        """
        if "symbol" not in kinds:
            return self._con.execute(select, params.bind()).fetchall()
        # Column by column as NumPy arrays (named by position: two columns may share a name),
        # then one lookup per symbol column: a third of the time of building row tuples first.
        names = [f"x{i}" for i in range(len(kinds))]
        result = self._con.execute(f"SELECT * FROM ({select}) AS _q({', '.join(names)})", params.bind())
        arrays = result.fetchnumpy()
        text = self._symbol_text.__getitem__
        columns = [
            list(map(text, arrays[name].tolist())) if kind == "symbol" else arrays[name].tolist()
            for name, kind in zip(names, kinds, strict=True)
        ]
        return list(zip(*columns, strict=True))

    def answer(self, query: Query) -> list[Row]:
        self._mend()
        params = self._params()
        try:
            body = sc.compile_body(query.body, self._schema, params)
            exprs = [body.bindings[v] for v in query.variables] or ["TRUE"]
            kinds = [body.types.get(v) for v in query.variables] or [None]
            select = f"SELECT DISTINCT {', '.join(exprs)}{body.from_where()}"
            rows = self._fetch_text(select, kinds, params)
        except (KeyError, sc.UnboundVariable) as err:
            raise EngineError(f"query {query.text!r} binds no value for variable {err}") from err
        except duckdb.Error as err:
            raise EngineError(f"duckdb failed while answering {query.text!r}: {err}") from err
        # A query without variables selected TRUE: its one answer is the empty row.
        return sort_rows(rows if query.variables else [()] * bool(rows))

    def holds(self, query: Query) -> bool:
        self._mend()
        params = self._params()
        try:
            body = sc.compile_body(query.body, self._schema, params)
            # LIMIT 1 lets DuckDB stop at the first match: `object(_, "gpu"), object(_, "nic")`
            # would otherwise enumerate every GPU x NIC pair (17 billion rows at 131,072 GPUs).
            found = _first(self._con.execute(f"SELECT 1{body.from_where()} LIMIT 1", params.bind()))
        except (KeyError, sc.UnboundVariable) as err:
            raise EngineError(f"query {query.text!r} binds no value for variable {err}") from err
        except duckdb.Error as err:
            raise EngineError(f"duckdb failed while answering {query.text!r}: {err}") from err
        return found is not None

    def count(self, relation: str) -> int:
        self._mend()
        self._declaration(relation)
        if relation not in self._schema.used:
            return 0  # no table yet, so no tuple (see `query`)
        row = _first(self._con.execute(f"SELECT count(*) FROM {self._schema.table(relation)}"))
        return int(row[0]) if row else 0

    def close(self) -> None:
        self._con.close()

    def _declaration(self, relation: str) -> Declaration:
        decl = self._schema.declarations.get(relation)
        if decl is None:
            raise KeyError(f"unknown relation {relation!r}")
        return decl

    # -- proofs ------------------------------------------------------------------------

    def explain(self, relation: str, row: Row) -> Proof:
        row = tuple(row)
        self._in_rounds_for([(relation, dict(enumerate(row)))])
        stage = self._stage_of(relation, row)
        if stage is None:
            raise KeyError(f"{format_fact(relation, row)} does not hold")
        return self._proofs.prove(relation, row, stage)

    def _stage_of(self, relation: str, row: Row) -> int | None:
        decl = self._declaration(relation)
        if len(row) != decl.arity or not all(fits(v, c.type) for v, c in zip(row, decl.columns, strict=True)):
            return None
        stored = [self._encode(v) for v in row]
        if None in stored:
            return None
        params = self._params()
        columns = self._schema.columns(relation)[: decl.arity]
        conditions = [f"{c} = {params.literal(v)}" for c, v in zip(columns, stored, strict=True) if v is not None] or [
            "TRUE"
        ]
        found = _first(
            self._con.execute(
                f"SELECT {sc.STAGE} FROM {self._schema.table(relation)} WHERE {' AND '.join(conditions)}",
                params.bind(),
            )
        )
        if found is None:
            return None
        # The table holds its stratum's own stages (from 1), input facts stage 0 (`_offsets`).
        return int(found[0]) + self._offsets.get(relation, 0) if found[0] else 0

    def _instance(self, rule: Rule, row: Row, stage: int) -> Instance | None:
        """Body facts (with stages) and absent facts of one instance deriving `row`, or None.

        For an aggregate head these are the body facts of the whole group, at most AGGREGATE_PREMISES
        instances of it.
        """
        if len(rule.head.args) != len(row):
            return None
        agg = rule.head.aggregate
        if agg is not None and not self._aggregate_holds(rule, row):
            return None
        # Premises come with their stages: the closures they are in must have exact ones.
        self._in_rounds_for((a.relation, _fixed(rule, a, row)) for a in rule.positive_atoms())
        params = self._params()
        body = sc.compile_body(rule.body, self._schema, params)
        body.conditions.extend(
            f"{sc.term_sql(a, body.bindings, params)} = {params.literal(row[i])}"
            for i, a in enumerate(rule.head.args)
            if not isinstance(a, Aggregate)
        )
        limit = 1 if agg is None else AGGREGATE_PREMISES
        cols: list[str] = []
        kinds: list[ColumnType | None] = []
        stages: list[str] = []
        older: list[str] = []
        for atom, alias in body.atoms:
            cols.extend(f"{alias}.{c}" for c in self._schema.columns(atom.relation))
            kinds.extend(_kinds(self._schema.declarations[atom.relation]))
            # A derived relation's table holds its stratum's own stages: each plus the relation's
            # offset is the tuple's stage (`_offsets`); compared as the column itself, so that a
            # scan can still skip row groups by their stage range.
            offset = self._offsets.get(atom.relation, 0)
            own = f"{alias}.{sc.STAGE}"
            stages.append(f"({own} + CAST({offset} AS BIGINT))" if offset else own)
            older.append(f"{own} < {stage - offset}")
        absent_cols: list[str] = []
        for atom, args in body.negations:
            negated_decl = self._schema.declarations[atom.relation]
            for column, arg in zip(negated_decl.columns, args, strict=False):
                if arg is not None:
                    absent_cols.append(arg)
                    kinds.append(column.type)
        kinds[len(cols) : len(cols)] = [None] * len(stages)
        body.conditions.extend(older)
        select_list = [*cols, *stages, *absent_cols] or ["TRUE"]
        inner = f"SELECT DISTINCT {', '.join(select_list)}{body.from_where()}"
        rows = self._instance_rows(inner, kinds or [None], len(cols), len(stages), limit, params)
        if not rows:
            return None
        premises: list[tuple[Atom, Row, int]] = []
        absent: list[tuple[str, Row]] = []
        seen: set[tuple[str, Row]] = set()
        for result in rows:
            values = list(result[: len(cols)])
            found_stages = result[len(cols) : len(cols) + len(stages)]
            for (atom, _), s in zip(body.atoms, found_stages, strict=True):
                decl = self._schema.declarations[atom.relation]
                width = max(decl.arity, 1)
                fact = _row(decl, tuple(values[:width]))
                values = values[width:]
                if (atom.relation, fact) not in seen:
                    seen.add((atom.relation, fact))
                    premises.append((atom, fact, int(s)))
            negated = list(result[len(cols) + len(stages) :])
            for atom, args in body.negations:
                fact = tuple(negated.pop(0) if a is not None else WILDCARD_VALUE for a in args)
                if ("!" + atom.relation, fact) not in seen:
                    seen.add(("!" + atom.relation, fact))
                    absent.append((atom.relation, fact))
        return premises, absent

    def _instance_rows(
        self,
        inner: str,
        kinds: Sequence[ColumnType | None],
        values: int,
        stages: int,
        limit: int,
        params: sc.Params,
    ) -> list[tuple[Any, ...]]:
        """The first `limit` rows of `inner` (a SELECT DISTINCT of ids, numbers and stages: `values`
        value columns, then `stages` stage columns, then the absent facts' columns), symbols decoded,
        earliest premises first (shallowest proof), then by value (symbols as strings), so the same
        proof comes back every time.

        An instance's rows are few (one, or an aggregate's group): they are fetched as ids, decoded by
        list index and sorted here. Ordering them in SQL needs the strings there, a join of the
        dictionary per symbol column, each of which builds a hash table of every symbol: 5-20 ms a
        proof step at 32,768 GPUs, growing with the fleet. Past INSTANCE_ROWS rows, or where a value
        is missing (NULL), the SQL ordering is used as it was.
        """
        found = self._con.execute(f"SELECT * FROM ({inner}) AS _q LIMIT {INSTANCE_ROWS + 1}", params.bind())
        rows = found.fetchall()
        if len(rows) <= INSTANCE_ROWS:
            text = self._symbol_text
            symbol_at = [i for i, kind in enumerate(kinds) if kind == "symbol"]
            decoded: list[tuple[Any, ...]] = []
            for ids in rows:
                row = list(ids)
                for i in symbol_at:
                    row[i] = text[row[i]]
                decoded.append(tuple(row))
            if not any(None in row[: values + stages] for row in decoded):

                def order(row: tuple[Any, ...]) -> tuple[Any, ...]:
                    return (max(row[values : values + stages]), *row[:values]) if stages else ()

                return sorted(decoded, key=order)[:limit]
        from_joins, outer = sc.decoded(inner, kinds, params)
        value_cols = outer[:values]
        stage_cols = outer[values : values + stages]
        order_sql = ", ".join([f"greatest({', '.join(stage_cols)})", *value_cols]) if stages else ""
        order_sql = f" ORDER BY {order_sql}" if order_sql else ""
        return self._con.execute(
            f"SELECT {', '.join(outer)}{from_joins}{order_sql} LIMIT {limit}", params.bind()
        ).fetchall()

    def _aggregate_holds(self, rule: Rule, row: Row) -> bool:
        """Whether this aggregate rule computes exactly `row` for the row's group."""
        agg = rule.head.aggregate
        assert agg is not None
        stored = [self._encode(v) for v in row]
        if None in stored:
            return False
        params = self._params()
        body = sc.compile_body(rule.body, self._schema, params)
        select = sc.aggregate_query(rule, body, params, tuple(v for v in stored if v is not None))
        value = _first(self._con.execute(select, params.bind()))
        return value is not None and value[agg[0]] == stored[agg[0]]


class _Here(threading.local):
    """Per thread: the cursor, stage counter and relation of the stratum it evaluates (`DuckDBBackend._con`)."""

    con: duckdb.DuckDBPyConnection | None = None
    stage = 0
    computing = ""
    locked = False
    """The thread holds the engine's lock (`DuckDBBackend._unlocked`)."""


class _Halted(Exception):
    """A stratum stopped because another failed (or Ctrl-C): concurrent strata end at their next statement."""


class _Again(Exception):
    """Strata evaluated concurrently failed: evaluate again one after another, for the error (or
    answers) the sequential order gives.
    """


def _refuse(decl: Declaration, rows: Sequence[Row]) -> NoReturn:
    """Raise the FactError `fact_columns` gives for rows that failed a check."""
    fact_columns(decl, rows)
    raise AssertionError(f"fact_columns accepted facts of {decl.name} that failed a check")


def _first(result: duckdb.DuckDBPyConnection) -> Any:
    """The first row of a statement's result, or None; the result is read to its end.

    A result left half-read (as `fetchone` leaves it) makes DuckDB refuse the next `register` on the
    connection, which loading facts after a query (a re-evaluation's new facts) needs.
    """
    rows = result.fetchall()
    return rows[0] if rows else None


def _passed_through(relation: str, live: Sequence[Rule]) -> int | None:
    """The first column that every rule reading `relation` (its recursive rules) copies from the
    atom it reads to its head, unchanged; None if there is none.
    """
    columns: set[int] | None = None
    for rule in live:
        for atom in rule.positive_atoms():
            if atom.relation != relation:
                continue
            same = {
                i
                for i, (h, a) in enumerate(zip(rule.head.args, atom.args, strict=False))
                if isinstance(h, Var) and isinstance(a, Var) and h.name == a.name
            }
            columns = same if columns is None else columns & same
    return min(columns) if columns else None


def _fixed(rule: Rule, atom: Atom, row: Row) -> dict[int, Value]:
    """The values a proof of `row` by `rule` fixes at columns of `atom`: its constants, and the
    variables the head's plain arguments bind to the row.
    """
    bound: dict[str, Value] = {}
    for arg, value in zip(rule.head.args, row, strict=False):
        if isinstance(arg, Var):
            bound.setdefault(arg.name, value)
    out: dict[int, Value] = {}
    for i, arg in enumerate(atom.args):
        if isinstance(arg, Const):
            out[i] = arg.value
        elif isinstance(arg, Var) and arg.name in bound:
            out[i] = bound[arg.name]
    return out


def _var_names(args: Sequence[object]) -> tuple[str | None, ...]:
    """Each argument's variable name, None where it is not a variable."""
    return tuple(a.name if isinstance(a, Var) else None for a in args)


def _closure_shaped(stratum: Stratum, live: Sequence[Rule]) -> bool:
    """Whether a recursive stratum can run as one WITH RECURSIVE query: one relation that combines
    stored values (strata.combines_stored_values), each rule reading it at most once, and some
    rule that can fire without it.
    """
    if len(stratum.relations) != 1 or not combines_stored_values(stratum):
        return False
    (relation,) = stratum.relations
    reads = [sum(1 for a in rule.positive_atoms() if a.relation == relation) for rule in live]
    return max(reads) <= 1 and min(reads) == 0


def _kinds(decl: Declaration) -> list[ColumnType | None]:
    """Column types of a relation's table (a zero-arity relation's unit column has none)."""
    return [c.type for c in decl.columns] or [None]


def _row(decl: Declaration, values: tuple[Any, ...]) -> Row:
    return tuple(values) if decl.arity else ()
