"""analyzer.gc_pause: the collector paused around a stage, and a batch run's older collections made rarer."""

from __future__ import annotations

import gc

from analyzer import gc_pause
from analyzer.gc_pause import collect_less_often, gc_paused, gc_paused_here


def test_a_batch_run_never_collects_the_older_generations_and_the_young_one_less_often(monkeypatch):
    monkeypatch.setattr(gc_pause, "_BATCH", False)
    before = gc.get_threshold()
    try:
        gc.set_threshold(700, 10, 10)
        collect_less_often()
        assert gc.get_threshold() == (10_000, 2**31 - 1, 2**31 - 1)
        gc.set_threshold(20_000, 10, 10)  # a larger young threshold already set is kept
        collect_less_often()
        assert gc.get_threshold() == (20_000, 2**31 - 1, 2**31 - 1)
    finally:
        gc.set_threshold(*before)


def test_in_a_batch_run_what_a_paused_stage_built_is_out_of_the_collectors_sight(monkeypatch):
    monkeypatch.setattr(gc_pause, "_BATCH", False)  # (a check run in this process may have set it)
    before = gc.get_threshold()
    gc.unfreeze()
    frozen = gc.get_freeze_count()
    try:
        with gc_paused_here():
            built = [[i] for i in range(1000)]
        assert gc.get_freeze_count() == frozen  # not a batch run: left to the collector
        collect_less_often()
        with gc_paused_here():
            built = [[i] for i in range(1000)]
        assert gc.get_freeze_count() >= frozen + 1001 and gc.isenabled()
        assert gc.is_tracked(built)
    finally:
        gc.set_threshold(*before)
        gc.unfreeze()


def test_a_paused_stage_runs_without_the_collector_and_restores_it():
    seen = gc_paused(gc.isenabled)
    assert gc.isenabled() and seen() is False and gc.isenabled()


def test_a_paused_block_runs_without_the_collector_and_restores_it_after_an_error():
    with gc_paused_here():
        inside = gc.isenabled()
    assert (inside, gc.isenabled()) == (False, True)
    try:
        with gc_paused_here():
            raise KeyError("x")
    except KeyError:
        pass
    assert gc.isenabled()
    gc.disable()
    try:
        with gc_paused_here():
            pass
        assert not gc.isenabled()  # paused before: left paused
    finally:
        gc.enable()
