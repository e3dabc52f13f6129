"""The HTML page: every built-in example's HTML, ja and en, laid out by headless Chromium and measured (the
derivations' fractions at display size, each flow figure's texts inside their boxes and its arrow labels clear of
everything else, Japanese set in a real font on a machine whose only Japanese font is HaranoAji), and its MathML.

The page itself has no script; the test adds one to a copy, which writes its measurements into the DOM that
--dump-dom prints."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
from html import unescape
from pathlib import Path

import pytest

from symattn import derive
from symattn.examples import names
from symattn.render.html import render_html

from .test_formats import chromium

PROBE = """<script>
window.addEventListener('load', () => {
  const result = {boxes: [], labels: [], fractions: []};
  const inside = (a, b) => a.x >= b.x - 0.5 && a.y >= b.y - 0.5 && a.x + a.width <= b.x + b.width + 0.5
                           && a.y + a.height <= b.y + b.height + 0.5;
  const meets = (a, b) => a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
  document.querySelectorAll('svg.flow').forEach((svg, figure) => {
    const others = [];
    svg.querySelectorAll('g.box').forEach(g => {
      const rect = g.querySelector('rect').getBBox();
      others.push(rect);
      g.querySelectorAll('text').forEach(t => {
        const b = t.getBBox();
        result.boxes.push({figure, box: g.dataset.name, text: t.textContent, fits: inside(b, rect)});
      });
    });
    const labels = [...svg.querySelectorAll('text.label')].map(t => [t.textContent, t.getBBox()]);
    labels.forEach(([text, b], i) => {
      const clashes = others.filter(o => meets(b, o)).length
                      + labels.filter(([_, o], j) => j !== i && meets(b, o)).length;
      result.labels.push({figure, text, clashes});
    });
  });
  // a text-size fraction (tfrac: an exact rational operand, an angle inside cos) is so on purpose: not measured
  document.querySelectorAll('table.eq mfrac').forEach(f => {
    if (f.parentElement.matches('mstyle[displaystyle="false"]')) return;
    const math = f.closest('math');
    result.fractions.push({numerator: parseFloat(getComputedStyle(f.firstElementChild).fontSize),
                           text: parseFloat(getComputedStyle(math).fontSize),
                           height: f.getBoundingClientRect().height});
  });
  const pre = document.createElement('pre');
  pre.id = 'probe';
  pre.textContent = JSON.stringify(result);
  document.body.appendChild(pre);
});
</script>"""


@pytest.fixture(scope="module")
def fonts(tmp_path_factory):
    """A fontconfig whose only Japanese fonts are HaranoAji's (TeX Live ships them), for Chromium."""
    kpsewhich = shutil.which("kpsewhich")
    found = subprocess.run([kpsewhich, "HaranoAjiMincho-Regular.otf"], capture_output=True, text=True).stdout.strip()
    assert found, "HaranoAji (TeX Live's Japanese fonts) is needed by the HTML tests"
    folder = tmp_path_factory.mktemp("fontconfig")
    (folder / "fonts.conf").write_text(
        '<?xml version="1.0"?><!DOCTYPE fontconfig SYSTEM "fonts.dtd"><fontconfig>'
        '<include ignore_missing="yes">/etc/fonts/fonts.conf</include>'
        f"<dir>{Path(found).parent}</dir><cachedir>{folder / 'cache'}</cachedir></fontconfig>", encoding="utf-8")
    return folder / "fonts.conf"


def measure(page: str, folder: Path, fonts: Path) -> dict:
    path = folder / "probe.html"
    path.write_text(page.replace("</body>", PROBE + "</body>"), encoding="utf-8")
    env = {**os.environ, "FONTCONFIG_FILE": str(fonts)}
    dom = chromium(f"--user-data-dir={folder / 'profile'}", "--dump-dom", path.as_uri(), env=env).stdout
    start = dom.index('<pre id="probe">') + len('<pre id="probe">')
    return json.loads(unescape(dom[start:dom.index("</pre>", start)]))


@pytest.mark.parametrize("lang", ["ja", "en"])
@pytest.mark.parametrize("example", names())
def test_every_example_lays_out_in_chromium(example, lang, fonts, tmp_path):
    result = measure(render_html(derive(example, lang=lang)), tmp_path, fonts)
    assert result["boxes"] and all(b["fits"] for b in result["boxes"]), [b for b in result["boxes"] if not b["fits"]]
    assert all(label["clashes"] == 0 for label in result["labels"]), result["labels"]
    # the labels of Figure 1's branches (modern's is grouped-query attention: a W_K, W_V pair per K/V head)
    branches = {"WK,V[1]", "WK,V[2]", "·WO"} if example == "modern" else {"WQ", "WK", "WV"}
    assert {label["text"] for label in result["labels"]} >= branches
    for fraction in result["fractions"]:  # display style: the numerator at the text's size, not a script's
        assert fraction["numerator"] == fraction["text"] and fraction["height"] > 1.8 * fraction["text"]


