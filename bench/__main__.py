"""Run the benchmarks, print the table and write bench/RESULTS.md.

    python -m bench            # everything (a few minutes)
    python -m bench --quick    # fewer repetitions, smaller sizes

Every time is a wall-clock median over repeated runs of a whole command (or function), and every target is a
ratio against a baseline measured in the same run, so the numbers mean the same on a slower machine. A target's
command and its baseline run alternately, so that both see the machine at the same speed.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
# The TeX floor of the issue: a minimal luatexja document, one LuaLaTeX pass. Beside it, for comparison, the same
# document in symattn's own engine: jsarticle, upLaTeX, then dvipdfmx with the fonts embedded.
MINIMAL_LUATEXJA = r"""\documentclass{ltjsarticle}
\begin{document}
最小の文書。 $x^2$
\end{document}
"""
MINIMAL_UPLATEX = r"""\documentclass[uplatex,dvipdfmx]{jsarticle}
\AtBeginDvi{\special{pdf:mapfile uptex-haranoaji.map}}
\begin{document}
最小の文書。 $x^2$
\end{document}
"""


def timed(command: list[str], repeat: int, cwd: Path | None = None, timeout: float = 900) -> float:
    """Median wall time of a command (seconds); a failure stops the benchmark with its output."""
    return statistics.median(_run(command, cwd, timeout) for _ in range(repeat))


def paired(command: list[str], baseline: list[str], repeat: int, cwd: Path | None = None,
           codes: tuple[int, ...] = (0,)) -> tuple[float, float]:
    """Median wall times of a command and of its baseline, run alternately: a shared machine's speed drifts by
    tens of percent within minutes, and a baseline timed minutes earlier would measure another machine. `codes`:
    the command's exit statuses that are not failures (check exits 1 when it finds an erratum)."""
    pairs = [(_run(baseline, cwd), _run(command, cwd, codes=codes)) for _ in range(repeat)]
    return statistics.median(p[1] for p in pairs), statistics.median(p[0] for p in pairs)


# Commands run in a temporary folder too: the checkout first on the path, not whichever symattn is installed.
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}


def _run(command: list[str], cwd: Path | None = None, timeout: float = 900, codes: tuple[int, ...] = (0,)) -> float:
    start = time.perf_counter()
    done = subprocess.run(command, cwd=cwd or ROOT, capture_output=True, text=True, timeout=timeout, env=ENV)
    seconds = time.perf_counter() - start
    if done.returncode not in codes:
        raise SystemExit(f"benchmark command failed: {' '.join(command)}\n{done.stderr[-2000:]}")
    return seconds


def random_spec(n: int, folder: Path) -> Path:
    rng = random.Random(n)

    def matrix(rows: int, cols: int) -> list[list[str]]:
        return [[f"{rng.randint(-20, 20) / 10}" for _ in range(cols)] for _ in range(rows)]

    path = folder / f"random-{n}.json"
    path.write_text(json.dumps({"sections": [{
        "kind": "self_attention", "tokens": [f"t{i}" for i in range(n)], "X": matrix(n, n), "W_Q": matrix(n, n),
        "W_K": matrix(n, n), "W_V": matrix(n, n), "focus": "all"}]}), encoding="utf-8")
    return path


def random_gqa_spec(folder: Path, n: int = 64, d: int = 64, heads: int = 8, kv_heads: int = 2) -> Path:
    """The issue's grouped-query case: n tokens, d = d_model, query heads of d / heads dimensions sharing
    kv_heads K/V heads, random one-decimal entries as random_spec's, every token (focus = all)."""
    rng = random.Random(n + heads + kv_heads)

    def matrix(rows: int, cols: int) -> list[list[str]]:
        return [[f"{rng.randint(-20, 20) / 10}" for _ in range(cols)] for _ in range(rows)]

    d_k = d // heads
    path = folder / f"gqa-{n}.json"
    path.write_text(json.dumps({"sections": [{
        "kind": "grouped_query", "tokens": [f"t{i}" for i in range(n)], "X": matrix(n, d),
        "heads": [{"W_Q": matrix(d, d_k)} for _ in range(heads)],
        "kv_heads": [{"W_K": matrix(d, d_k), "W_V": matrix(d, d_k)} for _ in range(kv_heads)],
        "W_O": matrix(heads * d_k, d), "focus": "all"}]}), encoding="utf-8")
    return path


