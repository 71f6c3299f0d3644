"""A settings change is named in the transcript, the export and the controls' note with the label the user
edited (λ0, not edl_lambda): the labels are read from the parameters' one declaration."""

from __future__ import annotations

import pytest

from gammatune_tui.engine.events import StepEvent
from gammatune_tui.engine.policies.param_specs import SAMPLING_SPECS, SPECS
from gammatune_tui.render.change_marks import change_list, change_words


def _step(i: int, method: str, params: dict, sampling: dict | None = None, changed: bool = False) -> StepEvent:
    return StepEvent(step=i, method=method, params=params, gamma=4, drafted=[], accepted=0, target_token=None,
                     emitted=[], gamma_next=4, draft_s=0.0, verify_s=0.0, settings_changed=changed,
                     sampling=sampling or {})


def test_changing_adaedl_lambda0_reads_as_lambda0_in_the_transcript():
    before = _step(0, "adaedl", {"gamma0": 4, "edl_lambda": 0.1, "edl_target": 0.9})
    after = _step(1, "adaedl", {"gamma0": 4, "edl_lambda": 0.2, "edl_target": 0.9}, changed=True)
    assert change_words(before, after) == "λ0 0.1 → 0.2"
    assert change_list([before, after]) == ["step 2: λ0 0.1 → 0.2"]


@pytest.mark.parametrize("row", [s for s in SPECS if s.in_params and s.kind is not bool], ids=lambda s: s.name)
def test_every_numeric_policy_parameter_is_named_by_its_controls_label(row):
    old = row.default if row.kind is int else float(row.default)
    new = old + 1 if row.kind is int else old / 2
    # a method that reads every parameter is not needed: without one, every set parameter is shown
    before = _step(0, "", {row.name: old})
    after = _step(1, "", {row.name: new}, changed=True)
    assert change_words(before, after).startswith(f"{row.label} ")


def test_sampling_changes_are_named_by_their_declared_labels():
    sampling = {"temperature": 0.7, "top_k": 0, "top_p": 0.9, "seed": 0, "repetition_penalty": 1.2}
    after = _step(0, "specdecode", {}, {"temperature": 0.0, "top_k": 5, "top_p": 1.0, "seed": 3,
                                        "repetition_penalty": 1.0}, changed=True)
    words = change_words(_step(0, "specdecode", {}), after, sampling)
    labels = {s.name: s.label for s in SAMPLING_SPECS}
    assert words == (f"{labels['temperature']} 0.7 → 0, {labels['top_k']} 0 → 5, {labels['top_p']} 0.9 → 1, "
                     f"{labels['seed']} 0 → 3, {labels['repetition_penalty']} 1.2 → 1")
    assert labels["temperature"] == "T" and labels["top_k"] == "top-k" and labels["top_p"] == "top-p"
