"""Routes of the tokens app: exact paths, no trailing slash."""
from django.urls import path

from tokens.api.views import TokenDetailView, TokensView

urlpatterns = [
    path("api/v2/tokens", TokensView.as_view(), name="tokens"),
    path("api/v2/tokens/<str:tokenId>", TokenDetailView.as_view(), name="token-detail"),
]
