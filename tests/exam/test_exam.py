"""Exams: hand-friendly, reproducible, correct (answers recomputed independently), Moodle XML that parses."""

from __future__ import annotations

import json
import re
import subprocess
import xml.etree.ElementTree as ET
from fractions import Fraction

import numpy as np
import pytest

from symattn import ExamOptions, build_exam, generate, parse_spec, read_spec_text
from symattn.cli import main
from symattn.exam.examiners import exam_kinds, examiner_of
from symattn.exercises.levels import LEVELS


def number(text: str) -> float:
    return float(Fraction(text))


def matrix(rows) -> np.ndarray:
    return np.array([[number(x) for x in row] for row in rows], dtype=float)


def float_attention(X, source, WQ, WK, WV, d_k, i):
    """Textbook attention for query row i, in float64, from the spec's data alone."""
    Q, K, V = X @ WQ, source @ WK, source @ WV
    s = K @ Q[i]
    a = s / np.sqrt(d_k)
    w = np.exp(a - a.max())
    w /= w.sum()
    return Q, K, V, s, a, w, w @ V


ATTENTION = ("self_attention", "cross_attention", "multi_head")  # the kinds expected_answers recomputes


def expected_answers(spec: dict) -> dict:
    """Every answer of one version, recomputed with numpy from the version's spec."""
    section = spec["sections"][0]
    if section["kind"] == "multi_head":
        X = matrix(section["X"])
        i = section["tokens"].index(section["focus"])
        heads = [float_attention(X, X, matrix(h["W_Q"]), matrix(h["W_K"]), matrix(h["W_V"]), len(h["W_K"][0]), i)
                 for h in section["heads"]]
        concat = np.concatenate([h[6] for h in heads])
        return {"heads": heads, "concat": concat, "output": concat @ matrix(section["W_O"])}
    source = matrix(section["memory"]) if section["kind"] == "cross_attention" else matrix(section["X"])
    i = section["tokens"].index(section["focus"])
    return {"single": float_attention(matrix(section["X"]), source, matrix(section["W_Q"]), matrix(section["W_K"]),
                                      matrix(section["W_V"]), len(section["W_K"][0]), i)}


@pytest.fixture(scope="module")
def exam_files(tmp_path_factory):
    out = tmp_path_factory.mktemp("exam")
    build_exam(ExamOptions(30, 2026, "mixed", "easy", "en"), out, ("tex", "json", "moodle"))
    return out


def test_versions_are_reproducible_and_different():
    first = generate(12, 7, "mixed", "standard", "ja")
    again = generate(12, 7, "mixed", "standard", "ja")
    assert [v.data for v in first] == [v.data for v in again]
    assert len({json.dumps(v.data["sections"], sort_keys=True) for v in first}) == 12
    assert [v.data for v in generate(12, 8, "mixed", "standard", "ja")] != [v.data for v in first]


@pytest.mark.parametrize("kind", ["self_attention", "cross_attention", "multi_head"])
def test_easy_versions_are_hand_friendly(kind):
    level = LEVELS["easy"]
    for version in generate(15, 3, kind, "easy", "en"):
        section = version.data["sections"][0]
        given = [section["X"], *[h[k] for h in section.get("heads", [section]) for k in ("W_Q", "W_K", "W_V")]]
        assert all(x in level.inputs + level.weights for m in given for row in m for x in row)
        d_k = len(section["heads"][0]["W_K"][0]) if kind == "multi_head" else len(section["W_K"][0])
        assert d_k in (1, 4)
        spec = version.data
        expected = expected_answers(spec)
        for run in expected.get("heads", []) or [expected["single"]]:
            Q, K, V, s, a, w, z = run
            for x in (*Q.ravel(), *K.ravel(), *V.ravel()):
                assert abs(x * 10 - round(x * 10)) < 1e-9  # one decimal at most
            for x in s:
                assert abs(x * 100 - round(x * 100)) < 1e-9  # raw scores: two decimals at most
            assert sorted(w)[-1] - sorted(w)[-2] > 1e-9  # one clear largest weight
            assert not any(np.all(M == 0, axis=1).any() for M in (Q, K, V))


