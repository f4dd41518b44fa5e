"""Convert dp_accounting's ``DpEvent`` objects into dpjax events (dp_accounting optional).

The conversion is by class name and fields, so dpjax never imports dp_accounting: a user
who has one hands its events over unchanged, and a script switches accountants by
changing one line (``PLDAccountant`` from :mod:`dpjax.accounting`).  Events with no dpjax
counterpart (``SingleEpochTreeAggregationDpEvent``, ``RepeatAndSelectDpEvent``,
``UnsupportedDpEvent``, ``ZCDpEvent`` with ``xi > 0``) raise
:class:`~dpjax.accounting.events.plds.UnsupportedEventError` naming them.
"""

from __future__ import annotations

from dpjax.accounting import events as ev
from dpjax.accounting.events.plds import UnsupportedEventError

__all__ = ["from_dp_accounting"]


def _leaf(name, e):
    if name == "NoOpDpEvent":
        return ev.NoOp()
    if name == "NonPrivateDpEvent":
        return ev.NonPrivate()
    if name == "GaussianDpEvent":
        return ev.Gaussian(float(e.noise_multiplier))
    if name == "LaplaceDpEvent":
        return ev.Laplace(float(e.noise_multiplier))
    if name == "DiscreteLaplaceDpEvent":
        return ev.DiscreteLaplace(float(e.noise_parameter), int(e.sensitivity))
    if name == "RandomizedResponseDpEvent":
        return ev.RandomizedResponse(float(e.noise_parameter), int(e.num_buckets))
    if name == "MixtureOfGaussiansDpEvent":
        return ev.MixtureOfGaussians(
            float(e.standard_deviation),
            tuple(float(x) for x in e.sensitivities),
            tuple(float(x) for x in e.sampling_probs),
        )
    if name == "TruncatedSubsampledGaussianDpEvent":
        return ev.TruncatedSubsampledGaussian(
            int(e.dataset_size), float(e.sampling_probability), int(e.truncated_batch_size),
            float(e.noise_multiplier),
        )
    if name == "ZCDpEvent" and float(getattr(e, "xi", 0.0)) == 0.0:
        return ev.ZCDP(float(e.rho))
    return None


def from_dp_accounting(event) -> ev.Event:
    """The dpjax event equivalent to a dp_accounting ``DpEvent`` (recursively).

    ``GaussianDpEvent`` -> :class:`~.events.Gaussian`, ``LaplaceDpEvent`` ->
    :class:`~.events.Laplace`, ``DiscreteLaplaceDpEvent``, ``RandomizedResponseDpEvent``,
    ``MixtureOfGaussiansDpEvent``, ``TruncatedSubsampledGaussianDpEvent``, ``ZCDpEvent``
    (``xi = 0``), ``NoOpDpEvent``,
    ``NonPrivateDpEvent``, ``ComposedDpEvent``, ``SelfComposedDpEvent``,
    ``PoissonSampledDpEvent``, ``SampledWithoutReplacementDpEvent``,
    ``SampledWithReplacementDpEvent`` -> their namesakes.

    Args:
      event: a dp_accounting ``DpEvent`` (or a dpjax event, returned as is).

    Returns:
      The dpjax event.  (dp_accounting's ``NeighboringRelation.REPLACE_SPECIAL`` is the
      accountant's ``relation="replace_special"``.)

    Raises:
      UnsupportedEventError: an event with no dpjax counterpart (named in the message).

    Example:
      >>> import dp_accounting
      >>> from_dp_accounting(dp_accounting.PoissonSampledDpEvent(
      ...     0.01, dp_accounting.GaussianDpEvent(1.1)))
      PoissonSampled(sampling_probability=0.01, event=Gaussian(noise_multiplier=1.1))
    """
    if isinstance(event, ev.Event):
        return event
    name = type(event).__name__
    leaf = _leaf(name, event)
    if leaf is not None:
        return leaf
    if name == "ComposedDpEvent":
        return ev.Composed([from_dp_accounting(e) for e in event.events])
    if name == "SelfComposedDpEvent":
        return ev.SelfComposed(from_dp_accounting(event.event), int(event.count))
    if name == "PoissonSampledDpEvent":
        return ev.PoissonSampled(float(event.sampling_probability), from_dp_accounting(event.event))
    if name in ("SampledWithoutReplacementDpEvent", "SampledWithReplacementDpEvent"):
        cls = (ev.SampledWithoutReplacement if "Without" in name else ev.SampledWithReplacement)
        return cls(
            int(event.source_dataset_size), int(event.sample_size), from_dp_accounting(event.event)
        )
    raise UnsupportedEventError(f"dpjax has no counterpart of dp_accounting's {name}: {event!r}")
