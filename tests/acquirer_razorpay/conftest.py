from tests.acquirer_razorpay.double import razorpay_double  # noqa: F401 - the double, as a fixture
