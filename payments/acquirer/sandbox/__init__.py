"""The sandbox acquirer: a simulator of CONTRACT.md's test inputs that moves no money
(docs/sandbox.md). `acquirer.py` the Acquirer, `checks.py` the check of its settings. Imports
nothing at package level, so that the settings can run its check before Django is set up."""
