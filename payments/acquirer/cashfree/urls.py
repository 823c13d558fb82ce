from django.urls import path

from payments.acquirer.cashfree import views

urlpatterns = [
    path("acquirer/cashfree/webhooks", views.cashfree_webhook, name="cashfree-webhooks"),
]
