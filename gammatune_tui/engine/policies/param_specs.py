"""Every tunable of the γ policies, declared once: one `ParamSpec` row each.

A row says the parameter's name, type, range, default, flag, label on
screen, help and tuning grid. Everything else is read from these rows, so a
new parameter is one row here and nothing more: the validation and the
frozen `PolicyParams` (engine/policies/policy_params.py), the controls panel and its
tooltips (ui/widgets/controls.py), the command-line options and `--help`
(commands/options.py), the header of `bench --tune` and its search grid
(bench/), and the parameter table in docs/policies.md (`markdown_table`,
checked against the file by tests/engine/test_param_specs.py). Which methods
read a parameter is said once too, by each method (`Policy.uses`, listed in
the method registry of engine/policies/__init__.py).

Pure data and arithmetic on it (no torch), so `--help` answers at once.
"""

from __future__ import annotations

from typing import cast

from ..common.param_spec import ParamSpec, _num

# Defaults. The paper gives none; benchmarks/fit_defaults.py chose these on the demo
# pair: GammaTune+ on the even prompts of the code set at T = 0 and T = 0.7 together
# (one setting for both, each temperature priced by its own timing pass), the best
# mean share of the oracle among settings that change γ on at least a third of the
# steps at both; the odd prompts are the held-out report (docs/benchmarks.md). With
# the floor at 1 a rejection drops γ to one token, η 0.9 follows the last step, and
# each full window adds δ = 1 (γ changes on 53–70 % of steps); τ 0.3 stops on the
# draft's doubts. The same floor and η lift every other method that reads them on
# the even prompts. γ_max 8 also sizes the warm-up and the CUDA graphs; γ0 4 is the
# CLI's --gamma for every method.
#
# adaptive-k: vLLM's Adaptive K defaults (adaptive_k_ema_alpha, _alpha_prior, _cooldown_steps).
# costaware: pseudo-counts of the shipped calibration prior in each confidence bin,
# and the factor each step that drafts multiplies the session's own counts by (engine/policies/costaware.py):
# a light prior the session's own tokens outweigh within a few steps, remembered for
# ~20 steps (the even prompts' fit at both temperatures).


