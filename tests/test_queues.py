"""Queue disciplines: the contract, CoDel (RFC 8289) and PIE (RFC 8033) rule
by rule against restatements of their sources, and their behaviour in runs."""

from __future__ import annotations

import math
import random
from collections import deque
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pytest

import ccsim
from ccsim.errors import ScenarioError, ScenarioTypeError
from ccsim.packet.link import LinkState
from ccsim.queues import DROP, ENQUEUE
from ccsim.queues.codel import CoDelState
from ccsim.queues.pie import PIEState, update_probabilities, update_probability

PACKET = 1500  # bytes on the wire (mss 1460 + 40)


# -- the seam -----------------------------------------------------------------------
def test_every_kind_is_named_and_built_by_the_builders():
    assert {"droptail", "red", "codel", "pie", "step"} <= set(ccsim.queues.names())
    for name, cls in [("droptail", ccsim.DropTail), ("red", ccsim.RED), ("codel", ccsim.CoDel),
                      ("pie", ccsim.PIE)]:
        sc = ccsim.dumbbell("10Mbps", "20ms", queue=name, flows=["reno"], duration="1s")
        assert type(sc.links[0].queue) is cls and sc.links[0].queue.limit == 17  # 1 BDP
        assert type(ccsim.Link("10Mbps", "5ms", queue=name).queue) is cls
    q = ccsim.CoDel(limit=50, target=0.01)
    assert ccsim.dumbbell("10Mbps", "20ms", queue=q, buffer=None).links[0].queue is q


@pytest.mark.parametrize("make, field, error", [
    (lambda: ccsim.CoDel(target=-0.005), "queue.target", ScenarioError),
    (lambda: ccsim.CoDel(target=0.2, interval=0.1), "queue.interval", ScenarioError),
    (lambda: ccsim.CoDel(limit=10.5), "queue.limit", ScenarioError),
    (lambda: ccsim.CoDel(ecn="yes"), "queue.ecn", ScenarioTypeError),
    (lambda: ccsim.PIE(alpha="fast"), "queue.alpha", ScenarioTypeError),
    (lambda: ccsim.PIE(tupdate=0.0), "queue.tupdate", ScenarioError),
    (lambda: ccsim.PIE(mark_ecnth=1.5), "queue.mark_ecnth", ScenarioError),
    (lambda: ccsim.StepMark(K=0), "queue.K", ScenarioError),
    (lambda: ccsim.StepMark(K=50, limit=20), "queue.K", ScenarioError),
    (lambda: ccsim.dumbbell("10Mbps", "20ms", queue="sfq"), "dumbbell.queue", ScenarioError),
    (lambda: ccsim.dumbbell("10Mbps", "20ms", queue="step"), "dumbbell.queue", ScenarioTypeError),
])
def test_bad_parameters_name_field_value_and_allowed(make, field, error):
    with pytest.raises(error) as err:
        make()
    assert str(err.value).startswith(field + "=")
    assert ":" in str(err.value)  # then what is allowed


def test_scenarios_round_trip_and_old_keys_stay():
    for q in (ccsim.CoDel(limit=40, ecn=True), ccsim.PIE(limit=40, beta=1.0),
              ccsim.StepMark(K=10, limit=40)):
        sc = ccsim.dumbbell("10Mbps", "20ms", queue=q, buffer=None,
                            flows=[ccsim.Flow("reno", ecn=True), "dctcp",
                                   ccsim.Flow("dctcp", ecn=False)], duration="1s")
        back = ccsim.Scenario.from_json(sc.to_json())
        assert back == sc and back.key == sc.key
    # a scenario without ECN or new queues serialises as before they existed
    d = ccsim.dumbbell("10Mbps", "20ms", queue="red", flows=["reno"]).to_dict()
    assert "ecn" not in d["links"][0]["queue"] and "ecn" not in d["flows"][0]


def test_replace_keeps_a_disciplines_parameters_when_only_the_buffer_changes():
    sc = ccsim.dumbbell("10Mbps", "20ms", queue=ccsim.CoDel(limit=40, target=0.002),
                        buffer=None, flows=["reno"], duration="1s")
    q = sc.replace(buffer=80).links[0].queue
    assert q == ccsim.CoDel(limit=80, target=0.002)
    assert sc.replace(bandwidth="20Mbps").links[0].queue == sc.links[0].queue
    assert type(sc.replace(queue="pie").links[0].queue) is ccsim.PIE


