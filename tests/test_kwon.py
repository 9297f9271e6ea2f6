"""Kwon's delay × queue × loss grid at reduced size."""

from pathlib import Path

import pandas as pd
import pytest

from ccsim.experiments import delay_queue_loss
from ccsim.experiments.kwon import KWON_FINDINGS, findings


def test_bbr_keeps_its_rate_at_two_percent_loss_where_reno_collapses():
    # Kwon: "At a packet loss rate of 2%, BBR maintained high throughput"; a
    # loss-based window halves on every loss, so at 100 ms Reno collapses.
    res = delay_queue_loss(("reno", "bbr"), delays=("100ms",), queues=(1000,),
                           seeds=(1,), competition=False, workers=1)
    g = res.table.set_index(["algorithm", "loss"])["goodput_bps"]
    assert g["bbr", 0.02] > 3 * g["reno", 0.02]
    assert g["reno", 0.02] < 0.5 * g["reno", 0.0]
    assert g["bbr", 0.02] > 0.6 * g["bbr", 0.0]
    f = res.data["findings"].set_index("finding")["reproduced"]
    assert f["loss_lowers_all"] is True
    assert f[["vegas_always_lowest", "bbr_keeps_at_loss"]].isna().all()  # Vegas, CUBIC not run
    assert list(res.data["findings"].statement) == list(KWON_FINDINGS.values())


def test_findings_read_the_table():
    # A made-up table where Vegas is lowest everywhere and BBR leads under loss.
    rate = {"reno": 8, "cubic": 9, "bbr": 9.5, "vegas": 3}
    rows = [{"algorithm": a, "delay": d, "queue": q, "loss": p,
             "goodput_bps": r * (0.5 if p and a != "bbr" else 1) * (1 if q > 5 else 0.9)}
            for a, r in rate.items() for d in (0.01, 0.1) for q in (5, 1000)
            for p in (0.0, 0.02)]
    f = findings(pd.DataFrame(rows)).set_index("finding")["reproduced"]
    assert f["vegas_always_lowest"] and f["bbr_keeps_at_loss"] and f["bigger_queue_more"]
    assert f["vegas_low_at_10ms"] and f["bbr_cubic_best_no_loss"]
    assert not f["loss_lowers_all"]  # BBR's rate did not drop
    assert not f["bbr_worse_small_queue"]


PAPER = Path(__file__).parents[2] / "shared" / "seeds" / "002_f862690c40af814a.txt"


@pytest.mark.skipif(not PAPER.exists(), reason="Kwon's poster text not beside the repository")
def test_statements_are_quoted_from_the_poster():
    # Each statement the recipe checks is the poster's own sentence, word for word.
    text = " ".join(PAPER.read_text().split())
    for name, statement in KWON_FINDINGS.items():
        assert statement in text, name