# The rows. Their order is the order of PolicyParams' fields, of a recording's `params`
# and of `--help`; the controls panel shows the γ bounds last, beside T.
SPECS: tuple[ParamSpec, ...] = (
    ParamSpec("gamma0", int, 4, "γ0", "initial speculation length γ0; a γ bound left at its default moves to "
              "take it in", lo=1, flag="--gamma", short="-g", in_params=False, recorded=True),
    ParamSpec("eta", float, 0.9, "η", "GammaTune's EWMA rate η", lo=0, hi=1, lo_open=True, step=0.05,
              grid=(0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0), recorded=True),
    ParamSpec("delta", int, 1, "δ", "GammaTune's expansion offset δ", lo=0,
              grid=(0, 1, 2, 3, 4, 5, 6, 8), recorded=True),
    ParamSpec("tau", float, 0.3, "τ", "confidence threshold τ: stop drafting under it", lo=0, hi=1, step=0.05,
              grid=(0.0, 0.02, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.5, 0.6, 0.7, 0.8), recorded=True),
    ParamSpec("gamma_min", int, 1, "γ min", "lower bound on γ", lo=1, column="γ_min",
              grid=(1, 2, 3, 4, 5, 6, 8), recorded=True),
    ParamSpec("gamma_max", int, 8, "γ max", "upper bound on γ", lo=1, column="γ_max",
              grid=(4, 6, 8, 10, 12, 16, 20, 24), recorded=True),
    ParamSpec("dynamic_tau", bool, False, "dynamic τ", "adapt τ with transformers' ROC rule",
              recorded=True),
    ParamSpec("ema_alpha", float, 0.3, "α EMA", "weight of the newest steps in each position's "
              "acceptance EMA", lo=0, hi=1, lo_open=True, step=0.05, column="ema α",
              grid=(0.1, 0.2, 0.3, 0.5, 0.7, 1.0)),
    ParamSpec("alpha_prior", float, 0.85, "α prior", "acceptance assumed at positions not drafted yet",
              lo=0, hi=1, step=0.05, column="prior", grid=(0.3, 0.5, 0.7, 0.8, 0.85, 0.9, 0.95, 1.0)),
    ParamSpec("cooldown", int, 2, "cooldown", "steps a new window is kept before it may change",
              lo=0, grid=(0, 1, 2, 3, 4, 6)),
    ParamSpec("calib_weight", float, 5, "calib w", "pseudo-counts of the shipped calibration prior per "
              "confidence bin", lo=0, lo_open=True, step=5, grid=(2, 5, 10, 20, 40, 80)),
    ParamSpec("calib_forget", float, 0.95, "forget", "factor the session's own calibration counts "
              "decay by at each step that drafts", lo=0, hi=1, lo_open=True, step=0.01, grid=(0.9, 0.95, 0.98, 0.99, 1.0)),
    # the peers' (engine/policies/peer_policies.py; docs/policies.md "The peers"): each source's published value,
    # but AdaEDL's λ0, which its paper sweeps: fitted with benchmarks/field_table.py on the even prompts of
    # the demo pair's code set at T = 0 and T = 0.7 together (the best mean share of the oracle at γ0 = 4,
    # 0.704 / 0.700; the odd prompts are the held-out report, docs/benchmarks.md). This tiny draft's
    # entropies are high (3–6 nats), so its bound 1 − √(0.2·H) is low and a useful λ0 is too.
    ParamSpec("p_min", float, 0.75, "p min", "stop drafting after a token whose top-1 probability is under it "
              "(llama.cpp's --draft-p-min)", lo=0, hi=1, step=0.05, grid=(0.3, 0.5, 0.6, 0.7, 0.75, 0.8, 0.9)),
    ParamSpec("edl_lambda", float, 0.1, "λ0", "starting threshold λ on the entropy bound 1 − √(0.2·H): stop "
              "drafting under it", lo=0, hi=1, step=0.05, column="λ0",
              grid=(0.0, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8)),
    ParamSpec("edl_target", float, 0.9, "α target", "target acceptance rate: λ rises while the smoothed rate is under "
              "it", lo=0, hi=1, step=0.05, column="α*", grid=(0.5, 0.6, 0.7, 0.8, 0.9, 0.95)),
    ParamSpec("svip_h", float, 0.3, "svip h", "stop drafting once √(0.15·H) exceeds it (H the draft's entropy, "
              "nats)", lo=0, step=0.05, grid=(0.1, 0.2, 0.25, 0.3, 0.35, 0.4, 0.5, 0.6)),
)
# How tokens are served, declared the same way: the label the controls, the transcript's marks and the
# exports name a knob by, its flag and its help. Not policy parameters (no `PolicyParams` field, no grid):
# `SamplingConfig` (engine/common/sampling_config.py) holds and checks the values.
SAMPLING_SPECS: tuple[ParamSpec, ...] = (
    ParamSpec("temperature", float, 0.0, "T", "0 = greedy (the default for chat pairs; the demo pair defaults to "
              "0.7).", lo=0, step=0.1, short="-t", in_params=False),
    ParamSpec("top_k", int, 0, "top-k", "Keep the k most likely tokens (0 = off).", lo=0, in_params=False),
    ParamSpec("top_p", float, 1.0, "top-p", "Nucleus sampling mass in (0, 1] (1 = off).", lo=0, hi=1, lo_open=True,
              in_params=False),
    ParamSpec("repetition_penalty", float, 1.0, "repetition penalty", "Make every token already in the text less "
              "likely (transformers' repetition_penalty: its logit divided by this when positive, multiplied when "
              "negative; > 1 discourages repeats, 1 = off), in both models: still lossless.", lo=0, lo_open=True,
              in_params=False),
    ParamSpec("seed", int, 0, "seed", "Seed of the session's sampler, for reproducible runs (0 to 2^63 - 1).",
              lo=0, in_params=False),
)
SAMPLING_BY_NAME: dict[str, ParamSpec] = {s.name: s for s in SAMPLING_SPECS}
LABELS: dict[str, str] = {s.name: s.label for s in (*SPECS, *SAMPLING_SPECS)}
"""Every tunable's name → the label a user reads it by (η, not eta; T, not temperature)."""
BY_NAME: dict[str, ParamSpec] = {s.name: s for s in SPECS}
PARAM_SPECS: tuple[ParamSpec, ...] = tuple(s for s in SPECS if s.in_params)
PARAM_NAMES: tuple[str, ...] = tuple(s.name for s in PARAM_SPECS)

# `--paper-defaults`: a preset for reproducing the paper's Table 2 (η 0.5, δ 2, γ bounds
# 4–16, found by `bench --tune` on the demo pair's greedy traces; τ 0.4 is transformers'
# default assistant_confidence_threshold). The paper itself gives no values.
PAPER_DEFAULTS = {"eta": 0.5, "delta": 2, "tau": 0.4, "gamma_min": 4, "gamma_max": 16}


def spec(name: str) -> ParamSpec:
    return BY_NAME[name]


def check_gamma0(gamma0: object) -> int:
    return cast(int, BY_NAME["gamma0"].check(gamma0))   # its row's kind is int: `check` gives an int


def markdown_table(readers: "dict[str, tuple[str, ...]] | None" = None) -> str:
    """The parameter table of docs/policies.md: flag, range, default, the methods that read it, meaning.

    `readers` maps a parameter to the methods that read it (the method
    registry knows; engine/policies/__init__.py `readers()`); without it that column
    is left out.
    """
    cols = ["parameter", "flag", "range", "default"] + (["read by"] if readers is not None else []) + ["meaning"]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for s in SPECS:
        default = str(s.default).lower() if s.kind is bool else _num(s.default)
        row = [f"`{s.name}` ({s.label})", f"`{s.cli_flag}`", s.range_text(unicode=True), default]
        if readers is not None:
            who = readers.get(s.name, ())
            row.append(", ".join(f"`{m}`" for m in who) if who else "every method")
        row.append(s.help)
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)

