#!/usr/bin/env python3
"""Plots the JSON rows of `vkds-bench --algorithms --json` and of bench/cub/cub_bench: GB/s
against the element count (log2 x axis, log y axis), a row of panels per family of
algorithms (element-wise, reductions, scans and compaction, then anything else, such as
cub_bench's histograms and sorts; only the families the files hold) and a panel per element
type, every algorithm beside its baselines (its family's cub_* rows; plain_copy, and
vkds_upload where there are host rows, in every family). The forced scan paths' rows
(vkds_inclusive_scan_single, ..._portable) go with the scans. Device-resident data is drawn
solid, host-resident dashed; baselines are black and grey, and thicker.

usage: plot_algorithms.py FILE... [-o OUT.png] [--wall]

Each FILE is the output of either program (lines that are not JSON objects, like the
table, are skipped). When two files hold the same algorithm (lavapipe and a GPU, say),
its series are told apart by the file's name. With matplotlib the plot is a PNG; without
it, an SVG written by hand (OUT with the suffix .svg), so that it works anywhere.

Timing: vkds-bench's rows say how their GB/s were timed ("timing": "gpu" from Vulkan
timestamps, "wall" from the host's clock) and carry both times ("gpu_us", "wall_us");
cub_bench's rows are timed by CUDA events (GPU time). Rows of older vkds-bench output,
without these fields, were all wall-timed. Device-data series timed by wall clock are
marked [wall] in the legend. --wall plots vkds-bench's rows by the wall time of the
blocking call instead (cub_bench's stay as they are).
"""
import argparse
import json
import math
import os
import sys

BASELINE_COLORS = {"plain_copy": "#000000", "cub_copy": "#555555", "cub_reduce": "#888888",
                   "cub_transform": "#aaaaaa", "cub_inclusive_scan": "#555555",
                   "cub_exclusive_scan": "#aaaaaa", "cub_select_if": "#888888"}
PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b",
           "#e377c2", "#bcbd22", "#7f7f7f"]
TYPES = ["u32", "f32"]
# Families of algorithms, by name without the "vkds_"/"cub_" prefix and a forced scan path's
# suffix; any other name goes to OTHER. SHARED rows are drawn in every family's panels.
FAMILIES = [("element-wise", {"copy", "transform", "fill"}),
            ("reductions", {"reduce", "count_if", "min_element", "inner_product", "reduce_by_key"}),
            ("scans and compaction", {"inclusive_scan", "exclusive_scan", "copy_if", "select_if"}),
            ("sorts", {"sort", "sort_keys", "sort_by_key", "sort_pairs", "sort16", "sort_keys16", "merge_sort",
                        "merge_sort_keys", "merge", "merge_keys"})]
OTHER = "other"
SHARED = {"plain_copy", "vkds_upload"}
PATH_SUFFIXES = ("_single", "_portable")


def family_of(algo):
    """The family an algorithm's row is drawn in; None for the SHARED baselines."""
    if algo in SHARED:
        return None
    name = algo
    for prefix in ("vkds_", "cub_"):
        if name.startswith(prefix):
            name = name[len(prefix):]
    for suffix in PATH_SUFFIXES:
        if name.endswith(suffix):
            name = name[:-len(suffix)]
    for family, names in FAMILIES:
        if name in names:
            return family
    return OTHER


def timing_of(r):
    """How a row's GB/s were timed: its own word, else CUDA events for cub_bench's rows and
    the wall clock for older vkds-bench output."""
    return r.get("timing") or ("gpu" if str(r.get("algo", "")).startswith("cub_") else "wall")


def by_wall(r):
    """The row with its GB/s over its wall time (the blocking call's), where it was GPU-timed
    and has one."""
    if timing_of(r) == "gpu" and r.get("wall_us") and r.get("us"):
        r = dict(r, gbps=r["gbps"] * r["us"] / r["wall_us"], us=r["wall_us"], timing="wall")
    return r


def read_rows(paths, wall=False):
    """Rows with a positive GB/s (the rt_ round trips have none), each tagged with its file
    and its timing; with `wall`, vkds-bench's rows by their wall time."""
    rows = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            for line in f:
                line = line.strip()
                if not line.startswith("{"):
                    continue
                try:
                    r = json.loads(line)
                except ValueError:
                    continue
                if r.get("gbps") and r.get("n") and r.get("type") in TYPES:
                    if wall:
                        r = by_wall(r)
                    r["timing"] = timing_of(r)
                    r["source"] = os.path.splitext(os.path.basename(path))[0]
                    rows.append(r)
    return rows


def round_trip_note(paths):
    """The 2^10 round-trip ratio from vkds-bench's rt_ rows, for the title."""
    notes = []
    for path in paths:
        rt = {}
        with open(path, encoding="utf-8") as f:
            for line in f:
                if line.startswith("{"):
                    try:
                        r = json.loads(line)
                    except ValueError:
                        continue
                    if str(r.get("algo", "")).startswith("rt_"):
                        rt[r["algo"]] = r
        if "rt_vkds_reduce" in rt and "rt_plain" in rt:
            notes.append("%s: blocking reduce at 2^10 %.1f µs = %.2fx one plain dispatch (%.1f µs)" % (
                os.path.splitext(os.path.basename(path))[0], rt["rt_vkds_reduce"]["us"],
                rt["rt_vkds_reduce"]["us"] / rt["rt_plain"]["us"], rt["rt_plain"]["us"]))
    return notes


