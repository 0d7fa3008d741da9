"""`generate`: a decoder export driven token by token, recorded as one trace, optionally against another side."""
from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..files.atomic_write import write_text
from ..limits import Limits
from .common import add_cluster_options, add_limit_options, count, limits_from, tolerance
from .registry import command

if TYPE_CHECKING:
    from ..generation.run import Generation


def prompt_ids(text: str) -> list[int]:
    """Comma-separated token ids, e.g. 15,2,99."""
    try:
        ids = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected token ids like 15,2,99, got {text!r}") from None
    if not ids or min(ids) < 0:
        raise argparse.ArgumentTypeError(f"expected token ids >= 0, got {text!r}")
    return ids


def seed_list(text: str) -> list[int]:
    """Comma-separated sampling seeds, e.g. 1,2,3."""
    try:
        return prompt_ids(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"expected seeds >= 0 like 1,2,3, got {text!r}") from None


def _configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", help="a decoder .onnx (with past inputs, or merged), or an optimum-style folder "
                                 "(decoder_model_merged.onnx, or decoder_model.onnx with decoder_with_past_model.onnx, "
                                 "or model.onnx; config.json gives the end-of-sequence and pad ids)")
    p.add_argument("--decoder-with-past", metavar="MODEL2", help="the decoder of the steps after the first, when "
                                                                "MODEL has no past inputs")
    p.add_argument("--encoder", metavar="ENCODER", help="the encoder of an encoder-decoder (T5), when MODEL is a "
                                                        "decoder file (a folder's encoder_model.onnx is found)")
    given = p.add_mutually_exclusive_group(required=True)
    given.add_argument("--prompt-ids", type=prompt_ids, metavar="IDS", help="the prompt, e.g. 15,2,99 (an "
                                                                           "encoder-decoder's encoder reads it)")
    given.add_argument("--inputs", metavar="FEEDS.npz", help="the first step's inputs (input_ids, and "
                                                             "attention_mask, position_ids when not the defaults; an "
                                                             "encoder-decoder's encoder inputs, and decoder_input_ids)")
    given.add_argument("--prompts", metavar="PATH", help="many prompts, each against the same side (needs "
                                                         "--against): a folder of prompt files (.json, .npy, .txt "
                                                         "ids) or one .json list; rows worst first")
    p.add_argument("--seeds", type=seed_list, metavar="S1,S2,...", help="a grid of sampling seeds (with --sample's "
                                                                       "filters, --against): one generation per "
                                                                       "prompt and seed; rows worst first")
    add_cluster_options(p, when="with --prompts or --seeds: ")
    p.add_argument("--max-new-tokens", type=count, default=20, metavar="N", help="tokens to generate (default 20)")
    p.add_argument("--sample", type=int, metavar="SEED", help="draw tokens instead of the greedy choice, seeded: "
                                                              "transformers' filters, NumPy's default_rng(SEED) draws "
                                                              "(not torch's: other tokens than transformers' sampling)")
    p.add_argument("--top-k", type=int, default=50, metavar="K", help="with --sample: keep the K best tokens (default "
                                                                      "50, transformers' default; 0: off)")
    p.add_argument("--top-p", type=float, default=1.0, metavar="P", help="with --sample: keep the most probable "
                                                                         "tokens holding P of the mass (default 1: off)")
    p.add_argument("--temperature", type=float, default=1.0, metavar="T", help="with --sample: divide the logits "
                                                                               "by T (default 1)")
    p.add_argument("--beams", type=count, default=1, metavar="K", help="transformers' beam search with K beams (rows "
                                                                       "of the batch); default 1: greedy")
    p.add_argument("--length-penalty", type=float, default=1.0, metavar="X", help="with --beams: a hypothesis scores "
                                                                                  "its log-probability / length ** X "
                                                                                  "(default 1.0)")
    p.add_argument("--early-stopping", action="store_true", help="with --beams: an entry is done as soon as it has K "
                                                                 "hypotheses (transformers' early_stopping=True)")
    p.add_argument("--num-return-sequences", type=count, default=1, metavar="N", help="with --beams: the N best "
                                                                                      "sequences of each entry")
    p.add_argument("--against", metavar="SIDE", help="onnxruntime (driving the same loop on the same files; with "
                                                     "--sample or --beams, choosing with explorer's same draws and "
                                                     "beam bookkeeping), another export (a .onnx or folder), or "
                                                     "reference tokens (.npy or .json)")
    p.add_argument("--reference", metavar="TOKENS", help="reference tokens (.npy or .json): the same as --against")
    p.add_argument("--atol", type=tolerance, default=1e-4, help="absolute tolerance of a cache value (1e-4)")
    p.add_argument("--rtol", type=tolerance, default=1e-4, help="relative tolerance of a cache value (1e-4)")
    p.add_argument("--json", metavar="OUT.json", help="write tokens, the other side's, the first difference, the "
                                                      "first cache departure, logit errors and the trace's bytes")
    p.add_argument("--save", metavar="TRACE.npz", help="write the trace (open it with the generation loop model)")
    p.add_argument("--save-model", metavar="LOOP.onnx", help="write the generation loop model the trace runs, and "
                                                             "its inputs beside it as LOOP.npz (open both in the app)")
    add_limit_options(p)


