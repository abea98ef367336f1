#!/usr/bin/env python3
"""Draw `make bench`'s side-by-side results as grouped horizontal bars (SVG, then PNG).

scripts/bench.sh keeps its stdout in bench-out/bench.txt and runs this on it, so a change's
effect shows at a glance beside the text. Only the machine-readable summary lines are read
(`bench images: key=value ...`, `bench video: ...`, `bench memory: ...`, `bench serve: ...`);
the last one of each section wins. A section missing from the input (BENCH_ONLY) is left out.

Python standard library only (no matplotlib on the bench machines); the PNG is made by
`vips copy chart.svg chart.png` (libvips's svgload, through librsvg). Without svgload the SVG
is kept and a note says so.

Usage:
    bench-chart.py [FILE|-] [--out bench.svg] [--png bench.png]

Exit status: 0 when the SVG was written (even if the PNG could not be), 1 when the input holds
no bench summary line, 2 on a usage or I/O error.
"""

from __future__ import annotations

import argparse
import math
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from html import escape

SECTIONS = ("images", "video", "memory", "serve")
LINE = re.compile(r"^bench (" + "|".join(SECTIONS) + r"): (.*)$")
PAIR = re.compile(r"(\w+)=(\S+)")


def parse(text: str) -> dict[str, dict[str, str]]:
    """Each section's key=value pairs from its last summary line (progress lines have none)."""
    found: dict[str, dict[str, str]] = {}
    for raw in text.splitlines():
        m = LINE.match(raw.strip())
        if not m:
            continue
        pairs = dict(PAIR.findall(m.group(2)))
        if pairs:
            found[m.group(1)] = pairs
    return found


def num(pairs: dict[str, str], key: str) -> float | None:
    """A numeric field, or None when absent or not a number (a bar is then left out)."""
    try:
        value = float(pairs[key])
    except (KeyError, ValueError):
        return None
    return value if math.isfinite(value) and value >= 0 else None  # NaN, infinities and negatives are not data


@dataclass
class Bar:
    label: str
    value: float
    unit: str
    ours: bool = False  # PushPrep's own bar, drawn in the accent colour
    goal: float | None = None  # a tick across this bar's row
    goal_label: str = ""  # "goal <value>" when a goal is given without a label

    def __post_init__(self) -> None:
        if self.goal is not None and not self.goal_label:
            self.goal_label = f"goal {fmt(self.goal)}"


@dataclass
class Group:
    title: str
    notes: list[str] = field(default_factory=list)  # ratios and goals, one line each
    bars: list[Bar] = field(default_factory=list)


def verdict(ok: bool) -> str:
    return "ok" if ok else "MISSES GOAL"


def fmt(v: float) -> str:
    if v >= 1000:
        return f"{v:,.0f}"
    if v >= 100:
        return f"{v:.1f}".rstrip("0").rstrip(".")
    return f"{v:.2f}"


