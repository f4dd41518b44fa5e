"""``dpjax._warnings.warn_user``: a warning names the first frame outside dpjax."""

import warnings

from dpjax._warnings import warn_user
from dpjax.accounting.bracket.refine import refine_bracket
from dpjax.accounting.pld.plan import EngineNote


def test_a_warning_from_inside_dpjax_names_this_file():
    # refine_bracket (dpjax) warns when the width cannot be reached: attributed here
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        refine_bracket(lambda: (0.0, 1.0), 1e-3)
    assert [w.category for w in seen] == [EngineNote]
    assert seen[0].filename == __file__


def test_a_direct_call_names_its_own_line():
    first = test_a_direct_call_names_its_own_line.__code__.co_firstlineno
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        warn_user("note", UserWarning)  # line first + 4
    assert seen[0].filename == __file__ and seen[0].lineno == first + 4
