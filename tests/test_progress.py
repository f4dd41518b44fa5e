"""The terminal progress bar: drawn only when asked or on a TTY, never on captured output."""

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