def test_the_event_trace_names_a_disciplines_drops_and_follows_ecn_flows():
    sc = ccsim.dumbbell("10Mbps", "40ms", queue=ccsim.CoDel(limit=66, ecn=True), buffer=None,
                        duration="10s", flows=["cubic", ccsim.Flow("reno", ecn=True)], seed=2)
    plain = ccsim.run(sc)
    res = ccsim.run(sc, events=True)
    assert res.summary.equals(plain.summary)  # recording changes nothing
    ev = res.events
    reasons = set(ev[ev["event"] == "dropped"]["reason"])
    assert "codel" in reasons and reasons <= {"codel", "overflow"}
    acked = ev[(ev["event"] == "acked") & (ev["flow"] == 1)]
    assert len(acked) > 100 and res.metrics["marks"] > 0


def test_the_fluid_engine_models_every_registered_discipline_and_refuses_others():
    # each of ccsim's own single-queue disciplines has a fluid model (its own
    # or the engine's); a user's registered by another test (the docs register
    # one) need not, nor do the schedulers (refused: tests/test_schedulers.py)
    own = [q for q in ccsim.queues.names() if ccsim.queues.get(q).__module__.startswith("ccsim.")
           and not issubclass(ccsim.queues.get(q), ccsim.queues.Scheduler)]
    assert {"droptail", "red", "codel", "pie"} <= set(own)
    for q in own:
        assert ccsim.queues.get(q).fluid, q
    for q in ("codel", "pie"):
        sc = ccsim.dumbbell("10Mbps", "20ms", queue=q, flows=["reno"], duration="1s")
        assert ccsim.run(sc, mode="fluid").metrics["utilisation"] > 0

    @dataclass(frozen=True)
    class Unmodelled(ccsim.QueueDiscipline):
        limit: float = 100
        kind: ClassVar[str] = "test-unmodelled"

    sc = ccsim.dumbbell("10Mbps", "20ms", queue=Unmodelled(), buffer=None, flows=["reno"],
                        duration="1s")
    with pytest.raises(ScenarioError, match=r"links\[0\]\.queue=.*fluid engine models"):
        ccsim.run(sc, mode="fluid")


def test_pies_fluid_update_is_its_packet_update_elementwise():
    # the fluid model's vectorised RFC 8033 §4.2 update against the scalar one,
    # across every auto-tuning band, the 2 % cap and the decay when idle
    rng = np.random.default_rng(7)
    p = np.concatenate([10.0 ** rng.uniform(-7, 0, 300), [0.0, 0.1, 0.5]])
    qdelay = np.where(rng.random(p.size) < 0.2, 0.0, rng.uniform(0, 0.05, p.size))
    old = np.where(rng.random(p.size) < 0.3, 0.0, rng.uniform(0, 0.05, p.size))
    got = update_probabilities(p, qdelay, old, np.full(p.size, 0.015), np.full(p.size, 0.125),
                               np.full(p.size, 1.25))
    want = [update_probability(*args, 0.015, 0.125, 1.25) for args in zip(p, qdelay, old)]
    assert got.tolist() == want


def test_a_users_discipline_plugs_in():
    from dataclasses import dataclass
    from typing import ClassVar

    class EveryOther(ccsim.queues.QueueState):
        n = 0

        def arrive(self, t, waiting, ect):
            self.n += 1
            if self.full(t, waiting) or self.n % 2 == 0 and waiting > 3:
                return DROP
            return ENQUEUE

    @dataclass(frozen=True)
    class Halver(ccsim.QueueDiscipline):
        limit: float = 100
        kind: ClassVar[str] = "test-halver"

        def start(self, link, rng):
            return EveryOther(self, link, rng)

    sc = ccsim.dumbbell("10Mbps", "20ms", queue=Halver(), buffer=None, flows=["reno"],
                        duration="3s")
    assert ccsim.run(sc).metrics["drops"] > 0


# -- RED's idle period, as Linux ----------------------------------------------------------
def test_red_ends_the_idle_period_at_every_arrival_dropped_or_not():
    # Linux's sch_red restated: an arrival at an idle link decays the average by
    # (1 - w)^(idle / tx) with idle the time since the later of the link
    # emptying and the previous arrival (the dequeue that finds the queue empty
    # after a drop restarts the idle period), so a run of drops at an empty
    # queue decays it by the elapsed idle time, not that time once per drop.
    tx, w, emptied, gap = 0.001, 0.002, 1.0, 0.01
    red = ccsim.RED(limit=100, weight=w)
    link = LinkState(ccsim.Link(rate=PACKET * 8 / tx, delay=0.0, queue=red), PACKET, (1, 2),
                     1, 1.0)
    link.free_at, link.discipline.avg = emptied, 40.0  # above max_th: all dropped
    accepted = None
    for k in range(1, 200):
        t = emptied + k * gap
        want = 40.0 * (1.0 - w) ** ((t - emptied) / tx)
        kept = link.forward(t) >= 0.0
        assert link.discipline.avg == pytest.approx(want, rel=1e-9)  # rounding only
        if want >= red.max_th:
            assert not kept  # forced drop above max_th
        elif kept:
            accepted = k
            break
    # the first below max_th comes after ln(40/15)/w·tx ≈ 0.49 s of idle; read
    # literally, F & J's Fig. 2 would have fallen below it after 10 arrivals
    first_below = math.ceil(math.log(15.0 / 40.0) / math.log(1.0 - w) * tx / gap)
    assert accepted is not None and accepted >= first_below == 49


