"""The scenarios of the fluid/packet agreement benchmark, and their split.

The set has two parts:

* the **classic** cases (Esterhuizen & Krzesinski's Table I pairs, Kwon's
  grid, Zhang & Bian's cases, small crowds), fixed;
* **regimes** the fluid model is known to find hard (mixed RTTs, tiny and
  huge buffers, 10–1000 flows, random loss, RED, NewReno with staggered
  starts, RTT-compensated laws, BBR on shallow/RED/lossy paths, late starters
  on large-BDP paths, loss-tolerant laws, ECN), each drawn from a generator
  seeded by the regime's name, so the list is the same on every machine.

Every case is in the **tuning** set or the **held-out** set, decided by a
hash of its label alone (:func:`held_out`), fixed before the model was
changed against the tuning set: agreement on the held-out set is agreement
where nobody tuned.
"""

from __future__ import annotations

import hashlib
import random

import ccsim

MATRIX_PAIRS = [("reno", "cubic"), ("cubic", "reno"), ("htcp", "reno"), ("bic", "cubic"),
                ("highspeed", "reno"), ("scalable", "reno"), ("illinois", "cubic"),
                ("vegas", "reno"), ("westwood", "cubic"), ("yeah", "reno"),
                ("hybla", "cubic"), ("lp", "reno")]

LOSS_LAWS = ["reno", "newreno", "sack", "cubic", "bic", "htcp", "highspeed", "scalable",
             "illinois", "westwood", "hybla", "veno", "yeah"]


def held_out(label: str) -> bool:
    """Whether the case labelled ``label`` is held out (about half are)."""
    return hashlib.sha256(label.encode()).digest()[0] % 2 == 1


def _bdp_packets(bw: float, rtt: float) -> float:
    return bw * rtt / (1500 * 8)


def classic(duration: float) -> list[tuple[str, str, ccsim.Scenario]]:
    """The first edition's cases, unchanged."""
    out = []
    d = f"{duration}s"
    for a, b in MATRIX_PAIRS:
        out.append(("Table I pairs", f"{a} then {b}",
                    ccsim.dumbbell("100Mbps", "1ms", buffer=1000, duration=d, seed=1,
                                   flows=[a, ccsim.Flow(b, start="10s")])))
    for alg in ("reno", "cubic", "bbr", "vegas"):
        for delay in ("10ms", "100ms"):
            for queue in (5, 1000):
                for loss in (0.0, 0.02):
                    out.append(("Kwon's grid", f"{alg} vs reno, {delay}, {queue} pkts, "
                                               f"loss {loss:.0%}",
                                ccsim.dumbbell("10Mbps", delay, buffer=queue, loss=loss,
                                               duration=d, seed=1, flows=[alg, "reno"])))
    for alg in ("reno", "sack", "vegas"):
        for loss in (0.01, 0.05):
            out.append(("Zhang & Bian", f"{alg} alone, loss {loss:.0%}",
                        ccsim.dumbbell("1.5Mbps", "50ms", buffer=10, loss=loss, duration=d,
                                       seed=1, flows=[alg])))
        out.append(("Zhang & Bian", f"{alg}: 10 ms vs 58 ms, 10 pkts",
                    ccsim.dumbbell("1.5Mbps", "10ms", buffer=10, duration=d, seed=1,
                                   flows=[alg, ccsim.Flow(alg, rtt="58ms")])))
    for queue in ("droptail", "red"):
        out.append(("Zhang & Bian", f"reno: 10 ms vs 58 ms, {queue}, 30 pkts",
                    ccsim.dumbbell("1.5Mbps", "10ms", buffer=30, queue=queue, duration=d,
                                   seed=1, flows=["reno", ccsim.Flow("reno", rtt="58ms")])))
    for a, b in (("reno", "sack"), ("reno", "vegas"), ("sack", "vegas")):
        out.append(("Zhang & Bian", f"{a} vs {b}",
                    ccsim.dumbbell("1.5Mbps", "50ms", buffer=20, duration=d, seed=1,
                                   flows=[a, b])))
    out.append(("crowds", "4 reno", ccsim.dumbbell("20Mbps", "40ms", buffer="1BDP",
                                                   duration=d, seed=1, flows=["reno"] * 4)))
    out.append(("crowds", "8 cubic", ccsim.dumbbell("20Mbps", "40ms", buffer="1BDP",
                                                    duration=d, seed=1, flows=["cubic"] * 8)))
    out.append(("crowds", "2 reno + 2 cubic",
                ccsim.dumbbell("20Mbps", "40ms", buffer="1BDP", duration=d, seed=1,
                               flows=["reno", "reno", "cubic", "cubic"])))
    out.append(("crowds", "8 reno, RED",
                ccsim.dumbbell("20Mbps", "40ms", buffer=200, queue="red", duration=d, seed=1,
                               flows=["reno"] * 8)))
    return out


