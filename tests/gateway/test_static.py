def test_checkout_stylesheet_is_served_without_debug_or_a_proxy(client):
    """Under gunicorn (DEBUG off, no --insecure) the checkout must still get its CSS."""
    from django.contrib.staticfiles import finders

    css = [path for path in finders.find("checkout", find_all=True)]
    assert css, "the checkout's static folder exists"
    import os

    name = next(n for n in os.listdir(css[0]) if n.endswith(".css"))
    response = client.get(f"/static/checkout/{name}")
    assert response.status_code == 200
    assert b"{" in b"".join(response.streaming_content)
