"""The Figure 3 section of ``dpjax reproduce bcdp``'s report: verdicts and text from the numbers.

Every statement about who is below whom is computed here from the run's numbers
(:func:`verdicts`); the fixed text only explains the mechanisms behind them.
"""

from __future__ import annotations

from dpjax.reproduce._report import markdown_table

#: q at or below which the issue asks M_mean to be below the baseline
Q_CLAIM = 0.8


def _below(rows, key: str) -> list[float]:
    return [r["q"] for r in rows if r["bcdp" + key]["median"] < r["ldp" + key]["median"]]


def verdicts(fig3: dict) -> dict:
    """Per channel: where M_mean's median MSE is below the baseline's, and q = 1 against noise.

    ``mse_difference`` is the difference of the mean eq. (17) MSEs, M_mean minus
    baseline, with the standard error of two independent runs' difference.
    """
    out = {}
    for ch, d in fig3.items():
        rows = d["rows"]
        claim = [r["q"] for r in rows if r["q"] <= Q_CLAIM]
        below = _below(rows, "")
        above = [r["q"] for r in rows
                 if r["mse_difference"]["mean"] > 3 * r["mse_difference"]["se"]]
        one = [r for r in rows if r["q"] == 1.0]
        at_one = None
        if one:
            diff = one[0]["mse_difference"]
            at_one = {"mean_difference": diff["mean"], "standard_error": diff["se"],
                      "within_noise": bool(abs(diff["mean"]) <= 3 * diff["se"] + 1e-12)}
        out[ch] = {
            "below_at_q": below,
            "below_for_all_q_le_0.8": all(q in below for q in claim),
            "significantly_above_at_q": above,
            "below_at_q_authors_protocol": _below(rows, "_authors_protocol"),
            "below_at_q_authors_protocol_unbiased": _below(rows, "_authors_protocol_unbiased"),
            "q1": at_one,
        }
    if {"duchi", "privunit"} <= set(fig3):
        ratio = {name: [r_p[name]["median"] / r_d[name]["median"] for r_d, r_p in
                        zip(fig3["duchi"]["rows"], fig3["privunit"]["rows"], strict=True)]
                 for name in ("bcdp", "ldp")}
        out["privunit_over_duchi_median"] = ratio
    return out


def _cell(st: dict) -> str:
    return f"{st['median']:.4g} [{st['q25']:.3g}, {st['q75']:.3g}]"


