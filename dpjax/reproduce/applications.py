"""Reproduction: the papers' applications (flipped-huber-mechanism Sec. VI / Table III; DP-PCA of
inid-noise-laplace-beats-gaussian Sec. VI-B) on bundled data.

DP-CD with Gaussian and flipped Huber noise and the improved (i.n.i.d.) DP-CD with
privately estimated smoothness (lasso on scikit-learn's diabetes and on generated data of
California's shape, l2 logistic regression on breast cancer; :mod:`.applications_dpcd`):
NMSE to the non-private optimum, relative objective error and test error, mean and
standard deviation over seeds, and Fig. 5-6 of inid-noise-laplace-beats-gaussian.
DP-PCA with i.i.d. / i.n.i.d. Gaussian and Laplace noise on the synthetic fully random
model (N = 1000, r = 10) and on digits: subspace error.
Nothing is downloaded.
"""

from __future__ import annotations

import json
from pathlib import Path

import jax
import numpy as np

from dpjax.apps import DPPCA, subspace_error
from dpjax.reproduce._report import markdown_table, new_figure, save_figure
from dpjax.reproduce.applications_dpcd import (
    DELTA,
    EPSILON,
    FRACTION,
    METHODS,
    gap_diagnostics,
    run_dpcd,
)

#: flipped-huber-mechanism Table III, Diabetes (l1): flipped Huber NMSE and normalised RSS;
#: the Gaussian pair is implied by the stated 10.26% / 13.57% reductions (the table's text
#: is garbled in extraction).
FH_DIABETES = {"flipped_huber": (0.1489, 0.4384), "gaussian": (0.1489 / (1 - 0.1026),
                                                              0.4384 / (1 - 0.1357))}
#: inid-noise-laplace-beats-gaussian relative objective error (%) after 50 passes: Fig. 5-6
#: text (smoothness given) and Table V (10% of epsilon spent on estimating it).
INID_PAPER = {"california (Fig. 5)": {"dpcd": 1.88, "improved": 0.45, "dpcd_10pct": 1.9013,
                                      "improved_10pct": 0.5250},
              "electricity (Fig. 6)": {"dpcd": 0.22, "improved": 0.13, "dpcd_10pct": 0.2528,
                                       "improved_10pct": 0.1429}}


def _pca(seeds: int) -> dict:
    # deferred: scikit-learn (optional `apps`/`reproduce` extra)
    from sklearn.datasets import load_digits

    rng = np.random.default_rng(0)
    N, d, r = 1000, 20, 10
    U = np.linalg.qr(rng.normal(size=(d, r)))[0]
    Xs = np.clip(rng.normal(size=(N, r)) @ U.T / np.sqrt(r), -1, 1)  # public bound 1
    Xd = load_digits().data / 16.0  # pixels in [0, 16]: public bound 1 after scaling
    out = {}
    for name, X in (("synthetic", Xs), ("digits", Xd)):
        exact = np.linalg.svd(X, full_matrices=False)[2][:r].T
        res = {}
        for mech in ("gaussian", "laplace"):
            for alloc in ("iid", "inid"):
                errs = [
                    subspace_error(DPPCA(r, EPSILON, DELTA, 1.0, mech, alloc, s).fit(X)
                                   .components_.T, exact)
                    for s in range(seeds)
                ]
                res[f"{mech}_{alloc}"] = {"mean": float(np.mean(errs)),
                                          "std": float(np.std(errs)),
                                          "sre_mean": float(np.mean(np.sqrt(errs)))}
        out[name] = res
    return out


def _holds(a: dict, b: dict, key: str) -> str:
    """``a < b`` on the mean, and whether the gap exceeds the seeds' spread."""
    gap = b[f"{key}mean"] - a[f"{key}mean"]
    spread = max(a[f"{key}std"], b[f"{key}std"])
    if gap > spread:
        return "holds (beyond the seed spread)"
    if gap > 0:
        return "holds on the mean, within the seed spread"
    return "does not hold" if gap < -spread else "does not hold on the mean (within spread)"


def _orderings(dpcd: dict, pca: dict) -> list[str]:
    lines = []
    for name, r in dpcd.items():
        g, f = r["gaussian"], r["flipped_huber"]
        lines.append(
            f"- DP-CD {name}: FH NMSE {f['nmse_mean']:.4g} vs Gaussian {g['nmse_mean']:.4g}: "
            f"FH <= Gaussian {'holds' if f['nmse_mean'] <= g['nmse_mean'] else 'fails'}"
            + (" only as an equality (the calibrated FH shape is b = 0: the least-variance "
               "flipped Huber at this budget is the Gaussian, and the same seeds draw the "
               "same noise)." if f.get("flipped_huber_shape", 1) == 0 else "."))
        d, i = r["dpcd_private"], r["improved_private"]
        last = -1
        lines.append(
            f"- DP-CD {name}: improved {i['nmse_mean']:.4g} vs DP-CD {d['nmse_mean']:.4g} "
            f"(NMSE, best cell): improved < DP-CD {_holds(i, d, 'nmse_')}; relative objective "
            f"error after {d['curve']['passes'][last]} passes "
            f"{i['curve']['rel_obj_mean'][last]:.4g} vs {d['curve']['rel_obj_mean'][last]:.4g}.")
    for name, r in pca.items():
        for mech in ("gaussian", "laplace"):
            i, n = r[f"{mech}_iid"], r[f"{mech}_inid"]
            lines.append(f"- DP-PCA {name} {mech}: i.n.i.d. {n['mean']:.4g} vs i.i.d. "
                         f"{i['mean']:.4g}: i.n.i.d. < i.i.d. {_holds(n, i, '')}.")
    return lines


