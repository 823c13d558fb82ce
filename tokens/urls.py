"""Routes of the tokens app: exact paths, no trailing slash. POST /api/v2/tokens, which makes a
token from a payment, is payments' (payments.api.token_urls)."""
from django.urls import path

from tokens.api.views import TokenDetailView

urlpatterns = [
    path("api/v2/tokens/<str:tokenId>", TokenDetailView.as_view(), name="token-detail"),
]
