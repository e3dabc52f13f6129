"""The self-check page driven in a real headless Chromium (its DevTools protocol over a pipe, as the HTML tests
do): typed answers marked right, carried from the student's own wrong value, wrong with check's cause named, and
garbage refused with a message; no script error, no network request, and a page under 200 kB."""

from __future__ import annotations

import json
import math
import os

import pytest

from symattn import derive
from symattn.cli import main

from ..render.test_html_page import DevTools


class Recording(DevTools):
    """DevTools that keeps every event it reads (requests, console messages, exceptions)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.events: list[dict] = []

    def wait(self, wanted) -> dict:
        def keep(message: dict) -> bool:
            if "method" in message:
                self.events.append(message)
            return wanted(message)

        return super().wait(keep)


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    out = tmp_path_factory.mktemp("page")
    assert main(["worksheet", "--example", "mt", "--blanks", "scores,scaled,exp,weights,output", "--lang", "en",
                 "--format", "html", "--out", str(out)]) == 0
    return out / "mt-worksheet.html"


@pytest.fixture(scope="module")
def browser(page, tmp_path_factory):
    folder = tmp_path_factory.mktemp("chromium")
    chrome = Recording(folder, dict(os.environ))
    target = chrome.send("Target.createTarget", url="about:blank")["targetId"]
    chrome.session = chrome.send("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
    for domain in ("Page", "Runtime", "Network", "Log"):
        chrome.send(f"{domain}.enable")
    chrome.send("Page.navigate", url=page.as_uri())
    chrome.wait(lambda m: m.get("method") == "Page.loadEventFired")
    yield chrome
    chrome.close()


def run(chrome: Recording, script: str):
    result = chrome.send("Runtime.evaluate", expression=script, returnByValue=True)
    assert "exceptionDetails" not in result, result
    return result["result"].get("value")


def type_in(chrome: Recording, n: int, text: str) -> None:
    """Clear blank n and type the text into it, as keystrokes would (an input event per insertion)."""
    run(chrome, f"var e = document.getElementById('b{n}'); e.focus(); e.select();")
    chrome.send("Input.dispatchKeyEvent", type="keyDown", key="Backspace", code="Backspace",
                windowsVirtualKeyCode=8)
    chrome.send("Input.dispatchKeyEvent", type="keyUp", key="Backspace", code="Backspace", windowsVirtualKeyCode=8)
    for ch in text:
        chrome.send("Input.insertText", text=ch)


def verdict(chrome: Recording, n: int) -> tuple[str, str]:
    return tuple(run(chrome, f"var m = document.getElementById('m{n}'); "
                             f"[m.getAttribute('data-verdict'), m.getAttribute('data-cause') || '']"))


def clear(chrome: Recording, count: int = 20) -> None:
    run(chrome, f"for (var n = 1; n <= {count}; n++) {{ var e = document.getElementById('b' + n); e.value = ''; "
                "e.dispatchEvent(new Event('input')); }")


# The page's first section is mt's self-attention of `love`: blanks 1-4 the raw scores s_j, 5-8 the scaled scores,
# 9-12 e^{a_j} and 13 Z, 14-17 the weights, 18-20 the output z.
def attention():
    result = derive("mt", lang="en").of_kind("self_attention")[0].result
    query = result.queries[1]
    return ([float(s) for s in query.scores], float(query.divisor),
            [[float(v) for v in result.V.row(j)] for j in range(result.V.rows)])


def test_right_answers_are_right_and_counted(browser):
    clear(browser)
    scores, divisor, _ = attention()
    for n, s in enumerate(scores, 1):
        type_in(browser, n, f"{s:.4f}")
        assert verdict(browser, n) == ("right", "")
    assert run(browser, "document.getElementById('progress').textContent").startswith("4 of ")


def test_a_wrong_score_carries_forward_to_everything_computed_from_it(browser):
    """A slip in s_1; the student's own a_1, e^{a_1}, Z, weights and output from it are all 'carried'."""
    clear(browser)
    scores, divisor, values = attention()
    scores[0] += 0.5  # the slip
    typed = {}
    for n, s in enumerate(scores, 1):
        typed[n] = round(s, 4)
    scaled = [round(typed[n] / divisor, 4) for n in range(1, 5)]
    exps = [round(math.exp(a), 5) for a in scaled]
    total = round(sum(exps), 4)
    weights = [round(e / total, 4) for e in exps]
    output = [round(sum(w * v[c] for w, v in zip(weights, values)), 4) for c in range(3)]
    answers = [*typed.values(), *scaled, *exps, total, *weights, *output]
    for n, value in enumerate(answers, 1):
        type_in(browser, n, f"{value}")
    marks = [verdict(browser, n)[0] for n in range(1, 21)]
    assert marks[0] == "wrong" and marks[1:4] == ["right"] * 3
    assert marks[4] == "carried" and marks[5:8] == ["right"] * 3  # a_1 from their s_1
    # e^{a_1} from their a_1; e^{a_j} from the right a_j rounded to 4 decimals is right, though not the shown value
    assert marks[8] == "carried" and marks[9:12] == ["right"] * 3
    assert marks[12:17] == ["carried"] * 5  # Z and every weight (all change with Z)
    assert marks[17:20] == ["carried"] * 3  # the output from their weights
    progress = run(browser, "document.getElementById('progress').textContent")
    assert progress.startswith("9 of ") and "10 carried" in progress


