"""``batch DIR_OR_GLOB... -o zoo.csv``: one summary row per model, analyzed in parallel.

With the budget options of ``analyze`` (``--max-macs``, ``--max-arena``, ``--budget FILE.toml``, ...)
every model is checked, its row says whether it is within budget, and the command exits 3 after
writing the rows when one is not (or could not be analysed). ``--shapes-file`` gives models their own
input shapes."""

from __future__ import annotations

import argparse
import json
import os
import sys

from .common import (add_latency_options, add_output_options, add_predict_options, add_target_option,
                     analysis_settings, at_least, check_notes, checked_profile, emit, print_notes)

HELP = "analyze many models (directories, globs, files) in parallel: one summary row per model"
MAX_JOBS = 256  # worker processes: each is a copy of this process (100,000 of them would exhaust the machine)


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Options of ``batch``."""
    from ..render.batch import BATCH_FORMATS
    from ..report.budget import add_budget_arguments

    p.add_argument("sources", nargs="+", metavar="DIR_OR_GLOB",
                   help="a directory (every .tflite and .litertlm bundle below it), a glob such as 'zoo/**/*.tflite', or a file")
    add_output_options(p, BATCH_FORMATS, "write the rows")
    p.add_argument("-j", "--jobs", type=at_least(1, maximum=MAX_JOBS), default=None, metavar="N",
                   help=f"worker processes (default: number of CPUs; 1 = no workers; at most {MAX_JOBS})")
    p.add_argument("--input-shape", action="append", metavar="SPEC", default=None,
                   help="input shape applied to every model (see analyze)")
    p.add_argument("--shapes-file", metavar="FILE.json",
                   help="each model's own input shapes, in place of --input-shape: a JSON object mapping a "
                        "model's file name (or its path as listed) to a spec or a list of specs in the syntax "
                        "of --input-shape, e.g. {\"fcn.tflite\": \"image=1x224x224x3\"}")
    p.add_argument("--batch", type=at_least(1), metavar="N", help="batch size applied to every model")
    p.add_argument("--while-trips", type=at_least(0), default=1, metavar="N", help="trip count of uninferable WHILE loops")
    p.add_argument("--fail-on-error", action="store_true", help="exit 1 when any model fails (rows are still written)")
    p.add_argument("--shard", metavar="I/N", help="analyse only shard I of N of the models (every N-th from the I-th, "
                                                   "in the sources' order): N jobs with 1/N ... N/N cover a zoo once")
    p.add_argument("--jsonl", metavar="FILE.jsonl", help="a resumable log: each model's row is appended as one JSON line "
                                                          "as soon as it is done; a rerun skips the models it holds "
                                                          "(but error rows) and the outputs show them all")
    add_target_option(p)
    add_latency_options(p, per_op=False, roofline=False, inputs=False)
    add_predict_options(p)
    add_budget_arguments(p)


def run(args: argparse.Namespace) -> int:
    """Expand the sources, analyze in worker processes, write the rows atomically."""
    from contextlib import nullcontext

    from ..files import check_output
    from ..studies.batch import (BatchOptions, drop_cut_line, expand_sources, load_shapes_file, read_done, run_batch,
                                 shard)
    from ..render.batch import BATCH_FORMATS, batch_format_for_path
    from ..measure.progress import progress_bar
    from ..errors import InputSpecError
    from ..report.budget import EXIT_BUDGET, budget_limits

    targets = [(path, batch_format_for_path(path)) for path in args.output]  # fail before any work
    limits = budget_limits(args)  # a bad --budget file fails before any work
    if "max_latency_ms" in limits:  # a latency limit needs a latency: it turns --latency on, as in analyze
        args.latency = True
    if "max_predicted_ms" in limits and not args.predict:
        raise InputSpecError("--max-predicted-ms / max_predicted_ms limits the predicted latency: "
                             "give the device profile with --predict PROFILE.json")
    jobs = args.jobs if args.jobs is not None else (os.cpu_count() or 1)
    if jobs < 1:
        raise InputSpecError("--jobs must be at least 1")
    settings = analysis_settings(args)  # one configuration for every model: analysed, timed, predicted
    latency = None
    if args.latency:
        from .common import latency_settings

        latency, _ = latency_settings(args)  # runs, warm-up, min time and --time-limit
        jobs = 1  # timing in parallel workers would measure contention, not the model
    # checked once: a foreign profile fits none of the models (one line, no rows)
    settings, check = checked_profile(args, settings)
    if check is not None and check.forced:
        print(f"warning: prediction forced (--force): {check.forced}", file=sys.stderr)
    print_notes(check_notes(check, settings))
    paths = expand_sources(args.sources)
    if args.shard:
        paths = shard(paths, args.shard)
    shapes = load_shapes_file(args.shapes_file, paths) if args.shapes_file else {}
    options = BatchOptions(settings, latency, limits=limits, shapes=shapes)
    done = {}
    if args.jsonl:
        check_output(args.jsonl)  # a regular file or a new name, never a link, a device or a read-only file
        done = {p: {k: ("" if v is None else v) for k, v in row.items()} for p, row in read_done(args.jsonl).items()}
        drop_cut_line(args.jsonl)
        if done:
            print_notes([f"{args.jsonl}: {sum(p in done for p in paths)} of {len(paths)} model(s) already done, "
                         "not analysed again"])
    todo = [p for p in paths if p not in done]
    with (open(args.jsonl, "a", encoding="utf-8") if args.jsonl else nullcontext()) as log:
        def logged(row: dict) -> None:  # one line a model, flushed: a runner that dies loses nothing done
            log.write(json.dumps({k: (None if v == "" else v) for k, v in row.items()}, ensure_ascii=False) + "\n")
            log.flush()

        new = run_batch(todo, options, jobs=jobs, progress=progress_bar(width=28), on_row=logged if log else None)
    by_path = dict(zip(todo, new))
    rows = [done[p] if p in done else by_path[p] for p in paths]
    emit(lambda fmt: BATCH_FORMATS[fmt][0](rows), args.format, targets,
         to_stdout=not targets or args.format != "table")
    failed = [r for r in rows if r["status"] == "error"]
    for r in failed:
        msg = str(r["error"])
        print(f"warning: {msg if str(r['model']) in msg else str(r['model']) + ': ' + msg}", file=sys.stderr)
    noted = [r for r in rows if r.get("note")]
    for r in noted:  # partial totals (e.g. a dynamic model without a shape) and skipped latency
        print(f"warning: {r['model']}: {r['note']}", file=sys.stderr)
    over = [r for r in rows if r.get("budget") not in (None, "ok")]  # exceeded, or not checked (an error row)
    for r in over:
        for v in (str(r["budget_violations"]).split("; ") if r["budget"] == "exceeded" else ["not checked (error)"]):
            print(f"budget exceeded: {r['model']}: {v}", file=sys.stderr)
    partial = sum(1 for r in rows if r["status"] == "partial")
    print(f"{len(rows) - len(failed)} of {len(rows)} model(s) analyzed"
          + (f"; {partial} with partial totals (see the warnings)" if partial else "")
          + (f"; {len(failed)} failed (see the error column)" if failed else "")
          + (f"; {len(over)} over budget or not checked (see the budget column)" if over else "")
          + (f"; wrote {', '.join(p for p, _ in targets)}" if targets else ""), file=sys.stderr)
    if failed and args.fail_on_error:
        return 1
    return EXIT_BUDGET if over else 0