# -- CoDel, rule by rule ---------------------------------------------------------------
def _backlogged(state, sojourns, start=1.0, tx=0.001):
    """Dequeue a backlogged queue from ``start``: a sent packet takes ``tx``, a
    dropped one none (the next is dequeued at the same instant). Returns the
    drop times and the clock at the end."""
    k, drops = 0, []  # the clock is start + k·tx, k whole (no drift)
    for s in sojourns:
        now = start + k * tx
        if state.dequeue(now, s, False) == DROP:
            drops.append(now)
        else:
            k += 1
    return drops, start + k * tx


def _rfc8289_schedule(entry, interval, count, n):
    """§3.3 and §5.7 restated: after entry at ``entry`` with ``count``,
    drop_next = entry + interval/sqrt(count), then each drop while dropping
    raises count by one and moves drop_next by interval/sqrt(count)."""
    out, nxt = [], entry + interval / math.sqrt(count)
    while len(out) < n:
        out.append(nxt)
        count += 1
        nxt += interval / math.sqrt(count)
    return out


def _at_first_dequeue_after(drops, due, tx):
    """Each drop happens at the first dequeue at or after its due time."""
    return all(d - 1e-9 <= x < d + tx + 1e-9 for x, d in zip(drops, due))


def test_codel_control_law_and_entry_follow_rfc8289():
    # §3.2: a sojourn above target for an interval before the first drop (entry);
    # then the control law's schedule.
    interval, tx = 0.1, 0.001
    st = CoDelState(ccsim.CoDel(target=0.005, interval=interval), None, random.Random(0))
    drops, _ = _backlogged(st, [0.010] * 3000, 1.0, tx)
    assert len(drops) > 20
    assert 1.0 + interval - 1e-9 <= drops[0] < 1.0 + interval + tx
    assert _at_first_dequeue_after(drops[1:], _rfc8289_schedule(drops[0], interval, 1,
                                                                len(drops) - 1), tx)


def test_codel_leaves_below_target_and_reenters_with_the_last_count():
    # §5.5/§5.7: a sojourn below target ends the dropping state; re-entry within
    # 16 intervals of drop_next takes count = count - lastcount when that is > 1.
    interval, tx = 0.1, 0.001
    st = CoDelState(ccsim.CoDel(interval=interval), None, random.Random(0))
    drops, t = _backlogged(st, [0.010] * 800, 1.0, tx)
    assert st.dropping and st.count > 2
    count = st.count
    none, t = _backlogged(st, [0.001], t, tx)
    assert none == [] and not st.dropping
    again, t1 = _backlogged(st, [0.010] * 400, t, tx)
    assert t + interval - 1e-9 <= again[0] < t + interval + tx  # an interval above target
    assert st.lastcount == count - 1  # delta = count - lastcount (1)
    assert _at_first_dequeue_after(again[1:], _rfc8289_schedule(again[0], interval, count - 1,
                                                                len(again) - 1), tx)
    # a re-entry more than 16 intervals after drop_next starts again from count = 1
    _, t = _backlogged(st, [0.001], t1, tx)
    late, _ = _backlogged(st, [0.010] * 400, t + 17 * interval, tx)
    assert st.lastcount == 1
    assert _at_first_dequeue_after(late[1:], _rfc8289_schedule(late[0], interval, 1, 3), tx)


def test_codel_queue_empty_after_a_drop_ends_the_episode_as_at_dequeue():
    # §5.7: after the entry drop the dequeue found the queue empty (the next
    # packet arrives later to an idle link): the sojourn below target of that
    # packet ends the dropping state at once.
    st = CoDelState(ccsim.CoDel(), None, random.Random(0))
    assert st.dequeue(1.0, 0.01, False) == ENQUEUE  # above target: first_above = 1.1
    assert st.dequeue(1.1, 0.01, False) == DROP     # an interval above: enter, drop
    assert st.dequeue(1.15, 0.0, False) == ENQUEUE and not st.dropping