def _figures(dpcd: dict, out_dir: Path) -> None:
    """Fig. 5 (lasso sets) and Fig. 6 (logistic set): relative objective error vs passes."""
    labels = {"gaussian": "DP-CD, public-bound smoothness",
              "dpcd_private": "DP-CD, private smoothness",
              "improved_private": "improved DP-CD, private smoothness"}
    groups = {"fig5.png": [n for n, r in dpcd.items() if r["penalty"] == "l1"],
              "fig6.png": [n for n, r in dpcd.items() if r["penalty"] == "l2"]}
    for fname, names in groups.items():
        fig, axes = new_figure(ncols=len(names), figsize=(4.5 * len(names), 3.5), squeeze=False)
        for ax, name in zip(axes[0], names, strict=True):
            for m, label in labels.items():
                c = dpcd[name][m]["curve"]
                ax.errorbar(c["passes"], c["rel_obj_mean"], yerr=c["rel_obj_std"], label=label,
                            marker="o", capsize=2)
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xticks(c["passes"], [str(p) for p in c["passes"]])  # no minor labels
            ax.minorticks_off()
            ax.set_xlabel("passes L")
            ax.set_ylabel("(J - J*) / J*")
            ax.set_title(name)
        axes[0][0].legend(fontsize=6)
        save_figure(fig, out_dir / fname)


def _pca_figure(pca: dict, out_dir: Path) -> None:
    fig, ax = new_figure(figsize=(6, 3.5))
    labels = [f"{n}\n{m}" for n in pca for m in pca[n]]
    vals = [pca[n][m]["mean"] for n in pca for m in pca[n]]
    errs = [pca[n][m]["std"] for n in pca for m in pca[n]]
    ax.bar(range(len(vals)), vals, yerr=errs)
    ax.set_xticks(range(len(vals)), labels, fontsize=6)
    ax.set_ylabel("subspace error")
    save_figure(fig, out_dir / "pca.png")


