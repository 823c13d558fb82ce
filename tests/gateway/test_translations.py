"""The compiled catalogues are kept in git (issue 26): each committed `.mo` must say what its
`.po` compiles to, and production refuses to start without one for a language it offers."""
from __future__ import annotations

import gettext
import shutil
import subprocess
from pathlib import Path

import pytest
from django.core import checks

from gateway.core.translations import check_compiled_catalogues

ROOT = Path(__file__).resolve().parents[2]
CATALOGUES = sorted((ROOT / "locale").glob("*/LC_MESSAGES/*.po"))
HOW_TO_FIX = ("run `python manage.py compilemessages --ignore '.venv*' --ignore var --ignore .prism` "
              "and commit the .mo with its .po")


def catalogue(path: Path) -> dict:
    with path.open("rb") as handle:
        return gettext.GNUTranslations(handle)._catalog


def test_there_is_a_catalogue_to_hold():
    assert [p.relative_to(ROOT).as_posix() for p in CATALOGUES] == ["locale/hi/LC_MESSAGES/django.po"]


@pytest.mark.parametrize("po", CATALOGUES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_each_committed_mo_says_what_its_po_compiles_to(po, tmp_path):
    mo = po.with_suffix(".mo")
    tracked = subprocess.run(["git", "ls-files", "--error-unmatch", str(mo.relative_to(ROOT))], cwd=ROOT,
                             capture_output=True, text=True)
    assert tracked.returncode == 0, f"{mo.relative_to(ROOT)} is not in git: {HOW_TO_FIX}"
    # What Django's compilemessages runs (msgfmt --check-format); compared as catalogues, not as
    # bytes, so that another gettext version's byte layout is not a difference.
    fresh = tmp_path / "fresh.mo"
    subprocess.run(["msgfmt", "--check-format", "-o", str(fresh), str(po)], check=True)
    committed, expected = catalogue(mo), catalogue(fresh)
    missing = sorted(str(k) for k in expected.keys() - committed.keys())
    stale = sorted(str(k) for k in expected.keys() & committed.keys() if expected[k] != committed[k])
    extra = sorted(str(k) for k in committed.keys() - expected.keys())
    assert not (missing or stale or extra), (
        f"{mo.relative_to(ROOT)} differs from its .po ({len(missing)} missing, {len(stale)} changed, "
        f"{len(extra)} extra; first: {(missing + stale + extra)[0][:80]!r}): {HOW_TO_FIX}")


def test_the_comparison_notices_a_po_edited_without_recompiling(tmp_path):
    po = CATALOGUES[0]
    edited = tmp_path / "django.po"
    edited.write_text(po.read_text().replace('msgstr "सुरक्षित पेमेंट"', 'msgstr "सुरक्षित भुगतान"', 1))
    fresh = tmp_path / "fresh.mo"
    subprocess.run(["msgfmt", "--check-format", "-o", str(fresh), str(edited)], check=True)
    assert catalogue(fresh) != catalogue(po.with_suffix(".mo"))


def ids(messages) -> list[str]:
    return [m.id for m in messages]


@pytest.fixture
def no_catalogue(settings, tmp_path):
    """A deployment whose locale folder has the .po but lost the compiled catalogue."""
    shutil.copytree(ROOT / "locale", tmp_path / "locale", ignore=shutil.ignore_patterns("*.mo"))
    settings.LOCALE_PATHS = [tmp_path / "locale"]
    return settings


def test_the_committed_catalogue_passes_the_check_in_production(settings):
    settings.IS_PRODUCTION = True
    assert check_compiled_catalogues() == []
    assert "gateway.E001" not in ids(checks.run_checks(tags=[checks.Tags.translation]))


def test_production_without_a_compiled_catalogue_is_an_error_naming_the_language(no_catalogue):
    no_catalogue.IS_PRODUCTION = True
    messages = checks.run_checks(tags=[checks.Tags.translation])
    errors = [m for m in messages if m.id == "gateway.E001"]
    assert len(errors) == 1 and errors[0].is_serious()
    assert "'hi'" in errors[0].msg and "compilemessages -l hi" in errors[0].hint


def test_staging_without_a_compiled_catalogue_warns(no_catalogue):
    no_catalogue.IS_PRODUCTION = False
    messages = [m for m in checks.run_checks(tags=[checks.Tags.translation]) if m.id.startswith("gateway.")]
    assert ids(messages) == ["gateway.W002"] and not messages[0].is_serious()


def test_a_catalogue_that_is_not_gettext_is_an_error(no_catalogue):
    (Path(no_catalogue.LOCALE_PATHS[0]) / "hi/LC_MESSAGES/django.mo").write_bytes(b"not a catalogue")
    no_catalogue.IS_PRODUCTION = True
    errors = [m for m in check_compiled_catalogues() if m.id == "gateway.E001"]
    assert len(errors) == 1 and "cannot be read" in errors[0].msg


def test_english_the_source_language_needs_no_catalogue(settings, tmp_path):
    settings.IS_PRODUCTION, settings.LANGUAGES = True, [("en", "English")]
    settings.LOCALE_PATHS = [tmp_path]
    assert check_compiled_catalogues() == []
