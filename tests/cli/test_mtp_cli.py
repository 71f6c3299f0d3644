"""`--draft mtp` from the command line: run and compare draft with the head in the target's own folder;
a folder without a head, or `--draft mtp` beside another drafter, is one line and exit 2."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from gammatune_tui.engine.events import event_from_json
from clihelpers import invoke

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tiny_mtp import write_mtp_checkpoint  # noqa: E402


@pytest.fixture(scope="module")
def head_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("mellum_mtp")
    write_mtp_checkpoint("mellum", folder, seed=3)
    return folder


def test_run_drafts_with_the_targets_own_head_and_stays_exact(capsys, head_dir):
    args = ["--target", str(head_dir), "--device", "cpu", "--threads", "1", "-n", "12", "--json", "--raw"]
    code, out, err = invoke(["run", "Hello", *args, "--draft", "mtp", "-m", "specdecode", "--gamma", "3"], capsys)
    assert code == 0, err
    events = [event_from_json(json.loads(line)) for line in out.splitlines()]
    assert events[0].drafter == "mtp" and events[-1].drafter == "mtp"
    assert events[-1].draft_calls > 0 and events[-1].tokens == 12
    mine = [t.id for e in events if e.type == "step" for t in e.emitted]
    code, out, err = invoke(["run", "Hello", *args, "--drafter", "prompt-lookup"], capsys)
    assert code == 0, err
    plain = [t.id for e in map(lambda s: event_from_json(json.loads(s)), out.splitlines()) if e.type == "step"
             for t in e.emitted]
    assert mine == plain   # greedy: the same tokens whoever drafts


@pytest.mark.parametrize("family", ["deepseek_v3", "glm4_moe_lite"])
def test_a_head_kept_as_the_models_next_layer_loads_at_any_depth(capsys, tmp_path, family):
    # transformers skips DeepSeek-V3's head by a fixed number (model.layers.61), GLM-4.7-Flash's by 47: at the
    # fixture's depth (2) the head's layer comes back as unused, which must not read as a config declaring fewer
    # layers than its weights hold
    write_mtp_checkpoint(family, tmp_path / family, seed=1)
    capsys.readouterr()
    args = ["run", "def f(x):", "--target", str(tmp_path / family), "--device", "cpu", "--threads", "1", "-n", "8",
            "--json", "--raw"]
    code, out, err = invoke([*args, "--draft", "mtp", "--mtp-vocab", "128"], capsys)
    assert code == 0, err
    events = [event_from_json(json.loads(line)) for line in out.splitlines()]
    assert events[-1].drafter == "mtp" and events[-1].draft_calls > 0
    code, out, err = invoke([*args, "--drafter", "prompt-lookup"], capsys)
    assert code == 0, err
    plain = [t.id for e in map(lambda s: event_from_json(json.loads(s)), out.splitlines()) if e.type == "step"
             for t in e.emitted]
    assert [t.id for e in events if e.type == "step" for t in e.emitted] == plain


def test_compare_races_the_head_against_prompt_lookup(capsys, head_dir):
    code, out, err = invoke(["compare", "--print", "--target", str(head_dir), "--device", "cpu", "--drafters",
                             "mtp,prompt-lookup", "-M", "specdecode", "-n", "10", "-t", "0", "--raw", "Hello"], capsys)
    assert code == 0, err
    assert "specdecode/mtp" in out and "specdecode/lookup" in out
    assert "lossless: every method produced the target's own tokens" in out


def test_a_folder_without_a_head_or_another_drafter_beside_it_is_one_line(capsys, tmp_path, head_dir):
    bare = tmp_path / "bare"
    write_mtp_checkpoint("mellum", bare, with_head=False)
    capsys.readouterr()   # the fixture's own progress bars are not the command's output
    code, out, err = invoke(["run", "Hello", "--target", str(bare), "--draft", "mtp", "-n", "4"], capsys)
    assert code == 2 and err.count("\n") == 1
    assert "carries no MTP head (no mtp.* tensors); --draft mtp needs one" in err
    code, out, err = invoke(["run", "Hello", "--target", str(head_dir), "--draft", "mtp", "--drafter",
                             "prompt-lookup", "-n", "4"], capsys)
    assert code == 2 and err.count("\n") == 1 and "leave --draft" in err


def test_models_families_says_which_families_carry_heads(capsys):
    code, out, err = invoke(["models", "--families", "--json"], capsys)
    assert code == 0, err
    heads = json.loads(out)["mtp_heads"]
    assert {"qwen3_5", "mellum", "deepseek_v3", "glm4_moe"} <= set(heads) and "llama" not in heads
    code, out, err = invoke(["models", "--families"], capsys)
    assert code == 0 and "MTP heads (--draft mtp, docs/heads.md)" in out and "qwen3_5" in out


def test_the_subtitle_names_a_reduced_vocabulary_and_draft_prompt_lookup_says_what_to_type(capsys, head_dir):
    from gammatune_tui.engine.drafting.draft_sources import DrafterSettings
    from gammatune_tui.engine.loading.models import load_pair
    from gammatune_tui.session.turns import pair_title

    pair = load_pair(str(head_dir), "mtp", device="cpu", threads=1, warmup=False,
                     drafter=DrafterSettings("mtp", mtp_vocab=64))
    assert "mtp, 1 layer, chained, draft vocabulary 64" in pair_title(pair)   # the chat's subtitle
    code, out, err = invoke(["run", "Hello", "--target", str(head_dir), "--draft", "prompt-lookup", "-n", "4"], capsys)
    assert code == 2 and err.count("\n") == 1
    assert "--draft prompt-lookup: prompt-lookup drafts without a draft model: use --drafter" in err


def test_mtp_vocab_drafts_over_the_reduced_vocabulary_and_a_bad_value_is_one_line(capsys, head_dir):
    """`--draft mtp --mtp-vocab 40`: the header records it, the head drafts only ids of S (the byte tokenizer's
    special tokens and the lowest ids), the tokens are the plain run's; a bad N is one line and exit 2."""
    from gammatune_tui.engine.drafting.frspec import ranked_subset, special_ids
    from transformers import AutoTokenizer

    args = ["--target", str(head_dir), "--device", "cpu", "--threads", "1", "-n", "12", "--json", "--raw"]
    code, out, err = invoke(["run", "Hello", *args, "--draft", "mtp", "--mtp-vocab", "40"], capsys)
    assert code == 0, err
    events = [event_from_json(json.loads(line)) for line in out.splitlines()]
    assert events[0].drafter == "mtp" and events[0].drafter_params["mtp_vocab"] == 40
    tok = AutoTokenizer.from_pretrained(head_dir)
    allowed = set(ranked_subset(40, 260, special_ids(tok, [tok.eos_token_id])).tolist())
    drafted = [t.id for e in events if e.type == "step" for t in e.drafted]
    assert drafted and set(drafted) <= allowed
    mine = [t.id for e in events if e.type == "step" for t in e.emitted]
    code, out, err = invoke(["run", "Hello", *args, "--drafter", "prompt-lookup"], capsys)
    assert code == 0, err
    assert mine == [t.id for e in map(lambda s: event_from_json(json.loads(s)), out.splitlines())
                    if e.type == "step" for t in e.emitted]
    for bad, says in ((["--mtp-vocab", "-3"], "--mtp-vocab must be a whole number >= 0, got -3"),
                      (["--mtp-vocab", "999999"], "--mtp-vocab 999999: the target's vocabulary has only 260 tokens"),
                      (["--mtp-vocab", "many"], "--mtp-vocab"),
                      (["--mtp-vocab-file", "/nonexistent.pt"], "--mtp-vocab-file /nonexistent.pt: no such file")):
        code, out, err = invoke(["run", "Hello", *args, "--draft", "mtp", *bad], capsys)
        assert code == 2 and err.count("\n") == 1 and says in err, (bad, err)
    code, out, err = invoke(["run", "Hello", *args, "--drafter", "prompt-lookup", "--mtp-vocab", "40"], capsys)
    assert code == 2 and err.count("\n") == 1 and "--mtp-vocab belongs to the mtp drafter" in err


@pytest.mark.parametrize("argv, words", [
    (["--drafter", "mtp", "-t", "0.7"], "mtp's proposals depend on where each window starts and on its own draws"),
    (["--drafter", "prompt-lookup", "--for", "vllm"], "--for plays a draft model's or a head's traces"),
])
def test_what_bench_simulate_cannot_replay_is_one_line(capsys, head_dir, argv, words):
    code, out, err = invoke(["bench", "--simulate", "--target", str(head_dir), "--device", "cpu", "--limit", "1",
                             "-n", "8", *argv], capsys)
    assert code == 2 and err.count("\n") == 1 and words in err, err
