"""Policy and sampling controls that act on a running generation.

Each change builds a new frozen `PolicySettings` (or `SamplingConfig`) and, if
valid, swaps it in with one assignment and posts `ControlsPanel.Changed`; the
screen forwards it to the source, which applies it at the next step boundary.
An invalid value is refused in place: the field turns red and the reason
(the `InvalidParameter` message, spoken with the labels on screen: γ min,
not gamma_min) appears under it, wrapped, while the generation goes on with
the settings it had.

Only the parameters the chosen method reads are shown (`used_params`):
η and δ for the GammaTunes, τ for the threshold methods, adaptive-k's EMA
weight, prior and cooldown for adaptive-k, p min for p-min, λ0 and α target
for adaedl, svip h for svip, the calibration weight and forgetting for
costaware, the γ bounds where a method plans within them. Values are typed
(Enter applies) or stepped with ↑/↓.
"""

from __future__ import annotations

import dataclasses
import math
import re
from fractions import Fraction
from typing import Any

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from rich.text import Text
from textual.widgets import Input, Label, Select

from ...engine.policies.param_specs import SPECS, ParamSpec
from ...engine.policies import METHODS, PolicySettings, grouped_methods, param_help, used_params
from ...engine.common.sampling import SamplingConfig
from ...errors import InvalidParameter
from ..textual_compat import AnnotatedSelect
from .key_order import OrderedKeys


def _tooltip(s: ParamSpec) -> str:
    return f"{param_help(s.name)}, {s.range_text(unicode=True)}"


# name, label, step, tooltip: every numeric parameter of engine/policies/param_specs.py (switches have no field),
# the γ bounds last, beside T
_BOUNDS = ("gamma_min", "gamma_max")
_NUMERIC = [s for s in SPECS if s.kind is not bool]
FIELDS: tuple[tuple[str, str, float, str], ...] = (
    *((s.name, s.label, s.step, _tooltip(s)) for s in _NUMERIC if s.name not in _BOUNDS),
    *((s.name, s.label, s.step, _tooltip(s)) for s in _NUMERIC if s.name in _BOUNDS),
    ("temperature", "T", 0.1, "sampling temperature (0 = greedy)"),
)
INTEGER_FIELDS = {s.name for s in _NUMERIC if s.kind is int}
ALWAYS_SHOWN = {"gamma0", "temperature"}
LABELS = {name: label for name, label, _, _ in FIELDS}
_NAME = re.compile(r"\b(" + "|".join(sorted(LABELS, key=len, reverse=True)) + r")\b")


GROUP_OF = {m: words for words, names in grouped_methods() for m in names}


class MethodSelect(AnnotatedSelect):
    """The method selector: the open list names each method's group (the paper's, peers', gammatune's own) beside it.

    Twelve methods read better in their groups; the registry lists them group
    by group, and the open list says which group each belongs to. The closed
    selector shows the name alone, as it always has.
    """

    def note(self, value: object) -> str:
        return GROUP_OF.get(str(value), "")


_LONG_NUMBER = re.compile(r"\d{13,}")


def _short_number(m: re.Match) -> str:
    d = m.group(0)
    return f"{d[0]}.{d[1:3]}e{len(d) - 1}"


def speak(message: str) -> str:
    """An engine message in the words on screen: `gamma_min must be <= gamma_max` → `γ min must be ≤ γ max`.

    A whole number longer than 12 digits (1e309 typed into a field) is written
    as 1.00e309: 310 digits filled the panel.
    """
    message = _LONG_NUMBER.sub(_short_number, message)
    return _NAME.sub(lambda m: LABELS[m.group(1)], message).replace("<=", "≤").replace(">=", "≥")


def shown_fields(method: str) -> set[str]:
    """The fields shown for `method`: γ0, T and the parameters it reads."""
    return ALWAYS_SHOWN | set(used_params(method))


def fmt(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (Fraction, float)):
        return f"{float(value):.6g}"
    return str(value)


