"""A self-contained HTML page: inline CSS, figures as base64 PNG, no script and no network access."""

from __future__ import annotations

import base64
import html
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

_CSS = """
body { font-family: system-ui, -apple-system, 'Segoe UI', sans-serif; margin: 2em auto; max-width: 1200px;
       color: #222; line-height: 1.4; padding: 0 1em; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; } h2 { font-size: 1.25em; margin-top: 2em;
     border-bottom: 1px solid #ccc; padding-bottom: 0.2em; }
table { border-collapse: collapse; margin: 0.8em 0; font-size: 0.88em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: right; }
th { background: #f3f3f3; text-align: center; } th.group { border-bottom: 2px solid #999; }
td.text { text-align: left; } .wide { overflow-x: auto; }
figure { margin: 1em 0; } figure img { max-width: 100%; border: 1px solid #eee; }
figcaption { font-size: 0.9em; color: #444; margin-top: 0.3em; }
p.missing { color: #8a6d3b; background: #fcf8e3; padding: 0.5em 0.8em; border-left: 4px solid #f0ad4e; }
.meta td { text-align: left; } nav a { margin-right: 1em; font-size: 0.9em; }
"""


def cell(value: Any) -> str:
    """A table cell's text: numbers with 4 significant digits (integers as they are), None/NaN as '-'.

    Floats of magnitude 1e5 and above are shown without decimals, infinities as '-', booleans as yes / no.

    Args:
        value: The cell's value: a number, a boolean, None, or anything shown as its ``str``.
    """
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return f"{value:.4g}" if abs(value) < 1e5 else f"{value:.0f}"
    return str(value)


def table(
    headers: Sequence[str],
    rows: Iterable[Sequence[Any]],
    table_id: str = "",
    groups: Sequence[tuple[str, int]] = (),
) -> str:
    """An HTML table; text cells are left-aligned.

    ``groups`` (label, columns spanned) adds a header row above; empty ``headers`` make a key-value table without a
    header.

    Args:
        headers: The column headers; all empty strings: no header row.
        rows: The rows, one value per column, each shown by :func:`cell` (escaped).
        table_id: The table's HTML id; "" for none.
        groups: ``(label, columns spanned)`` of a header row above ``headers``; empty: none.
    """
    body = []
    for row in rows:
        cells = "".join(
            f'<td class="text">{html.escape(cell(v))}</td>'
            if isinstance(v, str)
            else f"<td>{html.escape(cell(v))}</td>"
            for v in row
        )
        body.append(f"<tr>{cells}</tr>")
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    top = "".join(f'<th colspan="{n}" class="group">{html.escape(label)}</th>' for label, n in groups)
    thead = (f"<tr>{top}</tr>" if groups else "") + (f"<tr>{head}</tr>" if any(headers) else "")
    ident = f' id="{html.escape(table_id)}"' if table_id else ""
    return f"<table{ident}><thead>{thead}</thead><tbody>{''.join(body)}</tbody></table>"


def figure(png: bytes, caption: str, figure_id: str) -> str:
    """A figure with its PNG inline (data URI).

    Args:
        png: The image's PNG bytes.
        caption: The caption, also the image's alt text.
        figure_id: The figure's HTML id (an anchor).
    """
    data = base64.b64encode(png).decode("ascii")
    return (
        f'<figure id="{html.escape(figure_id)}"><img alt="{html.escape(caption)}" src="data:image/png;base64,{data}">'
        f"<figcaption>{html.escape(caption)}</figcaption></figure>"
    )


def paragraph(text: str, missing: bool = False) -> str:
    """A paragraph; ``missing`` marks what a run could not show, and why.

    Args:
        text: The paragraph's text (escaped).
        missing: Style it as a note on what is missing.
    """
    css = ' class="missing"' if missing else ""
    return f"<p{css}>{html.escape(text)}</p>"


@dataclass
class Section:
    """One section of the report: an id (anchor, also the key in summary.json), a title, HTML parts."""

    section_id: str
    title: str
    parts: list[str] = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)
    available: bool = True

    def missing(self, reason: str) -> Section:
        """Mark the section as not available in this run, saying why.

        Args:
            reason: Why, kept in ``data["reason"]`` and shown as a note.

        Returns:
            The section itself.
        """
        self.available = False
        self.data["reason"] = reason
        self.parts.append(paragraph(f"Not available in this run: {reason}", missing=True))
        return self

    def render(self) -> str:
        """The section's HTML."""
        return f'<section id="{self.section_id}"><h2>{html.escape(self.title)}</h2>{"".join(self.parts)}</section>'


def page(title: str, intro: str, sections: Sequence[Section]) -> str:
    """The whole HTML document.

    Args:
        title: The page's title and heading.
        intro: HTML shown under the heading (not escaped).
        sections: The sections in order, each linked from the navigation bar by its title (up to a colon).
    """
    nav = "".join(f'<a href="#{s.section_id}">{html.escape(s.title.split(":")[0])}</a>' for s in sections)
    body = "".join(s.render() for s in sections)
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title><style>{_CSS}</style></head>"
        f"<body><h1>{html.escape(title)}</h1>{intro}<nav>{nav}</nav>{body}</body></html>\n"
    )
