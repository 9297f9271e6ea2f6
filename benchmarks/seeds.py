"""Full-size runs of the study recipes and their agreement with the papers,
for docs/seeds.md. Run: nice python benchmarks/seeds.py [NAME ...]"""

import sys
import time

import pandas as pd

from ccsim.experiments import RECIPES

QUICK = ["link-errors", "unfairness", "new-arrival", "reno-interop",
         "utilisation-under-loss", "competition", "rtt-bias", "queue-fairness",
         "delay-queue-loss", "start-order"]

if __name__ == "__main__":
    pd.set_option("display.width", 160)
    for name in sys.argv[1:] or QUICK:
        started = time.perf_counter()
        res = RECIPES[name](workers=2)
        print(f"## {name}: {res.name} ({time.perf_counter() - started:.0f} s)")
        print(res.table.drop(columns=["error"], errors="ignore").round(3).to_string(index=False))
        for key in ("agreement", "ordering", "exponent"):
            if key in res.data:
                print(f"{key}: {res.data[key]}")
        print()
