"""Server-side SVG charts: no script, no CDN, readable offline and in a screenshot.

Every label is stored text (reasons, tool and collection names), so everything written into the
markup goes through :func:`markupsafe.escape`; numbers are formatted by us.
"""

from __future__ import annotations

from typing import Any

from markupsafe import Markup

from tracelake.web.text import esc as escape

PALETTE = (
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
    "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac",
)  # fmt: skip
FONT = 'font-family="DejaVu Sans, Arial, sans-serif" font-size="11"'


def _num(value: float) -> str:
    if value >= 1000:
        return f"{value / 1000:.1f}k" if value < 1e6 else f"{value / 1e6:.1f}M"
    return f"{value:g}" if value == int(value) else f"{value:.1f}"


def _svg(width: int, height: int, title: str, body: list[str]) -> Markup:
    head = (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{escape(title)}" {FONT}>'
        f"<title>{escape(title)}</title>"
    )
    return Markup(head + "".join(body) + "</svg>")


def _cut(text: str, size: int) -> str:
    return text if len(text) <= size else text[: size - 1] + "…"


def stacked_bars(title: str, buckets: list[str], series: dict[str, list[int]]) -> Markup:
    """Counts per bucket, stacked by series (failure reasons), with a legend."""
    width, height, left, bottom, top = 640, 240, 40, 48, 12
    names = sorted(series, key=lambda n: -sum(series[n]))
    totals = [sum(series[n][i] for n in names) for i in range(len(buckets))]
    peak = max(totals, default=0) or 1
    plot_w, plot_h = width - left - 170, height - top - bottom
    step = plot_w / max(len(buckets), 1)
    bar = max(min(step * 0.7, 40), 2)
    body = [
        f'<line x1="{left}" y1="{top + plot_h}" x2="{left + plot_w}" y2="{top + plot_h}" '
        'stroke="#999"/>',
        f'<text x="{left - 4}" y="{top + 8}" text-anchor="end">{_num(peak)}</text>',
        f'<text x="{left - 4}" y="{top + plot_h}" text-anchor="end">0</text>',
    ]
    for i, label in enumerate(buckets):
        x = left + i * step + (step - bar) / 2
        y: float = top + plot_h
        for j, name in enumerate(names):
            n = series[name][i]
            if not n:
                continue
            h = plot_h * n / peak
            y -= h
            body.append(
                f'<rect x="{x:.1f}" y="{y:.1f}" width="{bar:.1f}" height="{h:.1f}" '
                f'fill="{PALETTE[j % len(PALETTE)]}"><title>{escape(label)} '
                f"{escape(name)}: {n}</title></rect>"
            )
        if len(buckets) <= 8 or i % max(len(buckets) // 8, 1) == 0:
            body.append(
                f'<text x="{x + bar / 2:.1f}" y="{top + plot_h + 14}" text-anchor="middle">'
                f"{escape(label[5:] if len(label) > 10 else label)}</text>"
            )
    for j, name in enumerate(names[:12]):
        y = top + j * 16
        body.append(
            f'<rect x="{width - 160}" y="{y}" width="10" height="10" '
            f'fill="{PALETTE[j % len(PALETTE)]}"/>'
            f'<text x="{width - 145}" y="{y + 9}">{escape(_cut(name, 22))} '
            f"({sum(series[name])})</text>"
        )
    return _svg(width, height, title, body)


def latency_bars(title: str, rows: list[dict[str, Any]], limit: int = 12) -> Markup:
    """p50 / p95 / p99 per tool, one group of three bars per tool."""
    rows = [r for r in rows if r.get("p99_ms") is not None][:limit]
    keys = (("p50_ms", "p50"), ("p95_ms", "p95"), ("p99_ms", "p99"))
    peak = max((float(r[k]) for r in rows for k, _ in keys), default=0.0) or 1.0
    left, row_h, width = 150, 30, 640
    height = 30 + row_h * max(len(rows), 1)
    plot_w = width - left - 70
    body = []
    for j, (_, name) in enumerate(keys):
        body.append(
            f'<rect x="{left + j * 60}" y="4" width="10" height="10" fill="{PALETTE[j]}"/>'
            f'<text x="{left + j * 60 + 14}" y="13">{name}</text>'
        )
    if not rows:
        body.append(f'<text x="{left}" y="45">no timed tool calls yet</text>')
    for i, r in enumerate(rows):
        y = 24 + i * row_h
        body.append(
            f'<text x="{left - 6}" y="{y + 15}" text-anchor="end">'
            f"{escape(_cut(str(r['tool']), 24))}</text>"
        )
        for j, (key, name) in enumerate(keys):
            value = float(r[key])
            w = max(plot_w * value / peak, 1)
            body.append(
                f'<rect x="{left}" y="{y + j * 8}" width="{w:.1f}" height="7" '
                f'fill="{PALETTE[j]}"><title>{escape(str(r["tool"]))} {name}: '
                f"{_num(value)} ms</title></rect>"
            )
        body.append(
            f'<text x="{left + plot_w * float(r["p99_ms"]) / peak + 6:.1f}" y="{y + 22}">'
            f"{_num(float(r['p99_ms']))} ms</text>"
        )
    return _svg(width, height, title, body)


def funnel(title: str, stages: list[tuple[str, int]]) -> Markup:
    width, row_h, left = 640, 34, 110
    peak = max((n for _, n in stages), default=0) or 1
    plot_w = width - left - 60
    body = []
    for i, (name, n) in enumerate(stages):
        y = 6 + i * row_h
        w = max(plot_w * n / peak, 1)
        x = left + (plot_w - w) / 2
        body.append(
            f'<text x="{left - 8}" y="{y + 18}" text-anchor="end">{escape(name)}</text>'
            f'<rect x="{x:.1f}" y="{y}" width="{w:.1f}" height="{row_h - 8}" '
            f'fill="{PALETTE[i % len(PALETTE)]}"/>'
            f'<text x="{left + plot_w + 8}" y="{y + 18}">{n}</text>'
        )
    return _svg(width, 12 + row_h * len(stages), title, body)
