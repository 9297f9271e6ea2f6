"""The sweep store: one SQLite file, written as results arrive.

Tables (plain SQL, readable from any SQLite client or ``pandas.read_sql``):

* ``results(key, engine, version, failed, record)``: one row per finished scenario
  and engine, keyed by :attr:`ccsim.Scenario.key`, the engine (``"packet"``,
  ``"fluid"``, or ``"packet:module.function"`` for a recipe's own runner) and
  ccsim's version; ``failed`` is 1 for a scenario that raised; ``record`` is JSON text (see :mod:`ccsim.sweeps.work`).
* ``traces(key, engine, version, traces)``: the time series, only for sweeps
  run with ``traces=True``, as JSON columns ``time``, ``flow``, ``variable``,
  ``value``.
* ``points(position, key, scenario, params)``: the last sweep's scenarios in
  order, each as :meth:`ccsim.Scenario.to_json` and its grid values as JSON;
  ``meta(name, value)``: that sweep's parameter names, engines and version.
  :func:`ccsim.load` builds the table from these.

Each result is committed on its own, so a sweep killed at any moment loses at
most the scenarios that were running. The file uses SQLite's write-ahead log
with ``synchronous=NORMAL``: a commit survives the process being killed
(SIGKILL included); only a power cut can lose the last few.
"""

from __future__ import annotations

import json
import os
import sqlite3
from typing import Any, Iterable

from ..errors import ScenarioError

_SCHEMA = """
CREATE TABLE IF NOT EXISTS results (
    key TEXT NOT NULL, engine TEXT NOT NULL, version TEXT NOT NULL,
    failed INTEGER NOT NULL, record TEXT NOT NULL,
    PRIMARY KEY (key, engine, version));
CREATE TABLE IF NOT EXISTS traces (
    key TEXT NOT NULL, engine TEXT NOT NULL, version TEXT NOT NULL, traces TEXT NOT NULL,
    PRIMARY KEY (key, engine, version));
CREATE TABLE IF NOT EXISTS points (
    position INTEGER PRIMARY KEY, key TEXT NOT NULL, scenario TEXT NOT NULL,
    params TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


class Store:
    """An open sweep store at ``path`` (created if missing)."""

    def __init__(self, path: str | os.PathLike[str], *, create: bool = True) -> None:
        self.path = os.fspath(path)
        if not create and not os.path.isfile(self.path):
            raise ScenarioError("store", self.path, "an existing sweep store (.sqlite file)")
        try:
            self.db = sqlite3.connect(self.path)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.executescript(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise ScenarioError("store", self.path, "a SQLite file that ccsim can write",
                                str(exc)) from None

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- the sweep's layout --------------------------------------------------------
    def begin(self, points: Iterable[tuple[int, str, str, str]], meta: dict[str, Any]) -> None:
        """Record a sweep's scenarios ``(position, key, scenario JSON, params
        JSON)`` and ``meta``, replacing the previous sweep's."""
        with self.db:
            self.db.execute("DELETE FROM points")
            self.db.executemany("INSERT INTO points VALUES (?, ?, ?, ?)", points)
            self.db.execute("DELETE FROM meta")
            self.db.executemany("INSERT INTO meta VALUES (?, ?)",
                                [(k, json.dumps(v)) for k, v in meta.items()])

    def meta(self) -> dict[str, Any]:
        return {k: json.loads(v) for k, v in self.db.execute("SELECT name, value FROM meta")}

    def points(self) -> list[tuple[int, str, str, str]]:
        return list(self.db.execute("SELECT * FROM points ORDER BY position"))

    # -- results ------------------------------------------------------------------------
    def put(self, key: str, engine: str, version: str, failed: bool, record: str,
            traces: str | None = None) -> None:
        """Write one result and commit it."""
        with self.db:
            self.db.execute("INSERT OR REPLACE INTO results VALUES (?, ?, ?, ?, ?)",
                            (key, engine, version, int(failed), record))
            if traces is not None:
                self.db.execute("INSERT OR REPLACE INTO traces VALUES (?, ?, ?, ?)",
                                (key, engine, version, traces))

    def records(self, version: str, *, failed: bool = True,
                traces: bool = False) -> dict[tuple[str, str], str]:
        """``(key, engine) → record`` of every stored result of ``version``;
        without the failed ones if ``failed`` is false, only those with
        traces if ``traces`` is true."""
        query = "SELECT key, engine, record FROM results AS r WHERE version = ?"
        if not failed:
            query += " AND failed = 0"
        if traces:
            query += (" AND EXISTS (SELECT 1 FROM traces AS t WHERE t.key = r.key"
                      " AND t.engine = r.engine AND t.version = r.version)")
        return {(k, e): r for k, e, r in self.db.execute(query, (version,))}

    def traces(self, key: str, engine: str, version: str) -> str | None:
        row = self.db.execute("SELECT traces FROM traces WHERE key=? AND engine=? AND version=?",
                              (key, engine, version)).fetchone()
        return None if row is None else row[0]