def encoder_layer_spec(folder: Path, n: int = 16, d: int = 16, d_ff: int = 64) -> Path:
    """Issue 18's encoder layer: self-attention over n tokens of width d (every token), Add & Norm, a ReLU
    feed-forward network d → d_ff → d, Add & Norm, chained by from:/input: references (values carried as shown)."""
    rng = random.Random(n * d)

    def matrix(rows: int, cols: int) -> list[list[str]]:
        return [[f"{rng.randint(-10, 10) / 10}" for _ in range(cols)] for _ in range(rows)]

    path = folder / f"encoder-{n}.json"
    path.write_text(json.dumps({"sections": [
        {"kind": "self_attention", "name": "attn", "tokens": [f"t{i}" for i in range(n)], "X": matrix(n, d),
         "W_Q": matrix(d, d), "W_K": matrix(d, d), "W_V": matrix(d, d), "focus": "all"},
        {"kind": "add_norm", "name": "norm1", "X": "input:attn", "Y": "from:attn"},
        {"kind": "feed_forward", "name": "ffn", "X": "from:norm1", "W_1": matrix(d, d_ff), "W_2": matrix(d_ff, d)},
        {"kind": "add_norm", "X": "input:ffn", "Y": "from:ffn"}]}), encoding="utf-8")
    return path


def grading_responses(exam_json: Path, path: Path) -> Path:
    """A responses CSV for `symattn grade`: one student per version, every answer rounded to 4 decimals, and in
    every third version the first raw score wrong by 1 (so the later parts are carried forward)."""
    import csv
    from decimal import Decimal

    versions = json.loads(exam_json.read_text(encoding="utf-8"))["versions"]
    ids = [b["id"] for v in versions for p in v["parts"] for b in p["blanks"]]
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["student", "version", *ids])
        for k, v in enumerate(versions):
            answers = {b["id"]: format(Decimal(b["answer"]).quantize(Decimal("0.0001")), "f")
                       for p in v["parts"] for b in p["blanks"]}
            if k % 3 == 0:
                first = v["parts"][1]["blanks"][0]["id"]
                answers[first] = format(Decimal(answers[first]) + 1, "f")
            writer.writerow([f"Student {k + 1}", v["label"], *(answers.get(i, "") for i in ids)])
    return path


