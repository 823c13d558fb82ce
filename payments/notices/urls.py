from django.urls import path

from payments.notices import views

urlpatterns = [
    path("acquirer/cashfree/webhooks", views.cashfree_webhook, name="cashfree-webhooks"),
]
