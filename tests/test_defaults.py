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
    # extra_ack False: mainline's tcp_cong_avoid_ai steps after w ACKs (2.6.3x-3.x: w + 1);
    # the presets of Reno's law inherit the keyword.
    "reno": ("reno", {"extra_ack": False}, ["RFC 5681"]),
    "newreno": ("newreno", {"extra_ack": False}, ["RFC 6582"]),
    "tahoe": ("tahoe", {"extra_ack": False}, ["Jacobson", "1988"]),
    "sack": ("sack", {"extra_ack": False}, ["RFC 6675"]),
    "fack": ("fack", {"extra_ack": False}, ["Mathis & Mahdavi", "1996"]),
    "rate-halving": ("rate-halving", {"extra_ack": False}, ["draft-mathis-tcp-ratehalving-00"]),
    "ssdr": ("ssdr", {"extra_ack": False}, ["Wang", "Williamson", "1998"]),
    # Linux tcp_cubic.c: bic_scale 41 (C = 41 * 10 / 1024), beta 717/1024, fast_convergence 1
    # (RFC 9438: C = 0.4, beta = 0.7, as keywords). Linux's HyStart on (hystart 1,
    # hystart_detect 3: ACK train and delay); HyStart++ (RFC 9406) as hystart_variant.
    # Linux's Reno-friendly region (tcp_friendliness 1, fixed alpha from beta_scale), not
    # RFC 9438 §4.3's alpha of 1 past cwnd_prior (rfc9438_friendly). bictcp_update's RTT
    # is delay_min.
    "cubic": ("prr", {"c": 410 / 1024, "beta": 717 / 1024, "fast_convergence": True,
                      "hystart": True, "hystart_variant": "linux", "hystart_detect": 3,
                      "tcp_friendliness": True, "rfc9438_friendly": False,
                      "rtt": "delay_min", "friendly_per_ack": False},
              ["RFC 9438", "RFC 9406", "tcp_cubic.c"]),
    # Linux tcp_bic.c: BICTCP_BETA_SCALE 1024, beta 819; max_increment 16;
    # low_window 14; BICTCP_B 4; smooth_part 20; fast_convergence 1.
    "bic": ("prr", {"beta": 819 / 1024, "s_max": 16.0, "low_window": 14.0, "b": 4.0,
                    "smooth_part": 20.0, "fast_convergence": True}, ["tcp_bic.c", "INFOCOM 2004"]),
    # RFC 3649 §5: Low_Window 38, High_Window 83000, High_P 1e-7, High_Decrease 0.1; Linux's
    # tcp_highspeed.c table of Appendix B by default, the §5 formula as rule="rfc3649".
    "highspeed": ("prr", {"low_window": 38.0, "high_window": 83000.0, "high_p": 1e-7,
                          "high_decrease": 0.1, "rule": "linux"},
                  ["RFC 3649", "tcp_highspeed.c"]),
    # Leith & Shorten 2004: Delta_L 1 s, beta in [0.5, 0.8]; RTT scaling to 100 ms;
    # Linux tcp_htcp.c: use_bandwidth_switch 1, jiffies of CONFIG_HZ 250 (Kconfig.hz).
    "htcp": ("prr", {"delta_l": 1.0, "beta_min": 0.5, "beta_max": 0.8, "rtt_scaling": True,
                     "rtt_ref": 0.1, "bandwidth_switch": True, "jiffy": 0.004,
                     "rule": "linux"}, ["Leith", "Shorten", "tcp_htcp.c"]),
    # Caini & Firrincieli 2004, Linux tcp_hybla.c: RTT0 = 25 ms; Linux's fixed point by
    # default, the paper's continuous law as rule="paper".
    "hybla": ("prr", {"rtt0": 0.025, "rule": "linux"}, ["Caini", "Firrincieli", "tcp_hybla.c"]),
    # Linux tcp_bbr.c (v1): bbr_bw_rtts 10, bbr_min_rtt_win_sec 10,
    # bbr_probe_rtt_mode_ms 200, bbr_cwnd_gain 2, bbr_cwnd_min_target 4,
    # bbr_pacing_margin_percent 1, bbr_high_gain 739/256 and bbr_drain_gain 88/256.
    "bbr": ("sack", {"bw_rounds": 10, "min_rtt_window": 10.0, "probe_rtt_time": 0.2,
                     "cwnd_gain": 2.0, "min_target": 4.0, "pacing_margin": 0.01,
                     "high_gain": 739 / 256, "drain_gain": 88 / 256, "probe_bw_start": 2},
            ["tcp_bbr.c", "Cardwell"]),
    # google/bbr v3 branch tcp_bbr.c: bbr_beta 0.7, bbr_loss_thresh 2 %, bbr_inflight_headroom
    # 15 %, ProbeRTT every 5 s (bbr_probe_rtt_win_ms) for 200 ms; probe_wait 2.5 s is ccsim's
    # fixed midpoint of Linux's 2-3 s draw; ECN response off by default as on the branch.
    "bbr3": ("sack", {"variant": "linux", "beta": 0.7, "loss_thresh": 0.02, "headroom": 0.15,
                      "probe_wait": 2.5, "probe_rtt_window": 5.0, "probe_rtt_time": 0.2,
                      "min_rtt_window": 10.0, "pacing_margin": 0.01, "ecn_response": False,
                      "ecn_thresh": 0.5, "ecn_max_rtt": 0.005},
             ["tcp_bbr.c", "draft-ietf-ccwg-bbr"]),
    # Linux tcp_scalable.c: TCP_SCALABLE_AI_CNT 100 (a = 1/100), MD_SCALE 3 (b = 1/8), no
    # legacy window; Kelly 2003's legacy window 16 for rule="paper".
    "scalable": ("prr", {"a": 0.01, "b": 0.125, "low_window": 16.0, "rule": "linux",
                         "extra_ack": False},
                 ["Kelly", "2003", "tcp_scalable.c"]),
    # Linux tcp_vegas.c: alpha 2, beta 4, gamma 1 (module parameters; Brakmo & Peterson's
    # experiments used 1 and 3); Linux's slow start (tcp_slow_start on every ACK), the paper's
    # every-other-round growth as slow_start="paper"; Linux's diff, ⌊W·(RTT − BaseRTT)/BaseRTT⌋
    # in whole segments and µs, the paper's cwnd·(1 − BaseRTT/RTT) as diff_rule="paper".
    # Recovery is the paper's (Brakmo & Peterson §3.1), as the ns-2 studies of Lai & Yao ran it.
    # On a loss Reno's ssthresh (tcp_vegas.c has no ssthresh of its own: tcp_reno_ssthresh).
    "vegas": ("vegas", {"alpha": 2.0, "beta": 4.0, "gamma": 1.0, "slow_start": "linux",
                        "diff_rule": "linux", "loss_rule": "reno"},
              ["Brakmo", "Peterson", "tcp_vegas.c"]),
    # Fu & Liew, IEEE JSAC 2003; Linux tcp_veno.c: beta = 3 << V_PARAM_SHIFT (3 segments).
    "veno": ("prr", {"beta": 3.0}, ["Fu", "Liew", "tcp_veno.c"]),
    # Mascolo et al., MobiCom 2001; Grieco & Mascolo, CCR 2004; Linux tcp_westwood.c:
    # filter (7a + b) >> 3, TCP_WESTWOOD_RTT_MIN = HZ/20; RTTs in jiffies of CONFIG_HZ = 250.
    "westwood": ("prr", {"gain": 0.125, "min_interval": 0.05, "jiffy": 0.004,
                          "extra_ack": False},
                 ["Mascolo", "Grieco", "tcp_westwood.c"]),
    # Liu, Başar, Srikant 2006 (α 0.3–10, β 1/8–1/2, d1/d2/d3 = 1 %/10 %/80 % of dm);
    # Linux tcp_illinois.c: win_thresh 15, theta 5.
    "illinois": ("prr", {"alpha_min": 0.3, "alpha_max": 10.0, "beta_min": 0.125,
                         "beta_max": 0.5, "eta1": 0.01, "eta2": 0.1, "eta3": 0.8,
                         "win_thresh": 15.0, "theta": 5},
                 ["Liu", "Srikant", "VALUETOOLS 2006", "tcp_illinois.c"]),
    # Kuzmanovic & Knightly 2006: delta 0.15; Linux tcp_lp.c: sowd gain 1/8, inference 3 RTT;
    # the paper's clocks (no offset; the Linux stack sets Linux's timestamp offset); an ECI
    # sets ssthresh (the paper's AI phase; Linux changes only cwnd).
    "lp": ("prr", {"delta": 0.15, "gamma": 0.125, "itt": 3.0, "clock_offset": 0.0,
                   "eci_ssthresh": True, "extra_ack": False},
           ["Kuzmanovic", "Knightly", "tcp_lp.c"]),
    # draft-irtf-iccrg-ledbat-plus-plus (revision 06): TARGET 60 ms (None: the variant's; RFC 6817's
    # 100 ms bound with variant="rfc6817"), C = 1, periodic slowdowns; RFC 6817 BASE_HISTORY 10
    # (minutes) and a FILTER() of the last 4 samples (the Linux LEDBAT modules' length).
    "ledbat": ("sack", {"variant": "plusplus", "target": None, "base_history": 10,
                        "current_filter": 4, "decrease_constant": 1.0, "slowdowns": True},
               ["draft-irtf-iccrg-ledbat-plus-plus", "RFC 6817"]),
    # Arun & Balakrishnan, NSDI 2018: delta 0.5, RTTmin over 10 s, the mode switch (mvfst's
    # default is without it: competitive=False).
    "copa": ("sack", {"delta": 0.5, "competitive": True, "min_rtt_window": 10.0},
             ["Arun", "Balakrishnan", "NSDI 2018", "mvfst"]),
    # Linux tcp_yeah.c: ALPHA 80, GAMMA 1, DELTA 3, EPSILON 1, PHY 8, RHO 16, ZETA 50,
    # TCP_SCALABLE_AI_CNT 100.
    "yeah": ("prr", {"alpha": 80.0, "gamma": 1.0, "delta": 3, "epsilon": 1, "phy": 8.0,
                     "rho": 16, "zeta": 50, "ai_cnt": 100.0, "reno_per_ack": False,
                     "extra_ack": False},
             ["Baiocchi", "PFLDnet 2007", "tcp_yeah.c"]),
    # Linux tcp_dctcp.c: dctcp_shift_g 4 (g = 1/16, RFC 8257 §4.2's), dctcp_alpha_on_init
    # DCTCP_MAX_ALPHA (alpha starts at 1); ECN on (TCP_CONG_NEEDS_ECN).
    "dctcp": ("prr", {"g": 1.0 / 16.0, "alpha_init": 1.0},
              ["Alizadeh", "RFC 8257", "tcp_dctcp.c"]),
    # L4STeam tcp_prague.c (v0.6): PRAGUE_SHIFT_G 4 (g = 1/16), alpha from PRAGUE_MAX_ALPHA,
    # prague_rtt_target 25 ms, prague_rtt_scaling RTT_CONTROL_RATE, DEFAULT_RTT_TRANSITION 500.
    "prague": ("prr", {"g": 1.0 / 16.0, "alpha_init": 1.0, "rtt_target": 0.025,
                       "rtt_scaling": "rate", "rtt_transition": 500},
               ["tcp_prague.c", "RFC 9331", "RFC 9768"]),
    # Linux tcp_cdg.c module parameters: window 8, backoff_beta 0.7071 * 1024 (= 724, sqrt 0.5),
    # backoff_factor 42 (1000/(G·window), G = 3 in Hayes & Armitage), hystart_detect 3,
    # use_ineff 5, use_shadow 1, use_tolerance 0; seed: ccsim's, of the backoff's draws.
    "cdg": ("prr", {"window": 8, "backoff_beta": 724, "backoff_factor": 42, "hystart_detect": 3,
                    "use_ineff": 5, "use_shadow": True, "use_tolerance": False, "seed": 0},
            ["Hayes", "Armitage", "IFIP Networking 2011", "tcp_cdg.c"]),
    # Linux tcp_nv.c module parameters: nv_pad 10, nv_pad_buffer 2, nv_reset_period 5 s,
    # nv_min_cwnd 2, nv_cong_dec_mult 30 * 128 / 100 (= 38), nv_ssthresh_factor 8,
    # nv_rtt_factor 128, nv_loss_dec_factor 819, nv_cwnd_growth_rate_neg 8, _pos 0,
    # nv_dec_eval_min_calls 60, nv_inc_eval_min_calls 20, nv_ssthresh_eval_min_calls 30,
    # nv_stop_rtt_cnt 10, nv_rtt_min_cnt 2; seed: ccsim's, of the min-RTT reset period's draws.
    "nv": ("prr", {"nv_pad": 10, "nv_pad_buffer": 2, "nv_reset_period": 5.0, "nv_min_cwnd": 2,
                   "nv_cong_dec_mult": 38, "nv_ssthresh_factor": 8, "nv_rtt_factor": 128,
                   "nv_loss_dec_factor": 819, "nv_cwnd_growth_rate_neg": 8,
                   "nv_cwnd_growth_rate_pos": 0, "nv_dec_eval_min_calls": 60,
                   "nv_inc_eval_min_calls": 20, "nv_ssthresh_eval_min_calls": 30,
                   "nv_stop_rtt_cnt": 10, "nv_rtt_min_cnt": 2, "seed": 0},
           ["tcp_nv.c", "Brakmo"]),
    # Chen & Chen 1999, reconstructed from Lai & Yao §3.4: queue target 3 segments (a choice).
    "pseudo-rate": ("vegas", {"queue": 3.0}, ["Chen", "1999", "Lai & Yao"]),
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
