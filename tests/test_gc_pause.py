"""analyzer.gc_pause: the collector paused around a stage, and a batch run's older collections made rarer."""

from __future__ import annotations

import gc

from analyzer.gc_pause import collect_less_often, gc_paused, gc_paused_here


def test_a_batch_run_collects_the_older_generations_less_often_and_the_young_one_as_before():
    before = gc.get_threshold()
    try:
        gc.set_threshold(700, 10, 10)
        collect_less_often()
        assert gc.get_threshold() == (700, 1000, 100)
    finally:
        gc.set_threshold(*before)


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
