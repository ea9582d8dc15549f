"""Run logging: TensorBoard event files (tensorboard's own writer, no TensorFlow or torch), a
``metrics.jsonl`` record, and a rich console progress bar.

Each seed writes to its own TensorBoard folder ``<run>/tb/seed_<i>`` so the seeds of one run show
as separate curves. Resuming writes a ``SessionLog.START`` event one step past the checkpoint,
which tells TensorBoard to drop the interrupted session's events logged after the checkpoint
(TensorBoard drops events at and after the marker's step, so the checkpoint's own step is kept).
"""

from __future__ import annotations

import json
import math
import os
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tensorboard.compat.proto import event_pb2 as _event_pb2
from tensorboard.compat.proto import summary_pb2 as _summary_pb2
from tensorboard.summary.writer.event_file_writer import EventFileWriter

from crax.runs.files import atomic_write_bytes

# protobuf makes these modules' message classes (Event, SessionLog, Summary) at runtime, and
# tensorboard ships no stubs for them, so a type checker sees none: use them untyped
event_pb2: Any = _event_pb2
summary_pb2: Any = _summary_pb2

METRICS_FILE = "metrics.jsonl"


class EventWriter:
    """Scalar TensorBoard writer for one folder."""

    def __init__(self, logdir: str | os.PathLike):
        Path(logdir).mkdir(parents=True, exist_ok=True)
        self._writer = EventFileWriter(str(logdir), flush_secs=30)

    def scalars(self, step: int, values: Mapping[str, float]) -> None:
        summary = summary_pb2.Summary(
            value=[summary_pb2.Summary.Value(tag=tag, simple_value=float(v)) for tag, v in values.items()
                   if math.isfinite(float(v))]
        )
        self._writer.add_event(event_pb2.Event(wall_time=time.time(), step=int(step), summary=summary))

    def session_start(self, step: int) -> None:
        log = event_pb2.SessionLog(status=event_pb2.SessionLog.START)
        self._writer.add_event(event_pb2.Event(wall_time=time.time(), step=int(step), session_log=log))

    def flush(self) -> None:
        self._writer.flush()

    def close(self) -> None:
        self._writer.close()


class RunLogger:
    """Per-seed TensorBoard writers plus one JSON-lines record of every logged scalar.

    ``resume_step`` (when resuming) truncates ``metrics.jsonl`` to the records at or before that
    step, so the record matches the checkpoint the run continues from.
    """

    def __init__(self, run_dir: str | os.PathLike, num_seeds: int, resume_step: int | None = None):
        self.run_dir = Path(run_dir)
        self.writers = [EventWriter(self.run_dir / "tb" / f"seed_{i}") for i in range(num_seeds)]
        path = self.run_dir / METRICS_FILE
        if resume_step is not None:
            kept = [line for line in read_metrics(path) if line["step"] <= resume_step]
            atomic_write_bytes(path, "".join(json.dumps(r) + "\n" for r in kept).encode())
            for w in self.writers:
                w.session_start(resume_step + 1)
        self._jsonl = open(path, "a", encoding="utf-8")  # noqa: SIM115 - closed in close()

    def log(self, step: int, per_seed: Sequence[Mapping[str, float]]) -> None:
        for seed, (writer, values) in enumerate(zip(self.writers, per_seed, strict=True)):
            clean = {k: float(v) for k, v in values.items() if math.isfinite(float(v))}
            writer.scalars(step, clean)
            self._jsonl.write(json.dumps({"step": int(step), "seed": seed, **clean}) + "\n")

    def flush(self) -> None:
        for w in self.writers:
            w.flush()
        self._jsonl.flush()

    def sync(self) -> None:
        """Flushes and fsyncs ``metrics.jsonl``: called before a checkpoint is written, so a checkpoint
        on disk implies that every record up to its step is on disk too, and a resumed run neither
        loses nor repeats records (docs/DECISIONS.md, decision 44)."""
        self.flush()
        os.fsync(self._jsonl.fileno())

    def close(self) -> None:
        for w in self.writers:
            w.close()
        self._jsonl.close()


