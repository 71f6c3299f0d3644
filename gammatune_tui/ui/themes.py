"""Theme files: Textual theme colours plus the three token roles of docs/spec.md §4.

Every ``*.json`` file in the shipped ``themes/`` folder is loaded, then those in
the user's theme folder (``$GAMMATUNE_THEMES``, else
``~/.config/gammatune/themes``); a user theme with a shipped name replaces it.
A theme file is JSON, not code, so loading one can never run anything::

    {"name": "paper", "description": "...", "dark": true,
     "colors": {"primary": "#5b9cff", "background": "#15181d", ...},
     "tokens": {"prompt": "#5b9cff", "draft": "#3ccf6e", "target": "bold #ff5c5c"}}

A token role is a colour optionally preceded by ``bold``, ``italic`` or
``underline`` (a cue that does not rely on hue). Themes may change the hues,
never the roles.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from rich.style import Style
from textual.color import Color, ColorParseError
from textual.theme import Theme

from ..errors import GammatuneError
from ..resources import themes_dir

ROLES = ("prompt", "draft", "target")
COLOR_KEYS = ("primary", "secondary", "accent", "foreground", "background", "surface", "panel",
              "success", "warning", "error", "boost")
MODIFIERS = ("bold", "italic", "underline")
DEFAULT_THEME = "paper"
_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,39}$")
MAX_THEME_BYTES = 64 * 1024


class ThemeError(GammatuneError):
    """A theme file that cannot be used; the message names the file."""


@dataclass(frozen=True)
class TokenRole:
    """How one token role is drawn: a colour and optional non-colour cues."""

    color: str
    bold: bool = False
    italic: bool = False
    underline: bool = False

    @classmethod
    def parse(cls, spec: str, where: str) -> "TokenRole":
        if not isinstance(spec, str) or not spec.strip():
            raise ThemeError(f"{where}: must be a colour such as \"#3ccf6e\" or \"bold #ff5c5c\"")
        *mods, colour = spec.split()
        bad = [m for m in mods if m not in MODIFIERS]
        if bad:
            raise ThemeError(f"{where}: unknown modifier {bad[0]!r} (use {', '.join(MODIFIERS)})")
        _check_colour(colour, where)
        return cls(Color.parse(colour).hex, "bold" in mods, "italic" in mods, "underline" in mods)

    def style(self, color: str | None = None) -> Style:
        return Style(color=color or self.color, bold=self.bold or None, italic=self.italic or None,
                     underline=self.underline or None)


@dataclass(frozen=True)
class GammaTheme:
    name: str
    description: str
    textual: Theme
    roles: dict[str, TokenRole] = field(default_factory=dict)
    path: Path | None = None

    @property
    def background(self) -> str:
        return self.textual.background or ("#000000" if self.textual.dark else "#ffffff")

    @property
    def foreground(self) -> str:
        return self.textual.foreground or ("#e0e0e0" if self.textual.dark else "#202020")


def _check_colour(value: object, where: str) -> str:
    if not isinstance(value, str):
        raise ThemeError(f"{where}: colour must be a string")
    try:
        Color.parse(value)
    except ColorParseError:
        raise ThemeError(f"{where}: {value!r} is not a colour") from None
    return value


def parse_theme(data: object, path: Path | None = None) -> GammaTheme:
    """A validated theme from a file's JSON object."""
    where = str(path) if path else "theme"
    if not isinstance(data, dict):
        raise ThemeError(f"{where}: a theme must be a JSON object")
    name = data.get("name", path.stem if path else None)
    if not isinstance(name, str) or not _NAME.match(name):
        raise ThemeError(f"{where}: 'name' must be lower-case letters, digits, '-' or '_'")
    colors = data.get("colors", {})
    if not isinstance(colors, dict):
        raise ThemeError(f"{where}: 'colors' must be an object")
    unknown = set(colors) - set(COLOR_KEYS)
    if unknown:
        raise ThemeError(f"{where}: unknown colour {sorted(unknown)[0]!r} (known: {', '.join(COLOR_KEYS)})")
    if "primary" not in colors:
        raise ThemeError(f"{where}: 'colors' needs at least 'primary'")
    for k, v in colors.items():
        _check_colour(v, f"{where}: colors.{k}")
    tokens = data.get("tokens")
    if not isinstance(tokens, dict) or set(tokens) != set(ROLES):
        raise ThemeError(f"{where}: 'tokens' must give exactly {', '.join(ROLES)}")
    roles = {r: TokenRole.parse(tokens[r], f"{where}: tokens.{r}") for r in ROLES}
    dark = data.get("dark", True)
    if not isinstance(dark, bool):
        raise ThemeError(f"{where}: 'dark' must be true or false")
    description = data.get("description", "")
    if not isinstance(description, str):
        raise ThemeError(f"{where}: 'description' must be a string")
    variables = {f"token-{r}": roles[r].color for r in ROLES}
    theme = Theme(name=name, dark=dark, variables=variables, **colors)
    return GammaTheme(name, description[:200], theme, roles, path)


def load_theme_file(path: Path) -> GammaTheme:
    try:
        if path.stat().st_size > MAX_THEME_BYTES:
            raise ThemeError(f"{path}: too large for a theme file")
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ThemeError(f"{path}: cannot read ({exc})") from None
    except json.JSONDecodeError as exc:
        raise ThemeError(f"{path}: not valid JSON (line {exc.lineno})") from None
    return parse_theme(data, path)


def user_themes_dir() -> Path:
    env = os.environ.get("GAMMATUNE_THEMES")
    if env:
        return Path(env).expanduser()
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "gammatune" / "themes"


def load_themes(extra_dirs: list[Path] | None = None) -> tuple[dict[str, GammaTheme], list[str]]:
    """All themes by name (shipped first, user ones override) and warnings for unusable user files."""
    themes: dict[str, GammaTheme] = {}
    warnings: list[str] = []
    dirs: list[tuple[Path, bool]] = []
    try:
        dirs.append((themes_dir(), True))
    except FileNotFoundError:
        warnings.append("the shipped themes/ folder is missing; using the built-in paper theme")
    env = os.environ.get("GAMMATUNE_THEMES")
    if env and not user_themes_dir().is_dir():
        # set by the user on purpose: a typo or a file here must be said, not leave their themes silently absent
        where = user_themes_dir()
        why = "is a file, not a folder" if where.exists() else "does not exist"
        warnings.append(f"GAMMATUNE_THEMES={env}: {why}; no user themes loaded (point it at a folder of theme .json files)")
    for d in [user_themes_dir(), *(extra_dirs or [])]:
        dirs.append((d, False))
    for d, shipped in dirs:
        if not d.is_dir():
            continue
        for path in sorted(d.glob("*.json")):
            try:
                t = load_theme_file(path)
            except ThemeError as exc:
                if shipped:
                    raise
                warnings.append(str(exc))
                continue
            themes[t.name] = t
    if DEFAULT_THEME not in themes:
        themes[DEFAULT_THEME] = FALLBACK
    return themes, warnings


FALLBACK = parse_theme({
    "name": "paper", "dark": True,
    "colors": {"primary": "#5b9cff", "background": "#15181d", "foreground": "#e3e6eb",
               "success": "#3ccf6e", "error": "#ff5c5c", "warning": "#f2b84b", "accent": "#f2b84b"},
    "tokens": {"prompt": "#5b9cff", "draft": "#3ccf6e", "target": "#ff5c5c"},
})
