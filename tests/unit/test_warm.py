"""Warm start: the operator's setting (core/settings.py) and the background runner
(core/server/warm.py) with stand-in steps."""
from __future__ import annotations

import threading

from core.settings import DEFAULT_WARM, class_settings, parse_warm
from core.server.warm import WarmTable, WarmUp

KNOWN = ("minilm", "smollm2", "glove-50d")


def test_the_setting_names_tables_in_order_and_reports_unknown_ones():
    assert parse_warm(None, KNOWN) == (DEFAULT_WARM, [])
    assert parse_warm("SmolLM2, glove-50d,smollm2", KNOWN) == (("smollm2", "glove-50d"), [])
    assert parse_warm("minilm,gpt5", KNOWN) == (("minilm",), ["gpt5"])
    assert parse_warm("none", KNOWN) == ((), []) and parse_warm("", KNOWN) == ((), [])
    assert parse_warm("all", KNOWN) == (KNOWN, [])


def test_settings_read_the_environment(monkeypatch):
    monkeypatch.setenv("EMBEDDING_LENS_WARM", "glove-50d")
    monkeypatch.setenv("EMBEDDING_LENS_HEAVY_JOBS", "2")
    monkeypatch.setenv("EMBEDDING_LENS_HEAVY_MEMORY_MB", "not a number")
    settings, unknown = class_settings(KNOWN)
    assert settings.warm == ("glove-50d",) and settings.heavy_jobs == 2 and unknown == []
    assert settings.heavy_memory_bytes == 1024 * 2 ** 20          # unreadable: the default


def test_tables_are_prepared_in_order_and_visitors_hear_what_is_left():
    gate, order = threading.Event(), []
    plan = (WarmTable("a", "Table A", (("load", lambda: order.append("a load")), ("pca", gate.wait))),
            WarmTable("b", "Table B", (("load", lambda: order.append("b load")),)))
    warm = WarmUp(plan).start()
    assert "Table A, Table B are loading" in warm.notice()
    gate.set()
    assert warm.finished.wait(5)
    assert order == ["a load", "b load"] and set(warm.done) == {"a", "b"}
    assert warm.notice() is None


def test_a_failing_step_stops_its_table_only():
    def broken():
        raise OSError("file missing")
    plan = (WarmTable("a", "Table A", (("load", broken), ("never", lambda: 1 / 0))),
            WarmTable("b", "Table B", (("load", lambda: None),)))
    warm = WarmUp(plan)
    warm.run()                                          # in this thread
    assert warm.failed == {"a": "load: OSError"} and list(warm.done) == ["b"]
    assert warm.notice() is None                        # a failed table is not "still loading"


def test_the_default_warm_up_follows_the_container_memory():
    """Unset, the warm tables are what the container holds: both in Community Cloud's 2.7 GB (or
    with no limit), MiniLM alone in 1.5 GB, none in 690 MB; a named list is used as it is."""
    from core.limits import MIB
    from core.settings import default_warm

    known = ("minilm", "smollm2", "glove-50d")
    assert parse_warm(None, known, None)[0] == DEFAULT_WARM
    assert parse_warm(None, known, 2700 * MIB)[0] == ("minilm", "glove-50d")
    assert parse_warm(None, known, 1500 * MIB)[0] == ("minilm",)
    assert parse_warm(None, known, 690 * MIB)[0] == () == default_warm(690 * MIB)
    assert parse_warm("smollm2", known, 690 * MIB)[0] == ("smollm2",)


def test_class_settings_read_the_container_limit(monkeypatch, tmp_path):
    (tmp_path / "memory.max").write_text(str(1500 * 1024 * 1024))
    monkeypatch.setenv("EMBEDDING_LENS_CGROUP_ROOT", str(tmp_path))
    monkeypatch.delenv("EMBEDDING_LENS_WARM", raising=False)
    assert class_settings(("minilm", "smollm2", "glove-50d"))[0].warm == ("minilm",)