class NullLogger:
    """The logger of a process that writes nothing (every process but 0 of a multi-process run)."""

    def log(self, step: int, per_seed: Sequence[Mapping[str, float]]) -> None:
        pass

    def flush(self) -> None:
        pass

    def sync(self) -> None:
        pass

    def close(self) -> None:
        pass


def read_metrics(path: str | os.PathLike) -> list[dict]:
    """The records of a ``metrics.jsonl``. A torn last line (a crash while writing it) is skipped;
    a damaged line before it (bytes that are not UTF-8 text or not a JSON record) raises a
    ValueError naming the file and the line."""
    path = Path(path)
    if path.is_dir():
        path = path / METRICS_FILE
    if not path.exists():
        return []
    lines = path.read_bytes().splitlines()
    records = []
    for number, raw in enumerate(lines, 1):
        try:
            record = json.loads(raw.decode("utf-8"))
            if not isinstance(record, dict):
                raise ValueError(f"a JSON {type(record).__name__}, not a record")
        except ValueError as e:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
            if number == len(lines):
                continue
            what = (f"holds bytes that are not UTF-8 text ({e.reason} at byte {e.start})"
                    if isinstance(e, UnicodeDecodeError) else f"is not a JSON record ({e})")
            raise ValueError(f"{path}: line {number} of {len(lines)} {what}; the metrics record is damaged "
                             "(delete or repair that line)") from None
        records.append(record)
    return records


class Progress:
    """Console progress over environment steps: steps/s, return, cost and the multipliers.

    On a terminal it is a rich progress bar on stderr. When stdout or stderr is not a terminal (a batch
    job, ``nohup``, a notebook) it prints a plain line to stdout every ``every`` iterations and at the
    end instead, so a log file shows how training goes. ``enabled=False`` prints nothing.
    """

    def __init__(self, total_steps: int, start_step: int = 0, enabled: bool | None = None, description: str = "train",
                 steps_per_iteration: int = 1, every: int = 10):
        self.enabled = enabled is not False
        self.total_steps, self.description = total_steps, description
        self._per_iter, self._every = max(1, steps_per_iteration), max(1, every)
        self._last_line = start_step // self._per_iter
        self._bar = None
        if self.enabled and (enabled or (sys.stderr.isatty() and sys.stdout.isatty())):
            from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeRemainingColumn
            from rich.progress import Progress as RichProgress

            self._bar = RichProgress(
                TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                TextColumn("{task.fields[rate]:>9} steps/s  R {task.fields[ret]:>8}  C {task.fields[cost]:>8}"
                           "{task.fields[mult]}"),
                TimeRemainingColumn(), transient=False,
            )
            self._task = self._bar.add_task(description, total=total_steps, completed=start_step,
                                            rate="-", ret="-", cost="-", mult="")
            self._bar.start()

    def update(self, step: int, steps_per_second: float, ret: float, cost: float,
               multipliers: Mapping[str, float] | None = None) -> None:
        if not self.enabled:
            return
        fmt = lambda x: f"{x:.2f}" if math.isfinite(x) else "-"  # noqa: E731
        mult = "".join(f"  {name} {fmt(v)}" for name, v in (multipliers or {}).items())
        if self._bar is not None:
            self._bar.update(self._task, completed=step, rate=f"{steps_per_second:,.0f}", ret=fmt(ret),
                             cost=fmt(cost), mult=mult)
            return
        it = step // self._per_iter
        if it - self._last_line >= self._every or step >= self.total_steps:
            self._last_line = it
            print(f"{self.description}  step {step:,}/{self.total_steps:,} (iteration {it})  "
                  f"{steps_per_second:,.0f} steps/s  R {fmt(ret)}  C {fmt(cost)}{mult}", flush=True)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
