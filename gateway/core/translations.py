"""The compiled message catalogues are part of the product.

Every language in settings.LANGUAGES other than English (the language the strings are written
in) needs `locale/<code>/LC_MESSAGES/django.mo`, kept in git beside its `.po` (a test holds the
two together: tests/gateway/test_translations.py). Without it Django falls back to English
silently: the page says `<html lang="hi">` and shows English. So `manage.py check` (and
`migrate`, which runs the checks) refuses a production start without it, and warns in staging.
"""
from __future__ import annotations

import gettext
from pathlib import Path

from django.conf import settings

SOURCE_LANGUAGE = "en"
DOMAIN = "django"


def catalogue_path(code: str) -> Path | None:
    """The compiled catalogue Django would load for `code` from LOCALE_PATHS, if one exists."""
    for folder in settings.LOCALE_PATHS:
        found = gettext.find(DOMAIN, str(folder), [code])
        if found:
            return Path(found)
    return None


def catalogue_problem(code: str) -> str | None:
    """Why `code` would show English, or None when its catalogue loads and translates something."""
    path = catalogue_path(code)
    if path is None:
        return f"no compiled catalogue (locale/{code}/LC_MESSAGES/{DOMAIN}.mo) for the offered language {code!r}"
    try:
        with path.open("rb") as handle:
            translations = gettext.GNUTranslations(handle)
    except (OSError, ValueError) as exc:  # a truncated or non-gettext file
        return f"the catalogue {path} for {code!r} cannot be read ({exc})"
    if not any(msgid for msgid in translations._catalog if msgid):
        return f"the catalogue {path} for {code!r} translates nothing"
    return None


def check_compiled_catalogues(app_configs=None, **kwargs):
    """System check: every offered language other than English has a usable compiled catalogue.
    An error in production (the process must not start and show English under a Hindi label);
    a warning in staging."""
    from django.core.checks import Error, Warning

    level, check_id = (Error, "gateway.E001") if settings.IS_PRODUCTION else (Warning, "gateway.W002")
    messages = []
    for code, _name in settings.LANGUAGES:
        if code == SOURCE_LANGUAGE:
            continue
        problem = catalogue_problem(code)
        if problem:
            messages.append(level(
                problem + ": the checkout would show English to customers who asked for it.",
                hint=f"The catalogue is kept in git; restore it, or compile it with `python manage.py "
                     f"compilemessages -l {code}` (Debian's gettext) and commit it.",
                id=check_id))
    return messages
