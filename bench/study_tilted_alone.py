"""At and below ``TILT_BELOW``, does the plain grid ever beat the tilted composition? (issue 36)

Where every target ``delta`` of an engine epsilon query tilts (``engine._target_tilts``: the
profile at its answer falls below ``engine.TILT_BELOW``, 1e-7, as it does for a target at
1e-7 itself), the tilted composition answers alone and the plain grid is composed only where
the tilted one cannot answer or its certificate's re-check fails (``engine._tilted_alone``).
Before, below 1e-7 both ran and the smaller certified answer was kept, and at 1e-7 the plain
grid answered alone (its certificate's profile then ran the tilted composition).  For each
setting this asks the engine three ways on fresh memos:

* ``plain``: the plain grid only (the tilted step switched off; the former path at 1e-7);
* ``full``: the plain grid and the tilted composition, the smaller kept (the former path
  below 1e-7);
* ``alone``: what the engine does now;

and reports the three epsilons per target, whether ``alone`` equals ``full`` bit for bit and
how far above the tilted answer the plain one is.  A row where the plain answer is the
smaller would be a looser answer now: the study counts them.  It measures a design input;
nothing in dpjax uses it.

``--profiles`` asks the same of a certificate: at each epsilon the engine answers now, the
profile at its target (``engine.target_profile``, a calibration's re-check since 11bebb2:
the tilted composition alone) against a fresh ``engine.profile`` (the plain grid and the
tilted composition, the smaller kept; the re-check before), each on a fresh memo; it
counts the certificates that are looser now and checks that every one is below its target.
A flipped Huber row calibrated by ``dpjax.calibrate`` (8 uses at q 0.2, delta 1e-9, whose
certificate was looser) is added in that mode.

    python bench/study_tilted_alone.py [--profiles] [--out FILE]
"""

from __future__ import annotations

import argparse
import itertools
import math
import os
import subprocess
import sys

import jax
import numpy as np

from dpjax.accounting.pld import engine
from dpjax.noise import FlippedHuber, Gaussian, Laplace

jax.config.update("jax_enable_x64", True)

#: (family name, noise_fn, scale, shape)
FAMILIES = [
    ("gaussian", Gaussian.from_scale, 0.8, 0.0),
    ("gaussian", Gaussian.from_scale, 2.0, 0.0),
    ("gaussian", Gaussian.from_scale, 5.0, 0.0),
    ("laplace", Laplace.from_scale, 1.0, 0.0),
    ("laplace", Laplace.from_scale, 3.0, 0.0),
    ("flipped-huber", FlippedHuber.from_scale, 2.0, 1.0),
]

#: (sampling rate, compositions)
USES = [(None, 2), (None, 20), (None, 300), (0.1, 10), (0.1, 100), (0.01, 1000)]

DELTAS = np.array([1e-7, 1e-8, 1e-10, 1e-12, 1e-30])


def _ask(noise_fn, scale, shape, q, k, way):
    """The engine's epsilons at :data:`DELTAS`, asked ``way`` on a fresh memo."""
    engine._ANSWERS.clear()
    saved = engine._tilted, engine._tilted_alone
    try:
        if way == "plain":
            engine._tilted = lambda by_delta, noise_fn, args, x, out, *a, **kw: np.asarray(out)
        if way in ("plain", "full"):
            engine._tilted_alone = lambda *a: False
        return np.asarray(engine.epsilon(noise_fn, scale, shape, 1.0, DELTAS, k, q), np.float64)
    finally:
        engine._tilted, engine._tilted_alone = saved


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", help="also write the report to this file")
    parser.add_argument("--profiles", action="store_true",
                        help="compare the certificates at the answers instead")
    parser.add_argument("--settings", help=argparse.SUPPRESS)  # START:STOP, one child's share
    args = parser.parse_args(argv)
    if args.profiles and args.settings:
        start, stop = (int(v) for v in args.settings.split(":"))
        return _write(_profile_rows(_profile_settings()[start:stop]), args.out)
    if args.profiles:
        return _write(_profile_report(), args.out)
    lines = [
        "# engine epsilons at and below TILT_BELOW: plain grid only / both / now",
        f"# deltas {', '.join(f'{d:g}' for d in DELTAS)}; sensitivity 1; bin width 1e-4",
    ]
    looser = same = total = 0
    worst = 0.0
    for (name, noise_fn, scale, shape), (q, k) in itertools.product(FAMILIES, USES):
        got = {w: _ask(noise_fn, scale, shape, q, k, w) for w in ("plain", "full", "alone")}
        total += DELTAS.size
        same += int(np.sum(got["alone"] == got["full"]))
        looser += int(np.sum(got["plain"] < got["alone"]))
        with np.errstate(invalid="ignore"):
            gap = (got["plain"] - got["alone"]) / got["alone"]
        worst = max(worst, float(np.nanmax(np.where(np.isfinite(gap), -gap, -math.inf))))
        cells = " | ".join(
            f"{p:.6g} {f:.6g} {a:.6g}" for p, f, a in zip(got["plain"], got["full"], got["alone"],
                                                             strict=True)
        )
        lines.append(f"{name} scale {scale:g} shape {shape:g} q {q} K {k}: {cells}")
        print(lines[-1], flush=True)
    lines.append(
        f"# {total} answers: now equals both (plain grid and tilted, the smaller kept) bit "
        f"for bit at {same}; the plain grid alone is smaller than now at {looser} (largest "
        f"relative excess of now over it: "
        f"{max(worst, 0.0):.3g})"
    )
    print(lines[-1])
    _write(lines, args.out)


