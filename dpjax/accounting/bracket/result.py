r"""The one bracket type of dpjax: ``lower <= epsilon(delta) <= upper``, both ends certified.

:class:`EpsilonBracket` is what every two-sided answer returns:
:meth:`dpjax.accounting.PLDAccountant.bracket`, :func:`dpjax.account` with
``bracket=True`` and :meth:`dpjax.train.Accountant.bracket`.  It *is* the pair
``(lower, upper)`` (a tuple: ``lower, upper = b`` unpacks it, ``b[1]`` is the upper end,
it compares equal to the plain pair), with the names ``lower`` / ``upper``, ``epsilon``
(the upper end: the certified value a one-sided call returns) and ``bracket`` (the pair),
and a ``note`` saying where the ends come from.
"""

from __future__ import annotations

from typing import Any


class EpsilonBracket(tuple):
    """``(lower, upper)``: ``lower <= epsilon_true(delta) <= upper``, both certified.

    Attributes:
      lower: the certified lower end (``None`` where no lower end is known, e.g. a ledger
        accounted by an RDP upper bound).
      upper: the certified upper end (also ``epsilon``).
      note: where the ends come from (empty when nothing needs saying).

    Example:
      >>> b = EpsilonBracket(0.9, 1.0, "optimistic / pessimistic PLD")
      >>> lower, upper = b
      >>> (lower, upper) == b, b.epsilon, b.bracket, b.note
      (True, 1.0, (0.9, 1.0), 'optimistic / pessimistic PLD')
    """

    note: str

    def __new__(cls, lower: Any, upper: Any, note: str = "") -> EpsilonBracket:
        out = super().__new__(cls, (lower, upper))
        out.note = note
        return out

    def __getnewargs__(self):
        return (self[0], self[1], self.note)

    @property
    def lower(self) -> Any:
        """The certified lower end (or ``None``)."""
        return self[0]

    @property
    def upper(self) -> Any:
        """The certified upper end."""
        return self[1]

    @property
    def epsilon(self) -> Any:
        """The certified upper end: what the one-sided call returns."""
        return self[1]

    @property
    def bracket(self) -> tuple[Any, Any]:
        """``(lower, upper)`` as a plain tuple."""
        return (self[0], self[1])

    def __repr__(self) -> str:
        return f"EpsilonBracket(lower={self[0]!r}, upper={self[1]!r}, note={self.note!r})"
