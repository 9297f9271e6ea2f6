"""Where a sweep's results go next: Parquet files (pyarrow) and
``xarray.Dataset`` (xarray), the PyData world's formats for tables and
labelled arrays.

* :func:`to_parquet` / :func:`read_parquet` — a sweep table to a Parquet
  file and back, its dtypes, grid values and ``attrs`` intact.
* :func:`traces_to_parquet` — every stored time series of a sweep run with
  ``traces=True``, as one long Parquet table, written scenario by scenario.
* :func:`to_xarray` — a grid sweep as a Dataset: the grid's parameters,
  ``seed`` and ``flow`` as dimensions, the metrics as variables.

pyarrow and xarray are optional (``pip install "ccsim[parquet]"``,
``"ccsim[xarray]"``); the functions that need one say so when it is missing.
"""

from __future__ import annotations

import json
import os
from typing import Any, Iterable

import numpy as np
import pandas as pd

from ..errors import ScenarioError, ScenarioTypeError
from .table import PER_FLOW, tuples

JSON_COLUMNS = "ccsim.json_columns"
"""The ``attrs`` entry of a table read back by :func:`read_parquet` naming
the columns that were stored as JSON text."""

_ATTRS = b"PANDAS_ATTRS"  # where pandas ≥ 2.1 keeps DataFrame.attrs in Parquet metadata


