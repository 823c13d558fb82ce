"""POST /api/v2/tokens: a token made from a payment (the rest of /api/v2/tokens is tokens.urls)."""
from django.urls import path

from payments.api.token_views import TokensView

urlpatterns = [
    path("api/v2/tokens", TokensView.as_view(), name="tokens"),
]
