"""`optimize`: rewrite a model with the pattern optimizer, its statistics and the equivalence proof."""
from __future__ import annotations

import argparse

from ..files.atomic_write import check_targets, final_path, write_text
from .common import count, load_feeds, load_model, seed
from .registry import command


def _configure_optimize(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", nargs="?", help="an .onnx file or a bundled sample's name")
    p.add_argument("-o", "--output", help="write the optimized model to this .onnx file")
    p.add_argument("--patterns", help="comma-separated patterns to run (default: all; see --list)")
    p.add_argument("--exclude", help="comma-separated patterns not to run")
    p.add_argument("--stop-after", type=count, metavar="N", help="apply only the first N rewrites (bisection)")
    p.add_argument("--report", help="write statistics, rewrites and the equivalence proof to this JSON file")
    p.add_argument("--inputs", help=".npz feeds for the equivalence proof (default: random from declared types)")
    p.add_argument("--seed", type=seed, default=0, help="seed of the random feeds")
    p.add_argument("--no-verify", action="store_true", help="skip the equivalence proof")
    p.add_argument("--list", action="store_true", help="list the patterns with their rules, then exit")


def _pattern_list(text: str | None) -> list[str] | None:
    return None if text is None else [name.strip() for name in text.split(",") if name.strip()]


@command("optimize", "rewrite a model with the pattern optimizer; statistics and equivalence proof",
         {1: "the optimized model is not equivalent to the original, or onnxruntime refuses it"})(
    _configure_optimize)
def _optimize(args: argparse.Namespace) -> int:
    import json

    from ..model.model_files import external_data_name
    from ..optimizer import default_patterns, optimize
    from ..optimizer.pattern import description
    from ..optimizer.verify import verify

    if args.list:
        for pattern in default_patterns():
            print(f"{pattern.name:24s} [{pattern.priority}] {description(pattern)}")
        return 0
    if not args.model:
        raise ValueError("give a model to optimize (or --list)")
    model = load_model(args.model, args.lenient)
    if args.output:  # before the work: a target that is the loaded model's own file is refused
        target = final_path(args.output)
        check_targets([target, target.parent / external_data_name(target)])
    if args.report:
        check_targets([args.report])
    result = optimize(model, patterns=_pattern_list(args.patterns), exclude=_pattern_list(args.exclude) or (),
                      stop_after=args.stop_after)
    print(result.stats_table())
    if args.output:
        written = result.save(args.output)
        print(f"optimized model written to {' and '.join(str(path) for path in written)}")
    verdict = None
    if not args.no_verify:
        verdict = verify(result, load_feeds(args.inputs, model), seed=args.seed, bisect=args.stop_after is None)
        for line in verdict.lines():
            print(line)
    if args.report:
        report = {"model": args.model, **result.to_dict(),
                  "equivalence": None if verdict is None else verdict.to_dict()}
        write_text(args.report, json.dumps(report, indent=1, default=str))
        print(f"report written to {args.report}")
    failed = result.onnxruntime is not None and result.onnxruntime.status == "refused"
    return 1 if failed or verdict is not None and verdict.status == "different" else 0