def in_process(function, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def fitted_exponent(sizes: list[int], seconds: list[float]) -> float:
    """Slope of log(time) against log(n), least squares."""
    xs, ys = [math.log(n) for n in sizes], [math.log(t) for t in seconds]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum((x - mx) ** 2 for x in xs)


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions and sizes")
    args = parser.parse_args()
    repeat = 3 if args.quick else 5
    sizes = [4, 8, 16] if args.quick else [4, 8, 16, 32, 64]
    rows: list[tuple[str, float, str, str]] = []  # (what, seconds, ratio text, target text)
    work = Path(tempfile.mkdtemp(prefix="symattn-bench-"))
    symattn = [PY, "-m", "symattn"]

    # Byte-compiled first, as an installed package is: with PYTHONDONTWRITEBYTECODE set, an editable checkout
    # would otherwise compile symattn's modules again on every run.
    subprocess.run([PY, "-m", "compileall", "-q", str(ROOT / "symattn")], check=True)
    floor_command = [PY, "-c", "import sympy"]
    floor = timed(floor_command, repeat)
    rows.append(("floor: python -c 'import sympy'", floor, "1.00", ""))

    def against_floor(what: str, command: list[str], target: float | None, times: int = repeat) -> float:
        """A row: without a target, the ratio to the floor above; with one, to the floor timed alternately."""
        if target is None:
            seconds, baseline = timed(command, times), floor
        else:
            seconds, baseline = paired(command, floor_command, times)
        ratio = seconds / baseline
        goal = "" if target is None else f"≤ {target} × floor: {'met' if ratio <= target else 'NOT met'}"
        rows.append((what, seconds, f"{ratio:.2f}", goal))
        return seconds

    against_floor("symattn --help", [*symattn, "--help"], 0.3)
    against_floor("symattn examples", [*symattn, "examples"], 0.3)
    against_floor("render --example mt --format tex",
                  [*symattn, "render", "--example", "mt", "--format", "tex", "--out", str(work)], 1.3)

    (work / "luatexja.tex").write_text(MINIMAL_LUATEXJA, encoding="utf-8")
    (work / "uplatex.tex").write_text(MINIMAL_UPLATEX, encoding="utf-8")
    luatexja_floor_command = ["sh", "-c", "rm -f luatexja.pdf luatexja.aux && lualatex -no-shell-escape "
                              "-interaction=batchmode luatexja.tex"]
    uplatex_floor_command = ["sh", "-c", "rm -f uplatex.pdf uplatex.aux && uplatex -no-shell-escape "
                             "-interaction=batchmode uplatex.tex && dvipdfmx -q uplatex.dvi"]
    subprocess.run(luatexja_floor_command, cwd=work, capture_output=True)  # luaotfload's font cache, once
    render_pdf = [*symattn, "render", "--example", "mt", "--format", "pdf", "--out", str(work)]
    pdf, luatexja_floor = paired(render_pdf, luatexja_floor_command, repeat, cwd=work)
    rows.append(("TeX floor: minimal luatexja document (LuaLaTeX)", luatexja_floor, "1.00 (TeX)", ""))
    rows.append(("render --example mt --format pdf", pdf, f"{pdf / luatexja_floor:.2f} (TeX)",
                 f"≤ 1.5 × TeX floor: {'met' if pdf / luatexja_floor <= 1.5 else 'NOT met'}"))
    pdf, uplatex_floor = paired(render_pdf, uplatex_floor_command, repeat, cwd=work)
    rows.append(("minimal jsarticle document (upLaTeX + dvipdfmx)", uplatex_floor, "", ""))
    rows.append(("render --example mt --format pdf, against it", pdf, f"{pdf / uplatex_floor:.2f} (upLaTeX)", ""))

    solve_times = []
    for n in sizes:
        spec = random_spec(n, work)
        solve_times.append(against_floor(f"solve, n = d = {n} (focus = all)", [*symattn, "solve", str(spec)],
                                         3 if n == 64 else None))

    # symattn check on the seed article's claims (its one erratum found: exit status 1), against solve on mt
    checking, solving = paired([*symattn, "check", "--example", "mt", "--claims", "article"],
                               [*symattn, "solve", "--example", "mt"], repeat, cwd=work, codes=(1,))
    met = "met" if checking / solving <= 2 else "NOT met"
    rows.append(("check --example mt --claims article, against solve --example mt", checking,
                 f"{checking / solving:.2f} (solve)", f"≤ 2 × solve: {met}"))

    # check --from reads any 1 MB document in linear time (issue 30: unclosed environments were quadratic): the
    # slowest of three hostile documents, its reading time beyond solve's
    reading = 0.0
    for name, fragment in (("env.md", "\\begin{bmatrix} 1 "), ("vectors.md", "[1.05, 0.65] "), ("tags.html", "<script ")):
        document = work / name
        document.write_text(fragment * (1_000_000 // len(fragment)), encoding="utf-8")
        checked, solved = paired([*symattn, "check", "--example", "mt", "--from", str(document)],
                                 [*symattn, "solve", "--example", "mt"], repeat, cwd=work, codes=(0, 1))
        reading = max(reading, checked - solved)
    rows.append(("check --from a 1 MB hostile document, beyond solve --example mt (slowest of 3)", reading, "",
                 f"≤ 2 s: {'met' if reading <= 2 else 'NOT met'}"))

    against_floor("solve, grouped-query: n = 64, d = 64, 8 query heads, 2 K/V heads (focus = all)",
                  [*symattn, "solve", str(random_gqa_spec(work))], 3)

    against_floor("solve, encoder layer: n = 16, d = 16, d_ff = 64 (attention, Add & Norm, FFN, Add & Norm)",
                  [*symattn, "solve", str(encoder_layer_spec(work))], 2)
    layer_pdf = [*symattn, "render", "--example", "layer", "--format", "pdf", "--out", str(work)]
    layer, mt_pdf = paired(layer_pdf, render_pdf, repeat, cwd=work)
    rows.append(("render --example layer --format pdf, against mt's", layer, f"{layer / mt_pdf:.2f} (mt PDF)",
                 f"≤ 3 × mt's PDF: {'met' if layer / mt_pdf <= 3 else 'NOT met'}"))

    import numpy as np
    from sympy import Matrix, Rational

    from bench.naive import naive_attention, numpy_attention

    naive_sizes, naive_times = [], []
    for n in sizes:
        data = json.loads((work / f"random-{n}.json").read_text())["sections"][0]
        exact = [Matrix([[Rational(x) for x in row] for row in data[k]]) for k in ("X", "W_Q", "W_K", "W_V")]
        floats = [np.array(data[k], dtype=float) for k in ("X", "W_Q", "W_K", "W_V")]
        rows.append((f"numpy float64, n = {n}", in_process(lambda f=floats: numpy_attention(*f), 20), "", ""))
        if n <= (8 if args.quick else 16):  # the naive pipeline takes minutes beyond this
            naive_sizes.append(n)
            naive_times.append(in_process(lambda e=exact: naive_attention(*e), 1))
            rows.append((f"naive sympy.Matrix, n = {n}", naive_times[-1], "", ""))

    for count, formats in ((30, "tex,json,moodle"), (300, "tex,json,moodle"), (30, "pdf,tex,json,moodle")):
        if args.quick and count == 300:
            continue
        target = 5 if (count == 300 and "pdf" not in formats) else None
        command = [*symattn, "exam", "--count", str(count), "--seed", "1", "--format", formats,
                   "--out", str(work / f"exam-{count}")]
        against_floor(f"exam --count {count} --format {formats}", command, target, 1 if target is None else repeat)

    # symattn grade: 300 students, one version each (of a 300-version exam), a few mistakes each, feedback as
    # Markdown (the PDFs are one upLaTeX run per student, timed by TeX, not by the grading).
    if not args.quick:
        exam_json = work / "exam-300" / "exam.json"
        responses = grading_responses(exam_json, work / "responses-300.csv")
        against_floor("grade 300 students (exam of 300 versions, feedback md)",
                      [*symattn, "grade", str(exam_json), str(responses), "--format", "md", "--out",
                       str(work / "grades-300")], 10, 3)

    exponent = fitted_exponent(sizes[1:], solve_times[1:])
    # The work beyond start-up: the time less the smallest size's (symattn's own start-up included), over the sizes
    # where that difference is well above the noise (n = 16 is only a few hundredths of a second above n = 4).
    large = [(n, t - solve_times[0]) for n, t in zip(sizes, solve_times, strict=True) if n >= 32 and t > solve_times[0]]
    work_exponent = fitted_exponent(*map(list, zip(*large, strict=True))) if len(large) >= 2 else None
    naive_exponent = fitted_exponent(naive_sizes, naive_times) if len(naive_sizes) >= 2 else None
    machine = f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, {platform.system()}"
    lines = ["# symattn benchmarks", "", f"Machine: {machine}. Run: `python -m bench`"
             + (" --quick" if args.quick else "") + ".", "",
             "A target's ratio is taken against its own floor, timed alternately with it (the seconds column shows "
             "the command's median).", "",
             "| what | seconds | × floor | target |", "|---|---:|---:|---|"]
    lines += [f"| {what} | {seconds:.4g} | {ratio} | {target} |" for what, seconds, ratio, target in rows]
    lines += ["", f"Cost of `solve` against n (n = d, {', '.join(map(str, sizes[1:]))}): fitted exponent "
              f"{exponent:.2f} (time ∝ n^{exponent:.2f})."]
    if work_exponent is not None:
        lines.append(f"Beyond start-up (time − the n = {sizes[0]} time, n = {', '.join(str(n) for n, _ in large)}): "
                     f"fitted exponent {work_exponent:.2f}.")
    if naive_exponent is not None:
        lines.append(f"The naive sympy.Matrix pipeline (n = {', '.join(map(str, naive_sizes))}): fitted exponent "
                     f"{naive_exponent:.2f}.")
    lines.append("")
    report = "\n".join(lines)
    print(report)
    (ROOT / "bench" / "RESULTS.md").write_text(report, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
