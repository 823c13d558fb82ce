from django.urls import path

from webhooks import views

urlpatterns = [
    # Staging only (SandboxGateMiddleware): the webhook inbox, docs/webhooks.md.
    path("sandbox/webhooks/<str:token>", views.inbox, name="sandbox-webhook-inbox"),
]