def test_a_missing_scaling_is_named(browser):
    clear(browser)
    scores, _, _ = attention()
    type_in(browser, 1, f"{scores[0]:.4f}")
    type_in(browser, 5, f"{scores[0]:.4f}")  # a_1 = s_1: not divided by √d_k
    assert verdict(browser, 5) == ("wrong", "no_scaling")
    assert "not divided by √d_k" in run(browser, "document.getElementById('m5').textContent")
    type_in(browser, 5, f"{scores[0] / 2:.4f}")  # divided by d_k = 2
    assert verdict(browser, 5) == ("wrong", "scaled_by_d_k")


def test_too_few_decimals_and_intermediates_rounded_too_early_are_named(browser):
    clear(browser)
    scores, divisor, _ = attention()
    type_in(browser, 1, f"{scores[0]:.2f}")  # s_1 = 1.158, asked to 3 decimals, written correctly rounded to 2
    assert verdict(browser, 1) == ("wrong", "too_few_decimals")
    type_in(browser, 1, f"{scores[0]:.3f}")
    early = round(round(scores[0], 2) / round(divisor, 2), 4)  # a_1 from s_1 and √2 rounded to 2 decimals first
    assert abs(early - scores[0] / divisor) > 0.002
    type_in(browser, 5, f"{early}")
    assert verdict(browser, 5) == ("wrong", "rounded_intermediates")
    assert "rounded too early" in run(browser, "document.getElementById('m5').textContent")
    type_in(browser, 5, f"{scores[0] / divisor + 0.0371:.4f}")  # no usual mistake
    assert verdict(browser, 5) == ("wrong", "unknown")


def test_garbage_gets_a_message_and_no_script_error(browser):
    clear(browser)
    for text in ("abc", "1.2.3", "--1", "１．２", "1e999", "<b>"):
        type_in(browser, 2, text)
        assert verdict(browser, 2) == ("invalid", "")
        assert "not a number" in run(browser, "document.getElementById('m2').textContent")
    type_in(browser, 2, "")
    assert verdict(browser, 2) == ("", "")
    type_in(browser, 2, "1,6976")  # a decimal comma, as grade reads it
    assert verdict(browser, 2) == ("right", "")
    errors = [e for e in browser.events if e["method"] in ("Runtime.exceptionThrown", "Runtime.consoleAPICalled")
              or (e["method"] == "Log.entryAdded" and e["params"]["entry"]["level"] == "error")]
    assert errors == []


def test_show_answer_reveals_the_steps_answers(browser):
    run(browser, "document.querySelector('button.show').click()")
    assert run(browser, "document.getElementById('a1').textContent") == "answer: 1.158"


def test_keyboard_and_screen_reader_labels(browser):
    labels = run(browser, "Array.from(document.querySelectorAll('.blank input')).map(function (e) { "
                          "return [e.labels.length, e.getAttribute('aria-describedby'), e.tabIndex]; })")
    assert labels and all(count == 1 and described and tab >= 0 for count, described, tab in labels)
    assert run(browser, "document.getElementById('progress').getAttribute('aria-live')") == "polite"


def test_the_page_is_offline_and_small(browser, page):
    requests = [e["params"]["request"]["url"] for e in browser.events if e["method"] == "Network.requestWillBeSent"]
    assert requests and all(url.startswith("file://") for url in requests), requests
    html = page.read_text(encoding="utf-8")
    names = ('xmlns="http://www.w3.org/1998/Math/MathML"', 'xmlns="http://www.w3.org/2000/svg"')  # (not fetched)
    assert "http://" not in html.replace(names[0], "").replace(names[1], "") and "https://" not in html
    assert "<link" not in html and " src=" not in html
    assert page.stat().st_size < 200_000
    assert "For self-study: the answers are in this file" in html
    checks = json.loads(html.split('id="checks">')[1].split("</script>")[0])
    assert len(checks["blanks"]) > 20

