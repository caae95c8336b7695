#!/usr/bin/env python3
"""The command-line tools' answers to bad input: vkds-info, vkds-bench and
bench/plot_algorithms.py (those built).

Run by meson (tests/meson.build, test 'cli') as: cli_test.py --info PATH --bench PATH
--plot PATH. Each case runs the tool and checks its exit status and what it prints on
stderr. Most stop at the arguments or at the device filter; a few run small workloads
(--quick's self-test, algorithms at 2^10 elements)."""
import json
import os
import subprocess
import sys
import tempfile


def run(exe, args, env_extra=None):
    env = dict(os.environ)
    env.update(env_extra or {})
    p = subprocess.run([exe] + args, capture_output=True, text=True, env=env, timeout=120)
    return p.returncode, p.stdout, p.stderr


failures = []


def parses(line):
    try:
        json.loads(line)
        return True
    except ValueError:
        return False


def check(name, exe, args, rc, stderr_has=(), stderr_count=None, env=None):
    got_rc, out, err = run(exe, args, env)
    problems = []
    if got_rc != rc:
        problems.append(f"exit status {got_rc}, wanted {rc}")
    for text in stderr_has:
        if text not in err:
            problems.append(f"stderr lacks {text!r}")
    if stderr_count:
        text, n = stderr_count
        if err.count(text) != n:
            problems.append(f"stderr says {text!r} {err.count(text)} times, wanted {n}")
    verdict(name, not problems, "; ".join(problems) + f"\n  stderr: {err.strip()[:400]}")


def verdict(name, ok, why):
    """Prints a case's outcome; a failed one is kept with why, for the summary."""
    if not ok:
        failures.append(f"{name}: {why}")
    print(("ok   " if ok else "FAIL ") + name)