def _flows(rng: random.Random, laws: list[str], n: int, rtts: list[float] | None = None,
           stagger: float = 0.0) -> list[ccsim.Flow]:
    out = []
    for i in range(n):
        kw = {}
        if rtts is not None:
            kw["rtt"] = rtts[i]
        if stagger and i:
            kw["start"] = round(rng.uniform(0.0, stagger), 1)
        out.append(ccsim.Flow(rng.choice(laws), **kw))
    return out


def regimes(duration: float) -> list[tuple[str, str, ccsim.Scenario]]:
    """Cases drawn per regime from generators seeded by the regime's name."""
    out: list[tuple[str, str, ccsim.Scenario]] = []
    d = duration

    def add(group: str, label: str, **kw) -> None:
        kw.setdefault("duration", d)
        kw.setdefault("seed", 1)
        out.append((group, label, ccsim.dumbbell(**kw)))

    # mixed RTTs, one law per case (the RTT unfairness each law has)
    rng = random.Random("RTT mixes")
    for _k in range(8):
        law = rng.choice(["reno", "cubic", "bic", "highspeed", "scalable", "sack", "illinois"])
        n = rng.choice([2, 3, 4])
        rtts = sorted(rng.choice([5, 10, 20, 40, 80, 150, 300]) / 1000 for _ in range(n))
        bw = rng.choice([5e6, 10e6, 20e6, 50e6])
        buf = max(2, round(rng.choice([0.1, 0.5, 1, 2, 4]) * _bdp_packets(bw, rtts[-1])))
        add("RTT mixes", f"{n} {law}, RTTs {'/'.join(f'{r * 1e3:g}' for r in rtts)} ms, "
                         f"{bw / 1e6:g} Mbps, {buf} pkts",
            bandwidth=bw, rtt=rtts[0], buffer=buf,
            flows=[ccsim.Flow(law, rtt=r) for r in rtts])

    # RTT-compensated laws at mixed RTTs (CUBIC, H-TCP, Hybla)
    for law in ("cubic", "htcp", "hybla"):
        add("RTT-compensated", f"3 {law}, 20/60/180 ms, 20 Mbps, 1 BDP",
            bandwidth=20e6, rtt=0.02, buffer=round(_bdp_packets(20e6, 0.06)),
            flows=[ccsim.Flow(law, rtt=r) for r in (0.02, 0.06, 0.18)])
    rng = random.Random("RTT-compensated")
    for _k in range(6):
        law = rng.choice(["cubic", "htcp", "hybla"])
        other = rng.choice(["cubic", "htcp", "hybla", "reno"])
        r1, r2 = sorted(rng.sample([10, 25, 50, 100, 200], 2))
        bw = rng.choice([10e6, 20e6, 50e6])
        buf = max(3, round(rng.choice([0.25, 1, 2]) * _bdp_packets(bw, r2 / 1e3)))
        add("RTT-compensated", f"{law} at {r1} ms vs {other} at {r2} ms, {bw / 1e6:g} Mbps, "
                               f"{buf} pkts",
            bandwidth=bw, rtt=r1 / 1e3, buffer=buf,
            flows=[ccsim.Flow(law), ccsim.Flow(other, rtt=r2 / 1e3)])

    # tiny buffers: one to three packets
    rng = random.Random("tiny buffers")
    for _k in range(8):
        n = rng.choice([1, 2, 3, 4])
        buf = rng.choice([1, 2, 3])
        bw = rng.choice([5e6, 10e6, 20e6])
        rtt = rng.choice([10, 20, 50, 100]) / 1e3
        flows = _flows(rng, LOSS_LAWS, n)
        add("tiny buffers", f"{'+'.join(f.algorithm for f in flows)}, {buf} pkts, "
                            f"{bw / 1e6:g} Mbps, {rtt * 1e3:g} ms",
            bandwidth=bw, rtt=rtt, buffer=buf, flows=flows)

    # huge buffers: 4 to 8 BDP
    rng = random.Random("huge buffers")
    for _k in range(5):
        n = rng.choice([2, 3, 4])
        bw = rng.choice([5e6, 10e6, 20e6])
        rtt = rng.choice([10, 20, 50, 100]) / 1e3
        buf = round(rng.choice([4, 6, 8]) * _bdp_packets(bw, rtt))
        flows = _flows(rng, LOSS_LAWS + ["vegas", "bbr"], n, stagger=5.0)
        add("huge buffers", f"{'+'.join(f.algorithm for f in flows)}, {buf} pkts, "
                            f"{bw / 1e6:g} Mbps, {rtt * 1e3:g} ms",
            bandwidth=bw, rtt=rtt, buffer=buf, flows=flows)

    # many flows: 10 to 1000 (the 1000-flow packet run is kept short: 10 s)
    for n, law, bw, dur in ((10, "cubic", 20e6, d), (10, "reno", 10e6, d),
                            (30, "cubic", 20e6, d), (50, "reno", 50e6, d),
                            (100, "cubic", 100e6, min(d, 20.0)),
                            (100, "reno", 20e6, min(d, 20.0)),
                            (300, "cubic", 100e6, min(d, 10.0)),
                            (1000, "cubic", 100e6, min(d, 10.0))):
        add("many flows", f"{n} {law}, {bw / 1e6:g} Mbps, 20 ms, 1 BDP, {dur:g} s",
            bandwidth=bw, rtt=0.02, buffer="1BDP", duration=dur,
            flows=[ccsim.Flow(law, start=round(0.01 * i, 2)) for i in range(n)])

    # random loss, mixed laws
    rng = random.Random("random loss")
    for _k in range(7):
        n = rng.choice([1, 2, 3])
        loss = rng.choice([0.001, 0.003, 0.01, 0.03])
        bw = rng.choice([5e6, 10e6, 20e6])
        rtt = rng.choice([10, 40, 100]) / 1e3
        buf = max(2, round(rng.choice([0.5, 1, 2]) * _bdp_packets(bw, rtt)))
        flows = _flows(rng, LOSS_LAWS + ["vegas"], n)
        add("random loss", f"{'+'.join(f.algorithm for f in flows)}, loss {loss:.1%}, "
                           f"{bw / 1e6:g} Mbps, {rtt * 1e3:g} ms, {buf} pkts",
            bandwidth=bw, rtt=rtt, buffer=buf, loss=loss, flows=flows)

    # RED, mixed laws and RTTs
    rng = random.Random("RED")
    for _k in range(7):
        n = rng.choice([2, 3, 4, 6])
        bw = rng.choice([5e6, 10e6, 20e6])
        rtt = rng.choice([10, 40, 100]) / 1e3
        flows = _flows(rng, LOSS_LAWS, n, stagger=5.0)
        add("RED", f"{'+'.join(f.algorithm for f in flows)}, RED, {bw / 1e6:g} Mbps, "
                   f"{rtt * 1e3:g} ms",
            bandwidth=bw, rtt=rtt, buffer=max(30, round(_bdp_packets(bw, rtt))), queue="red",
            flows=flows)

    # NewReno flows with staggered starts (slow-start overshoots, long recoveries)
    add("NewReno staggered", "4 newreno, 0/5/10/15 s, 20 Mbps, 40 ms, 1 BDP",
        bandwidth=20e6, rtt=0.04, buffer="1BDP",
        flows=[ccsim.Flow("newreno", start=5.0 * i) for i in range(4)])
    rng = random.Random("NewReno staggered")
    for _k in range(5):
        n = rng.choice([2, 3, 4, 6])
        bw = rng.choice([10e6, 20e6, 50e6])
        rtt = rng.choice([20, 50, 100]) / 1e3
        buf = max(5, round(rng.choice([0.5, 1, 2]) * _bdp_packets(bw, rtt)))
        starts = sorted(round(rng.uniform(0, 12), 1) for _ in range(n))
        starts[0] = 0.0
        add("NewReno staggered", f"{n} newreno, starts {'/'.join(f'{s:g}' for s in starts)} s, "
                                 f"{bw / 1e6:g} Mbps, {rtt * 1e3:g} ms, {buf} pkts",
            bandwidth=bw, rtt=rtt, buffer=buf,
            flows=[ccsim.Flow("newreno", start=s) for s in starts])

    # BBR on shallow, RED and lossy paths
    rng = random.Random("BBR")
    for k in range(9):
        path = ("shallow", "RED", "lossy")[k % 3]
        other = rng.choice(["cubic", "reno", "bbr"])
        bw = rng.choice([10e6, 20e6, 50e6])
        rtt = rng.choice([10, 40, 100]) / 1e3
        bdp = _bdp_packets(bw, rtt)
        kw: dict = dict(bandwidth=bw, rtt=rtt, flows=["bbr", other])
        if path == "shallow":
            kw["buffer"] = max(3, round(rng.choice([0.05, 0.1, 0.25]) * bdp))
            what = f"{kw['buffer']} pkts"
        elif path == "RED":
            kw.update(buffer=max(30, round(bdp)), queue="red")
            what = "RED"
        else:
            kw.update(buffer=max(5, round(bdp)), loss=rng.choice([0.005, 0.01, 0.02]))
            what = f"loss {kw['loss']:.1%}"
        add("BBR", f"bbr vs {other}, {what}, {bw / 1e6:g} Mbps, {rtt * 1e3:g} ms", **kw)

    # late starters on large-BDP paths: slow start must find the free capacity
    rng = random.Random("late starters")
    for _k in range(5):
        law = rng.choice(["cubic", "reno", "htcp", "bic", "highspeed"])
        bw = rng.choice([50e6, 100e6])
        rtt = rng.choice([50, 100, 150]) / 1e3
        buf = round(rng.choice([0.5, 1, 2]) * _bdp_packets(bw, rtt))
        late = round(rng.uniform(8, 15), 1)
        add("late starters", f"{law} then {law} at {late:g} s, {bw / 1e6:g} Mbps, "
                             f"{rtt * 1e3:g} ms, {buf} pkts",
            bandwidth=bw, rtt=rtt, buffer=buf, duration=max(d, 2 * late),
            flows=[law, ccsim.Flow(law, start=late)])

    # loss-tolerant laws under random loss and RED
    rng = random.Random("loss-tolerant")
    for k in range(8):
        law = ("westwood", "hybla", "veno")[k % 3]
        other = rng.choice(["reno", "cubic", law])
        bw = rng.choice([5e6, 10e6, 20e6])
        rtt = rng.choice([20, 50, 100, 200]) / 1e3
        bdp = _bdp_packets(bw, rtt)
        if k % 2:
            kw = dict(buffer=max(30, round(bdp)), queue="red")
            what = "RED"
        else:
            kw = dict(buffer=max(5, round(bdp)), loss=rng.choice([0.002, 0.01, 0.02]))
            what = f"loss {kw['loss']:.1%}"
        add("loss-tolerant", f"{law} vs {other}, {what}, {bw / 1e6:g} Mbps, {rtt * 1e3:g} ms",
            bandwidth=bw, rtt=rtt, flows=[law, other], **kw)

    # ECN: DCTCP behind a step-marking switch, ECN Reno behind RED
    for flows, q, what in (
            (["dctcp", "dctcp"], ccsim.StepMark(20, limit=200), "StepMark K=20"),
            (["dctcp", ccsim.Flow("dctcp", rtt=0.004)], ccsim.StepMark(20, limit=200),
             "StepMark K=20, 1 vs 4 ms"),
            ([ccsim.Flow("reno", ecn=True), ccsim.Flow("cubic", ecn=True)],
             ccsim.RED(200, min_th=5, max_th=15, ecn=True), "RED with ECN"),
            (["dctcp", ccsim.Flow("cubic", ecn=True)], ccsim.StepMark(20, limit=200),
             "StepMark K=20, with CUBIC")):
        add("ECN", f"{'+'.join(f if isinstance(f, str) else f.algorithm for f in flows)}, "
                   f"{what}, 100 Mbps, 1 ms",
            bandwidth=100e6, rtt=0.001, buffer=None, queue=q, flows=flows,
            duration=min(d, 10.0))
    return out


def scenarios(duration: float = 30.0) -> list[tuple[str, str, ccsim.Scenario]]:
    """(group, label, scenario) for every case of the set, labels unique."""
    out = classic(duration) + regimes(duration)
    labels = [label for _, label, _ in out]
    dup = {x for x in labels if labels.count(x) > 1}
    if dup:
        raise AssertionError(f"duplicate labels: {sorted(dup)}")
    return out