def _report(dpcd: dict, pca: dict, gap: dict, seeds: int) -> str:
    rows = []
    for n, r in dpcd.items():
        rows.append([n, "non-private optimum", 0.0, 0.0, 0.0, r["test_error_optimum"], 0.0,
                     "", "", "inf", "", ""])
        for m in METHODS:
            c = r[m]
            paper = ""
            if n == "diabetes" and m in FH_DIABETES:
                paper = "NMSE {:.4g}, RSS {:.4g}".format(*FH_DIABETES[m])
            rows.append([n, m, c["nmse_mean"], c["nmse_std"], c["rel_obj_mean"],
                         c["test_error_mean"], c["test_error_std"], c["clip"], c["passes"],
                         c["epsilon"], c["smoothness_epsilon"], paper])
    curve_rows = []
    for n, r in dpcd.items():
        passes = r["dpcd_private"]["curve"]["passes"]
        for m in ("gaussian", "dpcd_private", "improved_private"):
            curve_rows.append([n, m, *(100 * v for v in r[m]["curve"]["rel_obj_mean"])])
    paper_rows = [[k, v["dpcd"], v["improved"], v["dpcd_10pct"], v["improved_10pct"]]
                  for k, v in INID_PAPER.items()]
    gap_rows = [[k, *v.values()] for k, v in gap.items()]
    prow = [[n, m, v["mean"], v["std"], v["sre_mean"]] for n, r in pca.items()
            for m, v in r.items()]
    return "\n".join([
        "# Applications: DP coordinate descent and DP-PCA",
        "",
        f"(epsilon, delta) = ({EPSILON}, {DELTA}) for every fit, {seeds} seeds per setting; "
        "every epsilon is certified (the private-smoothness rows: the Laplace estimate's "
        f"epsilon' = {FRACTION} epsilon plus the optimisation's, basic composition).",
        "",
        "## DP-CD (flipped-huber-mechanism Table III; inid-noise-laplace-beats-gaussian "
        "Sec. VI-A)",
        "",
        "Best (clip, passes) cell by mean NMSE over the grid, as both papers report.  "
        "`gaussian` / `flipped_huber`: smoothness from the public bound; `dpcd_private` / "
        "`improved_private`: smoothness estimated privately (App. C), noise proportional to "
        "the sensitivities (DP-CD) or Theorem 4's i.n.i.d. allocation (improved DP-CD).",
        "",
        markdown_table(["data", "method", "NMSE", "std", "rel. obj.", "test error", "std",
                        "clip", "passes", "epsilon", "epsilon'", "paper (Diabetes)"], rows),
        "",
        "### Fig. 5-6: relative objective error (%) vs passes (best clip per point)",
        "",
        markdown_table(["data", "method", *(f"L={p}" for p in passes)], curve_rows),
        "",
        "The paper's values (%, after 50 passes; smoothness given / 10% of epsilon spent "
        "estimating it):",
        "",
        markdown_table(["paper dataset", "DP-CD", "improved", "DP-CD (10%)",
                        "improved (10%)"], paper_rows),
        "![fig5](fig5.png) ![fig6](fig6.png)",
        "",
        "California and Electricity are downloads; `synthetic_8` is generated with "
        "California's shape (K = 8) and unequal feature scales, diabetes and breast cancer "
        "are bundled.  The paper's Fig. 5-6 take the smoothness constants from the data "
        "without privacy cost; dpjax never does (Table V's setting).",
        "",
        "### The NMSE gap (earlier 10-36 vs the paper's ~0.15 on Diabetes)",
        "",
        markdown_table(["targets", "DP, clip 1, L 10", "DP, clip 0.1, L 10",
                        "non-private, bound steps, L 10", "non-private, exact steps, L 10"],
                       gap_rows),
        "",
        "The earlier setting fitted an intercept-free lasso to uncentred targets, so the "
        "residual's mean dominates every clipped gradient; its clip (1) was ten times the "
        "best of the grid; and it reported one setting where the paper reports the best "
        "cell of a grid.  Centring the targets and tuning (clip, passes) as the paper does "
        "bring the NMSE to the table above, the paper's order of magnitude.  What the paper "
        "leaves unstated (its epsilon, its scaling of X and y -- its lambda = 0.1 zeroes "
        "every coefficient on dpjax's scaling --, its grid) is not reproduced; dpjax uses "
        "epsilon = 1, delta = 1e-5, features scaled by their maximum and lambda = 0.01.",
        "",
        "## DP-PCA (inid-noise-laplace-beats-gaussian, Sec. VI-B)",
        "",
        markdown_table(["data", "noise", "subspace error", "std", "SRE"], prow),
        "",
        "SRE = ||(I - V V^T) U||_F / ||U||_F, the square root of the subspace error, is the "
        "paper's metric.  Its Table III (fully random model, M = 100 features as the "
        "extracted text reads, unit l2-norm rows, N = 1000, r = 10, delta = 1e-6, 1000 "
        "trials) at epsilon = 1 / 2 / 5: "
        "Gaussian i.i.d. 0.4762 / 0.2484 / 0.1067, i.n.i.d. 0.3269 / 0.1728 / 0.0752; "
        "Laplace i.i.d. 0.6185 / 0.3272 / 0.1389, i.n.i.d. 0.5034 / 0.2523 / 0.1093.  "
        "dpjax's run is not that setting (20 features bounded per coordinate, epsilon = 1, "
        "delta = 1e-5), so its numbers are not comparable one to one.",
        "![pca](pca.png)",
        "",
        "With one public bound for every feature the upper-triangle profile has only two "
        "values (B^2 on the diagonal, 2 B^2 off it), so the i.n.i.d. design is close to the "
        "i.i.d. one and the differences above are within the seed spread.",
        "",
        "## Orderings",
        "",
        *_orderings(dpcd, pca),
        "",
        "Why improved DP-CD need not beat DP-CD: Theorem 4 minimises the unweighted "
        "parameter MSE sum sigma_i^2.  The objective's error from parameter noise is "
        "weighted by the curvature, sum M_i sigma_i^2 (Remark 4's weights w_i = M_i), and "
        "with DP-CD's lambda_i proportional to M_i^(-1/2) that weighted optimum, "
        "sigma_i^2 proportional to lambda_i / sqrt(M_i), is exactly DP-CD's "
        "sigma_i proportional to lambda_i.  The i.n.i.d. allocation moves noise onto the "
        "high-curvature coordinates, so it can lose on the objective while it wins on the "
        "injected parameter MSE.",
        "",
    ])


def run(out_dir: Path, quick: bool = False) -> Path:
    """Run the applications reproduction into ``out_dir``; returns the report path.

    Args:
      out_dir: output directory (created if missing).
      quick: fewer seeds, passes and generated rows.
    """
    jax.config.update("jax_enable_x64", True)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    seeds = 3 if quick else 5
    dpcd, pca, gap = run_dpcd(quick), _pca(seeds), gap_diagnostics(seeds)
    summary = {"epsilon": EPSILON, "delta": DELTA, "seeds": seeds,
               "smoothness_fraction": FRACTION, "dpcd": dpcd, "pca": pca, "nmse_gap": gap}
    (out_dir / "summary.json").write_text(json.dumps(summary, indent=2))
    _figures(dpcd, out_dir)
    _pca_figure(pca, out_dir)
    (out_dir / "report.md").write_text(_report(dpcd, pca, gap, seeds))
    return out_dir / "report.md"
