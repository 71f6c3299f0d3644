"""What the CLI tests share: run `gammatune` in-process and get (exit status, stdout, stderr)."""

from __future__ import annotations

import pytest

from gammatune_tui import cli


def invoke(argv, capsys):
    with pytest.raises(SystemExit) as info:
        cli.main(list(argv))
    out, err = capsys.readouterr()
    return info.value.code, out, err