def test_exam_json_answers_match_an_independent_computation(exam_files):
    data = json.loads((exam_files / "exam.json").read_text(encoding="utf-8"))
    assert data["seed"] == 2026 and data["options"]["count"] == 30 and len(data["versions"]) == 30
    for version in data["versions"]:
        spec, answers = version["spec"], version["answers"]["sections"][0]
        if spec["sections"][0]["kind"] not in ATTENTION or "rope" in spec["sections"][0]:
            continue  # the newer kinds: tests/exam/test_new_kinds.py
        parse_spec(read_spec_text(json.dumps(spec), "json", "v"))  # re-renderable as a spec file
        expected = expected_answers(spec)
        if "heads" in expected:
            focus = spec["sections"][0]["focus"]
            for details, (Q, _K, _V, _s, _a, w, _z) in zip(answers["head_details"], expected["heads"], strict=True):
                q = details["queries"][focus]
                assert np.allclose(matrix(details["Q"]), Q, atol=1e-12)
                assert np.allclose([number(x) for x in q["weights"]], w, atol=1e-12)
            assert np.allclose([number(x) for x in answers["concat"]], expected["concat"], atol=1e-12)
            assert np.allclose([number(x) for x in answers["output"]], expected["output"], atol=1e-12)
        else:
            Q, K, V, s, a, w, z = expected["single"]
            q = answers["queries"][spec["sections"][0]["focus"]]
            assert np.allclose(matrix(answers["K"]), K, atol=1e-12)
            for key, values in (("scores", s), ("scaled_scores", a), ("weights", w), ("output", z)):
                assert np.allclose([number(x) for x in q[key]], values, atol=1e-12), key


def test_moodle_xml_has_one_question_per_version_with_the_right_answers(exam_files):
    root = ET.parse(exam_files / "moodle.xml").getroot()
    assert root.tag == "quiz"
    questions = root.findall("question")[1:]  # after the category
    data = json.loads((exam_files / "exam.json").read_text(encoding="utf-8"))
    assert len(questions) == len(data["versions"]) == 30
    for question, version in zip(questions, data["versions"], strict=True):
        if version["spec"]["sections"][0]["kind"] not in ATTENTION or "rope" in version["spec"]["sections"][0]:
            continue  # the newer kinds: tests/exam/test_new_kinds.py
        assert question.get("type") == "cloze"
        assert question.find("questiontext").get("format") == "html"
        text = question.find("questiontext/text").text
        found = re.findall(r"\{(\d+):NUMERICAL:=([-0-9.]+):([0-9.]+)\}", text)
        blanks = [(value, tolerance) for _, value, tolerance in found]
        assert text.count("{") == len(blanks)  # no stray brace that Moodle would read as a blank
        expected = expected_answers(version["spec"])
        if "heads" in expected:
            flat = [x for Q, K, V, *_ in expected["heads"] for i in range(Q.shape[0])
                    for x in (*Q[i], *K[i], *V[i])]
            for part in (3, 4, 5):
                flat += [x for run in expected["heads"] for x in run[part]]
            flat += [x for run in expected["heads"] for x in run[6]] + [*expected["output"]]  # no concat blanks
        else:
            Q, K, V, s, a, w, z = expected["single"]
            if version["spec"]["sections"][0]["kind"] == "cross_attention":
                i = 0
                flat = [*Q[i]] + [x for j in range(K.shape[0]) for x in (*K[j], *V[j])]
            else:
                flat = [x for j in range(Q.shape[0]) for x in (*Q[j], *K[j], *V[j])]
            flat += [*s, *a, *w, *z]
        assert np.allclose([float(b) for b, _ in blanks], flat, atol=1e-11)