def main():
    tools = dict(zip(sys.argv[1::2], sys.argv[2::2]))
    bad_filter = {"VKDS_DEVICES": "nosuch"}
    if "--info" in tools:
        info = tools["--info"]
        check("info --help", info, ["--help"], 0)
        check("info unknown option", info, ["--bogus"], 2, ["unknown option '--bogus'"])
        check("info --json twice", info, ["--json", "--json"], 2, ["--json given twice"])
        check("info --policy twice", info, ["--policy", "fixed", "--policy=auto_tune"], 2, ["--policy given twice"])
        check("info --policy unknown", info, ["--policy", "nosuch"], 2, ["unknown policy 'nosuch'", "default"])
        check("info --policy without a name", info, ["--policy"], 2, ["--policy needs a NAME"])
        # the library logs the reason once; the tool's own line points at it
        check("info bad device filter", info, [], 1, ["vkds_context_create failed"],
              ("malformed device filter term", 1), bad_filter)
        check("info bad VKDS_SCAN_PATH", info, [], 1, ["VKDS_SCAN_PATH"], None, {"VKDS_SCAN_PATH": "Single"})
        # each device's scan path, so that an override can be seen to take effect
        for path in ("single", "portable"):
            got_rc, out, err = run(info, ["--json"], {"VKDS_SCAN_PATH": path})
            paths = {d.get("scan_path") for d in json.loads(out)["devices"]} if got_rc == 0 else set()
            # (a device that cannot run the single pass runs the portable one)
            verdict(f"info --json scan_path under VKDS_SCAN_PATH={path}",
                    got_rc == 0 and bool(paths) and paths <= {path, "portable"},
                    f"exit status {got_rc}, scan paths {sorted(p for p in paths if p)}")
            got_rc, out, err = run(info, [], {"VKDS_SCAN_PATH": path})
            verdict(f"info table scan path under VKDS_SCAN_PATH={path}", got_rc == 0 and "scan path" in out,
                    f"exit status {got_rc}")
    if "--bench" in tools:
        bench = tools["--bench"]
        check("bench --help", bench, ["--help"], 0)
        # --cub is the baseline of every family cub_bench measures (README, Tools); the
        # help said "of the reductions" (a new-user probe)
        got_rc, out, _ = run(bench, ["--help"])
        verdict("bench --help names --cub's families", got_rc == 0 and "sorts and merges" in out,
                f"exit status {got_rc}; the --cub line: {[l for l in out.splitlines() if 'cub' in l]}")
        check("bench unknown option", bench, ["--bogus"], 2, ["unknown argument"])
        check("bench two modes", bench, ["--submit", "--select"], 2, ["only one mode at a time"])
        check("bench --count twice", bench, ["--count", "3", "--submit", "--count", "4"], 2, ["given twice: '--count'"])
        check("bench --only twice", bench, ["--algorithms", "--only", "reduce", "--only", "scan"], 2,
              ["given twice: '--only'"])
        check("bench --count not a number", bench, ["--submit", "--count", "8abc"], 2, ["--count wants"])
        # an option where a value belongs: the value is missing (it was taken as --cub's file)
        check("bench --cub without its file", bench, ["--cub", "--algorithms"], 2, ["missing value after '--cub'"])
        check("bench too many devices", bench, ["--devices-per-physical", "65"], 2, ["from 1 to 64"])
        check("bench --max-log2 out of range", bench, ["--algorithms", "--max-log2", "31"], 2, ["--max-log2 wants"])
        check("bench --json outside --algorithms", bench, ["--submit", "--json"], 2, ["applies to --algorithms only"])
        check("bench --count with --algorithms", bench, ["--algorithms", "--count", "5"], 2, ["takes no --count"])
        check("bench min above max", bench, ["--algorithms", "--min-log2", "20", "--max-log2", "12"], 2,
              ["--min-log2 is above --max-log2"])
        check("bench bad device filter", bench, ["--quick"], 1, ["vkds_context_create failed"],
              ("malformed device filter term", 1), bad_filter)
    if "--bench" in tools:
        bench = tools["--bench"]
        with tempfile.TemporaryDirectory() as tmp:
            # rows that are not cub_bench's (vkds-bench's own --json) are no CUB baseline
            mine = os.path.join(tmp, "mine.json")
            with open(mine, "w") as f:
                f.write(json.dumps({"algo": "vkds_reduce", "type": "u32", "n": 1024, "gbps": 1.0}) + "\n")
            check("bench --cub without cub_bench rows", bench,
                  ["--algorithms", "--min-log2", "10", "--max-log2", "10", "--only", "vkds_fill", "--cub", mine], 0,
                  ["holds no cub_bench rows"])
            # a CUB figure that is not a number gives no ratio (it printed "ratio":nan, not JSON)
            nan = os.path.join(tmp, "nan.json")
            with open(nan, "w") as f:
                f.write('{"algo":"cub_reduce","type":"u32","n":1024,"gbps":nan}\n')
            got_rc, out, err = run(bench, ["--algorithms", "--min-log2", "10", "--max-log2", "10", "--only", "vkds_reduce",
                                           "--cub", nan, "--json"])
            bad = [line for line in out.splitlines() if line.startswith("{") and not parses(line)]
            verdict("bench --json with a NaN CUB row", got_rc == 0 and not bad and '"algo":"vkds_reduce"' in out,
                    f"exit status {got_rc}, lines not JSON: {bad[:2]}")
            # a part ending in '$' names the algorithms that end with it: the sort alone
            got_rc, out, err = run(bench, ["--algorithms", "--min-log2", "10", "--max-log2", "10", "--only", "vkds_sort$",
                                           "--json"])
            algos = {json.loads(line)["algo"] for line in out.splitlines() if line.startswith("{") and parses(line)}
            measured = {a for a in algos if a.startswith("vkds_") and a != "vkds_upload"}  # (a baseline)
            verdict("bench --only 'vkds_sort$'", got_rc == 0 and measured == {"vkds_sort"},
                    f"exit status {got_rc}, rows of {sorted(measured)}")
            check("bench --only naming nothing with $", bench, ["--algorithms", "--only", "vkds_sor$"], 2,
                  ["names no algorithm"])
            # refused before any device is touched (it listed the devices first: a probe)
            got_rc, out, err = run(bench, ["--algorithms", "--only", ","])
            verdict("bench --only ',' before a context", got_rc == 2 and "names no algorithm" in err and
                    "device(s)" not in out + err, f"exit status {got_rc}\n  out: {out[:200]}\n  err: {err[:200]}")
        # rows written nowhere: exit 1, not a silent 0
        with open("/dev/full", "w") as full:
            p = subprocess.run([bench, "--quick", "--count", "1024"], stdout=full, stderr=subprocess.PIPE, text=True,
                               timeout=120)
        verdict("bench to a full disk", p.returncode == 1 and "writing the output failed" in p.stderr,
                f"exit status {p.returncode}\n  stderr: {p.stderr.strip()[:400]}")
    if "--plot" in tools:
        plot = [sys.executable, tools["--plot"]]
        with tempfile.TemporaryDirectory() as tmp:
            rows = os.path.join(tmp, "rows.json")
            with open(rows, "w") as f:  # one size: each series a single point
                for algo, gbps in (("vkds_reduce", 10.0), ("plain_copy", 12.0)):
                    f.write(json.dumps({"algo": algo, "type": "u32", "n": 1 << 20, "resident": "device", "us": 400.0,
                                        "gbps": gbps, "timing": "gpu", "ok": True}) + "\n")
            out = os.path.join(tmp, "plot.svg")
            p = subprocess.run(plot + [rows, "--svg", "-o", out], capture_output=True, text=True, timeout=120)
            points = open(out).read().count("<circle") if os.path.isfile(out) else 0
            verdict("plot of one size", p.returncode == 0 and points >= 2,
                    f"exit status {p.returncode}, points drawn: {points}\n  stderr: {p.stderr[:400]}")
            p = subprocess.run(plot + [rows, "--svg", "-o", os.path.join(tmp, "no", "such", "plot.svg")],
                               capture_output=True, text=True, timeout=120)
            verdict("plot into a missing folder",
                    p.returncode == 1 and "cannot write the plot" in p.stderr and "Traceback" not in p.stderr,
                    f"exit status {p.returncode}\n  stderr: {p.stderr[:400]}")
            # a PNG asked for where matplotlib is missing: the SVG written instead, and said so
            try:
                import matplotlib  # noqa: F401
                have_matplotlib = True
            except ImportError:
                have_matplotlib = False
            if not have_matplotlib:
                p = subprocess.run(plot + [rows, "-o", os.path.join(tmp, "plot.png")], capture_output=True, text=True,
                                   timeout=120)
                verdict("plot without matplotlib says so", p.returncode == 0 and "no matplotlib here" in p.stderr and
                        p.stdout.strip().endswith("plot.svg"),
                        f"exit status {p.returncode}\n  stdout: {p.stdout[:200]}\n  stderr: {p.stderr[:400]}")
    if failures:
        print("\n".join(failures), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