@command("generate", "drive a decoder export token by token: one trace, one loop iteration per step",
         {1: "with --against or --reference: a token differs"})(_configure)
def _generate(args: argparse.Namespace) -> int:
    from ..generation.against import generate_against
    from ..generation.run import generate, save_generation_model
    from ..inputs.input_files import feeds_from_npz

    limits = limits_from(args)
    if args.prompts or args.seeds:
        return _sweep(args, limits)
    inputs = feeds_from_npz(Path(args.inputs).read_bytes(), limits) if args.inputs else None
    generation = generate(args.model, args.prompt_ids, with_past=args.decoder_with_past, encoder=args.encoder,
                          inputs=inputs, max_new_tokens=args.max_new_tokens, sample=args.sample, top_k=args.top_k,
                          top_p=args.top_p, temperature=args.temperature, beams=args.beams,
                          length_penalty=args.length_penalty, early_stopping=args.early_stopping,
                          num_return_sequences=args.num_return_sequences, limits=limits)
    searched = search_report(generation)
    best = searched["best"]
    print(f"tokens: {best[0] if len(best) == 1 else best}")
    if "sequences" in searched:
        print(f"{searched['beams']} beams; returned sequences (score):")
        for row, score in zip(searched["sequences"], searched["sequence_scores"]):
            print(f"  {row} ({score:.4g})")
    print(f"{len(generation.steps)} steps, {len(generation.trace)} events; caches: trace holds "
          f"{generation.trace_bytes} bytes for a final cache of {generation.cache_bytes}")
    against = args.against or args.reference
    report = {"tokens": best[0] if len(best) == 1 else best, "trace_bytes": generation.trace_bytes,
              "cache_bytes": generation.cache_bytes, "against": None, "first_token_diff": None,
              "first_cache_departure": None, "logit_error": []}
    status = 0
    if against:
        result = generate_against(generation, against, atol=args.atol, rtol=args.rtol)
        report = result.to_json()
        theirs = result.against_tokens
        print(f"{result.against}: {theirs[0] if len(theirs) == 1 else theirs}")
        if result.first_token_diff is None:
            print("every token agrees")
        else:
            print(f"first token that differs: new token {result.first_token_diff}")
            status = 1
        if result.logit_error:
            print(f"largest logit error over the {len(result.logit_error)} steps compared: "
                  f"{max(result.logit_error):.3g} (worst rank of our token on their side: {max(result.rank)})")
        if result.saturated_steps:
            print(f"onnxruntime's u8s8 kernel saturates at steps {result.saturated_steps} on an x86 CPU without "
                  "VNNI (explorer follows the spec's exact integer arithmetic)")
        departure = result.first_cache_departure
        if departure is not None:
            print(f"first cache departure: step {departure.step}, layer {departure.layer}, {departure.name}, "
                  f"head {departure.head}, position {departure.position} (max |error| {departure.max_abs:.3g})")
        if result.first_divergence is not None:
            found = result.first_divergence
            print(f"first divergence inside step {found['step']}: {found['node']} ({found['op_type']}) "
                  f"{found['name']}")
    if args.json:
        report.update({k: v for k, v in searched.items() if k != "best"})
        write_text(args.json, json.dumps(report, indent=1) + "\n")
    if args.save:
        generation.trace.save(args.save)
    if args.save_model:
        save_generation_model(generation, args.save_model, Path(args.save_model).with_suffix(".npz"))
    return status


