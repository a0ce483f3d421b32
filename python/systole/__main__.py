"""`python -m systole`: the `systole` command's compile / run / info, through the Python API.

    python -m systole info [--device URI] [--config NAME]
    python -m systole compile MODEL.hlo [--config NAME] [-o MODEL.sbin]
    python -m systole run MODEL.hlo|MODEL.sbin [--device URI] [--config NAME]
                          [--inputs IN.npz | --random-inputs SEED] [--outputs OUT.npz]
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

import systole


def _program(path: str, config: str | None) -> systole.Program:
    if path.endswith(".sbin"):
        program = systole.load(path)
        if config and config != program.config:
            raise SystemExit(f"{path} is compiled for '{program.config}' but --config is '{config}'")
        return program
    return systole.compile(path, config=config or "small")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m systole", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    info = commands.add_parser("info", help="a configuration, or what a device reports")
    info.add_argument("--device")
    info.add_argument("--config", default="small")
    comp = commands.add_parser("compile", help="compile HLO text and print the placement")
    comp.add_argument("model")
    comp.add_argument("--config", default="small")
    comp.add_argument("-o", "--output")
    run = commands.add_parser("run", help="run a model on a device")
    run.add_argument("model")
    run.add_argument("--device", default="ref")
    run.add_argument("--config")
    source = run.add_mutually_exclusive_group()
    source.add_argument("--inputs")
    source.add_argument("--random-inputs", type=int, metavar="SEED")
    run.add_argument("--outputs")
    args = parser.parse_args(argv)

    try:
        if args.command == "info":
            info = systole.Device(args.device, args.config).info if args.device else systole.config_info(args.config)
            for key, value in info.items():
                print(f"{key:<22} {value}")
        elif args.command == "compile":
            program = _program(args.model, args.config)
            print(f"{program.source_name} for '{program.config}': placement, in execution order")
            print(program.placement_table())
            if args.output:
                program.save(args.output)
                print(f"wrote {args.output}")
        else:
            program = _program(args.model, args.config)
            if args.inputs:
                with np.load(args.inputs) as npz:
                    inputs = [npz[f"arr_{i}"] for i in range(len(program.inputs))]
            elif args.random_inputs is not None or not program.inputs:
                inputs = systole.random_inputs(program, args.random_inputs or 0)
            else:
                raise SystemExit(f"{args.model} takes {len(program.inputs)} input(s): "
                                 "pass --inputs FILE.npz or --random-inputs SEED")
            result = systole.Device(args.device, program.config).run(program, inputs)
            for i, out in enumerate(result.outputs):
                print(f"output arr_{i} {out.dtype}{list(out.shape)}")
            s = result.stats
            print(f"device cycles {s['cycles']}, MXU utilization {100 * s['mxu_utilization']:.1f}%, "
                  f"{s['device_steps']} device step(s), {s['host_steps']} host step(s)")
            if args.outputs:
                np.savez(args.outputs, *[np.asarray(o, dtype=np.float32) if o.dtype == systole.bfloat16 else o
                                         for o in result.outputs])
    except systole.Error as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
