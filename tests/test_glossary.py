"""Issue 31 item 20: one term per concept. docs/glossary.toml names each concept's term and the variants never
written; every locale file of the package and every built-in example's document, in Japanese and English, is read
against it."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from symattn import derive, render_markdown
from symattn.examples import names

ROOT = Path(__file__).resolve().parent.parent
GLOSSARY = tomllib.loads((ROOT / "docs" / "glossary.toml").read_text(encoding="utf-8"))
LOCALES = sorted((ROOT / "symattn").rglob("*.toml"))


def locale_files(lang: str) -> list[Path]:
    return [p for p in LOCALES if p.name == f"{lang}.toml" and "locale" in p.parent.name]


@pytest.fixture(scope="module")
def documents():
    return {(name, lang): render_markdown(derive(name, lang=lang)) for name in names() for lang in ("ja", "en")}


def test_the_glossary_is_well_formed():
    assert len(GLOSSARY) >= 6
    for concept, langs in GLOSSARY.items():
        for lang in ("ja", "en"):
            entry = langs[lang]
            assert entry["use"] and entry["use"] not in entry["not"], concept


@pytest.mark.parametrize("lang", ["ja", "en"])
def test_no_locale_file_writes_a_variant(lang):
    files = locale_files(lang)
    assert len(files) > 10
    for path in files:
        text = path.read_text(encoding="utf-8")
        for concept, langs in GLOSSARY.items():
            for variant in langs[lang]["not"]:
                assert variant not in text, (path.relative_to(ROOT), concept, variant)


@pytest.mark.parametrize("lang", ["ja", "en"])
def test_no_document_writes_a_variant_and_the_terms_are_used(documents, lang):
    """Every built-in example, as printed; each concept's term appears in some document (the glossary is not
    a list of words nobody writes)."""
    texts = [text for (_, doc_lang), text in documents.items() if doc_lang == lang]
    for concept, langs in GLOSSARY.items():
        for variant in langs[lang]["not"]:
            assert not any(variant in text for text in texts), (concept, variant)
    used = {concept for concept, langs in GLOSSARY.items() if any(langs[lang]["use"] in text for text in texts)}
    assert used >= {"dot_product", "note", "feed_forward", "vocabulary_item", "norm_statistics"}, used
