"""The command line's arguments: the parser of every command, with its help texts (no SymPy import on the way to
--help); symattn/cli.py runs the commands."""

from __future__ import annotations

import argparse

PROG = "symattn"


class Parser(argparse.ArgumentParser):
    """argparse with symattn's one-line errors (exit status 2, usage only with --help)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{PROG}: error: {message} (see `{self.prog} --help`)\n")


def build_parser() -> argparse.ArgumentParser:
    from .render import formats  # the registry of render's formats: no SymPy, no renderer imported

    parser = Parser(
        prog=PROG,
        description="Exact, step-by-step worked solutions of Transformer attention, as LaTeX and PDF.",
        epilog="Example: python -m symattn render --example mt   (writes output/mt.tex and output/mt.pdf)",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    render = commands.add_parser(
        "render", help="write the worked solution of a spec file or a built-in example",
        description="Compute the attention pipeline exactly and write its worked solution.",
    )
    _spec_source(render)
    render.add_argument("--lang", choices=("ja", "en"), help="language of the text (default: the spec's, else ja)")
    render.add_argument("--format", dest="formats", metavar="LIST",
                        help=f"comma-separated output formats: {', '.join(formats.names())} "
                             f"(default: {','.join(formats.DEFAULT)})")
    render.add_argument("--out", metavar="DIR", default="output", help="output folder (default: output)")
    render.add_argument("--digits", metavar="N",
                        help="decimals shown for rounded values (default: the spec's, else 4)")
    render.add_argument("--prose", choices=("full", "plain", "none"),
                        help="text around the math: full (default: the spec's, else full); plain: definitions and "
                             "step text without interpretations; none: headings, math and tables only")
    render.add_argument("--exact", action="store_true",
                        help="show exact values (fractions, surds, e^{a}) beside the rounded decimals")
    render.add_argument("--handout", action="store_true",
                        help="slides without overlays, every line shown at once (for printing; with --format slides)")
    render.add_argument("--theme", metavar="NAME",
                        help="the slides' Beamer theme (default: default, plain; with --format slides)")

    solve = commands.add_parser(
        "solve", help="print the answers of a spec as JSON (for graders, answer keys, scripts)",
        description="Compute the attention pipeline exactly and print every answer as JSON on stdout: decimals "
                    "to 30 significant digits and exact values as LaTeX.",
    )
    _spec_source(solve)

    exam = commands.add_parser(
        "exam", help="generate exam versions with answer keys (PDF, TeX, JSON, Moodle XML)",
        description="Generate N different hand-solvable attention problems from a seed, with the exam paper, the "
                    "answer key (full worked solutions), exam.json and moodle.xml. The same options always give "
                    "the same files.",
    )
    exam.add_argument("--count", metavar="N",
                      help="number of versions (default: 10, or one per student of --students)")
    exam.add_argument("--seed", default="0", metavar="S", help="random seed (default: 0)")
    exam.add_argument("--kind", default="self_attention", metavar="KIND",
                      help="self_attention, cross_attention, multi_head, grouped_query, next_token, feed_forward, "
                           "add_norm, rope or mixed (default: self_attention)")
    exam.add_argument("--difficulty", default="easy", metavar="LEVEL",
                      help="easy (integer √d_k, short decimals, e^x table) or standard (√2, calculator); "
                           "default: easy")
    exam.add_argument("--lang", default="ja", metavar="LIST",
                      help="language: ja or en, or ja,en for the papers of the same exam in both, each file named "
                           "with its language (exam-ja.pdf, exam-en.pdf, ...); default: ja")
    exam.add_argument("--digits", metavar="N", help="decimals asked for rounded answers (default: 4)")
    exam.add_argument("--format", dest="formats", metavar="LIST", default="pdf,tex,json,moodle",
                      help="comma-separated: pdf (exam, key, solutions), tex, json, moodle, solutions "
                           "(solutions.pdf alone), qti (Canvas; needs text2qti) (default: pdf,tex,json,moodle)")
    # fair versions: one shape for the whole exam, and the parts asked (exam/fair.py, exam/points.py)
    exam.add_argument("--tokens", metavar="N", help="tokens of every version (default: drawn once)")
    exam.add_argument("--d-k", dest="d_k", metavar="N", help="d_k of every version (default: drawn once; "
                                                                       "1 only when asked)")
    exam.add_argument("--parts", metavar="LIST", help="the parts to ask, e.g. a,c,d (default: a,b,c,d,e)")
    exam.add_argument("--points", metavar="LIST",
                      help="each asked part's points, e.g. a=4,b=4,c=4,d=4,e=4 (default: 20 shared by work)")
    exam.add_argument("--out", metavar="DIR", default="output", help="output folder (default: output)")
    exam.add_argument("--paper", default="a4", metavar="SIZE", help="paper size of the PDFs: a4 or letter "
                                                                    "(default: a4)")
    exam.add_argument("--split", action="store_true",
                      help="also one exam and one key PDF per version (exam-01.pdf, key-01.pdf, ...)")
    # the paper's heading and the class list (exam/heading.py, exam/students.py)
    exam.add_argument("--title", metavar="TEXT", help="the papers' title (default: the language's)")
    exam.add_argument("--course", metavar="TEXT", help="the course, printed on each version's first page")
    exam.add_argument("--date", metavar="TEXT", help="the date, printed on each version's first page (default: none)")
    exam.add_argument("--time-allowed", metavar="TIME",
                      help="the time allowed: minutes (90) or any text (1 h 30 min); default: not stated")
    exam.add_argument("--students", metavar="CSV",
                      help="a class list (UTF-8 CSV with the columns id and name): one version per student, "
                           "with the student's name and id on every page")
    exam.add_argument("--jobs", metavar="N",
                      help="processes that derive and typeset the versions; the files are the same for any N "
                           "(default: one per processor, at most 8; 1: no extra processes)")

    grade = commands.add_parser(  # symattn grade (symattn/grade/)
        "grade", help="mark students' answers to an exam, with error carried forward and feedback",
        description="Mark a responses CSV (columns student, version and one per blank id of exam.json, or Moodle's "
                    "quiz Responses report as CSV) against exam.json, carrying errors forward; write grades.csv "
                    "and one feedback file per student.")
    grade.add_argument("exam_json", metavar="EXAM_JSON", help="the exam.json `symattn exam` wrote")
    grade.add_argument("responses", metavar="RESPONSES", help="the responses CSV")
    grade.add_argument("--out", metavar="DIR", default="grades", help="output folder (default: grades)")
    grade.add_argument("--format", dest="formats", metavar="LIST",
                       help="feedback formats: md, pdf (default: md,pdf, or md where TeX is not installed)")
    grade.add_argument("--below", metavar="POINTS",
                       help="the class report lists the students whose total is below POINTS (default: half the "
                            "paper's points)")
    _check_parser(commands)
    _worksheet_parser(commands)

    examples = commands.add_parser("examples", help="list the built-in examples",
                                   description="List the built-in examples, or print one as a spec file.")
    examples.add_argument("--show", metavar="NAME", help="print the spec file of one example")
    return parser


def _spec_source(command) -> None:
    """A command's input: a spec file or a built-in example, one of them."""
    source = command.add_argument_group("input (one of)")
    source.add_argument("spec", nargs="?", metavar="SPEC", help="a spec file (.toml or .json)")
    source.add_argument("--example", metavar="NAME", help="a built-in example (see `symattn examples`)")