@pytest.mark.parametrize("fair", [[], ["--tokens", "2", "--d-k", "1", "--parts", "b,e"]], ids=["default", "fair"])
def test_same_command_gives_identical_files(tmp_path, fair):
    for run in ("a", "b"):
        assert main(["exam", "--count", "5", "--seed", "11", "--kind", "mixed", "--format", "tex,json,moodle",
                     *fair, "--out", str(tmp_path / run)]) == 0
    for name in ("exam.tex", "key.tex", "exam.json", "moodle.xml"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name


@pytest.mark.parametrize(("argv", "message"), [
    (["--count", "0"], "--count: expected a whole number of versions from 1 to 1000, got 0"),
    (["--kind", "selfie"], "--kind: expected one of self_attention, cross_attention, multi_head, grouped_query, "
                             "next_token, feed_forward, add_norm, rope, mixed"),
    (["--difficulty", "hard"], "--difficulty: expected one of easy, standard"),
    (["--format", "pdf,docx"], "--format: unknown format 'docx'"),
    (["--count", "many"], "--count: expected a whole number written with the digits 0-9 (at most 18 of them), "
                          "got 'many'"),
])
def test_impossible_requests(tmp_path, capsys, argv, message):
    status = main(["exam", *argv, "--out", str(tmp_path)])
    assert status == 2
    err = capsys.readouterr().err
    assert err.startswith(f"symattn: error: {message}") and err.count("\n") == 1
    assert list(tmp_path.iterdir()) == []


@pytest.mark.pdf
def test_exam_and_key_pdfs(tmp_path):
    assert main(["exam", "--count", "3", "--seed", "5", "--kind", "mixed", "--lang", "en", "--split",
                 "--out", str(tmp_path)]) == 0
    exam = subprocess.run(["pdftotext", str(tmp_path / "exam.pdf"), "-"], capture_output=True, text=True).stdout
    key = subprocess.run(["pdftotext", str(tmp_path / "key.pdf"), "-"], capture_output=True, text=True).stdout
    for label in ("Version 01", "Version 02", "Version 03"):
        assert label in exam and label in key
    assert "Answers:" not in exam and "Worked solution" not in exam
    assert key.count("Answers:") >= 15 and "Worked solution" in key
    assert "[14 points]" in exam and "[1 point]" in exam  # (a) and (c) of easy self-attention
    assert sorted(p.name for p in tmp_path.glob("*-??.pdf")) == [
        "exam-01.pdf", "exam-02.pdf", "exam-03.pdf", "key-01.pdf", "key-02.pdf", "key-03.pdf"]
    single = subprocess.run(["pdftotext", str(tmp_path / "exam-02.pdf"), "-"], capture_output=True, text=True).stdout
    assert "Version 02" in single and "Version 01" not in single


@pytest.mark.pdf
def test_worked_solutions_run_past_no_page_foot(tmp_path):
    """The key's solutions flow in the page as a handout does (templates/exam.tex), so the worked solutions'
    page breaks see the page: no version of any kind runs past a page's foot or off its side. (In exam.cls's own
    solution box, cut with \\vsplit, rope's heatmaps ran 22-30 pt past the foot with these options.)"""
    from symattn.render.pdf import compile_with_log, overfull_boxes

    build_exam(ExamOptions(count=16, seed=0, kind="mixed", lang="ja", difficulty="standard"), tmp_path, ("tex", "json"))
    kinds = {examiner_of(v["spec"]["sections"][0]).name
             for v in json.loads((tmp_path / "exam.json").read_text())["versions"]}
    assert kinds == set(exam_kinds())
    pdf, log = compile_with_log((tmp_path / "key.tex").read_text(encoding="utf-8"), jobname="key")
    assert overfull_boxes(log) == []
    # a flow figure's caption is kept whole, with its figure: one starting near a page's foot went on overleaf
    (tmp_path / "key.pdf").write_bytes(pdf)
    pages = subprocess.run(["pdftotext", "-layout", str(tmp_path / "key.pdf"), "-"], capture_output=True, text=True,
                           check=True).stdout.split("\f")
    captions = [caption for page in pages for caption in re.findall(r"^ *図 \d+：(?:.+\n)*", page, re.M)]
    expected = (tmp_path / "key.tex").read_text(encoding="utf-8").count("\\figurecaption{図")  # (flow figures)
    assert len(captions) == expected > 0 and all(c.rstrip().endswith("。") for c in captions), captions
    # nor is a heading (the worked solution's title, a step's) left at a page's foot, its text overleaf
    last = [next((line.strip() for line in reversed(page.splitlines()) if line.strip()
                  and not re.search(r"ページ$", line.strip())), "") for page in pages]
    assert not [line for line in last if re.fullmatch(r"詳しい解き方|Step \d+:.*", line)], last


@pytest.mark.parametrize("difficulty", ["easy", "standard"])
def test_quick_pre_check_agrees_with_the_exact_check(difficulty):
    """The Fraction/float pre-check that skips most candidates must never reject a problem the exact check
    accepts (that would change which versions a seed gives); on these candidates it decides exactly alike."""
    import random

    from symattn.exam.examiners import exam_kinds, examiner_of
    from symattn.exam.generate import draw, plausible
    from symattn.pipeline.derive import compute

    rng = random.Random(f"pre-check:{difficulty}")
    decisions = []
    kinds = exam_kinds()
    for i in range(40 * len(kinds)):
        data = draw(rng, kinds[i % len(kinds)], LEVELS[difficulty], "en")
        section = parse_spec(data).sections[0]
        decisions.append((plausible(data), examiner_of(data["sections"][0]).friendly(section, compute(section))))
    assert all(quick == exact for quick, exact in decisions)
    assert {exact for _, exact in decisions} == {True, False}  # both kinds of candidate were seen


def test_pre_check_rejects_a_zero_output_projection():
    """A multi-head problem whose W_O is all zeros has every final answer 0: the pre-check throws it out."""
    import random

    from symattn.exam.generate import draw, plausible

    rng = random.Random("zero W_O")
    data = next(d for d in (draw(rng, "multi_head", LEVELS["easy"], "en") for _ in range(400)) if plausible(d))
    assert not plausible({"sections": [{**data["sections"][0], "W_O": [["0", "0"], ["0", "0"]]}]})


@pytest.mark.parametrize("kind", ["mixed", "self_attention"])
def test_search_working_ahead_gives_the_versions_of_a_one_at_a_time_search(kind):
    """Candidates are checked ahead (in other processes) as if all before them were accepted; after a rejection
    the search must go on exactly as a search that checks one candidate at a time."""
    import random

    from symattn.exam.examiners import exam_kinds, examiner, examiner_of
    from symattn.exam.fair import exam_level
    from symattn.exam.generate import draw, plausible, search, weight_set

    kinds = exam_kinds()

    def fair(name, section, weights):  # within its kind's work band, with weights no earlier version has (item 9)
        band = examiner(name).work_band("easy")
        return ((band is None or band[0] <= examiner_of(section).hand_products(section) <= band[1])
                and (weights == () or weights not in weight_sets))

    def accept(data):  # a stand-in for the exact check that rejects about one in six
        return data["sections"][0]["X"][0][0] != "0"

    rng = random.Random(f"symattn-exam:4:{kind}:easy")  # the seed alone: no language
    level = exam_level(4, kind, "easy")  # one token count and d_k for the whole exam
    expected, seen, weight_sets = [], set(), set()
    while len(expected) < 20:
        name = kinds[len(expected) % len(kinds)] if kind == "mixed" else kind
        data = draw(rng, name, level, "en")
        key = json.dumps(data["sections"], sort_keys=True)
        weights = weight_set(data["sections"][0])
        if key in seen or not plausible(data) or not fair(name, data["sections"][0], weights) or not accept(data):
            continue
        seen.add(key)
        weight_sets.add(weights)
        label = f"{len(expected) + 1:02d}"
        expected.append((label, {"title": f"Version {label}", "lang": "en", **data}))

    def ahead(candidates):  # takes every candidate before answering for the first, as a process pool may
        return [c.label if accept(c.data) else None for c in list(candidates)]

    found = [(c.label, c.data) for c, label in search(20, 4, kind, "easy", "en", ahead) if label == c.label]
    assert found == expected


def test_files_are_the_same_for_any_number_of_processes(tmp_path):
    from symattn.exam.workers import MIN_ITEMS_PER_JOB

    options = ExamOptions(3 * MIN_ITEMS_PER_JOB, 9, "mixed", "standard", "ja")
    for jobs in (1, 2, 3):
        build_exam(options, tmp_path / str(jobs), ("tex", "json", "moodle"), jobs=jobs)
    for name in ("exam.tex", "key.tex", "exam.json", "moodle.xml"):
        serial = (tmp_path / "1" / name).read_bytes()
        assert serial == (tmp_path / "2" / name).read_bytes() == (tmp_path / "3" / name).read_bytes(), name


def test_jobs_must_be_positive(tmp_path, capsys):
    assert main(["exam", "--jobs", "0", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err == "symattn: error: --jobs: expected a whole number of processes, 1 or more, got 0\n"
    assert list(tmp_path.iterdir()) == []


def test_exam_json_from_entries_is_json_dumps_of_the_whole():
    """exam.json is assembled from entries encoded apart (in the workers); it must be what one json.dumps of
    the whole document gives, whatever the entries hold."""
    from symattn import __version__
    from symattn.exam.drivers.answers_json import exam_json, version_json
    from symattn.exam.students import Student

    students = (Student("7", "山田 \"太郎\""), Student("x\\1", "Ann & Bob"))
    options = ExamOptions(2, 3, "mixed", "standard", "ja", 5, title="期末 \"試験\"", time_allowed="90",
                          students=students)
    entries = [("01", {"title": "Version 01", "sections": [{"X": [["0.5", "-1"]], "empty": [], "none": {}}]},
                {"line\nbreak": "猫 \"quoted\" \\ tab\t", "nested": [[], [{}], [1, 2.5, None, True]]}),
               ("02", {}, {"a": []})]
    whole = {"symattn": __version__, "seed": 3,
             "options": {"count": 2, "kind": "mixed", "difficulty": "standard", "lang": "ja", "digits": 5,
                         "tokens": 4, "d_k": 2, "parts": ["a", "b", "c", "d", "e"],  # the shape drawn for seed 3
                         "points": None,
                         "title": "期末 \"試験\"", "course": None, "date": None, "time_allowed": "90"},
             "students": [{"id": "7", "name": "山田 \"太郎\"", "version": "01"},
                          {"id": "x\\1", "name": "Ann & Bob", "version": "02"}],
             "versions": [{"label": label, "spec": spec, "answers": answers} for label, spec, answers in entries]}
    assert exam_json(options, [version_json(*entry) for entry in entries], ["01", "02"]) == (
        json.dumps(whole, ensure_ascii=False, indent=1) + "\n")
