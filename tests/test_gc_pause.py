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


def test_a_batch_run_that_is_its_process_s_whole_life_runs_without_the_collector(monkeypatch):
    monkeypatch.setattr(gc_pause, "_BATCH", False)
    monkeypatch.setattr(gc_pause, "_OWN_PROCESS", False)
    before = gc.get_threshold()
    try:
        collect_less_often()
        assert gc.isenabled()  # a process that goes on after the run (this one) keeps its young collections
        gc_pause.in_own_process()
        collect_less_often()
        assert not gc.isenabled()
        with gc_paused_here():
            pass
        assert not gc.isenabled()  # a paused stage leaves it off
    finally:
        gc.enable()
        gc.set_threshold(*before)


def test_the_command_s_process_is_marked_as_its_own(monkeypatch):
    from analyzer import cli

    monkeypatch.setattr(gc_pause, "_OWN_PROCESS", False)
    seen = []
    monkeypatch.setattr(cli, "main", lambda: seen.append(gc_pause._OWN_PROCESS) or 0)

    def ended(status: int) -> None:
        raise SystemExit(status)

    monkeypatch.setattr(cli.os, "_exit", ended)
    monkeypatch.setattr(cli.sys, "getprofile", lambda: None)
    monkeypatch.setattr(cli.sys, "gettrace", lambda: None)
    try:
        cli.entry()
    except SystemExit as end:
        assert end.code == 0
    assert seen == [True]


def test_the_collector_turned_off_runs_again_once_the_simulator_runs(monkeypatch):
    from analyzer.api import Options
    from analyzer.api_sim import verify_findings

    monkeypatch.setattr(gc_pause, "_BATCH", False)
    monkeypatch.setattr(gc_pause, "_OWN_PROCESS", True)
    monkeypatch.setattr(gc_pause, "_OFF", False)
    before = gc.get_threshold()
    try:
        collect_less_often()
        assert not gc.isenabled()
        assert verify_findings(None, [], Options(ignore=["WL930"]), []) == []
        assert gc.isenabled()
        gc.disable()  # turned off by someone else: left so
        gc_pause.collect_again()
        assert not gc.isenabled()
    finally:
        gc.enable()
        gc.set_threshold(*before)
