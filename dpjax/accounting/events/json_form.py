"""The JSON form of events (``dpjax account --events FILE.json``).

An event is an object with a ``"type"`` (the class name of :mod:`dpjax.accounting.events`,
with or without dp_accounting's ``DpEvent`` suffix) and its fields; nested events are
objects too, and a top-level list is a composition.  A file may also be an object
``{"relation": ..., "bin_width": ..., "events": [...]}``::

    {"relation": "add_remove",
     "events": [
       {"type": "Laplace", "noise_multiplier": 2.0},
       {"type": "SelfComposed", "count": 1000,
        "event": {"type": "PoissonSampled", "sampling_probability": 0.01,
                  "event": {"type": "Gaussian", "noise_multiplier": 1.1}}}]}
"""

from __future__ import annotations

import dataclasses

from dpjax.accounting.events import vocabulary as ev

__all__ = ["event_from_json", "event_to_json"]

_CLASSES = {
    name: getattr(ev, name)
    for name in ev.__all__
    if isinstance(getattr(ev, name), type) and name != "Event"
}
_ALIASES = {"ZCDpEvent": "ZCDP", "EpsilonDeltaDpEvent": "EpsilonDelta"}


def event_from_json(obj) -> ev.Event:
    """Build an event from its JSON form (module docstring).

    Args:
      obj: a parsed JSON value: an object with ``"type"``, or a list (a composition).

    Returns:
      The event.

    Raises:
      ValueError: an unknown type, a missing or unknown field, or a bad value (the message
        names it).

    Example:
      >>> event_from_json({"type": "PoissonSampled", "sampling_probability": 0.5,
      ...                  "event": {"type": "GaussianDpEvent", "noise_multiplier": 2.0}})
      PoissonSampled(sampling_probability=0.5, event=Gaussian(noise_multiplier=2.0))
    """
    if isinstance(obj, list):
        return ev.Composed([event_from_json(x) for x in obj])
    if not isinstance(obj, dict) or not isinstance(obj.get("type"), str):
        raise ValueError(f"an event must be a JSON object with a string 'type', got {obj!r}")
    name = obj["type"]
    name = _ALIASES.get(name, name.removesuffix("DpEvent") if name != "DpEvent" else name)
    cls = _CLASSES.get(name)
    if cls is None:
        known = ", ".join(sorted(_CLASSES))
        raise ValueError(f"unknown event type {obj['type']!r}; known: {known}")
    kwargs = {k: v for k, v in obj.items() if k != "type"}
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = set(kwargs) - names
    if unknown:
        raise ValueError(f"{name}: unknown field(s) {sorted(unknown)}; fields: {sorted(names)}")
    if "event" in kwargs:
        kwargs["event"] = event_from_json(kwargs["event"])
    if "events" in kwargs:
        kwargs["events"] = [event_from_json(x) for x in kwargs["events"]]
    for key in ("sensitivities", "sampling_probs"):
        if key in kwargs:
            kwargs[key] = tuple(kwargs[key])
    try:
        return cls(**kwargs)
    except TypeError as err:
        raise ValueError(f"{name}: {err}") from None


def event_to_json(event: ev.Event):
    """The JSON form of an event (inverse of :func:`event_from_json`).

    Args:
      event: a dpjax event.

    Returns:
      A JSON-serialisable dict.

    Example:
      >>> event_to_json(ev.SelfComposed(ev.Laplace(2.0), 3))
      {'type': 'SelfComposed', 'event': {'type': 'Laplace', 'noise_multiplier': 2.0}, 'count': 3}
    """
    out = {"type": type(event).__name__}
    for f in dataclasses.fields(event):
        v = getattr(event, f.name)
        if isinstance(v, ev.Event):
            v = event_to_json(v)
        elif f.name == "events":
            v = [event_to_json(e) for e in v]
        elif isinstance(v, tuple):
            v = list(v)
        out[f.name] = v
    return out
