"""Reproduction: the papers' applications (flipped-huber-mechanism Sec. VI / Table III; DP-PCA of
inid-noise-laplace-beats-gaussian Sec. VI-B) on bundled data.

DP-CD with Gaussian and flipped Huber noise (lasso on scikit-learn's diabetes, l2 logistic
regression on breast cancer): NMSE to the non-private optimum and test error, mean and
standard deviation over seeds.  DP-PCA with i.i.d. / i.n.i.d. Gaussian and Laplace noise on
the synthetic fully random model (N = 1000, r = 10) and on digits: subspace error.
Nothing is downloaded.
"""

from __future__ import annotations

import json
from pathlib import Path

import jax
import numpy as np

from dpjax.apps import DPPCA, DPLasso, DPLogisticRegression, subspace_error
from dpjax.reproduce._report import markdown_table, new_figure, save_figure

EPSILON, DELTA = 1.0, 1e-5


def _split(X, y, rng):
    idx = rng.permutation(len(y))
    cut = int(0.8 * len(y))
    return X[idx[:cut]], y[idx[:cut]], X[idx[cut:]], y[idx[cut:]]


def _test_error(model, X, y) -> float:
    """Normalised RSS (regression) or misclassification rate (classification)."""
    if isinstance(model, DPLasso):
        return float(np.sum((y - model.predict(X)) ** 2) / np.sum(y**2))
    return float(np.mean(model.predict(X) != y))


def _dpcd(seeds: int, passes: int) -> dict:
    from sklearn.datasets import load_breast_cancer, load_diabetes

    out = {}
    cases = [
        ("diabetes", load_diabetes, DPLasso, 0.01),
        ("breast_cancer", load_breast_cancer, DPLogisticRegression, 0.1),
    ]
    for name, loader, cls, lam in cases:
        X, y = loader(return_X_y=True)
        # public preprocessing (as in the paper): features scaled into [-1, 1]
        X = X / np.abs(X).max(axis=0)
        if cls is DPLasso:
            y = y / np.abs(y).max()
        Xtr, ytr, Xte, yte = _split(X, y, np.random.default_rng(0))
        opt = cls(epsilon=None, lam=lam, feature_bound=1.0, passes=2000).fit(Xtr, ytr).coef_

        res = {"lam": lam, "n_train": len(ytr), "features": X.shape[1]}
        for mech in ("gaussian", "flipped_huber"):
            nmse, err, model = [], [], None
            for s in range(seeds):
                model = cls(epsilon=EPSILON, delta=DELTA, lam=lam, feature_bound=1.0,
                            passes=passes, mechanism=mech, random_state=s).fit(Xtr, ytr)
                nmse.append(float(np.sum((model.coef_ - opt) ** 2) / np.sum(opt**2)))
                err.append(_test_error(model, Xte, yte))
            res[mech] = {
                "nmse_mean": float(np.mean(nmse)), "nmse_std": float(np.std(nmse)),
                "test_error_mean": float(np.mean(err)), "test_error_std": float(np.std(err)),
                "epsilon": model.epsilon_, "delta": model.delta_,
                "flipped_huber_shape": model.noise_.alpha / model.noise_.gamma,
            }
        out[name] = res
    return out


def _pca(seeds: int) -> dict:
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
                                          "std": float(np.std(errs))}
        out[name] = res
    return out


def _orderings(dpcd: dict, pca: dict) -> list[str]:
    lines = []
    for name, r in dpcd.items():
        g, f = r["gaussian"], r["flipped_huber"]
        lines.append(
            f"- DP-CD {name}: FH NMSE {f['nmse_mean']:.4g} vs Gaussian {g['nmse_mean']:.4g} "
            f"({'FH <= Gaussian holds' if f['nmse_mean'] <= g['nmse_mean'] else 'FH > Gaussian'}"
            f"); calibrated FH shape b = {f['flipped_huber_shape']:.3g} "
            + ("(b = 0: the least-variance flipped Huber is the Gaussian itself; with the same "
               "seeds both runs draw the same noise, so the ordering holds only as an "
               "equality)." if f["flipped_huber_shape"] == 0 else "."))
    for name, r in pca.items():
        for mech in ("gaussian", "laplace"):
            i, n = r[f"{mech}_iid"]["mean"], r[f"{mech}_inid"]["mean"]
            lines.append(f"- DP-PCA {name} {mech}: i.n.i.d. {n:.4g} vs i.i.d. {i:.4g} "
                         f"({'i.n.i.d. < i.i.d. holds' if n < i else 'does not hold'}).")
    return lines


