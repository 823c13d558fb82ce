"""/checkout/<paymentId>/... (the customer's pages) and /sandbox/... (staging stand-ins for
banks, wallets and incoming transfers; 404 in production)."""
from django.urls import path

from payments.checkout import views

app_name = "checkout"

urlpatterns = [
    path("pay/<str:token>", views.payment_link, name="payment-link"),
    path("checkout/brand/<str:merchant_code>/<str:digest>.png", views.brand_logo, name="brand-logo"),
    # The customer's language switch (Django's set_language: a POST, CSRF-protected, `next`
    # checked to stay on this site); payments.checkout.language reads the choice back.
    path("checkout/language", views.set_language, name="language"),
    path("checkout/<str:payment_id>", views.page, name="page"),
    path("checkout/<str:payment_id>/upi", views.upi, name="upi"),
    path("checkout/<str:payment_id>/upi/intent", views.upi_intent, name="upi-intent"),
    path("checkout/<str:payment_id>/upi/change", views.upi_change_method, name="upi-change-method"),
    path("checkout/<str:payment_id>/card", views.card, name="card"),
    path("checkout/<str:payment_id>/card/fields", views.card_fields, name="card-fields"),
    path("checkout/<str:payment_id>/card/saved", views.card_saved, name="card-saved"),
    path("checkout/<str:payment_id>/card/challenge", views.card_otp, name="card-otp"),
    path("checkout/<str:payment_id>/netbanking", views.netbanking, name="netbanking"),
    path("checkout/<str:payment_id>/wallet", views.wallet, name="wallet"),
    path("checkout/<str:payment_id>/transfer/start", views.transfer_start, name="transfer-start"),
    path("checkout/<str:payment_id>/transfer", views.transfer, name="transfer"),
    path("checkout/<str:payment_id>/status", views.status, name="status"),
    # The acquirer brings the customer back here from its own pages (payments.acquirer.cashfree
    # sends this address as the order's return_url).
    path("checkout/<str:payment_id>/back", views.acquirer_return, name="acquirer-return"),
    path("checkout/<str:payment_id>/cancel", views.cancel, name="cancel"),
    path("checkout/<str:payment_id>/result", views.result, name="result"),
    path("checkout/<str:payment_id>/return", views.return_to_merchant, name="return"),
    path("sandbox/bank/<str:payment_id>", views.sandbox_bank, name="sandbox-bank"),
    path("sandbox/transfers", views.sandbox_transfers, name="sandbox-transfers"),
]