def settings_values(settings: PolicySettings, sampling: SamplingConfig) -> dict[str, str]:
    p = settings.params
    values = {name: fmt(getattr(p, name)) for name, *_ in FIELDS if name not in ("gamma0", "temperature")}
    return {"gamma0": fmt(settings.gamma0), **values, "temperature": fmt(sampling.temperature)}


class ParamInput(OrderedKeys):
    """One numeric field; ↑/↓ step it by its increment and apply at once; its keys run in typing order."""

    BINDINGS = [
        Binding("up", "step(1)", "Increase", show=False),
        Binding("down", "step(-1)", "Decrease", show=False),
    ]

    def __init__(self, name: str, step: float, value: str, **kw: Any) -> None:
        super().__init__(value=value, id=f"ctl-{name}", compact=True, **kw)
        self.param = name
        self.step_size = step

    def _on_paste(self, event: events.Paste) -> None:
        """A paste of several lines is typed whole, its line breaks as spaces (Input kept the first line and
        dropped the rest without a word): Enter then refuses it, or applies it, as the user can see it."""
        event.stop()
        event.prevent_default()   # Input's own handler, next in the MRO, would insert the first line again
        text = " ".join(event.text.split())
        if text:
            start, end = sorted(self.selection)
            self.replace(text, start, end)

    def action_step(self, direction: int) -> None:
        try:
            cur = Fraction(self.value.strip() or "0")
        except (ValueError, ZeroDivisionError):
            cur = Fraction(0)
        new = cur + Fraction(str(self.step_size)) * direction
        self.value = str(int(new)) if self.param in INTEGER_FIELDS else f"{float(new):.6g}"
        self.post_message(Input.Submitted(self, self.value))


