"""A sweep's comparison as text, CSV and a small HTML page (one plotly chart per metric, error bars
for the 95% confidence intervals over seeds)."""

from __future__ import annotations

import csv
import html
import io
import json
from pathlib import Path
from typing import Any

from kubesched.sim.html_page import PAGE, STYLE
from kubesched.sim.sweep import METRICS, Comparison, Interval
from kubesched.util.extras import require_extra

SHARES = ("cpu_utilisation", "memory_utilisation", "fragmentation")


def cell(name: str, value: Interval) -> str:
    """``0.71 ± 0.02`` (shares as percentages, counts with one decimal)."""
    if name in SHARES:
        text = f"{value.mean * 100:.1f}%"
        return text + (f" ± {value.half_width * 100:.1f}" if value.n > 1 else "")
    text = f"{value.mean:.1f}" if name != "p99_latency" else f"{value.mean:.2f}"
    return text + (
        f" ± {value.half_width:.1f}"
        if value.n > 1 and name != "p99_latency"
        else f" ± {value.half_width:.2f}"
        if value.n > 1
        else ""
    )


def format_comparison(comparison: Comparison) -> str:
    """One row per (scenario, variant), one column per metric: mean ± 95% CI over seeds."""
    header = ["scenario", "variant", *(title for _, title in METRICS)]
    rows = [
        [scenario, variant, *(cell(name, row[name]) for name, _ in METRICS)]
        for (scenario, variant), row in comparison.rows.items()
    ]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in [header, *rows]]
    seeds = max((i.n for row in comparison.rows.values() for i in row.values()), default=0)
    lines.append("")
    lines.append(
        f"{len(comparison.runs)} runs; mean ± half-width of the 95% confidence interval over {seeds} "
        f"seed{'' if seeds == 1 else 's'} (Student's t); shares of allocatable at the end of each run."
    )
    return "\n".join(lines)


def comparison_csv(comparison: Comparison) -> str:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["scenario", "variant", *(f"{name}_{part}" for name, _ in METRICS for part in ("mean", "ci95"))])
    for (scenario, variant), row in comparison.rows.items():
        writer.writerow(
            [scenario, variant, *(f"{v:.6g}" for name, _ in METRICS for v in (row[name].mean, row[name].half_width))]
        )
    return out.getvalue()


def figures(comparison: Comparison) -> list[dict[str, Any]]:
    """One grouped bar chart per metric: a bar per variant, a group per scenario, CI error bars."""
    scenarios = list(dict.fromkeys(s for s, _ in comparison.rows))
    variants = list(dict.fromkeys(v for _, v in comparison.rows))
    out = []
    for name, title in METRICS:
        traces = []
        for variant in variants:
            rows = [comparison.rows.get((s, variant)) for s in scenarios]
            traces.append(
                {
                    "type": "bar",
                    "name": variant,
                    "x": scenarios,
                    "y": [r[name].mean if r else None for r in rows],
                    "error_y": {"type": "data", "array": [r[name].half_width if r else 0 for r in rows]},
                }
            )
        out.append(
            {
                "id": f"plot-{name}",
                "data": traces,
                "layout": {
                    "title": {"text": title},
                    "barmode": "group",
                    "height": 320,
                    "margin": {"t": 40, "b": 40, "l": 50, "r": 10},
                },
            }
        )
    return out


_SCRIPT = r"""
(function () {
  "use strict";
  var root = document.documentElement;
  function unpack(id) {
    var text = atob(document.getElementById(id).textContent.trim());
    var bytes = new Uint8Array(text.length);
    for (var i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
    return new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"))).text();
  }
  Promise.all([unpack("plotly-js"), unpack("report-data")]).then(function (texts) {
    var code = document.createElement("script");
    code.textContent = texts[0];
    document.head.appendChild(code);
    var data = JSON.parse(texts[1]);
    return Promise.all(data.figures.map(function (f) {
      return Plotly.newPlot(f.id, f.data, f.layout, {displaylogo: false, responsive: true});
    }));
  }).then(function (plots) {
    root.dataset.plots = String(plots.length);
    root.dataset.report = "ready";
  }).catch(function (err) {
    document.getElementById("js-errors").textContent = String(err && err.message ? err.message : err);
    root.dataset.report = "error";
  });
})();
"""


def render(comparison: Comparison) -> str:
    require_extra("sim", "the HTML comparison", ("plotly",))
    from plotly.offline import get_plotlyjs

    from kubesched.sim.html_report import _pack

    figs = figures(comparison)
    table = format_comparison(comparison)
    body = (
        "<p class=lead>Each bar is a mean over seeds, its whisker the 95% confidence interval.</p>"
        "<div class=charts>" + "".join(f'<div id="{f["id"]}"></div>' for f in figs) + "</div>"
        "<h2>Comparison</h2><pre>" + html.escape(table) + "</pre>"
    )
    data = json.dumps({"figures": figs}, separators=(",", ":"), allow_nan=False)
    return PAGE.format(
        title="kubesched sweep", style=STYLE, body=body, plotly=_pack(get_plotlyjs()), data=_pack(data), script=_SCRIPT
    )


def write_outputs(comparison: Comparison, directory: str | Path, *, report: bool = True) -> list[Path]:
    """``runs.json`` (every run), ``comparison.json``, ``comparison.csv`` and ``report.html`` in ``directory``."""
    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    document = comparison.to_dict()
    written = []
    for name, text in (
        ("comparison.json", json.dumps({k: v for k, v in document.items() if k != "runs"}, indent=2)),
        ("runs.json", json.dumps(document["runs"], indent=2)),
        ("comparison.csv", comparison_csv(comparison)),
    ):
        (folder / name).write_text(text + ("" if text.endswith("\n") else "\n"), encoding="utf-8")
        written.append(folder / name)
    if report:
        (folder / "report.html").write_text(render(comparison), encoding="utf-8")
        written.append(folder / "report.html")
    return written