def _codel_reference(arrivals, tx, target, interval):
    """RFC 8289 §5's dequeue-time CoDel on a FIFO link of ``tx`` s per packet
    (without §5.3's maxpacket test, as ccsim), restated on a real queue:
    returns the indices dropped."""
    queue, dropped = deque(), set()
    st = dict(first_above=0.0, drop_next=0.0, count=0, lastcount=0, dropping=False)

    def dodequeue(now):
        if not queue:
            st["first_above"] = 0.0
            return None, False
        i = queue.popleft()
        if now - arrivals[i] < target:
            st["first_above"] = 0.0
            return i, False
        if st["first_above"] == 0.0:
            st["first_above"] = now + interval
            return i, False
        return i, now >= st["first_above"]

    def dequeue(now):
        p, ok = dodequeue(now)
        if st["dropping"]:
            if not ok:
                st["dropping"] = False
            while st["dropping"] and now >= st["drop_next"]:
                dropped.add(p)
                p, ok = dodequeue(now)
                if not ok:
                    st["dropping"] = False
                else:
                    st["count"] += 1
                    st["drop_next"] += interval / math.sqrt(st["count"])
        elif ok:
            dropped.add(p)
            p, _ = dodequeue(now)
            st["dropping"] = True
            delta = st["count"] - st["lastcount"]
            st["count"] = delta if delta > 1 and now - st["drop_next"] < 16 * interval else 1
            st["drop_next"] = now + interval / math.sqrt(st["count"])
            st["lastcount"] = st["count"]
        return p

    free, i, n = 0.0, 0, len(arrivals)
    while i < n or queue:
        now = free if queue else max(free, arrivals[i])
        while i < n and arrivals[i] <= now:
            queue.append(i)
            i += 1
        if dequeue(now) is not None:
            free = now + tx
        else:
            free = now
            if i < n and not queue:
                continue
    return dropped


def test_codel_decided_at_arrival_equals_codel_at_dequeue():
    # The equivalence ccsim relies on: the link's arrival-time decisions drop
    # exactly the packets RFC 8289's dequeue-time algorithm drops.
    rng = random.Random(3)
    tx, t, arrivals = 0.001, 0.0, []
    for _burst in range(60):  # on/off load: overloads (rate 1.3/tx) and idle gaps
        for _ in range(rng.randrange(20, 400)):
            t += rng.expovariate(1.3 / tx)
            arrivals.append(t)
        t += rng.uniform(0.0, 0.3)
    link = LinkState(ccsim.Link(rate=PACKET * 8 / tx, delay=0.0,
                                queue=ccsim.CoDel(limit=10**6)), PACKET, (1, 2), 1, 1.0)
    got = {i for i, a in enumerate(arrivals) if link.forward(a) < 0.0}
    want = _codel_reference(arrivals, tx, 0.005, 0.1)
    assert len(want) > 100
    assert got == want


def _queue_delays(result, rate):
    """The bottleneck's sampled queueing delay (s) after the first 10 s, at
    ``rate`` (bit/s)."""
    s = result.series("queue")
    return s["queue"].to_numpy()[s.index.to_numpy() > 10] * PACKET * 8 / rate


def test_codel_holds_a_reno_flow_near_target_where_droptail_fills_the_buffer():
    # One Reno flow, 10 Mbit/s, 100 ms, a 1-BDP buffer (83 packets, 100 ms of
    # queue). Drop-tail fills it; CoDel keeps the median sampled queueing delay
    # under 15 ms: its target (5 ms) plus what one interval (100 ms) of Reno
    # growth (one packet per RTT, 1.2 ms each) and the sawtooth add before a
    # drop acts — the tolerance, not a precision.
    def delays(queue):
        sc = ccsim.dumbbell("10Mbps", "100ms", buffer="1BDP", queue=queue, flows=["reno"],
                            duration="60s", seed=1)
        return _queue_delays(ccsim.run(sc), 10e6)
    tail, codel = delays("droptail"), delays("codel")
    assert tail.max() >= 0.09 and np.median(tail) > 0.03
    assert np.median(codel) < 0.015 and np.percentile(codel, 90) < 0.015


def test_codel_with_several_flows_keeps_a_standing_queue_near_target():
    # Four CUBIC flows keep a standing queue; CoDel holds its median within
    # [target/2, 3 target] (the band: CoDel only bounds the minimum delay over an
    # interval at target; the sampled delay rides above it with the sawtooth).
    sc = ccsim.dumbbell("20Mbps", "50ms", buffer="2BDP", queue="codel", flows=["cubic"] * 4,
                        duration="40s", seed=1)
    r = ccsim.run(sc)
    d = _queue_delays(r, 20e6)
    assert 0.0025 <= np.median(d) <= 0.015
    assert r.metrics["utilisation"] > 0.95


