"""Player keys for read-only sources (a recording) and the recorded settings they show.

A source that has `toggle_pause`, `step_forward`, `step_back`, `set_speed` or
`jump_to_end` gets the matching keys; any other source never sees them (see
`check_action`), so the live chat keeps space, `.` and `,` for typing.
"""

from __future__ import annotations

from typing import Any

from ...engine.policies import PolicySettings
from ...engine.sampling import SamplingConfig
from ...errors import GammatuneError

PLAYER_ACTIONS = {
    "toggle_pause": "toggle_pause", "step_forward": "step_forward", "step_back": "step_back",
    "faster": "set_speed", "slower": "set_speed", "jump_end": "jump_to_end",
}


def recorded_settings(method: str, gamma0: int | None, params: dict[str, Any], sampling: dict[str, Any] | None,
                      fallback_gamma0: int) -> tuple[PolicySettings | None, SamplingConfig | None]:
    """The settings a recording says were used; None where its values are odd (the fields stay as they are)."""
    try:
        keep = {k: params[k] for k in ("eta", "delta", "tau", "gamma_min", "gamma_max") if params.get(k) is not None}
        st = PolicySettings.build(method, gamma0 or params.get("gamma0") or fallback_gamma0, **keep)
    except (GammatuneError, ValueError, TypeError):
        return None, None
    sc = None
    if sampling:
        try:
            sc = SamplingConfig(temperature=float(sampling.get("temperature", 0.0)),
                                top_k=int(sampling.get("top_k", 0)), top_p=float(sampling.get("top_p", 1.0)),
                                seed=sampling.get("seed"))
        except (GammatuneError, ValueError, TypeError):
            sc = None
    return st, sc


class PlayerKeys:
    """Mixed into a screen with `source`, `read_only`, `redraw_session()` and `notify()`."""

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in PLAYER_ACTIONS:
            return self.read_only and hasattr(self.source, PLAYER_ACTIONS[action])
        return True

    def action_toggle_pause(self) -> None:
        paused = self.source.toggle_pause()  # type: ignore[attr-defined]
        self.sub_title = "paused" if paused else "playing"

    def action_step_forward(self) -> None:
        self.source.step_forward(1)  # type: ignore[attr-defined]

    def action_step_back(self) -> None:
        shown = self.source.step_back(1)  # type: ignore[attr-defined]
        if shown:
            self.redraw_session(shown)
            self.sub_title = "paused"

    def action_faster(self) -> None:
        self._speed(2.0)

    def action_slower(self) -> None:
        self._speed(0.5)

    def _speed(self, factor: float) -> None:
        cur = float(getattr(self.source, "speed", 1.0)) or 1.0
        new = self.source.set_speed(min(1000.0, max(0.125, cur * factor)))  # type: ignore[attr-defined]
        self.notify(f"speed ×{new:g}", timeout=1)

    def action_jump_end(self) -> None:
        self.source.jump_to_end()  # type: ignore[attr-defined]
