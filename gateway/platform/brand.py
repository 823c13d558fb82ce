"""A merchant's brand on the checkout: its display name, logo and accent colour, checked.

The logo is an upload, never an address: the checkout's Content-Security-Policy loads images
from the gateway only (no customer's address reaches a third party, and nothing on the page
can change after review), so the gateway keeps the image and serves it itself
(payments.checkout.views.brand_logo). An upload is opened with Pillow, must be a PNG, JPEG or
WebP of at most LOGO_MAX_BYTES and LOGO_MAX_SIDE pixels a side, and is stored re-encoded as a
PNG no larger than the header needs: the bytes served are Pillow's, never the uploader's, so a
file that is also a script or carries metadata (location, author) loses it. SVG is refused: it
can carry script.

The accent colour is a 6-digit hex colour that text in it, and white text on it, can be read
against: a WCAG 2.x contrast ratio of at least 4.5:1 (level AA for normal text) with white and
with the page's background, since the checkout uses it for buttons with white labels and for
links on both.
"""
from __future__ import annotations

import hashlib
import io
import re

from gateway.core.errors import ValidationError

LOGO_MAX_BYTES = 512 * 1024
LOGO_MAX_SIDE = 4096
LOGO_FORMATS = {"PNG", "JPEG", "WEBP"}
# Stored no larger than this box: the header shows the logo at most 40 px high, and twice that
# covers high-density screens.
LOGO_BOX = (480, 96)
DISPLAY_NAME_MAX = 100

HEX_COLOUR = re.compile(r"#[0-9a-f]{6}")
CONTRAST_MIN = 4.5
WHITE = "#ffffff"
PAGE_BACKGROUND = "#f1f5f9"  # --canvas in static/checkout/checkout.css


def relative_luminance(colour: str) -> float:
    """WCAG 2.x relative luminance of '#rrggbb'."""
    channels = []
    for i in (1, 3, 5):
        c = int(colour[i:i + 2], 16) / 255
        channels.append(c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4)
    r, g, b = channels
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast_ratio(first: str, second: str) -> float:
    """WCAG 2.x contrast ratio, 1.0 to 21.0."""
    lighter, darker = sorted((relative_luminance(first), relative_luminance(second)), reverse=True)
    return (lighter + 0.05) / (darker + 0.05)


def mix(colour: str, other: str, weight: float) -> str:
    """`colour` moved `weight` (0 to 1) of the way towards `other`, per sRGB channel."""
    parts = [round(int(colour[i:i + 2], 16) * (1 - weight) + int(other[i:i + 2], 16) * weight) for i in (1, 3, 5)]
    return "#" + "".join(f"{part:02x}" for part in parts)


def accent_palette(accent: str) -> dict[str, str]:
    """The checkout's brand variables (static/checkout/checkout.css) drawn from one accent:
    a darker shade for hover and for text on the soft tint, and the soft tint itself."""
    return {"brand": accent, "brand-dark": mix(accent, "#000000", 0.35), "brand-soft": mix(accent, WHITE, 0.92)}


def accent_colour_clean(value: str) -> str:
    """'' (the checkout's own blue) or a lower-case '#rrggbb' readable as the checkout uses it.
    Raises ValidationError naming accent_color otherwise, with the ratio it has."""
    value = (value or "").strip().lower()
    if not value:
        return ""
    if len(value) == 4 and re.fullmatch(r"#[0-9a-f]{3}", value):
        value = "#" + "".join(c * 2 for c in value[1:])
    if not HEX_COLOUR.fullmatch(value):
        raise ValidationError("must be a hex colour such as #1d4ed8", field="accent_color")
    palette = accent_palette(value)
    pairs = ((value, WHITE, "white text on it"), (value, PAGE_BACKGROUND, "it on the page background"),
             (palette["brand-dark"], palette["brand-soft"], "its dark shade on its light tint"))
    for colour, background, what in pairs:
        ratio = contrast_ratio(colour, background)
        if ratio < CONTRAST_MIN:
            raise ValidationError(f"{value} is too light: {what} has a contrast of {ratio:.2f}:1 and WCAG AA "
                                  f"needs {CONTRAST_MIN}:1; choose a darker shade", field="accent_color")
    return value


def display_name_clean(value: str) -> str:
    value = " ".join((value or "").split())
    if len(value) > DISPLAY_NAME_MAX:
        raise ValidationError(f"must be at most {DISPLAY_NAME_MAX} characters", field="display_name")
    return value


def logo_clean(data: bytes) -> bytes:
    """The PNG to store for an uploaded logo. Raises ValidationError naming logo for anything
    but a PNG, JPEG or WebP image within the limits."""
    from PIL import Image, UnidentifiedImageError

    if len(data) > LOGO_MAX_BYTES:
        raise ValidationError(f"must be at most {LOGO_MAX_BYTES // 1024} KB", field="logo")
    try:
        with Image.open(io.BytesIO(data)) as image:
            if image.format not in LOGO_FORMATS:
                raise ValidationError(f"must be a PNG, JPEG or WebP image, not {image.format}", field="logo")
            # Checked before the pixels are decoded: a small file can claim a huge image.
            if max(image.size) > LOGO_MAX_SIDE:
                raise ValidationError(f"must be at most {LOGO_MAX_SIDE} pixels on each side", field="logo")
            image.load()
            picture = image.convert("RGBA")
    except ValidationError:
        raise
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError, Image.DecompressionBombError):
        raise ValidationError("must be a PNG, JPEG or WebP image", field="logo") from None
    picture.thumbnail(LOGO_BOX)
    out = io.BytesIO()
    picture.save(out, format="PNG", optimize=True)
    return out.getvalue()


def logo_digest(png: bytes) -> str:
    return hashlib.sha256(png).hexdigest()