def _check_parser(commands) -> None:
    """`symattn check`: the numbers a document or a student printed, checked against the exact derivation."""
    check = commands.add_parser(
        "check", help="check the numbers a worked example or a student printed, and diagnose the wrong ones",
        description="Compare printed numbers with the exact derivation: each wrong one with its likely cause. "
                    "Exit status 0 when every claim holds, 1 when any is wrong, when nothing was checked "
                    "or when a document's numbers match nothing (unless --partial), 2 for bad input.",
        epilog="Example: python -m symattn check --example mt --claims article")
    check.add_argument("spec", nargs="?", metavar="SPEC", help="a spec file (.toml or .json)")
    check.add_argument("claims_file", nargs="?", metavar="CLAIMS", help="a claims file (.toml or .json)")
    check.add_argument("--example", metavar="NAME", help="a built-in example (see `symattn examples`)")
    check.add_argument("--claims", metavar="NAME", help="a claims file shipped with the example (mt: article)")
    check.add_argument("--from", dest="source", metavar="FILE",
                       help="read the numbers printed in a Markdown, LaTeX, HTML or plain-text document")
    check.add_argument("--json", action="store_true", help="print the findings as JSON")
    check.add_argument("--partial", action="store_true",
                       help="with --from: numbers that match nothing do not fail the check (they are still listed)")
    check.add_argument("--format", dest="formats", metavar="LIST", help="also write a report: md, pdf (also tex, html)")
    check.add_argument("--out", metavar="DIR", default="output", help="output folder (default: output)")


def _worksheet_parser(commands) -> None:
    """`symattn worksheet`: the derivation with chosen stages left blank, its key, and a self-check page."""
    sheet = commands.add_parser(
        "worksheet", help="a worksheet with chosen stages left blank, its answer key, and a self-check page",
        description="Write the worked solution of a spec with the results of the chosen stages as boxes to fill in "
                    "(NAME-worksheet.pdf), the same pages filled in (NAME-worksheet-key.pdf) and, with --format "
                    "html, a self-check page that marks the student's numbers as they are typed.",
        epilog="Example: python -m symattn worksheet --example mt --blanks scores,weights,output")
    _spec_source(sheet)
    sheet.add_argument("--blanks", required=True, metavar="STAGES",
                       help="comma-separated stages to leave blank, as the spec's kinds name them (attention: qkv, "
                            "scores, scaled, exp, weights, output), or all")
    sheet.add_argument("--lang", metavar="LIST", help="ja, en or ja,en (default: the spec's, else ja)")
    sheet.add_argument("--format", dest="formats", metavar="LIST", default="pdf",
                       help="comma-separated: pdf, tex, html (the self-check page) (default: pdf)")
    sheet.add_argument("--versions", metavar="N",
                       help="N versions with the spec's numbers redrawn in its style, each with its key")
    sheet.add_argument("--seed", metavar="S", help="random seed of --versions (default: 0)")
    sheet.add_argument("--out", metavar="DIR", default="output", help="output folder (default: output)")
