"""Sphinx extension: the algorithm catalogue, generated from ccsim's registry
at build time, and the notebooks copied in for myst-nb.

On ``builder-inited`` it writes ``docs/_generated/catalogue.md`` (one
section per window law and per recovery strategy: the module's docstring,
which names the source and its differences from it; the parameters with
their defaults; the sources the docstring cites) and one cwnd figure per
window law, each a packet-engine run on a standard dumbbell (10 Mbit/s,
40 ms, 1 BDP drop-tail, one flow, 30 s: a few seconds for all), and the
landing page's figure, drawn by running the page's own first example.
``docs/_generated/`` is rebuilt every time and ignored by git.
"""

from __future__ import annotations

import inspect
import re
import shutil
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parents[1]
OUT = DOCS / "_generated"
STANDARD = dict(bandwidth="10Mbps", rtt="40ms", buffer="1BDP", duration="30s", seed=1)
"""The dumbbell every catalogue figure is drawn on."""


def _sources(text: str) -> list[str]:
    """What a docstring cites that a reader can look up: RFCs, Linux files,
    Internet-Drafts."""
    found = re.findall(r"RFC \d{3,4}|tcp_\w+\.c|draft-[\w-]+", text)
    return list(dict.fromkeys(found))


def _params(cls) -> list[tuple[str, str]]:
    sig = inspect.signature(cls.__init__)
    return [(p.name, repr(p.default)) for p in sig.parameters.values()
            if p.name != "self" and p.default is not inspect.Parameter.empty]


def _provenance(name: str, doc: str) -> str:
    """What the docstring says about parameter ``name``'s default: the clause
    that names it, preferring a paragraph about defaults ("Defaults and their
    sources: ``gain = 1/8`` — Linux westwood_do_filter ..."), else any."""
    paragraphs = [" ".join(p.split()) for p in re.split(r"\n\s*\n", doc)]
    valued = re.compile(r"``" + re.escape(name) + r"\s*=\s*[-\d.(\"'][^`]*``")
    bare = re.compile(r"``" + re.escape(name) + r"``")
    passes = [(valued, lambda p: "efault" in p), (valued, lambda p: True),
              (bare, lambda p: "efault" in p), (bare, lambda p: True)]
    for about, wanted in passes:
        for para in filter(wanted, paragraphs):
            m = about.search(para)
            if m:
                rest = para[m.start():]
                end = min([i for i in (rest.find("; "), rest.find(". ", 2)) if i > 0],
                          default=len(rest))
                clause = rest[:min(end, 220)].replace("|", "\\|").replace("``", "`")
                return clause + ("…" if end > 220 else "")
    return "see the docstring below"


def _fence(text: str) -> str:
    return "```text\n" + inspect.cleandoc(text or "(no docstring)") + "\n```\n"


def _figures(names: list[str]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    import ccsim

    # drawn by the packet engine, the reference (the fluid engine's figure of a
    # law can differ: docs/fluid.md); ECN-capable laws (DCTCP) run without ECN
    # on this drop-tail queue, as Linux falls back (it marks nothing anyway); a
    # law that needs Accurate ECN (Prague) keeps its own setting and answers
    # losses only
    scenarios = [ccsim.dumbbell(flows=[ccsim.Flow(name, ecn=None if ccsim.algorithms.get(
        name).own_ecn_response else False)], **STANDARD) for name in names]
    results = ccsim.run_many(scenarios)
    for name, res in zip(names, results):
        fig, ax = plt.subplots(figsize=(8.0, 2.6), layout="constrained")
        res.plot(panels="cwnd", ax=ax)
        ax.set_title(f"{name}: one flow, 10 Mbit/s, 40 ms, 1 BDP drop-tail (packet engine)",
                     fontsize="medium")
        fig.savefig(OUT / "catalogue" / f"{name}.png", dpi=100)
        plt.close(fig)


def _landing_figure() -> None:
    """Run the landing page's first example as printed and save its
    ``res.plot()``: the figure a reader gets from those lines."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    text = (DOCS / "index.md").read_text(encoding="utf-8")
    example = re.search(r"```python\n(.*?)\n```", text, flags=re.S).group(1)
    scope: dict = {}
    exec(compile(example, "index.md", "exec"), scope)
    fig = scope["res"].plot()
    fig.savefig(OUT / "landing.png", dpi=100)
    plt.close("all")


def generate(app=None) -> None:
    import ccsim
    from ccsim import algorithms, recovery

    if OUT.exists():
        shutil.rmtree(OUT)
    (OUT / "catalogue").mkdir(parents=True)
    names = algorithms.names()
    _figures(names)
    _landing_figure()
    lines = [
        "# Algorithm catalogue",
        "",
        "Generated from ccsim's registry (`ccsim.algorithms.names()`, "
        "`ccsim.recovery.names()`) when the documentation is built, so it lists "
        "exactly what this version runs. For each window law: the source and how "
        "ccsim differs from it (the algorithm file's own docstring), its parameters "
        "with their defaults (current mainline Linux where Linux ships the algorithm, "
        "else the paper; the docstring says which for each, and "
        "`tests/test_defaults.py` pins every default to its source), and one flow's "
        "cwnd on a standard dumbbell (10 Mbit/s, 40 ms RTT, a 1-BDP drop-tail "
        "buffer, 30 s, packet engine; losses ▼, timeouts ✖).",
        "",
        f"ccsim {ccsim.__version__}: {len(names)} window laws, "
        f"{len(recovery.names())} recovery strategies.",
        "",
        "## Window laws",
        "",
    ]
    for name in names:
        cls = algorithms.get(name)
        module = sys.modules[cls.__module__]
        doc = module.__doc__ or cls.__doc__ or ""
        lines += [f"### {name}", "",
                  f"`{cls.__module__}.{cls.__qualname__}` · default recovery: "
                  f"`{cls.recovery}` · {inspect.cleandoc(cls.__doc__ or '').splitlines()[0]}",
                  "", f"![cwnd of one {name} flow](catalogue/{name}.png)", ""]
        params = _params(cls)
        if params:
            lines += ["| parameter | default | where the default comes from (the docstring) |",
                      "|---|---|---|"]
            lines += [f"| `{p}` | `{d}` | {_provenance(p, doc)} |" for p, d in params]
            lines.append("")
        else:
            lines += ["No parameters.", ""]
        cited = _sources(doc)
        if cited:
            lines += ["Cites: " + ", ".join(f"`{c}`" for c in cited), ""]
        lines += ["Source, rules and differences (the module's docstring):", "",
                  _fence(doc), ""]
    lines += ["## Recovery strategies", "",
              "Any window law runs with any of these: "
              "`ccsim.Flow(\"cubic\", recovery=\"sack\")`.", ""]
    for name in recovery.names():
        cls = recovery.get(name)
        module = sys.modules[cls.__module__]
        doc = module.__doc__ or cls.__doc__ or ""
        lines += [f"### {name} (recovery)", "", f"`{cls.__module__}.{cls.__qualname__}`", ""]
        cited = _sources(doc)
        if cited:
            lines += ["Cites: " + ", ".join(f"`{c}`" for c in cited), ""]
        lines += [_fence(doc), ""]
    (OUT / "catalogue.md").write_text("\n".join(lines), encoding="utf-8")
    # the notebooks, with their stored outputs, for myst-nb (not executed here)
    (OUT / "notebooks").mkdir()
    for nb in sorted((DOCS.parent / "notebooks").glob("*.ipynb")):
        shutil.copy(nb, OUT / "notebooks" / nb.name)


def setup(app):
    app.connect("builder-inited", generate)
    return {"version": "1", "parallel_read_safe": True}