class DevTools:
    """Chromium's DevTools protocol over --remote-debugging-pipe (its fds 3 and 4): no websocket library."""

    def __init__(self, folder: Path, env: dict) -> None:
        binary = shutil.which("chromium") or shutil.which("chromium-browser")
        to_browser, self.writer = os.pipe()
        self.reader, from_browser = os.pipe()

        def arrange() -> None:  # the browser's fds 3 (commands) and 4 (replies), whatever numbers the pipes got
            high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 20) for fd in (to_browser, from_browser)]
            os.dup2(high[0], 3)
            os.dup2(high[1], 4)

        self.process = subprocess.Popen(
            [binary, "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe", "--no-first-run",
             f"--user-data-dir={folder / 'profile'}", "about:blank"],
            env=env, pass_fds=(3, 4, to_browser, from_browser), preexec_fn=arrange,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_browser)
        os.close(from_browser)
        self.buffer, self.next_id, self.session = b"", 0, None

    def send(self, method: str, **params) -> dict:
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params}
        if self.session:
            message["sessionId"] = self.session
        os.write(self.writer, json.dumps(message).encode() + b"\0")
        return self.wait(lambda m: m.get("id") == self.next_id).get("result", {})

    def wait(self, wanted) -> dict:
        while True:
            while b"\0" not in self.buffer:
                chunk = os.read(self.reader, 1 << 16)
                assert chunk, "Chromium closed its DevTools pipe"
                self.buffer += chunk
            raw, self.buffer = self.buffer.split(b"\0", 1)
            message = json.loads(raw)
            if wanted(message):
                return message

    def close(self) -> None:
        self.process.kill()
        self.process.wait()
        os.close(self.writer)
        os.close(self.reader)


def test_japanese_is_set_in_the_only_japanese_font(fonts, tmp_path):
    """The fonts Chromium used for the caption of Figure 1, asked through its DevTools protocol: HaranoAji, the only
    Japanese font there, for every Japanese glyph (none left to a font without them: boxes)."""
    page = tmp_path / "mt.html"
    page.write_text(render_html(derive("mt", lang="ja")), encoding="utf-8")
    browser = DevTools(tmp_path, {**os.environ, "FONTCONFIG_FILE": str(fonts)})
    try:
        target = browser.send("Target.createTarget", url="about:blank")["targetId"]
        browser.session = browser.send("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        browser.send("Page.enable")
        browser.send("Page.navigate", url=page.as_uri())
        browser.wait(lambda m: m.get("method") == "Page.loadEventFired")
        root = browser.send("DOM.getDocument")["root"]["nodeId"]
        browser.send("CSS.enable")
        caption = browser.send("DOM.querySelector", nodeId=root, selector="figcaption")["nodeId"]
        used = browser.send("CSS.getPlatformFontsForNode", nodeId=caption)["fonts"]
    finally:
        browser.close()
    families = {font["familyName"]: font["glyphCount"] for font in used}
    assert any("Harano Aji" in family or "原ノ味" in family for family in families), families
    japanese = sum(count for family, count in families.items() if "Harano Aji" in family or "原ノ味" in family)
    assert japanese >= 40  # the caption's Japanese letters


def test_function_applications_and_signs_are_spaced_as_in_tex():
    """sin(1), not "sin ( 1 )": brackets around a short content do not stretch; −0.3 after a bracket is a sign;
    softmax is a function's name, not an operator spaced on both sides."""
    page = render_html(derive("decoder", lang="en"))
    assert "<mi>sin</mi><mrow><mrow><mo stretchy=\"false\">&#x00028;</mo><mn>1</mn>" in page
    assert 'fence="true" form="prefix">&#x00028;</mo><mn>' not in page
    mt = render_html(derive("mt", lang="en"))
    assert "<mo stretchy=\"false\">&#x00028;</mo><mn>&#x02212;0.3</mn>" in mt  # 1.2 · (−0.3)
    assert "<mi>softmax</mi>" in mt and "<mo>softmax</mo>" not in mt
    assert "<mo>&#x02212;</mo><mo>&#x0221E;</mo>" in page  # −∞ stays an operator and its symbol


def test_aligned_derivations_are_in_display_style():
    page = render_html(derive("mt", lang="en"))
    cells = page.split('<table class="eq">')[1:]
    assert cells and all('displaystyle="true"' in cell.split("</table>")[0] for cell in cells)
