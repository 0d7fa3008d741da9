"""`compare --pytorch SPEC` / `--keras SPEC` / `--captured VALUES.npz` (an export against the framework model it came from,
module by module) and `fix` (the export with the fitted fixes applied and proven)."""
from __future__ import annotations

import argparse
import json
from typing import Any

from ..files.atomic_write import write_text
from . import running  # noqa: F401 - `compare` is registered before it is extended
from .common import limits_from, load_feeds, load_model, tolerance
from .registry import COMMANDS, Command, command


def add_framework_options(p: argparse.ArgumentParser) -> None:
    """The framework side of `compare` and `fix`, and the JSON document."""
    p.add_argument("--pytorch", metavar="SPEC",
                   help="B is the PyTorch model the export came from: FILE.py:FACTORY or package.module:FACTORY, "
                        "FACTORY() returning the nn.Module (needs torch); its inputs are --inputs in the ONNX "
                        "inputs' order")
    p.add_argument("--keras", metavar="SPEC",
                   help="B is the Keras model the export came from: FILE.py:FACTORY, package.module:FACTORY or a "
                        ".keras file (needs keras); its inputs are --inputs in the ONNX inputs' order")
    p.add_argument("--captured", metavar="VALUES.npz",
                   help="B is a framework run captured earlier by explorer.bridge.capture (no framework needed)")


def add_json_option(p: argparse.ArgumentParser) -> None:
    if "--json" not in p._option_string_actions:
        p.add_argument("--json", metavar="OUT.json", help="also write the result as one JSON document")


def _extend_compare() -> None:
    """`compare` takes a framework model as B: its options added, its runs handed to the bridge."""
    base = COMMANDS["compare"]

    def configure(p: argparse.ArgumentParser) -> None:
        base.configure(p)
        add_framework_options(p)
        add_json_option(p)

    def handler(args: argparse.Namespace) -> int:
        if args.pytorch or args.keras or args.captured:
            return compare_framework_command(args)
        return base.handler(args)

    COMMANDS["compare"] = Command(configure, handler, base.help, base.exits)


def framework_side(args: argparse.Namespace) -> Any:
    from ..bridge.api import captured_side, keras, load_factory, pytorch

    if sum(bool(x) for x in (args.pytorch, args.keras, args.captured)) != 1:
        raise ValueError("give one of --pytorch, --keras and --captured")
    if args.pytorch:
        return pytorch(load_factory(args.pytorch))
    if args.keras:
        return keras(load_factory(args.keras, "Keras"))
    return captured_side(args.captured, limits_from(args))


def compare_framework_command(args: argparse.Namespace) -> int:
    """`compare MODEL --pytorch SPEC | --captured VALUES.npz`: 0 agree, 1 differ, 2 a side did not finish."""
    from ..bridge.api import compare_framework
    from ..compare.stats import ATOL, RTOL

    model = load_model(args.a, args.lenient)
    side = framework_side(args)
    feeds = load_feeds(args.inputs, model, limits_from(args))
    if feeds is None and (args.pytorch or args.keras):
        raise ValueError("--pytorch and --keras need --inputs FEEDS.npz (the framework model runs on them)")
    if args.b or args.ort or args.reference:
        raise ValueError("give exactly one B: a framework model (--pytorch, --captured) or another side")
    result = compare_framework(model, side, feeds, rtol=RTOL if args.rtol is None else args.rtol,
                               atol=ATOL if args.atol is None else args.atol, limits=limits_from(args))
    for line in result.lines():
        print(line)
    if getattr(args, "json", None):
        write_text(args.json, json.dumps(result.to_json(), indent=1))
    return 2 if result.errors else 1 if result.differs else 0


def _configure_fix(p: argparse.ArgumentParser) -> None:
    from .common import add_limit_options

    p.add_argument("model", help="the exported .onnx file")
    add_framework_options(p)
    p.add_argument("--inputs", help=".npz with one array per graph input (default: the capture's own)")
    p.add_argument("-o", "--output", required=True, help="where to write the fixed model (never over MODEL)")
    p.add_argument("--rtol", type=tolerance, default=1e-4, help="relative tolerance (default 1e-4)")
    p.add_argument("--atol", type=tolerance, default=1e-5, help="absolute tolerance (default 1e-5)")
    add_json_option(p)
    add_limit_options(p)


@command("fix", "fix what an exporter got wrong in a recurrent node, found against the framework model, and prove it",
         {0: "every finding was fixed and proven", 1: "some finding could not be fixed or proven (nothing is "
          "written when none was)"})(_configure_fix)
def _fix(args: argparse.Namespace) -> int:
    from ..bridge.fix import fix

    if not args.pytorch and not args.keras and not args.captured:
        raise ValueError("give the framework model: --pytorch SPEC, --keras SPEC or --captured VALUES.npz")
    model = load_model(args.model, args.lenient)
    side = framework_side(args)
    feeds = load_feeds(args.inputs, model, limits_from(args))
    if feeds is None and (args.pytorch or args.keras):
        raise ValueError("--pytorch and --keras need --inputs FEEDS.npz (the framework model runs on them)")
    report = fix(model, side, feeds, args.output, rtol=args.rtol, atol=args.atol)
    for line in report.lines():
        print(line)
    if args.json:
        doc = report.comparison.to_json()
        doc["fixes"] = [{"module": o.finding.module, "onnx_node": o.finding.onnx_node, "fix": o.finding.fix,
                         "applied": o.applied, "proven": o.proven, "why": o.why} for o in report.outcomes]
        doc["written"] = report.written
        write_text(args.json, json.dumps(doc, indent=1))
    return 0 if report.complete else 1


_extend_compare()
