"""Terminal pastes that hold an ESC byte arrive whole and in order (the ESC as `^[`).

Textual's terminal parser (8.x) reads an ESC inside a bracketed paste as the
start of a key sequence: the characters after it left the paste and arrived
as key presses *before* the paste itself, so `x = "<ESC>[31mRED" tail`
reached the prompt as `^[31mRED" tailx = "`, and in a three-line paste the
newlines among them were Enter presses (the marker, the line breaks and the
order were lost).

`PasteFilter` stands between the terminal and the parser: inside a bracketed
paste (between ESC[200~ and ESC[201~) every ESC that does not begin the
closing ESC[201~ becomes the two characters `^[`, as terminals show it, so
the parser sees one plain paste. Outside a paste nothing changes and nothing
is held back (the Esc key stays immediate). `textual_compat.install_paste_filter`
makes the POSIX driver build its parser with the filter in front.
"""

from __future__ import annotations

ESC = "\x1b"
START, END = "\x1b[200~", "\x1b[201~"
SHOWN_ESC = "^["
"""How an ESC byte inside a paste reaches the prompt."""


class PasteFilter:
    """Rewrites the terminal's text chunk by chunk (a paste may be split across reads anywhere)."""

    def __init__(self) -> None:
        self.in_paste = False
        self.held = ""      # inside a paste: a chunk's end that may be the start of ESC[201~
        self.recent = ""    # outside a paste: the last characters passed, for an ESC[200~ split across reads

    def __call__(self, data: str) -> str:
        out: list[str] = []
        pos = 0
        while pos < len(data):
            if not self.in_paste:
                seen = self.recent + data[pos:]
                at = seen.find(START)
                if at < 0:
                    out.append(data[pos:])
                    self.recent = seen[-(len(START) - 1):]
                    break
                end = at + len(START) - len(self.recent)   # where the marker ends in data
                out.append(data[pos:pos + end])
                pos += end
                self.in_paste, self.recent = True, ""
            else:
                buf, base = self.held + data[pos:], pos - len(self.held)
                self.held = ""
                i = 0
                while True:
                    j = buf.find(ESC, i)
                    if j < 0:
                        out.append(buf[i:])
                        pos = len(data)
                        break
                    out.append(buf[i:j])
                    rest = buf[j:j + len(END)]
                    if rest == END:
                        out.append(END)
                        self.in_paste = False
                        pos = base + j + len(END)
                        break
                    if len(rest) < len(END) and END.startswith(rest):
                        self.held = rest   # decided by the next read
                        pos = len(data)
                        break
                    out.append(SHOWN_ESC)
                    i = j + 1
        return "".join(out)

    def flush(self) -> str:
        """What is held back when the input ends (a paste cut off before its end marker)."""
        held, self.held = self.held, ""
        return held.replace(ESC, SHOWN_ESC)
