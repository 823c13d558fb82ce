"""The JSON parser of every API view."""
from rest_framework.parsers import JSONParser

from gateway.core.errors import ValidationError


def _find_nul(value, path: str) -> str | None:
    """The path of the first string (or key) holding a NUL character, or None."""
    if isinstance(value, str):
        return path if "\x00" in value else None
    if isinstance(value, dict):
        for key, item in value.items():
            child = f"{path}.{key}" if path else str(key)
            if "\x00" in str(key):
                return child.replace("\x00", "") or "body"
            found = _find_nul(item, child)
            if found:
                return found
    if isinstance(value, list):
        for index, item in enumerate(value):
            found = _find_nul(item, f"{path}[{index}]")
            if found:
                return found
    return None


class GatewayJSONParser(JSONParser):
    """JSON, minus the one character PostgreSQL cannot store: a NUL anywhere in the body is a
    VALIDATION_ERROR naming its field, whichever view and serializer the body is for. A body
    nested too deeply to read is a VALIDATION_ERROR naming `body`."""

    def parse(self, stream, media_type=None, parser_context=None):
        try:
            data = super().parse(stream, media_type, parser_context)
            field = _find_nul(data, "")
        except RecursionError:
            # json.loads (and _find_nul) recurse once per level, so "[[[[...]]]]" a few thousand
            # deep, a few kilobytes, is deeper than Python goes. No body of this API nests
            # beyond two levels.
            raise ValidationError("is nested too deeply to be read", field="body") from None
        if field is not None:
            raise ValidationError("must not contain NUL characters", field=field or "body")
        return data