def timing_note(rows):
    """What the GB/s of the plotted rows are over, for the title."""
    device = {r["timing"] for r in rows if r.get("resident", "device") == "device"}
    if device == {"gpu"}:
        how = "device data: GPU time (Vulkan timestamps, CUDA events)"
    elif device == {"wall"}:
        how = "device data: wall time"
    else:
        how = "device data: GPU time (Vulkan timestamps, CUDA events), [wall]: wall time"
    if any(r.get("resident") == "host" for r in rows):
        how += "; host data: wall time"
    return how


def series_of(rows):
    """[(family, {type: [(label, style, [(log2 n, gbps)...])]})], the families in FAMILIES'
    order (then OTHER) and only those with rows of their own; in each panel baselines
    first. An algorithm keeps its colour in both types' panels of a family (the colours
    count per family, so that a panel's series differ)."""
    sources = {}
    for r in rows:
        sources.setdefault((r["algo"], r.get("resident", "device")), set()).add(r["source"])
    groups = {}
    for r in rows:
        key = (r["type"], r["algo"], r.get("resident", "device"), r["source"], r["timing"])
        groups.setdefault(key, []).append((math.log2(r["n"]), r["gbps"]))
    present = {family_of(r["algo"]) for r in rows} - {None}
    families = [f for f, _ in FAMILIES if f in present] + ([OTHER] if OTHER in present else [])
    host_in = {family_of(r["algo"]) for r in rows if r.get("resident") == "host"}
    colors = {f: {} for f in families}
    out = [(f, {t: [] for t in TYPES}) for f in families]
    for (t, algo, resident, source, timing), pts in sorted(groups.items(), key=lambda kv: (
            kv[0][1] not in BASELINE_COLORS, kv[0][1], kv[0][2], kv[0][3], kv[0][4])):
        baseline = algo in BASELINE_COLORS
        label = algo + ("" if resident == "device" else " (host data)")
        if resident == "device" and timing == "wall":
            label += " [wall]"
        if len(sources[(algo, resident)]) > 1:
            label = "%s: %s" % (source, label)
        family = family_of(algo)
        for f, panels in out:
            if family == f or (family is None and (algo != "vkds_upload" or f in host_in)):
                if baseline:
                    color = BASELINE_COLORS[algo]
                else:
                    color = colors[f].setdefault((algo, source), PALETTE[len(colors[f]) % len(PALETTE)])
                style = {"color": color, "dashed": resident != "device", "width": 2.6 if baseline else 1.4}
                panels[t].append((label, style, sorted(pts)))
    return out


def plot_matplotlib(series, notes, out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(series), len(TYPES), figsize=(18, 6 * len(series)), squeeze=False)
    for row, (family, panels) in zip(axes, series):
        for ax, t in zip(row, TYPES):
            for label, style, pts in panels[t]:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], label=label, color=style["color"],
                        linestyle="--" if style["dashed"] else "-", linewidth=style["width"], marker=".")
            ax.set_yscale("log")
            xs = [p[0] for _, _, pts in panels[t] for p in pts]
            if xs:
                ticks = range(int(min(xs)), int(max(xs)) + 1, 2)
                ax.set_xticks(list(ticks))
                ax.set_xticklabels(["2^%d" % k for k in ticks])
            ax.set_title("%s, %s" % (family, t))
            ax.set_xlabel("elements")
            ax.grid(True, which="both", alpha=0.3)
        row[0].set_ylabel("GB/s (bytes the algorithm must move)")
        handles, labels = {}, []
        for ax in row:  # one legend per family: the series of both types, once each
            for h, label in zip(*ax.get_legend_handles_labels()):
                if label not in handles:
                    handles[label] = h
                    labels.append(label)
        row[-1].legend([handles[label] for label in labels], labels, loc="center left",
                       bbox_to_anchor=(1.02, 0.5), fontsize="small")
    fig.suptitle("vkds algorithms against their baselines" + ("\n" + "\n".join(notes) if notes else ""))
    fig.tight_layout(rect=(0, 0, 1, 0.97))
    fig.savefig(out, dpi=110, bbox_inches="tight")


