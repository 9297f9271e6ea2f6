"""Full-size runs of the study recipes and their agreement with the papers,
for docs/studies.md. Run: nice python benchmarks/studies.py [--workers N] [NAME ...]
(every recipe docs/studies.md quotes when no NAME is given; one worker by default)."""

import argparse
import time

import pandas as pd

from ccsim.experiments import RECIPES

QUICK = ["link-errors", "unfairness", "new-arrival", "reno-interop",
         "utilisation-under-loss", "competition", "rtt-bias", "queue-fairness",
         "delay-queue-loss", "start-order", "multiple-drops"]

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", metavar="NAME", help="recipes (default: those docs/studies.md quotes)")
    parser.add_argument("--workers", type=int, default=1, help="processes per recipe (default 1)")
    parser.add_argument("--mode", default=None, help="engine, for the recipes that take one (default: theirs)")
    args = parser.parse_args()
    unknown = [n for n in args.names if n not in RECIPES]
    if unknown:
        parser.error(f"unknown recipe {unknown[0]!r}; choose from {', '.join(RECIPES)}")
    pd.set_option("display.width", 160)
    for name in args.names or QUICK:
        started = time.perf_counter()
        kwargs = {"workers": args.workers}
        if args.mode is not None:
            kwargs["mode"] = args.mode
        res = RECIPES[name](**kwargs)
        print(f"## {name}: {res.name} ({time.perf_counter() - started:.0f} s)")
        print(res.table.drop(columns=["error"], errors="ignore").round(3).to_string(index=False))
        for key in ("agreement", "ordering", "exponent"):
            if key in res.data:
                print(f"{key}: {res.data[key]}")
        if "findings" in res.data:  # Kwon's statements, one by one
            print(res.data["findings"][["finding", "reproduced"]].to_string(index=False))
        print(flush=True)
