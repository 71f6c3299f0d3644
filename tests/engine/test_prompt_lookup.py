"""Prompt lookup's rule on hand-worked token lists: longest match, most recent occurrence, the copy, the stand-ins."""

from __future__ import annotations

import dataclasses

import pytest

from gammatune_tui.engine.drafting.draft_sources import DrafterSettings, parse_drafters, pair_drafter
from gammatune_tui.engine.policies.step_rule import cut_window
from gammatune_tui.engine.policies import PolicySettings
from gammatune_tui.engine.drafting.prompt_lookup import NgramIndex, PromptLookupSource, point_mass_stats
from gammatune_tui.errors import InvalidParameter


def propose(ids, window, lo=1, hi=3):
    idx = NgramIndex(lo, hi)
    idx.extend(ids)
    return idx.propose(ids, window)


def test_longest_match_wins_over_a_more_recent_shorter_one():
    # "7 8 9" (n=3) occurred at the start, followed by 1 2; "9" alone occurred more recently, followed by 5
    ids = [7, 8, 9, 1, 2, 3, 9, 5, 4, 7, 8, 9]
    xs, _, _ = propose(ids, 2)
    assert xs == [1, 2]
    # with n capped at 1 the most recent "9" decides
    assert propose(ids, 2, hi=1)[0] == [5, 4]


def test_the_most_recent_occurrence_is_copied():
    ids = [1, 2, 3, 5, 1, 2, 4, 6, 1, 2]
    assert propose(ids, 2)[0] == [4, 6]  # "1 2" was followed by 3 first, by 4 most recently


def test_no_match_proposes_nothing_and_a_window_of_zero_proposes_nothing():
    assert propose([1, 2, 3, 4], 5) == ([], [], [])
    assert propose([1, 2, 1, 2], 0) == ([], [], [])
    # ngram_min above every repeat: nothing either
    assert propose([1, 2, 3, 1, 2], 4, lo=3, hi=3) == ([], [], [])


def test_the_text_never_matches_itself_and_the_copy_runs_on_into_its_own_proposal():
    ids = [4, 5, 4, 5]
    xs, _, _ = propose(ids, 7)
    # "4 5" at the start is followed by "4 5", then by the copy's own tokens: a repeating pattern fills any window
    assert xs == [4, 5, 4, 5, 4, 5, 4]
    assert propose([3, 3], 3)[0] == [3, 3, 3]


def test_stand_in_probabilities_are_witten_bell_estimates_of_the_context():
    # context "1" (n=1 when n_max=1): followed by 2, 2, 3 → N=3, T=2, top count 2
    ids = [1, 2, 1, 2, 1, 3, 1]
    xs, tops, chosen = propose(ids, 1, hi=1)
    assert xs == [3]  # the most recent follower, though not the most frequent
    assert tops == [pytest.approx(2 / 5)] and chosen == [pytest.approx(1 / 5)]
    # a context seen once: 1 / (1 + 1)
    xs, tops, chosen = propose([5, 6, 7, 8, 5, 6], 2, hi=2)
    assert xs == [7, 8]
    assert chosen[0] == pytest.approx(0.5) and tops[0] == pytest.approx(0.5)
    # second token: context "6 7", also seen once, followed by 8
    assert chosen[1] == pytest.approx(0.5)
    # the copy running on into its own proposal reads the contexts of the accepted text it repeats
    xs, tops, chosen = propose([1, 2, 9, 1, 2], 4, hi=2)
    assert xs == [9, 1, 2, 9]
    assert chosen == [pytest.approx(0.5)] * 4 and tops == chosen


def test_the_index_is_incremental_and_equals_a_fresh_one():
    ids = [1, 2, 3, 1, 2, 4, 1, 2, 3, 5, 1, 2]
    inc = NgramIndex(1, 3)
    for k in range(1, len(ids) + 1):
        inc.extend(ids[:k])
    fresh = NgramIndex(1, 3)
    fresh.extend(ids)
    assert inc.entries == fresh.entries and inc.size == fresh.size == len(ids)
    for w in (1, 3, 6):
        assert inc.propose(ids, w) == fresh.propose(ids, w)


def test_the_source_cuts_windows_as_the_model_loop_does():
    src = PromptLookupSource(1, 2)
    ids = [5, 6, 7, 8, 0, 5, 6]
    src.start(ids)
    eos = frozenset({0})
    # specdecode: the whole window, cut after a drafted EOS
    d = src.draft(ids, 4, policy=PolicySettings.build("specdecode", 4).make(), served=None, gen=None, eos=eos,
                  device=None)
    assert d.ids == [7, 8, 0] and d.point_mass and d.calls == 0 and not d.early
    # gammatune+ with τ above the 0.5 confidence of a once-seen context stops after the first token (it stays)
    pol = PolicySettings.build("gammatune+", 4, tau=0.6).make()
    d = src.draft(ids, 4, policy=pol, served=None, gen=None, eos=frozenset(), device=None)
    assert d.ids == [7] and d.early
    d = src.draft(ids, 4, policy=PolicySettings.build("gammatune+", 4, tau=0.5).make(), served=None, gen=None,
                  eos=frozenset(), device=None)
    assert d.ids == [7, 8, 0, 5] and not d.early


def test_cut_window_asks_a_policy_that_may_stop_early_with_the_window_so_far():
    seen = []

    class Spy:
        may_stop_early = True

        def keep_drafting(self, top, chosen, entropy, earlier):
            seen.append((chosen, entropy, [t.chosen for t in earlier]))
            return chosen > 0.15

    stats = point_mass_stats([1.0] * 4, [0.1, 0.2, 0.3, 0.4])
    assert cut_window([1, 2, 3, 4], stats, 4, Spy(), frozenset()) == (1, True)   # stopped after the first
    assert seen == [(0.1, 0.0, [])]
    seen.clear()
    stats = point_mass_stats([1.0] * 4, [0.2, 0.3, 0.4, 0.5])
    assert cut_window([1, 2, 3, 4], stats, 4, Spy(), frozenset({3})) == (3, False)   # the drafted EOS ends it
    assert seen == [(0.2, 0.0, []), (0.3, 0.0, [0.2])]
    Spy.may_stop_early = False
    seen.clear()
    assert cut_window([1, 2, 3, 4], stats, 4, Spy(), frozenset()) == (4, False) and seen == []  # never asked


def test_drafter_settings_and_their_errors(tiny_pair):
    assert DrafterSettings().name == "model" and DrafterSettings().loads_draft and DrafterSettings().params() == {}
    d = DrafterSettings.of("prompt-lookup", ngram_max=5)
    assert not d.loads_draft and d.point_mass and d.hf_peer == "prompt_lookup_num_tokens" and d.params() == {"ngram_min": 1, "ngram_max": 5}
    assert DrafterSettings.of(d) is d
    for bad in (dict(name="lookup"), dict(name="prompt-lookup", ngram_min=0),
                dict(name="prompt-lookup", ngram_min=3, ngram_max=2), dict(name="prompt-lookup", ngram_max=99),
                dict(name="model", ngram_min=2)):   # a parameter the source does not have
        with pytest.raises(InvalidParameter):
            DrafterSettings(**bad)
    assert parse_drafters("model, prompt-lookup") == ["model", "prompt-lookup"]
    for bad in ("", "model,model", "model,ngram"):
        with pytest.raises(InvalidParameter):
            parse_drafters(bad)

    assert pair_drafter(dataclasses.replace(tiny_pair, draft=None, drafter=None)).name == "prompt-lookup"
