"""Wrong flags and flag values: one line on stderr, exit status 2, for every command (no traceback)."""

from __future__ import annotations

import pytest

from gammatune_tui.cli import main


@pytest.mark.parametrize(
    "argv, words",
    [
        (["run", "x", "--gamma", "abc"], "--gamma"),
        (["run", "x", "--no-such-flag"], "--no-such-flag"),
        (["chat", "--threads", "0"], "--threads"),
        (["compare", "--top-k", "-1"], "--top-k must be"),   # the flag, not the engine's `top_k`
        (["bench", "--latency", "--ks", "1,4"], "--ks"),
        (["replay"], "FILE"),
        (["no-such-command"], "no-such-command"),
    ],
)
def test_usage_error_is_one_line_exit_2(argv, words, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    out, err = capsys.readouterr()
    assert exc.value.code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("gammatune: error:") and words in lines[0]
    assert "Traceback" not in err + out


def test_help_exits_zero(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["run", "--help"])
    assert exc.value.code == 0
    assert "--method" in capsys.readouterr().out


COMMANDS = ["run", "models", "chat", "compare", "replay", "bench"]


@pytest.mark.parametrize("command", COMMANDS)
def test_help_shows_no_value_after_flags_and_fits_80_columns(command, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    with pytest.raises(SystemExit) as exc:
        main([command, "--help"])
    out = capsys.readouterr().out
    assert exc.value.code == 0
    assert "<bool>" not in out                       # `--raw <bool>` read as if `--raw true` worked
    assert all(len(line) <= 80 for line in out.splitlines()), max(out.splitlines(), key=len)
    assert "…" not in out                            # nothing cut: no `deco…`, no `1,2,3,…`


@pytest.mark.parametrize("command", COMMANDS + ["doctor"])
def test_help_placeholders_are_one_style(command, capsys, monkeypatch):
    """Every value placeholder is `<lower>`: `--record <file>`, `--target <model>`, never FILE beside <path>."""
    import re

    monkeypatch.setenv("COLUMNS", "200")
    with pytest.raises(SystemExit):
        main([command, "--help"])
    out = capsys.readouterr().out
    options = re.findall(r"^│\s+(--[a-z-]+)(?:\s+-[a-zA-Z])?\s+(\S+)", out, re.M)
    assert options
    for flag, placeholder in options:
        assert not re.fullmatch(r"[A-Z_]+", placeholder), (flag, placeholder)
    assert "<path>" not in out and "<list[str]>" not in out


def test_bench_help_gives_the_description_column_room(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    with pytest.raises(SystemExit):
        main(["bench", "--help"])
    out = capsys.readouterr().out
    line = next(line for line in out.splitlines() if "--simulate" in line)
    description = line.split("--simulate", 1)[1].strip(" │")
    assert len(description) >= 30, line              # was a 17-character column
    assert "<int ≥1>" in out and "[x>=1]" not in out


def test_a_flag_given_a_value_is_refused_in_one_line(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["run", "x", "--raw", "true"])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and len(err.strip().splitlines()) == 1 and "true" in err


def test_a_binary_prompt_file_is_one_clear_line(tmp_path, capsys):
    path = tmp_path / "prompts.jsonl"
    path.write_bytes(b'{"id": "a", "turns": ["x"]}\n\x89PNG\r\n\x1a\n\x00\xff')
    with pytest.raises(SystemExit) as exc:
        main(["bench", "--simulate", "--prompts", str(path)])
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert exc.value.code == 2 and len(lines) == 1
    assert "not a text file (line 2 is not UTF-8)" in lines[0] and "codec" not in lines[0]
