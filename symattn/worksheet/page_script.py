"""The self-check page's script and style, inline in every page (nothing is fetched). The script reads the page's
data (page.py: each blank's exact value, tolerance and how it follows from earlier blanks) and marks a blank as it
is typed: right within its tolerance of the exact value, or of the value recomputed from earlier values that are all
right (rounded as shown: e^{1.2004}, not e^{1.200392}); carried within it of the value recomputed from the student's
own earlier numbers where one of them is not right, as `symattn grade` credits error carried forward; else
wrong, with the likely cause where one of check's fits (no_scaling, scaled_by_d_k, too_few_decimals,
rounded_intermediates, rounding, typo). Numbers are compared as the browser's doubles: the tolerances are units of
the 4th–6th decimal, far above their error."""

SCRIPT = r"""
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("checks").textContent);
  var words = data.words, blanks = data.blanks, typed = {}, verdicts = {};
  var NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d{1,3})?$/;

  function parse(text) {  // grade's reading of an answer: spaces ignored, − as minus, a lone comma as the point
    var t = text.replace(/\s+/g, "").replace(/\u2212/g, "-");
    if (t.indexOf(",") >= 0 && t.indexOf(".") < 0 && t.split(",").length === 2) { t = t.replace(",", "."); }
    if (t.length > 60 || !NUMBER.test(t)) { return null; }
    var x = Number(t);
    return isFinite(x) ? x : null;
  }
  function operand(op) {  // a shown number, or the student's value of an earlier blank (null: not typed)
    if (op.v !== undefined) { return Number(op.v); }
    return typed[op.b] === undefined ? null : typed[op.b];
  }
  function sum(terms) {
    var total = 0;
    for (var i = 0; i < terms.length; i++) {
      var product = 1;
      for (var j = 0; j < terms[i].length; j++) {
        var v = operand(terms[i][j]);
        if (v === null) { return null; }
        product *= v;
      }
      total += product;
    }
    return total;
  }
  function recomputed(from) {  // the blank's value from the student's own earlier numbers
    if (!from) { return null; }
    if (from.exp !== undefined) { return typed[from.exp] === undefined ? null : Math.exp(typed[from.exp]); }
    var total = sum(from.terms);
    if (total === null || !from.divisor) { return total; }
    var d = operand(from.divisor);
    return d === null || d === 0 ? null : total / d;
  }
  function earlierRight(from) {  // every earlier blank the value is computed from marked right
    var ops = from.exp !== undefined ? [{b: from.exp}] : [].concat.apply(from.divisor ? [from.divisor] : [], from.terms);
    for (var i = 0; i < ops.length; i++) {
      if (ops[i].b !== undefined && verdicts[ops[i].b] !== "right") { return false; }
    }
    return true;
  }
  function within(x, target, tol) { return Math.abs(x - target) <= tol * (1 + 1e-9) + 1e-12; }
  function typo(text, answer) {  // one digit wrong, or two neighbouring digits swapped
    var a = text.replace(/\s+/g, ""), b = answer;
    if (a.length !== b.length) { return false; }
    var diff = [];
    for (var i = 0; i < a.length; i++) { if (a[i] !== b[i]) { diff.push(i); } }
    if (diff.length === 1) { return /\d/.test(a[diff[0]]) && /\d/.test(b[diff[0]]); }
    return diff.length === 2 && diff[1] === diff[0] + 1 && a[diff[0]] === b[diff[1]] && a[diff[1]] === b[diff[0]];
  }
  function roundTo(v, k) {  // half-up at k decimals, as the worksheet rounds
    var f = Math.pow(10, k);
    return (v < 0 ? -1 : 1) * Math.floor(Math.abs(v) * f + 0.5 + 1e-9) / f;
  }
  function decimalsOf(text) {
    var t = text.replace(/\s+/g, "").replace(",", "."), point = t.indexOf(".");
    return point < 0 || /[eE]/.test(t) ? (/[eE]/.test(t) ? -1 : 0) : t.length - point - 1;
  }
  function earlierRounded(from, k) {  // the value from the earlier numbers each rounded to k decimals first
    if (!from || from.exp !== undefined || !from.terms) { return null; }
    var total = 0;
    for (var i = 0; i < from.terms.length; i++) {
      var product = 1;
      for (var j = 0; j < from.terms[i].length; j++) {
        var v = operand(from.terms[i][j]);
        if (v === null) { return null; }
        product *= roundTo(v, k);
      }
      total += product;
    }
    if (!from.divisor) { return total; }
    var d = operand(from.divisor);
    return d === null || roundTo(d, k) === 0 ? null : total / roundTo(d, k);
  }
  function cause(blank, x, text) {
    var tol = Number(blank.tolerance), from = blank.from, k;
    if (blank.stage === "scaled" && from && from.divisor) {
      var top = sum(from.terms), d = operand(from.divisor);
      if (top !== null && within(x, top, tol)) { return "no_scaling"; }
      if (top !== null && d && within(x, top / (d * d), tol)) { return "scaled_by_d_k"; }
    }
    var places = decimalsOf(text);  // the exact value, correctly rounded to fewer decimals than asked
    if (places >= 0 && places < blank.decimals && Math.abs(x - roundTo(Number(blank.value), places)) < 1e-12) {
      return "too_few_decimals";
    }
    for (k = blank.decimals - 1; k >= 1; k--) {  // computed from earlier values rounded to fewer decimals
      var early = earlierRounded(from, k), exact = earlierRounded(from, 12);
      if (early !== null && exact !== null && !within(early, exact, tol) && within(x, early, tol)) {
        return "rounded_intermediates";
      }
    }
    if (Math.abs(x - Number(blank.value)) <= 1.5 * Math.pow(10, -blank.decimals)) { return "rounding"; }
    return typo(text, blank.answer) ? "typo" : "unknown";
  }
  function mark(blank) {
    var input = document.getElementById("b" + blank.n), out = document.getElementById("m" + blank.n);
    var text = input.value.trim(), x = text === "" ? null : parse(text), verdict = "";
    delete typed[blank.n];
    if (text === "") {
      out.textContent = "";
    } else if (x === null) {
      verdict = "invalid";
      out.textContent = words.not_a_number;
    } else {
      typed[blank.n] = x;
      var tol = Number(blank.tolerance), carried = recomputed(blank.from);
      var follows = carried !== null && within(x, carried, tol);
      if (within(x, Number(blank.value), tol) || (follows && earlierRight(blank.from))) {
        verdict = "right";  // (from right earlier values, rounded as shown: a hand route, not a slip)
        out.textContent = words.right;
      } else if (follows) {
        verdict = "carried";
        out.textContent = words.carried;
      } else {
        var c = cause(blank, x, text);
        verdict = "wrong";
        out.textContent = words.wrong + " " + words.cause.replace("{cause}", words["cause." + c]);
        out.setAttribute("data-cause", c);
      }
    }
    if (verdict !== "wrong") { out.removeAttribute("data-cause"); }
    verdicts[blank.n] = verdict;
    out.setAttribute("data-verdict", verdict);
    input.setAttribute("aria-invalid", verdict === "wrong" || verdict === "invalid" ? "true" : "false");
    return verdict;
  }
  function markAll() {  // in order: a later blank is carried from the student's earlier values
    var right = 0, carried = 0;
    for (var i = 0; i < blanks.length; i++) {
      var verdict = mark(blanks[i]);
      right += verdict === "right" ? 1 : 0;
      carried += verdict === "carried" ? 1 : 0;
    }
    document.getElementById("progress").textContent = words.progress.replace("{right}", right)
      .replace("{carried}", carried).replace("{total}", blanks.length);
  }
  for (var i = 0; i < blanks.length; i++) {
    document.getElementById("b" + blanks[i].n).addEventListener("input", markAll);
  }
  var buttons = document.querySelectorAll("button.show");
  for (var k = 0; k < buttons.length; k++) {
    buttons[k].addEventListener("click", function (event) {
      var ns = event.currentTarget.getAttribute("data-blanks").split(" ");
      for (var j = 0; j < ns.length; j++) {
        var blank = blanks[Number(ns[j]) - 1];
        document.getElementById("a" + blank.n).textContent = words.answer_is.replace("{answer}", blank.answer);
      }
    });
  }
  markAll();
})();
"""

STYLE = """
menclose[notation="box"] { border: 1.5px solid #333; padding: 0 0.3em; font-size: 0.85em; color: #555; }
.selfstudy { background: #fff8e0; border-left: 4px solid #d9a400; padding: 0.5em 0.8em; }
#progress { position: sticky; top: 0; background: #fff; padding: 0.3em 0; font-weight: bold; }
.answers { margin: 0.4em auto 1em; max-width: 40em; }
.blank { margin: 0.3em 0; }
.blank input { font: inherit; padding: 0.15em 0.3em; }
.mark[data-verdict="right"] { color: #1b7a1b; }
.mark[data-verdict="carried"] { color: #1b4f9c; }
.mark[data-verdict="wrong"], .mark[data-verdict="invalid"] { color: #b3261e; }
.answer { color: #555; }
button.show { font: inherit; margin-top: 0.3em; }
@media (max-width: 40em) { body { margin: 0.5em auto; } table.eq { font-size: 0.9em; } }
"""