def groups(data: dict[str, dict[str, str]]) -> list[Group]:
    out: list[Group] = []

    if "images" in data:
        d = data["images"]
        g = Group("Photos to 1290 px: images/s (higher is better)")
        pp, vt, bare = num(d, "pushprep_ips"), num(d, "vipsthumbnail_ips"), num(d, "bare_ips")
        goal = 0.90 * bare if bare is not None else None
        if pp is not None:
            g.bars.append(Bar("pushprep", pp, "images/s", ours=True, goal=goal))
        if vt is not None:
            g.bars.append(Bar("vipsthumbnail", vt, "images/s"))
        if bare is not None:
            g.bars.append(Bar("bare libvips loop", bare, "images/s"))
        r, br = num(d, "ratio"), num(d, "bare_ratio")
        if br is not None:
            g.notes.append(f"pushprep / bare loop: {br:.2f} (goal >= 0.90: {verdict(br >= 0.90)})")
        if r is not None:
            g.notes.append(f"pushprep / vipsthumbnail: {r:.2f} (issue 16: >= 1.45 on its corpus)")
        if g.bars:
            out.append(g)

    mem = Group("Peak memory, MB (lower is better)")
    if "images" in data:
        rss = num(data["images"], "peak_rss_mb")
        if rss is not None:
            mem.bars.append(Bar("pushprep, photo batch", rss, "MB", ours=True, goal=300.0,
                                goal_label="goal < 300"))
            mem.notes.append(f"photo batch: {fmt(rss)} MB (goal < 300: {verdict(rss < 300)})")
        # One vipsthumbnail process per image: its largest; the bare loop is one process.
        for key, label in (("vipsthumbnail_peak_mb", "vipsthumbnail, largest process"),
                           ("bare_peak_mb", "bare libvips loop")):
            value = num(data["images"], key)
            if value is not None:
                mem.bars.append(Bar(label, value, "MB"))
    if "memory" in data:
        d = data["memory"]
        peak, limit = num(d, "peak_mb"), num(d, "limit_mb")
        base, default = num(d, "baseline_mb"), num(d, "default_peak_mb")
        cap = limit + base if limit is not None and base is not None else None
        if peak is not None:
            lim = f" {fmt(limit)}" if limit is not None else ""
            mem.bars.append(Bar(f"pushprep, --memory-limit{lim}", peak, "MB", ours=True, goal=cap,
                                goal_label=f"limit + baseline {fmt(cap)}" if cap is not None else ""))
        if default is not None:
            mem.bars.append(Bar("pushprep, no limit", default, "MB"))
        if peak is not None and cap is not None:
            mem.notes.append(f"memory batch: {fmt(peak)} MB under a {fmt(limit)} MB limit "
                             f"(goal <= limit + baseline {fmt(cap)}: {verdict(peak <= cap)})")
        if peak is not None and default:
            mem.notes.append(f"limited / unlimited peak: {peak / default:.2f}")
    if mem.bars:
        out.append(mem)

    if "video" in data:
        d = data["video"]
        g = Group("Video, 1080p 60 s to a 720 px 15 s preview: seconds (lower is better)")
        pp, ff = num(d, "pushprep_transcode_s"), num(d, "ffmpeg_s")
        copy, fine = num(d, "copy_s"), num(d, "pushprep_transcode_fine_s")
        goal = 1.05 * ff if ff is not None else None
        if pp is not None:
            g.bars.append(Bar("pushprep", pp, "s", ours=True, goal=goal))
        if ff is not None:
            g.bars.append(Bar("ffmpeg", ff, "s"))
        if copy is not None:
            g.bars.append(Bar("pushprep, fine clip copied", copy, "s", ours=True))
        if fine is not None:
            g.bars.append(Bar("pushprep, fine clip transcoded", fine, "s"))
        r, cpu, speed = num(d, "ratio"), num(d, "cpu_ratio"), num(d, "copy_speedup")
        if r is not None:
            cpu_text = f", CPU {cpu:.2f}" if cpu is not None else ""
            g.notes.append(f"pushprep / ffmpeg: {r:.2f}{cpu_text} (goal <= 1.05: {verdict(r <= 1.05)})")
        if speed is not None:
            g.notes.append(f"copy vs transcode: {speed:.1f}x faster (goal >= 10x: {verdict(speed >= 10)})")
        if g.bars:
            out.append(g)

    if "serve" in data:
        d = data["serve"]
        g = Group("GET /v1/attachments/{file}: requests/s (higher is better)")
        pp, ng = num(d, "files_rps"), num(d, "nginx_rps")
        goal = 0.5 * ng if ng is not None else None
        if pp is not None:
            g.bars.append(Bar("pushprep serve", pp, "req/s", ours=True, goal=goal))
        if ng is not None:
            g.bars.append(Bar("nginx", ng, "req/s"))
        r = num(d, "ratio")
        if r is not None:
            g.notes.append(f"pushprep / nginx: {r:.2f} (goal >= 0.5: {verdict(r >= 0.5)})")
        if g.bars:
            out.append(g)

    return out


# Layout, in px.
WIDTH = 960
LEFT = 250  # bar labels end here
BAR_MAX = 520  # the longest bar (or goal tick) in a group
BAR_H = 22
ROW = 34
TITLE_H = 26
NOTE_H = 19
GAP = 26
FONT = "DejaVu Sans, Liberation Sans, Arial, sans-serif"
OURS, THEIRS, GOAL = "#d9541e", "#7a8a99", "#1a7f37"


