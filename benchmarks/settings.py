"""Production settings plus one route: /bench/bare, the bare Django JSON endpoint every
benchmark figure is divided by. Used only by benchmarks/run and benchmarks/faults."""
from gateway.settings import *  # noqa: F401,F403

ROOT_URLCONF = "benchmarks.urls"