def figure3_section(fig3: dict, ver: dict) -> list[str]:
    """Markdown lines: the paper's statement, one table per channel, verdicts and notes."""
    lines = ["## Figure 3: mean estimation, M_mean against min(delta)-LDP\n",
             "Paper (Appendix B.1): d = 10, delta = (0.2, 0.2, 2, ..., 2), epsilon = 2, "
             "n = 10000, data 2 Bern(1/2) - 1 from the correlated prior (60), zeta = (1+q)/2, "
             "1000 trials; *\"When q ~ 1 ... our algorithm resembles min delta-LDP. For other "
             "values of q, the proposed BCDP algorithm can leverage the heterogeneous nature of "
             "the privacy demand and obtain better performance.\"* The paper gives the figure "
             "only (no table), so dpjax's numbers are compared with that statement.\n",
             "![Figure 3](figure3.png)\n",
             "Columns: the MSE |Pi(mean) - x_bar|^2 of eq. (17) (Pi: projection onto the cube) "
             "with the unbiased channel; the same draws evaluated as the authors' public script "
             "does ('authors': printed constant, l2-ball projections of M_mean's rows and "
             "result, baseline unprojected) and that protocol with the unbiased constant "
             "('authors, unbiased'); the difference of the mean eq. (17) MSEs, M_mean - "
             "baseline, with its standard error; the worst-case (over data) variance bound of "
             "the unprojected mean, summed over coordinates; the zeta in (0, 1] minimising "
             "that bound within Theorem 2's family, and the bound there. MSE cells: median "
             "[25%, 75%] over trials.\n"]
    for ch, d in fig3.items():
        v = ver[ch]
        rows = [[r["q"], r["c_d"], _cell(r["bcdp"]), _cell(r["ldp"]),
                 _cell(r["bcdp_authors_protocol"]), _cell(r["ldp_authors_protocol"]),
                 _cell(r["bcdp_authors_protocol_unbiased"]),
                 _cell(r["ldp_authors_protocol_unbiased"]),
                 f"{r['mse_difference']['mean']:+.3g} ± {r['mse_difference']['se']:.2g}",
                 r["exact_mean_mse_bcdp"], r["exact_mean_mse_ldp"], r["zeta_best"],
                 r["variance_bound_best_zeta"]] for r in d["rows"]]
        one = v["q1"]
        lines += [f"### {ch} channel, {d['trials']} trials per q\n",
                  markdown_table(["q", "c_d (LDP)", "M_mean", "min-delta LDP",
                                  "M_mean, authors", "LDP, authors",
                                  "M_mean, authors, unbiased", "LDP, authors, unbiased",
                                  "difference (17)", "M_mean bound", "LDP bound",
                                  "best zeta", "bound at best zeta"], rows),
                  f"M_mean's median below the baseline's at every q <= {Q_CLAIM}: "
                  f"**{v['below_for_all_q_le_0.8']}** (below at q = {v['below_at_q']}; "
                  f"above by more than 3 standard errors at q = "
                  f"{v['significantly_above_at_q']}). Authors' protocol: below at q = "
                  f"{v['below_at_q_authors_protocol']}; with the unbiased constant: below at "
                  f"q = {v['below_at_q_authors_protocol_unbiased']}.",
                  "" if one is None else
                  f"At q = 1 the mean MSEs differ by {one['mean_difference']:.3g} "
                  f"(standard error {one['standard_error']:.2g}; within 3 s.e.: "
                  f"**{one['within_noise']}**).\n"]
    if "privunit_over_duchi_median" in ver:
        ratio = ver["privunit_over_duchi_median"]
        qs = [r["q"] for r in fig3["duchi"]["rows"]]
        lines += ["### PrivUnit2 against Duchi et al.'s channel\n",
                  "Median MSE with PrivUnit2 divided by the median with Duchi's channel, "
                  "same budgets:\n",
                  markdown_table(["q"] + [str(q) for q in qs],
                                 [["M_mean"] + [f"{x:.3g}" for x in ratio["bcdp"]],
                                  ["min-delta LDP"] + [f"{x:.3g}" for x in ratio["ldp"]]])]
        same = [q for q in qs if (q in ver["duchi"]["below_at_q"])
                == (q in ver["privunit"]["below_at_q"])]
        lines += [f"The ordering of M_mean and the baseline (medians) is the same with both "
                  f"channels at q = {same} (of {qs}). PrivUnit2's reports never have more "
                  f"variance than Duchi's at the same budget (its split search includes the "
                  f"hemisphere, which is Duchi's channel): at the baseline's budget 0.2 the "
                  f"two nearly coincide, at M_mean's larger budgets PrivUnit2 is lower; so "
                  f"it scales the curves by the factors above rather than moving the "
                  f"crossing.\n"]
    crossing = ""
    if "duchi" in fig3:
        qs = [r["q"] for r in fig3["duchi"]["rows"]]
        below, above = ver["duchi"]["below_at_q"], ver["duchi"]["significantly_above_at_q"]
        prefix = [q for k, q in enumerate(qs) if all(x in below for x in qs[:k + 1])]
        if prefix and above:
            crossing = (f" (Duchi: median below the baseline for q <= {prefix[-1]:g}, above "
                        f"by 3 standard errors from q = {min(above):g})")
    lines += [
        "Why the measured picture differs from the paper's Figure 3:\n",
        "* Theorem 2 with zeta = (1+q)/2 gives the two sensitive coordinates c_1 = "
        "(1 - zeta) delta_1 = (1 - q) delta_1 / 2 whenever the first term of (16) binds, "
        "i.e. for every q > 0 here (c_d in the table < 2), so they get less than the "
        "baseline's 0.2, which the baseline gives every coordinate; the gain on the "
        "eight others must pay for that. The unprojected variance bounds (eq. (17)'s rate "
        "has the same form) cross the baseline's near q = 0.1; the projection onto the "
        "cube in the measured MSE caps the sensitive coordinates' error and moves the "
        "crossing later" + crossing + ". The 'best zeta' columns show that no zeta in "
        "(0, 1] brings the bound below about the baseline's from q = 0.3 on. So where "
        "M_mean loses, the gap is Theorem 2's budget (the paper's claim), not a dpjax "
        "setting or bug: the channels are unbiased (Monte Carlo tests), the BCDP levels "
        "are checked exactly on finite instances, and the server's weights are eq. "
        "(65)'s.\n",
        "* Mechanism 2 as printed uses B = sqrt(pi) d r coth(a/2) Gamma((d+1)/2) / "
        "Gamma(d/2 + 1), twice the unbiased constant (E Z = 2v with it); the authors' "
        "script uses it. dpjax uses the unbiased B (tested by Monte Carlo and against the "
        "closed form 1/E|U_1|).\n",
        "* The authors' script evaluates M_mean and the baseline differently: the printed "
        "constant quadruples the variance of the unprojected baseline, while the l2-ball "
        "projections cap M_mean's noisiest row (budget c_1). The 'authors' columns replay "
        "that on the same draws and reproduce the paper's picture; the 'authors, unbiased' "
        "columns fix only the constant, and the advantage at intermediate q goes with it.\n",
        "* At q = 1 Theorem 2 gives c_1 = ... = c_d = delta_1 (zeta = 1, less a 1e-12 "
        "slack), exactly the baseline's budget in one row: the two coincide in law, and "
        "with the same keys their draws nearly coincide too.\n"]
    return lines