def svg(gs: list[Group], heading: str) -> str:
    parts: list[str] = []
    y = 44
    for g in gs:
        parts.append(f'<text x="20" y="{y}" font-size="17" font-weight="bold">{escape(g.title)}</text>')
        y += TITLE_H
        for note in g.notes:
            parts.append(f'<text x="20" y="{y - 6}" font-size="14" fill="#333">{escape(note)}</text>')
            y += NOTE_H
        y += 6
        top = max(max(b.value for b in g.bars), max((b.goal or 0) for b in g.bars)) or 1.0
        scale = BAR_MAX / (top * 1.05)
        for b in g.bars:
            w = max(b.value * scale, 1.0)
            cy = y + BAR_H / 2
            parts.append(f'<text x="{LEFT - 10}" y="{cy + 5:.1f}" font-size="14" text-anchor="end">'
                         f"{escape(b.label)}</text>")
            parts.append(f'<rect x="{LEFT}" y="{y}" width="{w:.1f}" height="{BAR_H}" '
                         f'fill="{OURS if b.ours else THEIRS}"/>')
            # The value goes right of the bar, or right of the goal tick when the tick would cross it
            # (width estimated at 10 px a character of 14 px bold DejaVu Sans, a little over).
            value_text = fmt(b.value) + " " + b.unit
            tx = LEFT + w + 8
            if b.goal is not None and tx - 10 <= LEFT + b.goal * scale <= tx + 10 * len(value_text) + 4:
                tx = LEFT + b.goal * scale + 8
            parts.append(f'<text x="{tx:.1f}" y="{cy + 5:.1f}" font-size="14" '
                         f'font-weight="bold">{escape(value_text)}</text>')
            if b.goal is not None:
                gx = LEFT + b.goal * scale
                parts.append(f'<line x1="{gx:.1f}" y1="{y - 4}" x2="{gx:.1f}" y2="{y + BAR_H + 4}" '
                             f'stroke="{GOAL}" stroke-width="2.5" stroke-dasharray="4 3"/>')
                # The goal's label sits at the right edge, clear of the value text.
                parts.append(f'<text x="{WIDTH - 16}" y="{cy + 5:.1f}" font-size="12" fill="{GOAL}" '
                             f'text-anchor="end">{escape(b.goal_label)}</text>')
            y += ROW
        y += GAP
    height = y + 10
    legend_y = height - 14
    legend = (f'<rect x="20" y="{legend_y - 11}" width="12" height="12" fill="{OURS}"/>'
              f'<text x="38" y="{legend_y}" font-size="12">PushPrep</text>'
              f'<rect x="120" y="{legend_y - 11}" width="12" height="12" fill="{THEIRS}"/>'
              f'<text x="138" y="{legend_y}" font-size="12">reference</text>'
              f'<line x1="230" y1="{legend_y - 12}" x2="230" y2="{legend_y + 2}" stroke="{GOAL}" '
              f'stroke-width="2.5" stroke-dasharray="4 3"/>'
              f'<text x="238" y="{legend_y}" font-size="12">goal</text>')
    height += 10
    return (f'<?xml version="1.0" encoding="UTF-8"?>\n'
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
            f'viewBox="0 0 {WIDTH} {height}" font-family="{escape(FONT)}">\n'
            f'<rect width="100%" height="100%" fill="white"/>\n'
            f'<text x="20" y="24" font-size="13" fill="#555">{escape(heading)}</text>\n'
            + "\n".join(parts) + "\n" + legend + "\n</svg>\n")


def to_png(svg_path: str, png_path: str) -> bool:
    """`vips copy` the SVG to a PNG; False (with a note) when vips or its svgload is missing."""
    vips = shutil.which("vips")
    if vips is None:
        print(f"bench chart: note: vips not found; kept the SVG only ({svg_path})", file=sys.stderr)
        return False
    loaders = subprocess.run([vips, "-l"], capture_output=True, text=True).stdout
    if "svgload" not in loaders:
        print(f"bench chart: note: this vips has no svgload (librsvg); kept the SVG only ({svg_path})",
              file=sys.stderr)
        return False
    done = subprocess.run([vips, "copy", svg_path, png_path], capture_output=True, text=True)
    if done.returncode != 0:
        print(f"bench chart: note: vips copy failed, kept the SVG only ({svg_path}): "
              f"{done.stderr.strip()}", file=sys.stderr)
        return False
    return True


def main() -> int:
    ap = argparse.ArgumentParser(description="Chart make bench's summary lines (SVG, then PNG).")
    ap.add_argument("input", nargs="?", default="-", help="bench output (default: stdin)")
    ap.add_argument("--out", default="bench-out/bench.svg", help="SVG to write (default %(default)s)")
    ap.add_argument("--png", help="also convert the SVG to this PNG with `vips copy`")
    args = ap.parse_args()
    try:
        if args.input == "-":
            text = sys.stdin.read()
        else:
            with open(args.input, encoding="utf-8", errors="replace") as f:
                text = f.read()
    except OSError as e:
        print(f"bench chart: error: cannot read {args.input}: {e}", file=sys.stderr)
        return 2
    gs = groups(parse(text))
    if not gs:
        name = "stdin" if args.input == "-" else args.input
        print(f"bench chart: error: no bench summary lines in {name} (expected lines such as "
              f"'bench images: pushprep_ips=...'); nothing to draw", file=sys.stderr)
        return 1
    heading = "make bench: PushPrep beside the reference tools, same run, same cores"
    try:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(svg(gs, heading))
    except OSError as e:
        print(f"bench chart: error: cannot write {args.out}: {e}", file=sys.stderr)
        return 2
    print(f"bench chart: {args.out}", file=sys.stderr)
    if args.png and to_png(args.out, args.png):
        print(f"bench chart: {args.png}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
