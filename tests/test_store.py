"""The sweep store's guarantees (ccsim.sweeps.store's docstring), one test
each, on real SQLite files: what is reused, when it is re-run, files that are
not stores, read-only loading, strict JSON, damaged records, a full disk."""

from __future__ import annotations

import math
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
import warnings
from pathlib import Path

import pandas as pd
import pytest

import ccsim
from ccsim.algorithms import CongestionControl
from ccsim.algorithms import registry as algorithm_registry
from ccsim.sweeps import StoreError, StoreFullError, StoreWarning
from ccsim.sweeps import fingerprint as fingerprint_module
from ccsim.sweeps import store as store_module
from ccsim.sweeps.store import APPLICATION_ID, SCHEMA_VERSION, Store

ROOT = Path(__file__).resolve().parents[1]
BASE = ccsim.dumbbell("10Mbps", "20ms", buffer="1BDP", flows=["reno", "cubic"],
                      duration="1s", seed=1)
GRID = {"loss": [0, 0.01]}


def same(a: pd.DataFrame, b: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(a.drop(columns="wall_time"), b.drop(columns="wall_time"),
                                  check_exact=True)


def rows(path, sql="SELECT key, engine, model, record FROM results"):
    with sqlite3.connect(path) as db:
        return db.execute(sql).fetchall()


def files(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


# -- what is reused, and when it is re-run --------------------------------------------------
class Halving(CongestionControl):
    name = "mylaw"

    def on_ack(self, ack):
        self.cwnd += 1 / self.cwnd

    def on_loss(self, loss):
        self.ssthresh = self.cwnd = max(self.cwnd / 2, 2.0)


class Gentle(CongestionControl):
    name = "mylaw"  # the same name, another rule

    def on_ack(self, ack):
        self.cwnd += 1 / self.cwnd

    def on_loss(self, loss):
        self.ssthresh = self.cwnd = max(self.cwnd * 0.9, 2.0)


def test_a_law_changed_under_the_same_name_is_run_again(scratch_registry, tmp_path):
    path = tmp_path / "law.sqlite"
    algorithm_registry.register(Halving)
    base = BASE.replace(flows=["mylaw", "reno"])
    first = ccsim.sweep(base, GRID, workers=1, store=path, progress=False)
    again = ccsim.sweep(base, GRID, workers=1, store=path, progress=False)
    # the same class: reused, the very same records (wall_time included)
    pd.testing.assert_frame_equal(again, first, check_exact=True)
    assert len(rows(path)) == 2

    algorithm_registry.register(Gentle)  # re-registered under "mylaw"
    changed = ccsim.sweep(base, GRID, workers=1, store=path, progress=False)
    fresh = ccsim.sweep(base, GRID, workers=1, progress=False)
    same(changed, fresh)  # the new law's results, not the old law's
    lossy = changed["loss"] == 0.01
    assert not changed[lossy]["goodput_bps"].equals(first[lossy]["goodput_bps"])
    # both models' results are kept, keyed apart by their fingerprints
    stored = rows(path)
    assert len(stored) == 4 and len({model for _, _, model, _ in stored}) == 2

    algorithm_registry.register(Halving)  # back to the first: its results again
    pd.testing.assert_frame_equal(ccsim.sweep(base, GRID, workers=1, store=path,
                                              progress=False), first, check_exact=True)


def test_class_attributes_and_runner_are_part_of_the_model(scratch_registry):
    @algorithm_registry.register
    class Tuned(CongestionControl):
        name = "tuned"
        beta = 0.5

    sc = BASE.replace(flows=["reno"])
    fp = fingerprint_module.Fingerprints()
    tuned = BASE.replace(flows=["tuned"])
    one = fingerprint_module.Fingerprints().of(tuned)
    Tuned.beta = 0.7
    two = fingerprint_module.Fingerprints().of(tuned)
    assert one != two
    # ccsim's own classes are covered by ccsim's source: one fingerprint for all
    assert fp.of(sc) == fp.of(BASE) == fingerprint_module.Fingerprints().of(sc)
    assert fingerprint_module.Fingerprints(runner=_runner).of(sc) != fp.of(sc)
    # the engines' results depend on different code: the fluid engine's own
    assert fp.of(sc, "fluid") != fp.of(sc, "packet")


def test_a_class_without_source_is_keyed_by_its_bytecode(scratch_registry):
    scope: dict = {"CongestionControl": CongestionControl, "__name__": "a_notebook"}
    code = "class Law(CongestionControl):\n    name = 'nosource'\n    def on_ack(self, ack):\n" \
           "        self.cwnd += {step}\n"
    models = []
    for step in (1, 1, 2):  # the same cell run twice, then changed
        exec(code.format(step=step), scope)  # noqa: S102 - no file: no source to read
        algorithm_registry.register(scope["Law"])  # replaces the last: a re-run cell
        with pytest.warns(fingerprint_module.FingerprintWarning, match="cannot be read"):
            models.append(fingerprint_module.Fingerprints().of(BASE.replace(flows=["nosource"])))
    assert models[0] == models[1] != models[2]


FLAKY = {"fail": True}


class Flaky(CongestionControl):
    """Fails while FLAKY says so: a module global, outside the class, so not
    part of its fingerprint (the guide says to keep a law's rules inside it)."""

    name = "flaky"

    def on_ack(self, ack):
        if FLAKY["fail"]:
            raise RuntimeError("not today")
        self.cwnd += 1 / self.cwnd


def test_a_failed_scenario_is_run_again(scratch_registry, tmp_path, monkeypatch):
    path = tmp_path / "flaky.sqlite"
    algorithm_registry.register(Flaky)
    grid = {"flows": [["reno"], ["flaky"]]}
    with pytest.warns(ccsim.sweeps.SweepWarning, match="1 of 2 runs"):
        first = ccsim.sweep(BASE, grid, workers=1, store=path, progress=False)
    assert rows(path, "SELECT sum(failed) FROM results") == [(1,)]
    monkeypatch.setitem(FLAKY, "fail", False)
    again = ccsim.sweep(BASE, grid, workers=1, store=path, progress=False)
    assert (again["error"] == "").all()
    assert rows(path, "SELECT sum(failed), count(*) FROM results") == [(0, 2)]
    # the scenario that had succeeded was not run again
    assert again["wall_time"].iloc[0] == first["wall_time"].iloc[0]


EDIT = """
import sys, ccsim
base = ccsim.dumbbell("10Mbps", "20ms", flows=["reno"], duration="0.2s")
t = ccsim.sweep(base, {"loss": [0, 0.01]}, workers=1, store=sys.argv[1], progress=False)
print(ccsim.__file__)
"""


@pytest.mark.slow
def test_any_change_to_ccsims_source_runs_again(tmp_path):
    copy = tmp_path / "lib"
    shutil.copytree(ROOT / "ccsim", copy / "ccsim",
                    ignore=shutil.ignore_patterns("__pycache__"))
    path = tmp_path / "edit.sqlite"
    env = {**os.environ, "PYTHONPATH": str(copy)}

    def sweep() -> None:
        out = subprocess.run([sys.executable, "-c", EDIT, str(path)], env=env, check=True,
                             capture_output=True, text=True, cwd=tmp_path)
        assert out.stdout.strip().startswith(str(copy))  # the copy ran, not the worktree

    sweep()
    sweep()
    assert len(rows(path)) == 2  # unchanged source: reused
    # an edit that changes no result, and no version string: still a new model
    with open(copy / "ccsim" / "metrics.py", "a") as f:
        f.write("\n# an edit\n")
    sweep()
    stored = rows(path)
    assert len(stored) == 4 and len({model for *_, model, _ in stored}) == 2
    # the packet engine never imports the fluid engine: an edit there re-runs
    # fluid results only, and these are packet results
    with open(copy / "ccsim" / "fluid" / "engine.py", "a") as f:
        f.write("\n# an edit of the fluid engine\n")
    sweep()
    assert rows(path) == stored


# -- files that are not stores -----------------------------------------------------------
def test_a_store_is_marked(tmp_path):
    path = tmp_path / "marked.sqlite"
    ccsim.sweep(BASE, GRID, workers=1, store=path, progress=False)
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def test_another_programs_sqlite_file_is_refused_untouched(tmp_path):
    path = tmp_path / "mine.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE results (id INTEGER PRIMARY KEY, value REAL)")
        db.execute("INSERT INTO results (value) VALUES (1.5)")
    db.close()
    before = path.read_bytes()
    for call in (lambda: ccsim.sweep(BASE, GRID, workers=1, store=path, progress=False),
                 lambda: ccsim.load(path)):
        with pytest.raises(StoreError) as err:
            call()
        message = str(err.value)
        assert str(path) in message and "another program" in message
        assert "tables: results" in message and "choose another file name" in message
    assert path.read_bytes() == before and files(tmp_path) == ["mine.sqlite"]


def test_a_store_of_an_earlier_ccsim_is_refused_untouched(tmp_path):
    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as db:  # the layout before results were keyed by the model
        db.executescript("""
            CREATE TABLE results (key TEXT, engine TEXT, version TEXT, failed INTEGER,
                                  record TEXT, PRIMARY KEY (key, engine, version));
            CREATE TABLE traces (key TEXT, engine TEXT, version TEXT, traces TEXT);
            CREATE TABLE points (position INTEGER PRIMARY KEY, key TEXT, scenario TEXT,
                                 params TEXT);
            CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT);""")
    db.close()
    before = path.read_bytes()
    with pytest.raises(StoreError, match="written by an earlier ccsim") as err:
        ccsim.sweep(BASE, GRID, workers=1, store=path, progress=False)
    assert str(path) in str(err.value) and "run the sweep with a new file" in str(err.value)
    assert path.read_bytes() == before


def test_a_file_that_is_not_sqlite_is_refused_untouched(tmp_path):
    path = tmp_path / "notes.sqlite"
    path.write_text("my notes, not a database\n" * 50)
    before = path.read_bytes()
    for call in (lambda: ccsim.sweep(BASE, GRID, workers=1, store=path, progress=False),
                 lambda: ccsim.load(path)):
        with pytest.raises(StoreError, match="not a SQLite database") as err:
            call()
        assert str(path) in str(err.value)
    assert path.read_bytes() == before and files(tmp_path) == ["notes.sqlite"]


def test_a_damaged_store_is_a_clear_error(tmp_path):
    path = tmp_path / "damaged.sqlite"
    ccsim.sweep(BASE, {"seed": range(20)}, workers=1, store=path, progress=False)
    data = bytearray(path.read_bytes())
    page = 4096
    assert len(data) > 4 * page
    data[page:3 * page] = b"\xa5" * (2 * page)  # two pages of the middle overwritten
    path.write_bytes(bytes(data))
    for call in (lambda: ccsim.load(path),
                 lambda: ccsim.sweep(BASE, {"seed": range(20)}, workers=1, store=path,
                                     progress=False)):
        with pytest.raises(StoreError, match="damaged") as err:
            call()
        assert str(path) in str(err.value)


def test_an_empty_file_becomes_a_store(tmp_path):
    path = tmp_path / "empty.sqlite"
    path.touch()
    t = ccsim.sweep(BASE, GRID, workers=1, store=path, progress=False)
    same(ccsim.load(path), t)


# -- reading ------------------------------------------------------------------------------------
def test_load_opens_read_only(tmp_path):
    folder = tmp_path / "media"
    folder.mkdir()
    path = folder / "sweep.sqlite"
    table = ccsim.sweep(BASE, GRID, workers=1, store=path, progress=False, traces=True)
    # a closed store is in rollback-journal mode (header bytes 18-19 are 1, not
    # WAL's 2) with nothing beside it, so read-only media need no -shm file
    assert path.read_bytes()[18:20] == b"\x01\x01" and files(folder) == ["sweep.sqlite"]
    before, mtime = path.read_bytes(), path.stat().st_mtime_ns
    path.chmod(stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
    folder.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        pd.testing.assert_frame_equal(ccsim.load(path), table, check_exact=True)
        ccsim.sweeps.load_traces(path, table["key"].iloc[0])
        # the connection load uses refuses writes, even where chmod does not (root)
        with Store(path, readonly=True) as db, \
                pytest.raises(sqlite3.OperationalError, match="readonly"):
            db.db.execute("CREATE TABLE intruder (x)")
    finally:
        folder.chmod(stat.S_IRWXU)
        path.chmod(stat.S_IRUSR | stat.S_IWUSR)
    assert path.read_bytes() == before and path.stat().st_mtime_ns == mtime
    assert files(folder) == ["sweep.sqlite"]


# -- strict JSON ---------------------------------------------------------------------------------
def _runner(scenario, mode):
    """A recipe's runner adding metrics JSON has no numbers for."""
    result = ccsim.run(scenario, mode)
    result.metrics.update(peak=math.inf, floor=-math.inf, unknown=math.nan)
    return result


def test_nan_and_infinity_are_valid_json_and_come_back(tmp_path):
    path = tmp_path / "json.sqlite"
    t = ccsim.sweep(BASE, GRID, workers=1, store=path, progress=False, runner=_runner,
                    traces=True)
    assert (t["peak"] == math.inf).all() and (t["floor"] == -math.inf).all()
    assert t["unknown"].isna().all()
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT count(*), sum(json_valid(record)) FROM results").fetchone() \
            == (2, 2)
        assert db.execute("SELECT count(*), sum(json_valid(traces)) FROM traces").fetchone() \
            == (2, 2)
        # readable from SQL: the non-finite values are named strings
        assert db.execute("SELECT DISTINCT json_extract(record, '$.metrics.peak'), "
                          "json_extract(record, '$.metrics.unknown') FROM results"
                          ).fetchall() == [("Infinity", "NaN")]
    pd.testing.assert_frame_equal(ccsim.load(path), t, check_exact=True)


# -- damaged records -------------------------------------------------------------------------
@pytest.mark.parametrize("damage", ['{"rows": [', '{"rows": []}', "[1, 2]"])
def test_a_damaged_record_is_run_again_and_said_so(tmp_path, damage):
    path = tmp_path / "records.sqlite"
    t = ccsim.sweep(BASE, GRID, workers=1, store=path, progress=False)
    bad_key = t["key"].iloc[-1]
    with sqlite3.connect(path) as db:
        db.execute("UPDATE results SET record = ? WHERE key = ?", (damage, bad_key))
    db.close()
    # load: the run shows as failed, saying why; the others as they were
    with pytest.warns(StoreWarning, match="1 stored result.* could not be read"):
        loaded = ccsim.load(path)
    bad = loaded["key"] == bad_key
    assert loaded[bad]["error"].str.contains("the stored result could not be read").all()
    assert loaded[bad]["error"].str.contains("run the sweep again").all()
    # (the failed run's NaN makes integer columns float: values compared)
    pd.testing.assert_frame_equal(loaded[~bad].drop(columns="wall_time"),
                                  t[~bad].drop(columns="wall_time"), check_dtype=False,
                                  check_exact=True)
    # sweep: run again, with a warning, and stored afresh
    with pytest.warns(StoreWarning, match=f"scenario {bad_key} .*run again|run again"):
        again = ccsim.sweep(BASE, GRID, workers=1, store=path, progress=False)
    same(again, t)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        same(ccsim.load(path), t)


# -- a full disk ---------------------------------------------------------------------------------
@pytest.mark.slow
def test_a_full_disk_stops_with_what_finished(tmp_path, monkeypatch):
    path = tmp_path / "full.sqlite"
    grid = {"seed": list(range(40))}
    real = sqlite3.connect

    def small_disk(*args, **kwargs):
        db = real(*args, **kwargs)
        if not kwargs.get("uri"):  # the sweep's connection: a disk of 24 pages
            db.execute("PRAGMA max_page_count = 24")
        return db

    monkeypatch.setattr(store_module.sqlite3, "connect", small_disk)
    with pytest.raises(StoreFullError) as err:
        ccsim.sweep(BASE, grid, workers=1, store=path, progress=False)
    monkeypatch.undo()
    message = str(err.value)
    assert str(path) in message and "database or disk is full" in message
    assert "resumes from what was stored" in message
    stored = {k: r for k, _, _, r in rows(path)}
    finished = err.value.table
    done = finished.drop_duplicates("scenario")
    # every result that was stored, and the one that could not be, is in the table
    assert 0 < len(stored) < 40 and len(done) == len(stored) + 1
    assert f"{len(stored)} result(s) were stored" in message
    reference = ccsim.sweep(BASE, grid, workers=1, progress=False)
    same(finished, reference[reference["scenario"] < len(done)].reset_index(drop=True))
    # with room again: resumes, the stored results reused as they were
    resumed = ccsim.sweep(BASE, grid, workers=1, store=path, progress=False)
    same(resumed, reference)
    after = {k: r for k, _, _, r in rows(path)}
    assert len(after) == 40 and all(after[k] == r for k, r in stored.items())
