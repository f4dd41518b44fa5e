"""The terminal progress bar: drawn only when asked or on a TTY, never on captured output."""

from dpjax import _progress
from dpjax._progress import progress


def test_progress_bar_on_request(capsys, monkeypatch):
    monkeypatch.setenv("DPJAX_PROGRESS", "1")
    with progress(4, "search") as step:
        for _ in range(4):
            step()
    err = capsys.readouterr().err
    assert "search [" in err and "4/4" in err and "#" * 24 in err


def test_progress_bar_off_when_not_a_terminal(capsys, monkeypatch):
    monkeypatch.delenv("DPJAX_PROGRESS", raising=False)  # captured stderr is not a TTY
    with progress(4, "search") as step:
        step()
    assert capsys.readouterr().err == ""
    monkeypatch.setenv("DPJAX_PROGRESS", "0")
    with progress(4, "search") as step:
        step()
    assert capsys.readouterr().err == ""


def test_stages_and_their_summary(monkeypatch):
    _progress.stages()  # forget what earlier tests marked (before the clock is replaced)
    clock = iter([0.0, 2.0, 2.2, 9.0])
    monkeypatch.setattr(_progress.time, "perf_counter", lambda: next(clock))
    monkeypatch.setenv("DPJAX_PROGRESS", "0")
    _progress.mark("spherical")
    _progress.mark("osgt")
    _progress.mark("laplace")
    # 2 s, 0.2 s (under half a second: left out of the list) and 6.8 s; the total counts all
    assert _progress.summary("design") == "design: 9 s (spherical 2 s, laplace 7 s)"
    assert _progress.stages() == []  # the summary reset them


def test_stages_are_bounded(monkeypatch):
    monkeypatch.setenv("DPJAX_PROGRESS", "0")
    _progress.stages()
    for i in range(_progress._MAX_STAGES + 5):
        _progress.mark(str(i))
    kept = _progress.stages()
    assert len(kept) == _progress._MAX_STAGES and kept[0][0] == "5"
