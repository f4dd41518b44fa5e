"""Privacy events: the vocabulary (dp_accounting's names), their JSON form, and the
conversions an accountant runs on them.

``from dpjax.accounting import events as ev`` gives the vocabulary
(:mod:`.vocabulary`: ``ev.Gaussian``, ``ev.PoissonSampled``, ``ev.Composed``, ...) and the
JSON form (:mod:`.json_form`).  The accountant's side lives in the modules beside them:
:mod:`.plds` (leaf events to PLDs, one dominating pair per direction),
:mod:`.basic_composition` (the ``(epsilon, delta)`` cap of a ledger), :mod:`.tilted` (a
ledger's tilted queries far below ``delta = 1e-12``) and :mod:`.from_dp_accounting`
(dp_accounting's ``DpEvent`` objects to these).  The ledger itself is
:class:`dpjax.accounting.PLDAccountant`; the RDP bound of a ledger is
:mod:`dpjax.accounting.rdp.ledger`.
"""

from dpjax.accounting.events import vocabulary
from dpjax.accounting.events.json_form import event_from_json, event_to_json
from dpjax.accounting.events.vocabulary import *  # noqa: F403  (the vocabulary, re-exported)

__all__ = [*vocabulary.__all__, "event_from_json", "event_to_json"]