def search_report(generation: Generation) -> dict[str, Any]:
    """How the tokens were chosen, for the report: `best` the tokens of each batch entry (with beams, its best
    returned sequence); `strategy`; with --sample its settings; with --beams `beams`, `sequences` (each returned
    sequence's new tokens up to its length, entry after entry) and `sequence_scores`."""
    from ..generation.strategy import BeamSearch, Sampling

    strategy = generation.strategy
    tokens = generation.tokens.tolist()
    if isinstance(strategy, Sampling):
        return {"best": tokens, "strategy": "sample", "seed": strategy.seed, "top_k": strategy.top_k,
                "top_p": strategy.top_p, "temperature": strategy.temperature}
    if not isinstance(strategy, BeamSearch):
        return {"best": tokens, "strategy": "greedy"}
    assert generation.sequence_scores is not None and generation.sequence_lengths is not None
    rows = [row[:length] for row, length in zip(tokens, generation.sequence_lengths.tolist())]
    return {"best": rows[::strategy.num_return_sequences], "strategy": "beams", "beams": strategy.beams,
            "length_penalty": strategy.length_penalty, "early_stopping": strategy.early_stopping,
            "sequences": rows, "sequence_scores": generation.sequence_scores.tolist()}


def _sweep(args: argparse.Namespace, limits: Limits) -> int:
    """--prompts, --seeds: one generation per prompt (and seed) against the same side on Dask, a row each, worst
    first."""
    from functools import partial

    from ..errors import FeedError
    from ..generation.prompts import read_prompts, sweep_prompts
    from ..generation.strategy import strategy_of
    from ..sweep.cluster import mapped

    against = args.against or args.reference
    if not against:
        raise FeedError("--prompts and --seeds compare each generation: give --against or --reference")
    if args.inputs:
        raise FeedError("--seeds sweeps prompts: give --prompt-ids or --prompts, not --inputs")
    sample = args.seeds[0] if args.seeds and args.sample is None else args.sample
    strategy = strategy_of(sample, args.top_k, args.top_p, args.temperature, args.beams, args.length_penalty,
                           args.early_stopping, args.num_return_sequences)
    prompts = read_prompts(args.prompts) if args.prompts else {"prompt": list(args.prompt_ids)}
    rows = sweep_prompts(args.model, prompts, against, seeds=args.seeds, with_past=args.decoder_with_past,
                         encoder=args.encoder, max_new_tokens=args.max_new_tokens, atol=args.atol, rtol=args.rtol,
                         strategy=strategy, limits=limits,
                         mapper=partial(mapped, scheduler=args.scheduler, workers=args.workers))
    print(f"{'prompt':<16} {'seed':>6} {'first token diff':>16} {'max logit error':>16}  first cache departure")
    for row in rows:
        seed = row.get("seed", "-")
        if "error" in row:
            print(f"{row['prompt']:<16} {seed:>6} {'error':>16} {'':>16}  {row['error']}")
            continue
        departure = row["first_cache_departure"]
        where = "-" if departure is None else f"step {departure['step']}, layer {departure['layer']}, {departure['name']}"
        diff = "-" if row["first_token_diff"] is None else row["first_token_diff"]
        print(f"{row['prompt']:<16} {seed:>6} {diff:>16} {max(row['logit_error'], default=0.0):>16.3g}  {where}")
    if args.json:
        write_text(args.json, json.dumps({"against": against, "rows": rows}, indent=1) + "\n")
    return 1 if any(row.get("first_token_diff") is not None or "error" in row for row in rows) else 0
