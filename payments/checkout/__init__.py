"""The hosted checkout pages (/checkout/...) and, in staging, the sandbox bank, wallet and
transfer pages (/sandbox/...)."""
