"""Charts as SVG written on the server: no script, no stylesheet and no address outside the
console, so they render the same in any browser, in a screenshot and in a printout.

Each function takes plain numbers and returns markup safe to put in a template; every label
is escaped. Colours are the admin's own palette plus one green and one red, and every bar
also carries its number as text, so the charts can be read without colour.
"""
from __future__ import annotations

from dataclasses import dataclass

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

SUCCESS = "#2e7d32"
FAILED = "#c62828"
EXPIRED = "#9e9e9e"
OPEN = "#1976d2"
TEXT = "#333333"
GRID = "#dddddd"
FONT = "font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;font-size:12px"


@dataclass(frozen=True)
class Segment:
    label: str
    value: int
    colour: str


@dataclass(frozen=True)
class StackedRow:
    label: str
    segments: tuple[Segment, ...]

    @property
    def total(self) -> int:
        return sum(segment.value for segment in self.segments)


def _svg(width: int, height: int, title: str, body: list[str]) -> SafeString:
    return mark_safe(
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="100%" '
        f'style="max-width:{width}px;{FONT}" role="img" aria-label="{escape(title)}">'
        f"<title>{escape(title)}</title>{''.join(body)}</svg>"
    )


def _legend(segments: list[Segment], y: int, x: int = 0) -> list[str]:
    body = []
    for segment in segments:
        body.append(f'<rect x="{x}" y="{y - 10}" width="12" height="12" fill="{segment.colour}"/>'
                    f'<text x="{x + 16}" y="{y}" fill="{TEXT}">{escape(segment.label)}</text>')
        x += 22 + 7 * len(segment.label)
    return body


def stacked_bars(rows: list[StackedRow], *, title: str, width: int = 640) -> SafeString:
    """One horizontal bar per row, split into its segments, with the total at its end."""
    label_width, right, bar_height, gap, top = 130, 70, 22, 10, 26
    plot = width - label_width - right
    biggest = max((row.total for row in rows), default=0) or 1
    height = top + len(rows) * (bar_height + gap) + 8
    body = _legend([segment for segment in rows[0].segments] if rows else [], 14)
    if not rows:
        body.append(f'<text x="0" y="{top + 16}" fill="{TEXT}">No payments in this period.</text>')
        return _svg(width, top + 30, title, body)
    for index, row in enumerate(rows):
        y = top + index * (bar_height + gap)
        body.append(f'<text x="{label_width - 8}" y="{y + 15}" text-anchor="end" fill="{TEXT}">'
                    f"{escape(row.label)}</text>")
        x = float(label_width)
        for segment in row.segments:
            if not segment.value:
                continue
            length = plot * segment.value / biggest
            body.append(f'<rect x="{x:.1f}" y="{y}" width="{max(length, 1):.1f}" height="{bar_height}" '
                        f'fill="{segment.colour}"><title>{escape(row.label)}: {segment.value} '
                        f"{escape(segment.label)}</title></rect>")
            x += length
        body.append(f'<text x="{x + 6:.1f}" y="{y + 15}" fill="{TEXT}">{row.total}</text>')
    return _svg(width, height, title, body)


def rate_bars(rows: list[tuple[str, float | None, int]], *, title: str, width: int = 640) -> SafeString:
    """Horizontal bars on a 0-100 % scale: (label, rate or None when nothing finished, count)."""
    label_width, right, bar_height, gap, top = 130, 150, 22, 10, 22
    plot = width - label_width - right
    height = top + max(len(rows), 1) * (bar_height + gap) + 8
    body = []
    for percent in (0, 50, 100):
        x = label_width + plot * percent / 100
        body.append(f'<line x1="{x:.1f}" y1="{top - 4}" x2="{x:.1f}" y2="{height - 6}" stroke="{GRID}"/>'
                    f'<text x="{x:.1f}" y="{top - 8}" text-anchor="middle" fill="{TEXT}">{percent}%</text>')
    if not rows:
        body.append(f'<text x="0" y="{top + 16}" fill="{TEXT}">No payments in this period.</text>')
    for index, (label, rate, finished) in enumerate(rows):
        y = top + index * (bar_height + gap)
        body.append(f'<text x="{label_width - 8}" y="{y + 15}" text-anchor="end" fill="{TEXT}">{escape(label)}</text>')
        if rate is None:
            body.append(f'<text x="{label_width + 4}" y="{y + 15}" fill="{TEXT}">none finished yet</text>')
            continue
        colour = SUCCESS if rate >= 0.9 else ("#ef6c00" if rate >= 0.7 else FAILED)
        length = plot * rate
        body.append(f'<rect x="{label_width}" y="{y}" width="{max(length, 1):.1f}" height="{bar_height}" '
                    f'fill="{colour}"><title>{escape(label)}: {rate:.1%} of {finished}</title></rect>'
                    f'<text x="{label_width + plot + 8}" y="{y + 15}" fill="{TEXT}">{rate:.1%} of {finished}</text>')
    return _svg(width, height, title, body)


def column_chart(points: list[tuple[str, int, int]], *, title: str, width: int = 640,
                 legend: tuple[str, str] = ("payments", "succeeded")) -> SafeString:
    """Vertical bars over time: (label, total, of which succeeded). Every third label shown."""
    left, bottom, top, height = 36, 22, 24, 200
    plot_height = height - top - bottom
    plot_width = width - left - 8
    biggest = max((total for _, total, _ in points), default=0) or 1
    step = plot_width / max(len(points), 1)
    body = _legend([Segment(legend[0], 0, OPEN), Segment(legend[1], 0, SUCCESS)], 14, x=left)
    body.append(f'<line x1="{left}" y1="{height - bottom}" x2="{width - 8}" y2="{height - bottom}" stroke="{GRID}"/>'
                f'<text x="{left - 4}" y="{top + 8}" text-anchor="end" fill="{TEXT}">{biggest}</text>'
                f'<text x="{left - 4}" y="{height - bottom}" text-anchor="end" fill="{TEXT}">0</text>')
    for index, (label, total, succeeded) in enumerate(points):
        x = left + index * step
        bar = max(step - 3, 1)
        for value, colour in ((total, OPEN), (succeeded, SUCCESS)):
            if value:
                length = plot_height * value / biggest
                body.append(f'<rect x="{x + 1:.1f}" y="{height - bottom - length:.1f}" width="{bar:.1f}" '
                            f'height="{length:.1f}" fill="{colour}"><title>{escape(label)}: {total} payments, '
                            f"{succeeded} succeeded</title></rect>")
        if index % 3 == 0:
            body.append(f'<text x="{x + bar / 2:.1f}" y="{height - 6}" text-anchor="middle" fill="{TEXT}">'
                        f"{escape(label)}</text>")
    return _svg(width, height, title, body)
