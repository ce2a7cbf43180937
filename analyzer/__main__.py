"""`python -m analyzer`: the `warplint` command (`cli.entry`)."""

from analyzer.cli import entry

entry()
