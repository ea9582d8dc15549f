"""Damaged or impossible files are reported by name with what is wrong, not as raw tracebacks: a video
path under a file, a corrupt sweep manifest, binary bytes in metrics.jsonl (issue 25, item 17); and
the first-contact help (item 25)."""

from __future__ import annotations

import json

import pytest

from crax.cli import main
from crax.runs.metrics import read_metrics
from crax.studies import find_runs
from crax.studies.collect import read_curves
from tests.studies.runs import write_run


def test_render_into_a_path_under_a_file_names_the_file(tmp_path, capsys):
    blocker = tmp_path / "videos"
    blocker.write_text("not a folder")
    with pytest.raises(SystemExit) as exc:  # refused before the env is built
        main(["render", "PointGoal1", "--out", str(blocker / "sub" / "episode.mp4")])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert f"{str(blocker)!r} is a file, not a folder" in err and "Traceback" not in err


@pytest.mark.parametrize("content", [b'{\n  "grid": \n', b"\xff\xfe{}"], ids=["not-json", "binary"])
def test_a_corrupt_sweep_manifest_is_named(tmp_path, capsys, content):
    (tmp_path / "manifest.json").write_bytes(content)
    with pytest.raises(ValueError, match="manifest.json is not a crax sweep manifest") as exc:
        find_runs([tmp_path])
    assert ("not valid JSON" if content.startswith(b"{") else "not UTF-8 text") in str(exc.value)
    with pytest.raises(SystemExit) as code:
        main(["table", str(tmp_path)])
    assert code.value.code == 2 and str(tmp_path / "manifest.json") in capsys.readouterr().err


def test_a_manifest_of_the_wrong_shape_is_named(tmp_path):
    (tmp_path / "manifest.json").write_text(json.dumps({"cells": ["a", "b"]}))
    with pytest.raises(ValueError, match=r"manifest.json is not a crax sweep manifest: its cells"):
        find_runs([tmp_path])


def test_binary_bytes_in_metrics_name_the_file_and_line(tmp_path):
    run_dir = write_run(tmp_path / "run", "ppo-lag", "PointGoal1", 25.0, curves={0: [(64, 1.0, 0.0), (128, 2.0, 0.0)]})
    path = run_dir / "metrics.jsonl"
    good = path.read_bytes()
    path.write_bytes(good + b'{"step": 192, "seed": 0, "episode/ret')  # a torn last line (a crash) is skipped
    assert [r["step"] for r in read_metrics(run_dir)] == [64, 128]
    path.write_bytes(b'{"step": 64, "seed": 0, "x": 1.0}\n\xff\xff\x00garbage\n' + good)
    with pytest.raises(ValueError, match=r"metrics.jsonl: line 2 of 4 holds bytes that are not UTF-8 text") as exc:
        read_curves(run_dir)
    assert str(path) in str(exc.value)


def test_resume_is_in_the_help_and_eval_names_its_argument(capsys):
    main([])
    assert "crax train --resume RUN_DIR" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    assert "--resume RUN_DIR" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["eval", "--help"])
    out = capsys.readouterr().out
    assert "RUN_DIR" in out and "STR" not in out


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    from crax.runs import files

    path = tmp_path / "results.json"
    files.atomic_write_bytes(path, b'{"old": 1}\n')

    def full_disk(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(files.os, "replace", full_disk)
    with pytest.raises(OSError, match="No space left"):
        files.atomic_write_bytes(path, b'{"new": 2}\n')
    assert files.read_json(path, "a results file") == {"old": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["results.json"]
