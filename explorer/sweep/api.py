"""`explorer.sweep(model, against, inputs)`: the comparison of `explorer.compare` over many inputs on a Dask
cluster, one row per input written as it completes, the inputs where the model parts from its reference worst
first."""
from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..compare.sides import ONNXRUNTIME, PYTORCH
from ..errors import SweepError
from ..files.access import confined_folder
from ..inputs.samples import list_samples, sample_path
from ..limits import Limits
from ..model.feeds import symbolic_dims
from ..model.model import Model, load
from ..model.model_files import serialize_model
from . import rows as sweep_rows
from .cluster import Sweep
from .plan import Item, files, grid, input_files
from .task import Job, ModelRef
from .writer import RowWriter

Inputs = Mapping[str, Sequence[int]] | str | os.PathLike | Sequence[str | os.PathLike] | Sequence[Item] | None
OnRow = Callable[[dict[str, Any]], None]


@dataclass
class SweepResult:
    """The rows of a sweep, in completion order; `worst()` orders them worst first."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    total: int = 0
    notes: list[str] = field(default_factory=list)

    def worst(self) -> list[dict[str, Any]]:
        return sweep_rows.worst_first(self.rows)

    @property
    def exit_code(self) -> int:
        """0 when every input agrees, 1 when some differ or could not be compared."""
        return sweep_rows.exit_code(self.rows)

    def lines(self, top: int = 20) -> list[str]:
        return [*self.notes, *sweep_rows.summary_lines(self.rows, self.total, top)]


@dataclass(frozen=True)
class Plan:
    """A sweep ready to run: the job, its items, the bytes of models that have no path, the names of the CSV's
    dim and output columns."""

    job: Job
    items: list[Item]
    model_data: bytes | None
    other_data: bytes | None
    dims: list[str]
    outputs: list[str]

    def sweep(self, scheduler: str | None = None, workers: int | None = None) -> Sweep:
        """The sweep of this plan on a cluster (see Sweep), not started."""
        return Sweep(self.job, self.items, scheduler=scheduler, workers=workers, model_data=self.model_data,
                     other_data=self.other_data)

    def run(self, scheduler: str | None = None, workers: int | None = None, out: str | os.PathLike | None = None,
            on_row: OnRow | None = None, result: SweepResult | None = None) -> SweepResult:
        """Runs the sweep (see `sweep`), its rows added to `result` as they complete (so that a caller catching
        KeyboardInterrupt still has them) and written to `out` when given."""
        run = self.sweep(scheduler, workers)
        result = result if result is not None else SweepResult()
        result.total, result.notes = run.total, run.notes
        writer = RowWriter(out, self.dims, self.outputs) if out is not None else None
        try:
            for row in run.run():
                result.rows.append(row)
                if writer is not None:
                    writer.write(row)
                if on_row is not None:
                    on_row(row)
        finally:
            if writer is not None:
                writer.close()
        return result


def model_ref(side: Model | str | os.PathLike, lenient: bool = False) -> tuple[ModelRef, bytes | None, Model]:
    """How workers find a model (its path, else its bytes), and the model itself (loaded here to check it)."""
    if isinstance(side, Model):  # its file when it has one (its weights stay there), else its bytes, weights in
        key = "sha256:" + side.sha256
        if side.path is not None:
            return ModelRef(key, side.source, str(side.path.resolve()), side.lenient), None, side
        return ModelRef(key, side.source, lenient=side.lenient), serialize_model(side), side
    path = Path(side)
    if not path.exists() and str(side) in list_samples():
        path = sample_path(str(side))
    model = load(path, label=str(side), lenient=lenient)
    resolved = path.resolve()
    stat = resolved.stat()
    key = hashlib.sha256(f"{resolved}:{stat.st_mtime_ns}:{stat.st_size}:{lenient}".encode()).hexdigest()
    return ModelRef(key, str(side), str(resolved), lenient), None, model


def plan(model: Model | str | os.PathLike, against: Any = ONNXRUNTIME, inputs: Inputs = None, *,
         seeds: Sequence[int] | None = None, limits: Limits | None = None, rtol: float | None = None,
         atol: float | None = None,
         timeout: float | None = None, lenient: bool = False,
         folders: Sequence[str | os.PathLike] | None = None) -> Plan:
    """The sweep asked for, checked before anything runs: the models load, the inputs and reference exist
    (SweepError, ModelError, FeedError otherwise). See `sweep` for the arguments."""
    confined = None if folders is None else tuple(Path(folder).resolve() for folder in folders)
    if confined is not None:  # the folders of inputs and references (their files are checked as they are read)
        for given in (inputs, against):
            if isinstance(given, (str, os.PathLike)) and Path(given).is_dir():
                confined_folder(given, confined)
    ref, data, loaded = model_ref(model, lenient)
    other = other_data = None
    references = None
    if isinstance(against, str) and against.lower() in (ONNXRUNTIME, PYTORCH):
        kind = against.lower()
    elif isinstance(against, (str, os.PathLike)) and Path(against).is_dir():
        kind, references = "reference", Path(against)
    else:
        kind = "model"
        other, other_data, _ = model_ref(against, lenient)
    items = _items(inputs, seeds, references)
    if kind == "reference" and any(item.path is None for item in items):
        raise SweepError("reference values from a folder need inputs from files (--inputs): random inputs have none")
    # one BLAS thread per input: the cluster runs one input per worker thread, a worker per core by default
    job = Job(ref, kind, other, replace(limits or Limits(), threads=1), rtol, atol, timeout, confined)
    dims = list(inputs) if isinstance(inputs, Mapping) else symbolic_dims(loaded)
    return Plan(job, items, data, other_data, dims, [o.name for o in loaded.outputs])


def _items(inputs: Inputs, seeds: Sequence[int] | None, references: Path | None) -> list[Item]:
    if inputs is None or isinstance(inputs, Mapping):
        return grid(inputs, seeds)
    if seeds is not None:
        raise SweepError("seeds make random inputs: they go with dims, not with input files")
    if isinstance(inputs, (str, os.PathLike)):
        path = Path(inputs)
        return files([path] if path.is_file() else input_files(path), references)
    given = list(inputs)
    if given and all(isinstance(i, Item) for i in given):
        return [i for i in given if isinstance(i, Item)]
    return files([i for i in given if not isinstance(i, Item)], references)


def sweep(model: Model | str | os.PathLike, against: Any = ONNXRUNTIME, inputs: Inputs = None, *,
          seeds: Sequence[int] | None = None, limits: Limits | None = None, rtol: float | None = None,
          atol: float | None = None,
          scheduler: str | None = None, workers: int | None = None, out: str | os.PathLike | None = None,
          timeout: float | None = None, lenient: bool = False, on_row: OnRow | None = None,
          folders: Sequence[str | os.PathLike] | None = None) -> SweepResult:
    """`model` (a path, a sample's name or a Model) compared with `against` on every input: "onnxruntime", another
    model (a path, sample or Model: a re-export, an fp16 variant, the optimized model), "pytorch" (PyTorch's
    recurrent equations) or a folder of reference values (see plan.files). `inputs` is a grid of dim sizes
    ({"T": [8, 16, 32]}, each with every one of `seeds`), a folder of .npz files and ONNX test data sets, or a
    list of such paths. Each input runs under `limits`; one that fails or stops at a limit gets its row and the
    sweep goes on. With no `scheduler` address, a local Dask cluster of `workers` processes (default: one per
    core) is started for the sweep. With `out`, rows are written to that JSON file and a CSV beside it as they
    complete; `on_row` sees each. Ctrl-C stops the sweep (KeyboardInterrupt) with the rows already written kept.
    With `folders`, every input and reference file is read only when it lies inside one of them, symlinks
    followed (a shared app's allowed folders: any other file's row is the one refusal, access.REFUSED)."""
    ready = plan(model, against, inputs, seeds=seeds, limits=limits, rtol=rtol, atol=atol, timeout=timeout,
                 lenient=lenient, folders=folders)
    return ready.run(scheduler, workers, out, on_row)
