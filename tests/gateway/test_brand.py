"""gateway.platform.brand: the accent colour's contrast and the logo upload's checks."""
from __future__ import annotations

import io

import pytest
from PIL import Image

from gateway.platform import brand
from gateway.core.errors import ValidationError


def image_bytes(fmt: str, size=(300, 120), colour=(200, 30, 30)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, colour).save(out, format=fmt)
    return out.getvalue()


def test_contrast_ratio_matches_wcag_reference_values():
    assert brand.contrast_ratio("#000000", "#ffffff") == pytest.approx(21.0)
    assert brand.contrast_ratio("#ffffff", "#ffffff") == pytest.approx(1.0)
    assert brand.contrast_ratio("#767676", "#ffffff") == pytest.approx(4.54, abs=0.01)  # the classic AA grey


@pytest.mark.parametrize("value", ["#1d4ed8", "#0F766E", "#7c2d12", "#000", " #6d28d9 "])
def test_dark_enough_accent_colours_are_accepted_lower_case(value):
    cleaned = brand.accent_colour_clean(value)
    assert cleaned == cleaned.lower() and len(cleaned) == 7
    assert brand.contrast_ratio(cleaned, "#ffffff") >= 4.5


@pytest.mark.parametrize("value", ["#facc15", "#22c55e", "#60a5fa", "#ffffff", "#777777"])
def test_light_accent_colours_are_refused_with_their_contrast(value):
    with pytest.raises(ValidationError) as caught:
        brand.accent_colour_clean(value)
    assert caught.value.field == "accent_color" and ":1" in caught.value.message and "darker" in caught.value.message


@pytest.mark.parametrize("value", ["red", "#12345", "#gggggg", "1d4ed8", "#1d4ed8;}body{", "rgb(0,0,0)"])
def test_anything_but_a_hex_colour_is_refused(value):
    with pytest.raises(ValidationError) as caught:
        brand.accent_colour_clean(value)
    assert caught.value.field == "accent_color"


def test_an_empty_accent_colour_keeps_the_checkouts_own():
    assert brand.accent_colour_clean("") == ""


@pytest.mark.parametrize("fmt", ["PNG", "JPEG", "WEBP"])
def test_a_logo_is_stored_as_a_png_pillow_wrote_within_the_header_box(fmt):
    stored = brand.logo_clean(image_bytes(fmt, size=(1200, 400)))
    with Image.open(io.BytesIO(stored)) as image:
        assert image.format == "PNG"
        assert image.size[0] <= brand.LOGO_BOX[0] and image.size[1] <= brand.LOGO_BOX[1]


def test_what_rides_along_in_an_upload_is_not_kept():
    png = image_bytes("PNG") + b"<script>alert(1)</script>"  # trailing bytes after the image
    assert b"<script>" not in brand.logo_clean(png)


@pytest.mark.parametrize(("data", "why"), [
    (b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>', "PNG, JPEG or WebP"),
    (image_bytes("GIF"), "not GIF"),
    (b"not an image at all", "PNG, JPEG or WebP"),
    (image_bytes("PNG")[:40], "PNG, JPEG or WebP"),  # cut short
])
def test_a_logo_that_is_not_a_png_jpeg_or_webp_image_is_refused(data, why):
    with pytest.raises(ValidationError) as caught:
        brand.logo_clean(data)
    assert caught.value.field == "logo" and why in caught.value.message


def test_a_logo_over_the_size_limit_is_refused_before_it_is_opened():
    with pytest.raises(ValidationError) as caught:
        brand.logo_clean(b"\x89PNG" + b"0" * brand.LOGO_MAX_BYTES)
    assert "KB" in caught.value.message


def test_a_logo_claiming_huge_dimensions_is_refused_before_its_pixels_are_decoded():
    tall = image_bytes("PNG", size=(10, brand.LOGO_MAX_SIDE + 1), colour=(0, 0, 0))
    with pytest.raises(ValidationError) as caught:
        brand.logo_clean(tall)
    assert "pixels" in caught.value.message