class ControlsPanel(Vertical):
    """Method selector and parameter fields.

    Attributes `settings` and `sampling` always hold the last accepted values.
    """

    DEFAULT_CSS = """
    ControlsPanel { height: auto; padding: 0 1; }
    ControlsPanel .ctl-row { height: 1; }
    ControlsPanel .ctl-row.-unused { display: none; }
    ControlsPanel .ctl-label { width: 9; color: $text-muted; }
    /* the focused row stands out, label included (the rule on the row itself also makes
       Textual restyle the row's children when the focus moves) */
    ControlsPanel .ctl-row:focus-within { background: $accent 10%; }
    ControlsPanel .ctl-row:focus-within .ctl-label { color: $accent; text-style: bold; }
    ControlsPanel ParamInput { width: 1fr; }
    ControlsPanel ParamInput:focus { background: $accent 25%; }
    /* not Input's own -invalid class: Input resets that one on every change and blur */
    ControlsPanel ParamInput.-refused, ControlsPanel ParamInput.-refused:focus {
        color: $error; text-style: bold; background: $error 15%;
    }
    ControlsPanel .ctl-error { width: 1fr; color: $error; height: auto; padding-left: 9; }
    ControlsPanel .ctl-error.-hidden { display: none; }
    ControlsPanel #ctl-status { width: 1fr; color: $text-muted; height: auto; }
    ControlsPanel #ctl-method { width: 1fr; }
    ControlsPanel #ctl-method:focus > SelectCurrent { background: $accent 25%; }
    /* the open list: a framed popup beside the labels, never read as the fields' values */
    ControlsPanel #ctl-method > SelectOverlay { border: round $accent !important; background: $panel; }
    """

    class Changed(Message):
        """Valid new settings (or sampling); `field` names what changed."""

        def __init__(self, panel: "ControlsPanel", field: str, settings: PolicySettings | None,
                     sampling: SamplingConfig | None) -> None:
            super().__init__()
            self.panel = panel
            self.field = field
            self.settings = settings
            self.sampling = sampling

    def __init__(self, settings: PolicySettings | None = None, sampling: SamplingConfig | None = None, *,
                 read_only: bool = False, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.settings = settings or PolicySettings()
        self.sampling = sampling or SamplingConfig()
        self.read_only = read_only

    def compose(self) -> ComposeResult:
        values = settings_values(self.settings, self.sampling)
        with Horizontal(classes="ctl-row"):
            yield Label("method", classes="ctl-label")
            yield MethodSelect([(m, m) for m in METHODS], value=self.settings.method, allow_blank=False,
                         id="ctl-method", compact=True, disabled=self.read_only)
        shown = shown_fields(self.settings.method)
        for name, label, step, help_text in FIELDS:
            unused = "" if name in shown else " -unused"
            with Horizontal(classes="ctl-row" + unused, id=f"row-{name}"):
                yield Label(label, classes="ctl-label")
                inp = ParamInput(name, step, values[name], disabled=self.read_only)
                inp.tooltip = help_text
                yield inp
            yield Label("", id=f"err-{name}", classes="ctl-error -hidden")
        yield Label("read-only: values recorded in the file" if self.read_only
                    else "Enter applies · ↑/↓ step · applies at the next step", id="ctl-status")

    # -- user changes ------------------------------------------------------------
    def on_select_changed(self, event: Select.Changed) -> None:
        event.stop()
        if self.read_only or event.value == self.settings.method or event.value is Select.NULL:
            return
        self.submit("method", str(event.value))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if not isinstance(event.input, ParamInput):
            return
        event.stop()
        if not self.read_only:
            self.submit(event.input.param, event.value)

    def submit(self, name: str, raw: str) -> bool:
        """Validate one field; on success swap the settings in and post Changed. Returns success.

        A value equal to the one in force (Enter on a field left as it was,
        `4.0` for 4) changes nothing: no Changed, so no request and no mark
        in the transcript for a change that did not happen.
        """
        label = LABELS.get(name, name)
        try:
            if name == "temperature":
                try:
                    t = float(raw)
                except ValueError:
                    raise InvalidParameter(f"temperature must be a number >= 0, got {raw!r}") from None
                if not math.isfinite(t):   # 1e400 is inf to float(): say what was typed, and that it is too big
                    raise InvalidParameter(f"temperature must be a finite number >= 0, got {raw.strip()!r}")
                new_sampling = dataclasses.replace(self.sampling, temperature=t)
                self._set_error(name, "")
                if new_sampling == self.sampling:
                    return self._unchanged(name, label)
                self.sampling = new_sampling
                self.post_message(self.Changed(self, name, None, new_sampling))
            else:
                new = self.settings.with_changes(**{name: raw.strip() if isinstance(raw, str) else raw})
                if name == "gamma0":
                    self._check_bounds_shown(new)
                elif name in _BOUNDS:
                    self._check_gamma0_inside(new)
                self._set_error(name, "")
                if new == self.settings:
                    return self._unchanged(name, label)
                moved = self._moved_along(name, self.settings, new)
                self.settings = new
                if name == "method":
                    self._show_used(new.method)
                for other, value in moved.items():
                    self.query_one(f"#ctl-{other}", ParamInput).value = value
                self.post_message(self.Changed(self, name, new, None))
        except InvalidParameter as exc:
            self._set_error(name, str(exc))
            return False
        value = raw.strip() if isinstance(raw, str) else raw
        self.query_one("#ctl-status", Label).update(Text(f"{label} = {value}: applies at the next step"))
        return True

    def _unchanged(self, name: str, label: str) -> bool:
        """Say that a value equal to the one in force changed nothing (and show it as the settings hold it)."""
        current = settings_values(self.settings, self.sampling).get(name, "")
        if name != "method":
            self.query_one(f"#ctl-{name}", ParamInput).value = current
        self.query_one("#ctl-status", Label).update(Text(f"{label} is already {current or self.settings.method}: "
                                                         "nothing to apply"))
        return True

    def _check_bounds_shown(self, new: PolicySettings) -> None:
        """γ0 outside the γ bounds on screen is refused, as the CLI refuses `--gamma` outside `--gamma-max`.

        `with_changes` moves a bound the caller did not set to a new γ0; the
        bounds shown are set, so moving them behind the user's back would plan
        γ far above the γ max on screen. A method that reads no bounds (they
        are hidden) lets them follow γ0, and the hidden fields show the values.
        """
        if "gamma_max" not in used_params(new.method):
            return
        old = self.settings.params
        if new.gamma0 > old.gamma_max:
            raise InvalidParameter(f"γ0 {new.gamma0} is above γ max {old.gamma_max}: raise γ max or lower γ0")
        if new.gamma0 < old.gamma_min:
            raise InvalidParameter(f"γ0 {new.gamma0} is below γ min {old.gamma_min}: lower γ min or raise γ0")

    def _check_gamma0_inside(self, new: PolicySettings) -> None:
        """A bound moved past the γ0 on screen is refused, as the CLI refuses `--gamma-max` below `--gamma`
        (accepted, γ max 3 under γ0 4 left a first window above γ max)."""
        if "gamma_max" not in used_params(new.method):
            return
        p = new.params
        if new.gamma0 > p.gamma_max:
            raise InvalidParameter(f"γ max {p.gamma_max} is below γ0 {new.gamma0}: lower γ0 first, or raise γ max")
        if new.gamma0 < p.gamma_min:
            raise InvalidParameter(f"γ min {p.gamma_min} is above γ0 {new.gamma0}: raise γ0 first, or lower γ min")

    def _moved_along(self, name: str, old: PolicySettings, new: PolicySettings) -> dict[str, str]:
        """The other fields a change moved with it (a hidden bound that followed γ0), with their new values."""
        before, after = settings_values(old, self.sampling), settings_values(new, self.sampling)
        return {k: v for k, v in after.items() if k != name and v != before[k]}

    def _show_used(self, method: str) -> None:
        """Show the fields `method` reads, hide the rest (and any error under a hidden one)."""
        shown = shown_fields(method)
        for name, *_ in FIELDS:
            self.query_one(f"#row-{name}").set_class(name not in shown, "-unused")
            if name not in shown:
                self._set_error(name, "")

    def _set_error(self, name: str, message: str) -> None:
        if name == "method":
            return
        err = self.query_one(f"#err-{name}", Label)
        err.update(Text(speak(message)))   # it quotes what the user typed: never read as markup
        err.set_class(not message, "-hidden")
        self.query_one(f"#ctl-{name}", ParamInput).set_class(bool(message), "-refused")
        if message:   # under a field on the panel's last rows it opens below the fold (80×24): bring it up, whole
            self.call_after_refresh(err.scroll_visible, animate=False)

    def error_for(self, name: str) -> str:
        """The reason shown under a field ('' when it is valid)."""
        err = self.query_one(f"#err-{name}", Label)
        return "" if err.has_class("-hidden") else str(err.render())

    # -- values from elsewhere ---------------------------------------------------
    def show_settings(self, settings: PolicySettings | None = None, sampling: SamplingConfig | None = None) -> None:
        """Display values in force without posting Changed (e.g. from a recording's events)."""
        if settings is not None:
            self.settings = settings
        if sampling is not None:
            self.sampling = sampling
        values = settings_values(self.settings, self.sampling)
        select = self.query_one("#ctl-method", Select)
        with self.prevent(Select.Changed):
            select.value = self.settings.method
        self._show_used(self.settings.method)
        for name, value in values.items():
            inp = self.query_one(f"#ctl-{name}", ParamInput)
            if inp.value != value:
                inp.value = value
            self._set_error(name, "")

    def choose_method(self, method: str) -> None:
        """Switch the policy as if picked in the list (the palette's "Method:" entries); a recording's stay."""
        if not self.read_only:
            self.submit("method", method)
            self.show_settings(self.settings)

    def note_applied(self, change: str) -> None:
        """Say where the last change took effect, as the transcript's mark does: 'step 7: γ0 4 → 6'."""
        self.query_one("#ctl-status", Label).update(Text(f"applied at {change}"))