def run(out_dir: Path, quick: bool = False) -> Path:
    """Run the applications reproduction into ``out_dir``; returns the report path.

    Args:
      out_dir: output directory (created if missing).
      quick: fewer seeds and passes.
    """
    jax.config.update("jax_enable_x64", True)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    seeds, passes = (3, 5) if quick else (10, 10)
    dpcd, pca = _dpcd(seeds, passes), _pca(seeds)
    summary = {"epsilon": EPSILON, "delta": DELTA, "seeds": seeds, "passes": passes,
               "dpcd": dpcd, "pca": pca}
    (out_dir / "summary.json").write_text(json.dumps(summary, indent=2))

    fig, ax = new_figure(figsize=(6, 3.5))
    labels = [f"{n}\n{m}" for n in pca for m in pca[n]]
    vals = [pca[n][m]["mean"] for n in pca for m in pca[n]]
    errs = [pca[n][m]["std"] for n in pca for m in pca[n]]
    ax.bar(range(len(vals)), vals, yerr=errs)
    ax.set_xticks(range(len(vals)), labels, fontsize=6)
    ax.set_ylabel("subspace error")
    save_figure(fig, out_dir / "pca.png")

    rows = [[n, m, r[m]["nmse_mean"], r[m]["nmse_std"], r[m]["test_error_mean"],
             r[m]["test_error_std"], r[m]["epsilon"]]
            for n, r in dpcd.items() for m in ("gaussian", "flipped_huber")]
    prow = [[n, m, v["mean"], v["std"]] for n, r in pca.items() for m, v in r.items()]
    text = "\n".join([
        "# Applications: DP coordinate descent and DP-PCA",
        "",
        f"(epsilon, delta) = ({EPSILON}, {DELTA}), {seeds} seeds, {passes} passes; "
        "mean and standard deviation over seeds.  Every epsilon is certified.",
        "",
        "## DP-CD (flipped-huber-mechanism, Table III)",
        "",
        markdown_table(["dataset", "noise", "NMSE", "std", "test error", "std", "epsilon"], rows),
        "The paper (Table III) reports flipped Huber ahead of Gaussian on every dataset "
        "(e.g. Diabetes: 10.26% lower NMSE, 13.57% lower normalised RSS).  Its datasets other "
        "than Diabetes are downloads (not bundled); breast cancer stands in for its "
        "classification sets.  The paper converts zCDP with Bun-Steinke's Lemma 3.5; dpjax "
        "uses the tighter Canonne-Kamath-Steinke conversion, under which the (xi, eta) of "
        "Theorem 9 buys a strictly smaller variance than Gaussian only when the per-release "
        "budget is large (few coordinates x passes, large epsilon); otherwise the grid search "
        "picks b = 0, the Gaussian.  The paper also reports the best NMSE over a "
        "hyperparameter grid (step, clipping, passes); this run uses one untuned setting "
        "(clip = 1, the passes above), so its NMSE is far larger than the paper's.",
        "",
        "## DP-PCA (inid-noise-laplace-beats-gaussian, Sec. VI-B)",
        "",
        markdown_table(["data", "noise", "subspace error", "std"], prow),
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
        "Not reproduced: the i.n.i.d. paper's improved DP-CD (per-coordinate clipping with the "
        "private estimation of the smoothness constants, App. C) and its Fig. 5-6; this run's "
        "DP-CD clips per coordinate in proportion to the public smoothness bound instead.",
        "",
    ])
    report = out_dir / "report.md"
    report.write_text(text)
    return report
