"""Shared test set-up: each test gets a results cache of its own (`analyzer.cache`), so that no
test reads what another test (or a test that replaces part of the analysis) left there."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _own_results_cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("WARPLINT_CACHE_DIR", str(tmp_path_factory.mktemp("warplint-cache")))
