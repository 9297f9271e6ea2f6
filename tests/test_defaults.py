"""One table of every algorithm's defaults, each with the source it cites.

A peer simulator shipped CUBIC with beta 0.2 "per RFC 8312"; this table is what
catches that. Every registered built-in algorithm must have a row (a new one
fails until its row is written), each default must equal the table's value,
and the algorithm's docstring must name the source the table gives.
"""

from __future__ import annotations

import pytest

from ccsim import algorithms

# name: (default recovery, {parameter: value}, sources its docstring must cite)
DEFAULTS = {
    "reno": ("reno", {}, ["RFC 5681"]),
    "newreno": ("newreno", {}, ["RFC 6582"]),
    "tahoe": ("tahoe", {}, ["Jacobson", "1988"]),
    "sack": ("sack", {}, ["RFC 6675"]),
    "fack": ("fack", {}, ["Mathis & Mahdavi", "1996"]),
    "rate-halving": ("rate-halving", {}, ["draft-mathis-tcp-ratehalving-00"]),
    "ssdr": ("ssdr", {}, ["Wang", "Williamson", "1998"]),
    # RFC 9438 §4.2 C = 0.4, §4.6 beta = 0.7, §4.7 fast convergence.
    # HyStart++ (RFC 9406) off unless asked for.
    "cubic": ("prr", {"c": 0.4, "beta": 0.7, "fast_convergence": True, "hystart": False},
              ["RFC 9438", "RFC 9406"]),
    # Linux tcp_bic.c: BICTCP_BETA_SCALE 1024, beta 819; max_increment 16;
    # low_window 14; BICTCP_B 4; smooth_part 20; fast_convergence 1.
    "bic": ("prr", {"beta": 819 / 1024, "s_max": 16.0, "low_window": 14.0, "b": 4.0,
                    "smooth_part": 20.0, "fast_convergence": True}, ["tcp_bic.c", "INFOCOM 2004"]),
    # RFC 3649 §5: Low_Window 38, High_Window 83000, High_P 1e-7, High_Decrease 0.1.
    "highspeed": ("prr", {"low_window": 38.0, "high_window": 83000.0, "high_p": 1e-7,
                          "high_decrease": 0.1}, ["RFC 3649"]),
    # Leith & Shorten 2004: Delta_L 1 s, beta in [0.5, 0.8]; RTT scaling to 100 ms.
    "htcp": ("prr", {"delta_l": 1.0, "beta_min": 0.5, "beta_max": 0.8, "rtt_scaling": True,
                     "rtt_ref": 0.1}, ["Leith", "Shorten"]),
    # Caini & Firrincieli 2004, Linux tcp_hybla.c: RTT0 = 25 ms.
    "hybla": ("prr", {"rtt0": 0.025}, ["Caini", "Firrincieli", "tcp_hybla.c"]),
    # Linux tcp_bbr.c (v1): bbr_bw_rtts 10, bbr_min_rtt_win_sec 10,
    # bbr_probe_rtt_mode_ms 200, bbr_cwnd_gain 2, bbr_cwnd_min_target 4,
    # bbr_pacing_margin_percent 1.
    "bbr": ("sack", {"bw_rounds": 10, "min_rtt_window": 10.0, "probe_rtt_time": 0.2,
                     "cwnd_gain": 2.0, "min_target": 4.0, "pacing_margin": 0.01},
            ["tcp_bbr.c", "Cardwell"]),
    # Kelly 2003: a = 0.01, b = 0.125; legacy window 16.
    "scalable": ("prr", {"a": 0.01, "b": 0.125, "low_window": 16.0}, ["Kelly", "2003"]),
}


def test_every_builtin_algorithm_has_a_row():
    builtin = [n for n in algorithms.names()
               if algorithms.get(n).__module__.startswith("ccsim.algorithms.")]
    assert sorted(builtin) == sorted(DEFAULTS)


@pytest.mark.parametrize("name", sorted(DEFAULTS))
def test_defaults_match_the_cited_source(name):
    recovery, params, sources = DEFAULTS[name]
    cls = algorithms.get(name)
    assert cls().params() == params
    assert cls.recovery == recovery
    doc = __import__(cls.__module__, fromlist=["_"]).__doc__ or ""
    for source in sources:
        assert source in doc, f"{name}'s docstring does not cite {source!r}"
