from django.urls import path

from gateway.inbound import views

urlpatterns = [
    # Every acquirer's notices, Cashfree's at /acquirer/cashfree/webhooks as registered before.
    path("acquirer/<str:name>/webhooks", views.acquirer_webhook, name="acquirer-webhooks"),
]
