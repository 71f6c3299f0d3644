"""The one check every `--server-log` format's damaged-file cases share: the reader refuses the file naming what is
wrong, and `doctor --server-log FILE` says the same in one line on stderr, exit 2, no traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from gammatune_tui.bench.deploy.server_log import ServerLogError, read
from gammatune_tui.cli import main


def assert_refused(path: Path, content: str, needle: str, capsys) -> None:
    """`content` written to `path` is refused: by the reader with `needle` in its reason, by doctor in one line
    that says it too."""
    path.write_text(content)
    with pytest.raises(ServerLogError) as caught:
        read(path)
    assert needle in str(caught.value), str(caught.value)
    with pytest.raises(SystemExit) as done:
        main(["doctor", "--server-log", str(path)])
    err = capsys.readouterr().err
    assert done.value.code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert needle in " ".join(err.split()), err
