"""The sweep store: one SQLite file, written as results arrive.

What the store guarantees — the one place these are written down (the user
guide's "What the store keeps" repeats them for users; tests/test_store.py
checks each):

* **What is reused.** A stored result is reused only for the same scenario
  (:attr:`ccsim.Scenario.key`: every parameter, the seed and the flows'
  parameters), the same engine, and the same model: the fingerprint of
  ccsim's own source code (for the packet engine's results, all of it but
  the fluid engine, which it never runs) and of the source of every user's
  class the scenario runs (:mod:`ccsim.sweeps.fingerprint`). ccsim's
  version string plays no part.
* **When it is re-run.** Any change to ccsim's source, or to a user's window
  law, recovery strategy or queue discipline (re-registered under the same
  name with other rules), or to a sweep's ``runner``, re-runs the scenarios
  that use it; the old results stay in the file, unused. A scenario that
  failed is run again; so is one asked for with ``traces=True`` but stored
  without them, and one whose stored record cannot be read (a
  :class:`StoreWarning` says which).
* **What survives a kill.** Each result is committed on its own, the moment
  it arrives, so a sweep killed at any moment (SIGKILL, a closed laptop)
  loses at most the scenarios that were running. The file uses SQLite's
  write-ahead log with ``synchronous=NORMAL``: a commit survives the process
  being killed; only a power cut can lose the last few.
* **What survives a full disk.** Every result committed before the disk
  filled stays; the sweep stops with a :class:`StoreFullError` whose
  ``.table`` holds every scenario that finished, stored or not. Run the
  sweep again with room on the disk and it resumes from what was stored.
* **Files that are not stores.** A store is marked (``PRAGMA application_id``
  = :data:`APPLICATION_ID`, ``user_version`` = :data:`SCHEMA_VERSION`). An
  existing file without the mark — another program's SQLite database,
  anything that is not SQLite, a damaged file — is refused with a
  :class:`StoreError` naming it, and never written to.
* **Reading.** :func:`ccsim.load` and :func:`ccsim.sweeps.load_traces` open
  the file read-only (SQLite's ``mode=ro``): they work on read-only media
  and never change the file. A closed store is left in SQLite's ordinary
  rollback-journal mode, with no ``-wal``/``-shm`` files beside it.
* **Plain JSON.** Records are valid JSON throughout (SQLite's ``json_valid``
  holds for each): NaN and infinities are written as the strings ``"NaN"``,
  ``"Infinity"`` and ``"-Infinity"`` and read back as floats.

Tables (plain SQL, readable from any SQLite client or ``pandas.read_sql``):

* ``results(key, engine, model, version, failed, record)``: one row per
  finished scenario, engine and model fingerprint; ``engine`` is
  ``"packet"``, ``"fluid"``, or ``"packet:module.function"`` for a recipe's
  own runner; ``version`` the ccsim version that wrote it (for information
  only); ``failed`` is 1 for a scenario that raised; ``record`` is JSON text
  (see :mod:`ccsim.sweeps.work`).
* ``traces(key, engine, model, traces)``: the time series, only for sweeps
  run with ``traces=True``, as JSON columns ``time``, ``flow``,
  ``variable``, ``value``.
* ``points(position, key, scenario, params)``: the last sweep's scenarios
  in order, as :meth:`ccsim.Scenario.to_json` and their grid values as JSON;
  ``models(key, engine, model)``: the model fingerprint each of its results
  is to have; ``meta(name, value)``: that sweep's parameter names and
  engines.
  :func:`ccsim.load` builds the table from these.
"""

from __future__ import annotations

import json
import os
import pathlib
import sqlite3
from typing import Any, Iterable

from ..errors import ScenarioError

APPLICATION_ID = 0x63637377
"""``PRAGMA application_id`` of a ccsim sweep store (the bytes ``"ccsw"``)."""
SCHEMA_VERSION = 1
"""``PRAGMA user_version`` of the tables this ccsim writes."""

