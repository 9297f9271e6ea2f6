"""Running a scenario in ns-3 from a benchmark: the scenario is compiled C++
(``cppyy.cppdef``) driven by a short worker script, in a subprocess of an
interpreter that has ns-3's bindings (``pip install ns3``), so this process
needs neither. Shared by ``ns3_shares.py`` and ``ns3_side_by_side.py``."""

from __future__ import annotations

import json
import subprocess

WORKER_HEAD = r"""
import json, sys
try:
    from ns import ns
    import cppyy
except Exception as e:
    print(json.dumps({"missing": f"{type(e).__name__}: {e}"}))
    sys.exit(0)
"""
"""The worker's first lines: ns-3 and cppyy imported, or ``{"missing": why}``
printed and an exit."""


def run_worker(python: str, body: str, *args: str) -> dict:
    """Run :data:`WORKER_HEAD` + ``body`` (which prints one JSON line last) in
    a subprocess of ``python`` with ``args`` as ``sys.argv[1:]``; its last
    JSON line, or ``{"missing": why}`` if ``python`` or ns-3's bindings are
    not there. A run that fails otherwise stops the benchmark with its error."""
    try:
        out = subprocess.run([python, "-c", WORKER_HEAD + body, *args],
                             capture_output=True, text=True)
    except OSError as e:  # no such interpreter
        return {"missing": str(e)}
    lines = [line for line in out.stdout.splitlines() if line.startswith("{")]
    if out.returncode != 0 or not lines:
        raise SystemExit(f"the ns-3 run failed (exit {out.returncode}):\n{out.stderr[-2000:]}")
    return json.loads(lines[-1])
