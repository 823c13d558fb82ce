"""What an acquirer tells us on its own, by its webhooks: received at an endpoint of ours
(views.py, urls.py), verified, recorded untrusted first (payments.models.AcquirerNotice), then
applied through the same transitions as the acquirer's answers (cashfree.py). An entry point,
on the floor of the API views and tasks: it calls the services; the acquirer package below it
(payments.acquirer.cashfree) knows only how to talk to Cashfree and check a signature."""
