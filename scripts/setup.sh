#!/bin/sh
# symattn: everything a fresh Debian/Ubuntu machine needs, then symattn itself (editable, with the test extra).
#   TeX Live (upLaTeX + dvipdfmx + jsarticle + HaranoAji fonts, Latin Modern, the exam class; LuaLaTeX for the
#   benchmark's TeX floor), poppler-utils (pdftotext/pdftoppm), and Chromium, in which the tests open the HTML output.
# Safe to run again: it installs only what is missing.
set -eu
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
PACKAGES="texlive-lang-japanese texlive-latex-recommended texlive-latex-extra lmodern texlive-luatex poppler-utils chromium"

have_tools() {
    command -v chromium >/dev/null 2>&1 && command -v uplatex >/dev/null 2>&1 && command -v dvipdfmx >/dev/null 2>&1 &&
        command -v lualatex >/dev/null 2>&1 && command -v pdftotext >/dev/null 2>&1 &&
        kpsewhich jsarticle.cls >/dev/null 2>&1 && kpsewhich uptex-haranoaji.map >/dev/null 2>&1 &&
        kpsewhich lmodern.sty >/dev/null 2>&1 && kpsewhich luatexja.sty >/dev/null 2>&1 &&
        kpsewhich booktabs.sty >/dev/null 2>&1 &&
        kpsewhich exam.cls >/dev/null 2>&1
}

if ! have_tools; then
    if [ "$(id -u)" = 0 ]; then SUDO=""; elif command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
        echo "setup: TeX Live or Chromium is missing and this user cannot install packages; ask for: $PACKAGES" >&2
        exit 1
    fi
    echo "setup: installing TeX Live and Chromium from Debian's packages (a few minutes, once): $PACKAGES" >&2
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $PACKAGES >/dev/null
fi

PIP_ROOT_USER_ACTION=ignore PIP_DISABLE_PIP_VERSION_CHECK=1 "$PYTHON" -m pip install -q -e ".[test]"
