"""One bracket type: every two-sided answer is an :class:`EpsilonBracket`."""

import pickle

import dpjax
from dpjax import train
from dpjax.accounting import PLDAccountant
from dpjax.accounting import events as ev
from dpjax.accounting.bracket import EpsilonBracket


def test_the_bracket_is_the_pair_with_names_and_a_note():
    b = EpsilonBracket(0.5, 0.75, "why")
    lower, upper = b
    assert (lower, upper) == b == (0.5, 0.75) and b[1] == 0.75
    assert (b.lower, b.upper, b.epsilon, b.bracket, b.note) == (0.5, 0.75, 0.75, (0.5, 0.75),
                                                                 "why")
    again = pickle.loads(pickle.dumps(b))
    assert again == b and again.note == "why" and type(again) is EpsilonBracket
    assert EpsilonBracket(None, 1.0).lower is None and EpsilonBracket(None, 1.0).note == ""


def test_every_two_sided_answer_returns_it():
    acc = PLDAccountant().compose(ev.Gaussian(2.0), 3)
    ledger = acc.bracket(1e-5)
    facade = dpjax.account(ev.SelfComposed(ev.Gaussian(2.0), 3), delta=1e-5, bracket=True)
    mechanism = dpjax.account("gaussian", {"sigma": 2.0}, compositions=3, delta=1e-5,
                              bracket=True)
    for b in (ledger, facade, mechanism):
        assert type(b) is EpsilonBracket and b.note
        assert b.lower <= b.upper == b.epsilon
    assert ledger.upper == acc.get_epsilon(1e-5)
    assert train.EpsilonBracket is EpsilonBracket  # the training accountant's, re-exported