_SQLITE_HEADER = b"SQLite format 3\x00"
_LEGACY_TABLES = ["meta", "points", "results", "traces"]
_SCHEMA = """
CREATE TABLE results (
    key TEXT NOT NULL, engine TEXT NOT NULL, model TEXT NOT NULL, version TEXT NOT NULL,
    failed INTEGER NOT NULL, record TEXT NOT NULL,
    PRIMARY KEY (key, engine, model));
CREATE TABLE traces (
    key TEXT NOT NULL, engine TEXT NOT NULL, model TEXT NOT NULL, traces TEXT NOT NULL,
    PRIMARY KEY (key, engine, model));
CREATE TABLE points (
    position INTEGER PRIMARY KEY, key TEXT NOT NULL, scenario TEXT NOT NULL,
    params TEXT NOT NULL);
CREATE TABLE models (
    key TEXT NOT NULL, engine TEXT NOT NULL, model TEXT NOT NULL,
    PRIMARY KEY (key, engine));
CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


class StoreError(ScenarioError):
    """A sweep store that cannot be used: not a ccsim store, damaged,
    unreadable or unwritable. The message names the file."""

    def __init__(self, path: str, allowed: str, hint: str | None = None) -> None:
        super().__init__("store", path, allowed, hint)

    def __reduce__(self) -> tuple[type, tuple[object, ...]]:
        return type(self), (self.value, self.allowed, self.hint)


class StoreFullError(StoreError):
    """The disk (or the file's size limit) filled during a sweep. ``.table``
    holds every scenario that finished, stored or not (set by
    :func:`ccsim.sweep`; ``None`` until then)."""

    table: Any = None


class StoreWarning(UserWarning):
    """Stored records that could not be read (and are run again or shown as
    failed)."""


_CODES = {13: "full", 11: "damaged", 26: "damaged", 8: "read-only", 14: "unopenable"}


def _kind(exc: sqlite3.Error) -> str | None:
    code = getattr(exc, "sqlite_errorcode", None)
    return None if code is None else _CODES.get(code & 0xFF)


def _raise(path: str, exc: sqlite3.Error, doing: str) -> None:
    kind = _kind(exc)
    if kind == "full":
        raise StoreFullError(path, "a file on a disk with room for the results",
                             f"SQLite could not write ({exc}) while {doing}") from None
    if kind == "damaged":
        raise StoreError(path, "a readable ccsim sweep store",
                         f"the file is damaged or not a SQLite database ({exc}); "
                         "move it aside and run the sweep again with a new file") from None
    if kind == "read-only":
        raise StoreError(path, "a file ccsim can write",
                         f"it is read-only ({exc}); ccsim.load reads read-only stores") from None
    raise StoreError(path, "a ccsim sweep store ccsim can open",
                     f"SQLite failed while {doing}: {exc}") from None


class Store:
    """An open sweep store at ``path``.

    ``readonly=False`` (a sweep's): created if missing or empty; an existing
    file must carry a ccsim store's mark, or it is refused untouched.
    ``readonly=True`` (``load``'s): the file must exist and is opened with
    SQLite's ``mode=ro``, so nothing is ever written.
    """

    def __init__(self, path: str | os.PathLike[str], *, readonly: bool = False) -> None:
        self.path = os.fspath(path)
        self.readonly = readonly
        self.written = 0  # results committed through this connection
        exists = os.path.isfile(self.path)
        if readonly and not exists:
            raise StoreError(self.path, "an existing sweep store (.sqlite file)",
                             "no such file")
        fresh = not exists or os.path.getsize(self.path) == 0
        if not fresh:
            self._check_header()
            with self._open_ro() as probe:
                fresh = self._check_mark(probe)
        if readonly:
            self.db = self._open_ro()
            return
        try:
            self.db = sqlite3.connect(self.path)
        except sqlite3.Error as exc:
            _raise(self.path, exc, "opening it")
        try:
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            if fresh:
                self.db.executescript(
                    f"BEGIN; PRAGMA application_id={APPLICATION_ID}; "
                    f"PRAGMA user_version={SCHEMA_VERSION};" + _SCHEMA + "COMMIT;")
        except sqlite3.Error as exc:
            self.db.close()
            _raise(self.path, exc, "creating the store's tables")

    # -- opening ------------------------------------------------------------------------
    def _check_header(self) -> None:
        try:
            with open(self.path, "rb") as f:
                head = f.read(len(_SQLITE_HEADER))
        except OSError as exc:
            raise StoreError(self.path, "a readable file", str(exc)) from None
        if head != _SQLITE_HEADER:
            raise StoreError(self.path, "a ccsim sweep store (a SQLite file)",
                             "this file is not a SQLite database; choose another file name")

    def _open_ro(self) -> sqlite3.Connection:
        uri = pathlib.Path(self.path).resolve().as_uri() + "?mode=ro"
        try:
            db = sqlite3.connect(uri, uri=True)
            db.execute("SELECT count(*) FROM sqlite_master").fetchone()
            return db
        except sqlite3.Error as exc:
            if _kind(exc) != "unopenable":
                _raise(self.path, exc, "opening it read-only")
        # a store left in WAL mode (its sweep was killed) on read-only media:
        # SQLite cannot create the -shm file; read the file as it is
        try:
            db = sqlite3.connect(uri.replace("?mode=ro", "?immutable=1"), uri=True)
            db.execute("SELECT count(*) FROM sqlite_master").fetchone()
            return db
        except sqlite3.Error as exc:
            _raise(self.path, exc, "opening it read-only")
        raise AssertionError  # unreachable: _raise raises

    def _check_mark(self, db: sqlite3.Connection) -> bool:
        """Whether the (existing) file is an empty database to set up;
        raises unless it is one or a ccsim store."""
        try:
            app = db.execute("PRAGMA application_id").fetchone()[0]
            version = db.execute("PRAGMA user_version").fetchone()[0]
            tables = sorted(r[0] for r in db.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table'"))
        except sqlite3.Error as exc:
            _raise(self.path, exc, "reading its schema")
        if app == APPLICATION_ID:
            if version > SCHEMA_VERSION:
                raise StoreError(self.path, f"a sweep store of schema {SCHEMA_VERSION} or older",
                                 f"it has schema {version}, from a newer ccsim; "
                                 "upgrade ccsim to use it")
            return False
        if not tables and app == 0:
            return True
        if app == 0 and tables == _LEGACY_TABLES:
            raise StoreError(self.path, "a sweep store of this ccsim",
                             "it was written by an earlier ccsim, whose results were keyed by "
                             "its version string, not by the model's code, and cannot be "
                             "reused safely; run the sweep with a new file")
        raise StoreError(self.path, "a ccsim sweep store, or a new file",
                         "this SQLite file belongs to another program (tables: "
                         + (", ".join(tables) or "none") + f"; application_id={app}); "
                         "ccsim leaves it untouched: choose another file name")

    def close(self) -> None:
        """Close; a store opened for writing goes back to SQLite's rollback
        journal, so that no ``-wal``/``-shm`` files stay and read-only
        readers need not create them."""
        if not self.readonly:
            try:
                self.db.execute("PRAGMA journal_mode=DELETE")
            except sqlite3.Error:  # another reader holds it, or the disk is full: still valid
                pass
        self.db.close()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _read(self, doing: str, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        try:
            return self.db.execute(sql, args).fetchall()
        except sqlite3.Error as exc:
            _raise(self.path, exc, doing)
        raise AssertionError  # unreachable

    # -- the sweep's layout -------------------------------------------------------------
    def begin(self, points: Iterable[tuple[int, str, str, str]],
              models: Iterable[tuple[str, str, str]], meta: dict[str, Any]) -> None:
        """Record a sweep's scenarios ``(position, key, scenario JSON, params
        JSON)``, the models ``(key, engine, fingerprint)`` its results are to
        have, and ``meta``, replacing the previous sweep's."""
        try:
            with self.db:
                self.db.execute("DELETE FROM points")
                self.db.executemany("INSERT INTO points VALUES (?, ?, ?, ?)", points)
                self.db.execute("DELETE FROM models")
                self.db.executemany("INSERT OR REPLACE INTO models VALUES (?, ?, ?)", models)
                self.db.execute("DELETE FROM meta")
                self.db.executemany("INSERT INTO meta VALUES (?, ?)",
                                    [(k, json.dumps(v)) for k, v in meta.items()])
        except sqlite3.Error as exc:
            _raise(self.path, exc, "recording the sweep's scenarios")

    def meta(self) -> dict[str, Any]:
        return {k: json.loads(v)
                for k, v in self._read("reading the sweep's layout", "SELECT name, value FROM meta")}

    def points(self) -> list[tuple[int, str, str, str]]:
        """``(position, key, scenario JSON, params JSON)`` of the last sweep."""
        return self._read("reading the sweep's scenarios",
                          "SELECT position, key, scenario, params FROM points "
                          "ORDER BY position")  # type: ignore[return-value]

    # -- results ------------------------------------------------------------------------
    def put(self, key: str, engine: str, model: str, version: str, failed: bool, record: str,
            traces: str | None = None) -> None:
        """Write one result and commit it."""
        try:
            with self.db:
                self.db.execute("INSERT OR REPLACE INTO results VALUES (?, ?, ?, ?, ?, ?)",
                                (key, engine, model, version, int(failed), record))
                if traces is not None:
                    self.db.execute("INSERT OR REPLACE INTO traces VALUES (?, ?, ?, ?)",
                                    (key, engine, model, traces))
        except sqlite3.Error as exc:
            _raise(self.path, exc, "storing a result")
        self.written += 1

    def records(self, *, failed: bool = True,
                traces: bool = False) -> dict[tuple[str, str], str]:
        """``(key, engine) → record`` of every stored result of the last
        sweep's scenarios made by their model (:meth:`begin`'s ``models``);
        without the failed ones if ``failed`` is false, only those with
        traces if ``traces`` is true."""
        query = ("SELECT key, engine, record FROM results AS r WHERE EXISTS "
                 "(SELECT 1 FROM models AS m WHERE m.key = r.key AND m.engine = r.engine "
                 "AND m.model = r.model)")
        if not failed:
            query += " AND failed = 0"
        if traces:
            query += (" AND EXISTS (SELECT 1 FROM traces AS t WHERE t.key = r.key"
                      " AND t.engine = r.engine AND t.model = r.model)")
        return {(k, e): r for k, e, r in self._read("reading stored results", query)}

    def traces(self, key: str, engine: str) -> str | None:
        """The stored traces of ``key`` in ``engine``, made by the model the
        last sweep had for it."""
        rows = self._read("reading stored traces",
                          "SELECT traces FROM traces AS t WHERE key = ? AND engine = ? AND "
                          "EXISTS (SELECT 1 FROM models AS m WHERE m.key = t.key "
                          "AND m.engine = t.engine AND m.model = t.model)", (key, engine))
        return rows[0][0] if rows else None