# -- PIE, rule by rule -----------------------------------------------------------------
@pytest.mark.parametrize("p, factor", [(0.0, 2048), (5e-7, 2048), (5e-6, 512), (5e-5, 128),
                                       (5e-4, 32), (5e-3, 8), (0.05, 2), (0.5, 1)])
def test_pie_update_scales_alpha_and_beta_by_the_probability(p, factor):
    # RFC 8033 §4.2: Δp = α(qdelay − target) + β(qdelay − qdelay_old), divided
    # by 2048/512/128/32/8/2 for p below 1e-6/1e-5/1e-4/1e-3/1e-2/1e-1.
    alpha, beta, target = 0.125, 1.25, 0.015
    qdelay, old = 0.017, 0.0165
    delta = (alpha * (qdelay - target) + beta * (qdelay - old)) / factor
    assert update_probability(p, qdelay, old, target, alpha, beta) == pytest.approx(p + delta)


def test_pie_caps_the_step_above_ten_percent_decays_when_idle_and_clamps():
    # §4.2: Δp at most 0.02 once p >= 0.1; p *= 0.98 when both delays are 0; [0, 1].
    assert update_probability(0.3, 0.2, 0.0, 0.015, 0.125, 1.25) == pytest.approx(0.32)
    assert update_probability(0.3, 0.255, 0.255, 0.015, 0.125, 1.25) == pytest.approx(0.32)
    assert update_probability(0.09, 0.255, 0.255, 0.015, 0.125, 1.25) == pytest.approx(
        0.09 + 0.03 / 2)  # below 0.1: scaled, not capped
    assert update_probability(0.05, 0.0, 0.0, 0.015, 0.125, 1.25) == pytest.approx(
        (0.05 - 0.125 * 0.015 / 2) * 0.98)
    assert update_probability(0.0, 0.0, 0.0, 0.015, 0.125, 1.25) == 0.0
    assert update_probability(0.995, 0.3, 0.0, 0.015, 0.125, 1.25) == 1.0


def test_pie_spares_bursts_for_max_burst_then_drops_with_p():
    # §4.4: no early drop while the burst allowance lasts (150 ms, less 15 ms per
    # update); after it, with p = 1 and a long queue, every arrival is dropped.
    class Link:
        free_at, tx, limit = 10.0, 0.001, 10**6
    st = PIEState(ccsim.PIE(), Link(), random.Random(1))
    st.p, st.qdelay_old = 1.0, 0.1
    st.next_update = math.inf  # hold p
    assert all(st.arrive(0.001 * k, 50, False) == ENQUEUE for k in range(100))
    st.burst = 0.0
    assert all(st.arrive(0.1 + 0.001 * k, 50, False) == DROP for k in range(100))
    assert st.arrive(0.3, 2, False) == ENQUEUE  # two packets or fewer: never (§5.1)


@pytest.mark.slow
def test_pie_holds_the_queue_delay_near_its_reference():
    # Four Reno flows through PIE (target 15 ms): the median sampled delay in
    # [target/2, 2 target] — a PI controller tuned for stability, not speed,
    # around which Reno's sawtooth swings.
    sc = ccsim.dumbbell("20Mbps", "20ms", buffer="2BDP", queue="pie", flows=["reno"] * 4,
                        duration="40s", seed=1)
    r = ccsim.run(sc)
    d = _queue_delays(r, 20e6)
    assert 0.0075 <= np.median(d) <= 0.03
    again = ccsim.run(sc)  # its random drops come from the link's seeded generator
    assert again.summary.equals(r.summary)


def test_a_drop_tail_buffer_reads_sizes_as_a_scenarios_buffer_does():
    # DropTail("64KB") used to say only "a buffer > 0"
    from ccsim.errors import ScenarioError
    assert ccsim.DropTail("64KB") == ccsim.DropTail(64_000, unit="bytes")
    assert ccsim.DropTail("100 packets") == ccsim.DropTail(100)
    with pytest.raises(ScenarioError, match="no bandwidth-delay product.*dumbbell"):
        ccsim.DropTail("1BDP")
    with pytest.raises(ScenarioError, match="unit='bytes'"):
        ccsim.DropTail("100 packets", unit="bytes")
    with pytest.raises(ScenarioError, match=r"queue.limit=-3.0: a buffer > 0: packets \(100\), "
                                            r"or a size such as '64KB'"):
        ccsim.DropTail(-3)
