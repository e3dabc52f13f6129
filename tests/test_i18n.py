import re
from pathlib import Path

import pytest

import symattn
from symattn.infra import i18n

LOCALES = Path(symattn.__file__).parent / "locales"


def test_languages_have_the_same_keys():
    assert set(i18n.strings("ja")) == set(i18n.strings("en"))


@pytest.mark.parametrize("key", sorted(i18n.strings("ja")))
def test_placeholders_agree_between_languages(key):
    fields = [set(re.findall(r"\{(\w+)\}", i18n.strings(lang)[key])) for lang in ("ja", "en")]
    assert fields[0] == fields[1]


def test_no_math_in_language_strings():
    for lang in ("ja", "en"):
        for key, value in i18n.strings(lang).items():
            assert "$" not in value and "\\" not in value, f"{lang}:{key} holds LaTeX"


def test_every_key_the_derivation_uses_exists():
    source = "\n".join(p.read_text(encoding="utf-8") for p in (LOCALES.parent).rglob("*.py"))
    used = set(re.findall(r'(?:Heading\(\d, |Paragraph\()"([a-z_]+\.[a-z_.]+)"', source))
    assert used, "no keys found: the pattern is stale"
    assert used <= set(i18n.strings("ja"))