def _write(lines, out) -> None:
    """Write the report's ``lines`` to ``out`` (when given)."""
    if out:
        with open(out, "w") as fh:
            fh.write("\n".join(lines) + "\n")


#: the flipped Huber a subsampled calibration returned (epsilon 1, delta 1e-9, linf 1, 8 uses
#: at q 0.2): gamma and b = alpha / gamma
CALIBRATED_FH = ("flipped-huber", FlippedHuber.from_scale, 6.271177001109118,
                 20.06776640354918 / 6.271177001109118)


def _profile_settings() -> list:
    """The settings of ``--profiles``: every family and use, and :data:`CALIBRATED_FH`."""
    return [*itertools.product(FAMILIES, USES), (CALIBRATED_FH, (0.2, 8))]


#: Settings per child process of ``--profiles``: one process compiling all of them ran out
#: of memory maps in LLVM (``Cannot allocate memory``) at the 29th, ``jax.clear_caches``
#: between settings notwithstanding.
SETTINGS_PER_PROCESS = 6


def _profile_rows(settings) -> list[str]:
    """``--profiles``' row per setting, then a ``# stats total looser above worst`` line."""
    lines = []
    looser = total = above = 0
    worst = 0.0
    for (name, noise_fn, scale, shape), (q, k) in settings:
        jax.clear_caches()
        eps = _ask(noise_fn, scale, shape, q, k, "alone")
        ok = np.isfinite(eps)
        engine._ANSWERS.clear()
        now = np.asarray(engine.target_profile(
            noise_fn, scale, shape, 1.0, np.where(ok, eps, 0.0), DELTAS, k, q), np.float64)
        engine._ANSWERS.clear()
        with np.errstate(divide="ignore"):
            before = np.log(np.asarray(engine.profile(
                noise_fn, scale, shape, 1.0, np.where(ok, eps, 0.0), k, q), np.float64))
        total += int(np.sum(ok))
        looser += int(np.sum(ok & (now > before)))
        above += int(np.sum(ok & ~(now <= np.log(DELTAS * (1.0 - engine.MARGIN)))))
        worst = max(worst, float(np.max(np.where(ok, np.expm1(now - before), 0.0))))
        cells = " | ".join(
            f"{math.exp(b):.8g} {math.exp(n):.8g}" if o else "-"
            for b, n, o in zip(before, now, ok, strict=True)
        )
        lines.append(f"{name} scale {scale:g} shape {shape:g} q {q} K {k}: {cells}")
        print(lines[-1], flush=True)
    lines.append(f"# stats {total} {looser} {above} {worst!r}")
    print(lines[-1], flush=True)  # read by the parent (_profile_report)
    return lines


def _profile_report() -> list[str]:
    """The certificates at the engine's answers: ``target_profile`` against a fresh
    ``profile`` (the report's lines), :data:`SETTINGS_PER_PROCESS` settings per child
    process."""
    lines = [
        "# certificates at the engine's epsilons: fresh profile (before) and target_profile "
        "(now), delta",
        f"# deltas {', '.join(f'{d:g}' for d in DELTAS)}; sensitivity 1; bin width 1e-4",
    ]
    looser = total = above = 0
    worst = 0.0
    n = len(_profile_settings())
    for start in range(0, n, SETTINGS_PER_PROCESS):
        span = f"{start}:{min(start + SETTINGS_PER_PROCESS, n)}"
        out = subprocess.run(
            [sys.executable, os.path.abspath(__file__), "--profiles", "--settings", span],
            capture_output=True, text=True, check=True,
        ).stdout.splitlines()
        for line in out:
            if line.startswith("# stats "):
                t, lo, ab, w = line.split()[2:]
                total, looser, above = total + int(t), looser + int(lo), above + int(ab)
                worst = max(worst, float(w))
            else:
                lines.append(line)
                print(line, flush=True)
    lines.append(
        f"# {total} certificates: now looser than before at {looser} (largest relative "
        f"excess in delta {worst:.3g}); above its target at {above}"
    )
    print(lines[-1])
    return lines


if __name__ == "__main__":
    main()
