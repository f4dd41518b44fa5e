"""``dpjax train-plan --dataset-size N (--batch-size B | --sampling-rate q) (--epochs E | --steps T)
--epsilon E --delta D [--clip-norm C] [--noise gaussian|laplace|flipped-huber] [--params-dim K]
[--json]``
"""

from __future__ import annotations

from dpjax.cli import _common as c


def add_parser(sub) -> None:
    """Add ``dpjax train-plan``: the certified DP-SGD noise for a training schedule.

    Args:
      sub: the ``dpjax`` parser's subparsers.
    """
    p = sub.add_parser(
        "train-plan", help="certified DP-SGD noise (Poisson sampling) for a training schedule"
    )
    p.add_argument("--dataset-size", type=int, required=True, help="N (records)")
    size = p.add_mutually_exclusive_group(required=True)
    size.add_argument("--batch-size", type=float, help="expected batch size B (q = B / N)")
    size.add_argument("--sampling-rate", type=float, help="Poisson rate q in (0, 1]")
    length = p.add_mutually_exclusive_group(required=True)
    length.add_argument("--epochs", type=float, help="passes over the data (T = ceil(E / q))")
    length.add_argument("--steps", type=int, help="logical steps T")
    p.add_argument("--epsilon", type=float, required=True)
    p.add_argument("--delta", type=float, required=True)
    p.add_argument("--clip-norm", type=float, default=1.0,
                   help="global clip norm C (l2; l1 with --noise laplace)")
    p.add_argument("--noise", choices=("gaussian", "laplace", "flipped-huber"),
                   default="gaussian")
    p.add_argument("--params-dim", type=int, default=1,
                   help="number of model parameters (flipped Huber's accounting needs it)")
    p.add_argument("--max-batch-size", type=int, default=None,
                   help="padded batch rows (default: truncation share <= delta / 1000)")
    c.add_json_arg(p)
    p.set_defaults(func=run)


def run(args) -> None:
    """Print the plan of :func:`dpjax.train.make_plan` (global clipping) and its accountant's
    epsilon after the planned steps; JSON with the plan's summary and ``epsilon_spent``.

    Args:
      args: the parsed arguments.
    """
    # deferred: jax (the CLI parser stays JAX-free)
    import jax
    import jax.numpy as jnp

    # deferred: dpjax.train (imports JAX; the CLI parser stays JAX-free)
    from dpjax.train import make_plan

    if args.params_dim < 1:
        raise ValueError(f"--params-dim must be >= 1, got {args.params_dim}")
    params = {"params": jax.ShapeDtypeStruct((args.params_dim,), jnp.float32)}
    plan = make_plan(
        params, dataset_size=args.dataset_size, batch_size=args.batch_size,
        sampling_rate=args.sampling_rate, epochs=args.epochs, steps=args.steps,
        epsilon=args.epsilon, delta=args.delta, clip_norms=args.clip_norm, noise=args.noise,
        max_batch_size=args.max_batch_size,
    )
    out = plan.summary()
    out["epsilon_spent"] = plan.accountant().epsilon(plan.steps)
    if args.json:
        c.print_json(out)
        return
    if args.noise == "gaussian":
        noise = f"N(0, ({out['noise_multiplier']:.6g} C)^2)"
    elif args.noise == "laplace":
        noise = f"Lap(0, {out['noise_multiplier']:.6g} C), l1 clip"
    else:
        noise = f"FH(alpha {out['alpha']:.6g}, gamma {out['gamma']:.6g})"
    c.print_table(
        ["N", "q", "steps", "max batch", "noise", "epsilon spent", "delta"],
        [[str(plan.dataset_size), plan.sampling_rate, str(plan.steps),
          str(plan.max_batch_size), noise, out["epsilon_spent"], plan.delta]],
    )
