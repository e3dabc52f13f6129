"""Run the benchmarks, print the table and write bench/RESULTS.md.

    python -m bench            # everything (a few minutes)
    python -m bench --quick    # fewer repetitions, smaller sizes

Every time is a wall-clock median over repeated runs of a whole command (or function), and every target is a
ratio against a baseline measured in the same run, so the numbers mean the same on a slower machine.
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
MINIMAL_JA = r"""\documentclass{ltjsarticle}
\begin{document}
最小の文書。 $x^2$
\end{document}
"""


def timed(command: list[str], repeat: int, cwd: Path | None = None, timeout: float = 900) -> float:
    """Median wall time of a command (seconds); a failure stops the benchmark with its output."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        done = subprocess.run(command, cwd=cwd or ROOT, capture_output=True, text=True, timeout=timeout)
        times.append(time.perf_counter() - start)
        if done.returncode != 0:
            raise SystemExit(f"benchmark command failed: {' '.join(command)}\n{done.stderr[-2000:]}")
    return statistics.median(times)


def random_spec(n: int, folder: Path) -> Path:
    rng = random.Random(n)

    def matrix(rows: int, cols: int) -> list[list[str]]:
        return [[f"{rng.randint(-20, 20) / 10}" for _ in range(cols)] for _ in range(rows)]

    path = folder / f"random-{n}.json"
    path.write_text(json.dumps({"sections": [{
        "kind": "self_attention", "tokens": [f"t{i}" for i in range(n)], "X": matrix(n, n), "W_Q": matrix(n, n),
        "W_K": matrix(n, n), "W_V": matrix(n, n), "focus": "all"}]}), encoding="utf-8")
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
    floor = timed([PY, "-c", "import sympy"], repeat)
    rows.append(("floor: python -c 'import sympy'", floor, "1.00", ""))

    def against_floor(what: str, seconds: float, target: float | None) -> None:
        ratio = seconds / floor
        goal = "" if target is None else f"≤ {target} × floor: {'met' if ratio <= target else 'NOT met'}"
        rows.append((what, seconds, f"{ratio:.2f}", goal))

    against_floor("symattn --help", timed([*symattn, "--help"], repeat), 0.3)
    against_floor("symattn examples", timed([*symattn, "examples"], repeat), 0.3)
    against_floor("render --example mt --format tex",
                  timed([*symattn, "render", "--example", "mt", "--format", "tex", "--out", str(work)], repeat), 1.3)

    (work / "minimal.tex").write_text(MINIMAL_JA, encoding="utf-8")
    latexmk = ["latexmk", "-lualatex", "-no-shell-escape", "-interaction=nonstopmode", "-quiet", "minimal.tex"]
    subprocess.run(latexmk, cwd=work, capture_output=True)  # font cache, once
    tex_floor = timed(["sh", "-c", "rm -f minimal.pdf minimal.aux minimal.fdb_latexmk minimal.fls minimal.log && "
                       + " ".join(latexmk)], 3, cwd=work)
    rows.append(("TeX floor: minimal luatexja document", tex_floor, "1.00 (TeX)", ""))
    pdf = timed([*symattn, "render", "--example", "mt", "--format", "pdf", "--out", str(work)], 3)
    rows.append(("render --example mt --format pdf", pdf, f"{pdf / tex_floor:.2f} (TeX)",
                 f"≤ 1.5 × TeX floor: {'met' if pdf / tex_floor <= 1.5 else 'NOT met'}"))

    solve_times = []
    for n in sizes:
        spec = random_spec(n, work)
        seconds = timed([*symattn, "solve", str(spec)], 1 if n == 32 else 3 if n == 64 else repeat)  # 64: a target
        solve_times.append(seconds)
        against_floor(f"solve, n = d = {n} (focus = all)", seconds, 3 if n == 64 else None)

    import numpy as np
    from sympy import Matrix, Rational

    from bench.naive import naive_attention, numpy_attention

    for n in sizes:
        data = json.loads((work / f"random-{n}.json").read_text())["sections"][0]
        exact = [Matrix([[Rational(x) for x in row] for row in data[k]]) for k in ("X", "W_Q", "W_K", "W_V")]
        floats = [np.array(data[k], dtype=float) for k in ("X", "W_Q", "W_K", "W_V")]
        rows.append((f"numpy float64, n = {n}", in_process(lambda f=floats: numpy_attention(*f), 20), "", ""))
        if n <= (8 if args.quick else 16):  # the naive pipeline takes minutes beyond this
            rows.append((f"naive sympy.Matrix, n = {n}", in_process(lambda e=exact: naive_attention(*e), 1), "", ""))

    for count, formats in ((30, "tex,json,moodle"), (300, "tex,json,moodle"), (30, "pdf,tex,json,moodle")):
        if args.quick and count == 300:
            continue
        target = 5 if (count == 300 and "pdf" not in formats) else None
        seconds = timed([*symattn, "exam", "--count", str(count), "--seed", "1", "--format", formats,
                         "--out", str(work / f"exam-{count}")], 1 if target is None else 3)  # targets: a median
        against_floor(f"exam --count {count} --format {formats}", seconds, target)

    exponent = fitted_exponent(sizes[1:], solve_times[1:])
    machine = f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, {platform.system()}"
    lines = ["# symattn benchmarks", "", f"Machine: {machine}. Run: `python -m bench`"
             + (" --quick" if args.quick else "") + ".", "",
             "| what | seconds | × floor | target |", "|---|---:|---:|---|"]
    lines += [f"| {what} | {seconds:.4g} | {ratio} | {target} |" for what, seconds, ratio, target in rows]
    lines += ["", f"Cost of `solve` against n (n = d, {', '.join(map(str, sizes[1:]))}): fitted exponent "
              f"{exponent:.2f} (time ∝ n^{exponent:.2f}).", ""]
    report = "\n".join(lines)
    print(report)
    (ROOT / "bench" / "RESULTS.md").write_text(report, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