def _need(module: str, extra: str, what: str) -> Any:
    """Import an optional dependency or say which extra installs it."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise ImportError(f"{what} needs {module}: pip install \"ccsim[{extra}]\" "
                          f"(or pip install {module})") from None


def _check_table(table: Any, name: str = "table") -> None:
    if not isinstance(table, pd.DataFrame):
        raise ScenarioTypeError(name, table, "a sweep table (a pandas DataFrame from "
                                "ccsim.sweep or ccsim.load)")


# -- Parquet ---------------------------------------------------------------------------------
def _is_plain(values: pd.Series) -> bool:
    """Whether Parquet stores this object column as it is: strings (or
    missing) only."""
    return all(isinstance(v, str) or v is None for v in values)


def _json(value: Any) -> str:
    return json.dumps(value, allow_nan=True,
                      default=lambda v: v.item() if isinstance(v, np.generic) else _refuse(v))


def _refuse(value: Any) -> Any:
    raise TypeError(f"{value!r} ({type(value).__name__}) is not a number, string, "
                    "tuple, list or dict")


def to_parquet(table: pd.DataFrame, path: str | os.PathLike[str], **kwargs: Any) -> None:
    """Write a sweep table (or any table ccsim made) to a Parquet file.

    ``table.to_parquet(path)`` works too while every grid value is a number
    or a string; this also keeps the grid's other values: a column holding
    tuples (``flows``), dicts (``params``) or a mix of numbers and strings
    (``buffer=[20, "1BDP"]``) is stored as JSON text, and :func:`read_parquet`
    turns it back (JSON lists as tuples). ``attrs`` (the grid's parameter
    names, which :func:`ccsim.aggregate` and :func:`to_xarray` read) are
    stored in the file's metadata, where ``pandas.read_parquet`` also finds
    them (pandas ≥ 2.1).

    Args:
        table: a DataFrame, such as :func:`ccsim.sweep`'s.
        path: the file to write (replaced if it exists).
        kwargs: passed to ``pyarrow.parquet.write_table`` (``compression=``, ...).
    """
    _check_table(table)
    pa = _need("pyarrow", "parquet", "to_parquet")
    pq = _need("pyarrow.parquet", "parquet", "to_parquet")
    out = table.copy()
    encoded: list[str] = []
    attrs = dict(table.attrs)
    try:
        for name in list(out.columns):
            if out[name].dtype == object and not _is_plain(out[name]):
                out[name] = out[name].map(_json)
                encoded.append(name)
        arrow = pa.Table.from_pandas(out)
        text = json.dumps({**attrs, JSON_COLUMNS: encoded})
    except (TypeError, ValueError, pa.ArrowException) as exc:
        raise ScenarioError("table", f"{len(table.columns)} columns",
                            "columns of numbers and strings, tuples, lists and dicts, and "
                            "JSON-ready attrs", str(exc)) from None
    arrow = arrow.replace_schema_metadata({**(arrow.schema.metadata or {}),
                                           _ATTRS: text.encode()})
    pq.write_table(arrow, os.fspath(path), **kwargs)


def read_parquet(path: str | os.PathLike[str], **kwargs: Any) -> pd.DataFrame:
    """A table written by :func:`to_parquet`, as it was: dtypes, grid values
    (tuples, dicts) and ``attrs``. ``kwargs`` go to ``pandas.read_parquet``
    (``columns=``, ``filters=``)."""
    pq = _need("pyarrow.parquet", "parquet", "read_parquet")
    meta = pq.read_schema(os.fspath(path)).metadata or {}
    attrs = json.loads(meta[_ATTRS]) if _ATTRS in meta else {}
    table = pd.read_parquet(os.fspath(path), engine="pyarrow", **kwargs)
    for name in attrs.pop(JSON_COLUMNS, []):
        if name in table.columns:
            table[name] = table[name].map(lambda v: tuples(json.loads(v)))
    table.attrs = attrs
    return table


def traces_to_parquet(store: str | os.PathLike[str], path: str | os.PathLike[str],
                      mode: str | None = None, **kwargs: Any) -> int:
    """Every time series stored by a sweep run with ``traces=True`` as one
    long Parquet table at ``path``: columns ``scenario`` (the sweep table's
    position), ``key``, ``mode``, then ``time``, ``flow``, ``variable``,
    ``value`` as in :attr:`ccsim.Result.traces`. It is written one scenario
    at a time (a row group each), so a sweep's traces need not fit in
    memory; read a part back with
    ``pandas.read_parquet(path, filters=[("key", "==", key)])``.

    Args:
        store: the sweep's SQLite store.
        path: the Parquet file to write (replaced if it exists).
        mode: only this engine's traces (``"packet"`` or ``"fluid"``);
            default every engine the sweep ran.
        kwargs: passed to ``pyarrow.parquet.ParquetWriter``.

    Returns:
        The number of scenarios (per engine) whose traces were written.
    """
    pa = _need("pyarrow", "parquet", "traces_to_parquet")
    pq = _need("pyarrow.parquet", "parquet", "traces_to_parquet")
    from .sweep import stored_traces

    writer = None
    written = 0
    try:
        for position, key, engine, frame in stored_traces(store, mode):
            frame.insert(0, "mode", engine)
            frame.insert(0, "key", key)
            frame.insert(0, "scenario", position)
            arrow = pa.Table.from_pandas(frame, preserve_index=False)
            if writer is None:
                writer = pq.ParquetWriter(os.fspath(path), arrow.schema, **kwargs)
            writer.write_table(arrow.cast(writer.schema))
            written += 1
    finally:
        if writer is not None:
            writer.close()
    if writer is None:
        raise ScenarioError("store", os.fspath(store),
                            "a store of a sweep run with traces=True"
                            + ("" if mode is None else f" in mode {mode!r}"))
    return written


# -- xarray ----------------------------------------------------------------------------------
def _label(value: Any) -> Any:
    """A coordinate label for a grid value: a tuple of names becomes
    ``"reno,cubic"``, other non-scalars their ``str``."""
    if isinstance(value, tuple) and all(isinstance(v, (str, int, float)) for v in value):
        return ",".join(map(str, value))
    if isinstance(value, (tuple, list, dict)):
        return str(value)
    return value


def to_xarray(table: pd.DataFrame, dims: Iterable[str] | None = None) -> Any:
    """A grid sweep as an ``xarray.Dataset``.

    Dimensions: the grid's parameters (in the grid's order, each coordinate
    in the order its values were given), ``seed``, ``mode`` when the table
    has both engines' rows, and ``flow``. Every other column is a variable:
    the per-flow ones (``goodput_bps``, ``share``, ``algorithm``, ...) over
    all the dimensions, the per-scenario ones (``utilisation``, ``jain``,
    ``key``, ``error``, ...) over all but ``flow``. A grid point missing from
    the table (a sweep not finished, a filtered table) is NaN; a single
    engine's ``mode`` is a scalar coordinate. A grid value that is a tuple of
    names (``flows``) is labelled ``"reno,cubic"``, so
    ``ds.sel(flows="reno,cubic")`` selects it.

    Args:
        table: a sweep table (:func:`ccsim.sweep`, :func:`ccsim.load`,
            :func:`read_parquet`); its ``attrs["ccsim.params"]`` names the grid.
        dims: the grid's parameters, to override ``attrs`` (a table read
            from CSV has none); ``seed``, ``mode`` and ``flow`` are added.

    Raises:
        ScenarioError: a dimension is not a column, or two rows share their
            coordinates (the table is not a grid: two sweeps concatenated, a
            varying column left out of ``dims``).
    """
    xr = _need("xarray", "xarray", "to_xarray")
    _check_table(table)
    if dims is None:
        if "ccsim.params" not in table.attrs:
            raise ScenarioError("dims", None, "the grid's parameters, e.g. dims=['buffer', "
                                "'rtt'] (this table has no attrs['ccsim.params'])")
        dims = table.attrs["ccsim.params"]
    dims = [d for d in dims if d not in ("seed", "mode", "flow")]
    modes = table["mode"].unique() if "mode" in table.columns else []
    scenario_dims = dims + ["seed"] + (["mode"] if len(modes) > 1 else [])
    for name in scenario_dims + ["flow"]:
        if name not in table.columns:
            raise ScenarioError("dims", name, "a column of the table: "
                                + ", ".join(map(str, table.columns)))
    labels = {d: table[d].map(_label) for d in scenario_dims + ["flow"]}
    codes, coords = {}, {}
    for d, column in labels.items():
        codes[d], uniques = pd.factorize(column, use_na_sentinel=False)
        coords[d] = np.asarray(uniques)
    all_dims = scenario_dims + ["flow"]
    position = pd.DataFrame(codes)
    repeated = position.duplicated(keep=False)
    if repeated.any():
        first = table.loc[repeated.to_numpy(), all_dims].head(2)
        raise ScenarioError("table", f"{int(repeated.sum())} rows sharing coordinates",
                            "a grid: one row per " + ", ".join(all_dims)
                            + " (rows " + ", ".join(map(str, first.index)) + " share "
                            + ", ".join(f"{d}={first[d].iloc[0]!r}" for d in all_dims)
                            + "; pass dims= naming every column that varies, or filter)")
    per_flow = set(PER_FLOW)
    skip = set(all_dims) | ({"mode"} if len(modes) <= 1 else set())
    data = {}
    for name in table.columns:
        if name in skip:
            continue
        flowwise = name in per_flow
        var_dims = all_dims if flowwise else scenario_dims
        index = tuple(position[d].to_numpy() for d in var_dims)
        values = table[name].to_numpy()
        if not flowwise:  # one value per scenario: the first flow's row has it
            first = ~position[scenario_dims].duplicated().to_numpy()
            index = tuple(i[first] for i in index)
            values = values[first]
        grid_shape = [len(coords[d]) for d in var_dims]
        if values.dtype.kind not in "fiub":
            array = np.full(grid_shape, np.nan, dtype=object)
        elif len(values) == int(np.prod(grid_shape)):  # every cell set: keep the dtype
            array = np.zeros(grid_shape, dtype=values.dtype)
        else:  # cells without a row: NaN, so numbers become floats
            array = np.full(grid_shape, np.nan)
        array[index] = values
        data[name] = (var_dims, array)
    ds = xr.Dataset(data, coords={d: coords[d] for d in all_dims})
    if len(modes) == 1:
        ds = ds.assign_coords(mode=modes[0])
    ds.attrs["ccsim.params"] = list(dims)
    return ds