def plot_svg(series, notes, out):
    """The same figure by hand: a row of panels per family, log-log axes, a legend under
    each panel."""
    pw, ph, ml, gap = 520, 380, 70, 40
    top = 60 + 16 * len(notes)
    legend_rows = [max(len(panels[t]) for t in TYPES) for _, panels in series]
    row_h = [ph + 70 + 16 * n for n in legend_rows]  # title, panel, axis labels, legend
    width = ml + len(TYPES) * (pw + gap) + 20
    height = top + sum(row_h)
    every = [p for _, panels in series for t in TYPES for _, _, pts in panels[t] for p in pts]
    xs = [p[0] for p in every] or [10, 28]
    ys = [p[1] for p in every] or [1, 10]
    x0, x1 = math.floor(min(xs)), math.ceil(max(xs))
    y0, y1 = math.floor(math.log10(min(ys))), math.ceil(math.log10(max(ys)))
    if x1 == x0:
        x1 += 1
    if y1 == y0:
        y1 += 1

    def esc(s):
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")

    svg = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" '
           'font-size="12">' % (width, height), '<rect width="100%" height="100%" fill="white"/>',
           '<text x="%d" y="24" font-size="16">vkds algorithms against their baselines</text>' % ml]
    for i, note in enumerate(notes):
        svg.append('<text x="%d" y="%d">%s</text>' % (ml, 44 + 16 * i, esc(note)))
    mt = top
    for (family, panels), rh in zip(series, row_h):
        mt += 20  # the panels' titles
        for k, t in enumerate(TYPES):
            left = ml + k * (pw + gap)

            def px(x, left=left):
                return left + (x - x0) / (x1 - x0) * pw

            def py(y, mt=mt):
                return mt + ph - (math.log10(y) - y0) / (y1 - y0) * ph

            svg.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#000"/>' % (
                left, mt, pw, ph))
            svg.append('<text x="%d" y="%d" font-size="14">%s, %s</text>' % (
                left + pw / 2 - 60, mt - 8, esc(family), t))
            for e in range(y0, y1 + 1):
                y = py(10 ** e)
                svg.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>' % (left, y, left + pw, y))
                if k == 0:
                    svg.append('<text x="%d" y="%.1f" text-anchor="end">%g</text>' % (left - 6, y + 4, 10 ** e))
            for x in range(x0, x1 + 1, 2):
                svg.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>' % (
                    px(x), mt, px(x), mt + ph))
                svg.append('<text x="%.1f" y="%d" text-anchor="middle">2^%d</text>' % (px(x), mt + ph + 16, x))
            svg.append('<text x="%d" y="%d">elements</text>' % (left + pw / 2 - 25, mt + ph + 34))
            if k == 0:
                svg.append('<text transform="translate(%d,%d) rotate(-90)">GB/s</text>' % (
                    left - 50, mt + ph / 2))
            for j, (label, style, pts) in enumerate(panels[t]):
                dash = ' stroke-dasharray="6,4"' if style["dashed"] else ""
                path = " ".join("%.1f,%.1f" % (px(x), py(y)) for x, y in pts)
                svg.append('<polyline points="%s" fill="none" stroke="%s" stroke-width="%.1f"%s/>' % (
                    path, style["color"], style["width"], dash))
                for x, y in pts:  # the points too, as matplotlib's markers (one size: no line)
                    svg.append('<circle cx="%.1f" cy="%.1f" r="2.5" fill="%s"/>' % (px(x), py(y), style["color"]))
                ly = mt + ph + 52 + 16 * j
                svg.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="%.1f"%s/>' % (
                    left, ly - 4, left + 30, ly - 4, style["color"], style["width"], dash))
                svg.append('<text x="%d" y="%d">%s</text>' % (left + 36, ly, esc(label)))
        mt += rh - 20
    svg.append("</svg>")
    with open(out, "w", encoding="utf-8") as f:
        f.write("\n".join(svg) + "\n")


def write_plot(series, notes, args):
    """Writes the PNG (or without matplotlib, or with --svg, the SVG); returns its path."""
    try:
        if args.svg:
            raise ImportError
        import matplotlib  # noqa: F401
    except ImportError:
        out = os.path.splitext(args.out)[0] + ".svg"
        if not args.svg and os.path.splitext(args.out)[1] != ".svg":  # (it said nothing of it: a probe)
            print("plot_algorithms.py: no matplotlib here: writing %s, an SVG, instead of %s" % (out, args.out),
                  file=sys.stderr)
        plot_svg(series, notes, out)
        return out
    plot_matplotlib(series, notes, args.out)
    return args.out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0].replace("\n", " "))
    ap.add_argument("files", nargs="+", help="vkds-bench --json and cub_bench outputs")
    ap.add_argument("-o", "--out", default="algorithms.png", help="the PNG (an .svg without matplotlib)")
    ap.add_argument("--svg", action="store_true", help="write the hand-made SVG even with matplotlib")
    ap.add_argument("--wall", action="store_true",
                    help="vkds-bench's rows by the wall time of the blocking call, not GPU time")
    args = ap.parse_args()
    for path in args.files:  # a missing file was a traceback
        if not os.path.isfile(path):
            ap.error("no such file: %s" % path)
    rows = read_rows(args.files, args.wall)
    if not rows:
        sys.exit("plot_algorithms.py: no JSON rows with GB/s in %s" % " ".join(args.files))
    series = series_of(rows)
    notes = [timing_note(rows)] + round_trip_note(args.files)
    try:
        out = write_plot(series, notes, args)
    except OSError as e:  # an output folder that is not there was a traceback (a probe)
        sys.exit("plot_algorithms.py: cannot write the plot: %s" % e)
    print(out)


if __name__ == "__main__":
    main()
