#!/usr/bin/env python3
# A stand-in for the IPU21 stack's `ipu-stack` executable, written from IPU21-DEVICE.md section
# 17 only, for the tests of scripts/host-run-runner.sh: `host-run` and `profile-extract` with
# exactly their documented arguments, exit codes (0 ok, 1 error with `Error: ...`, 2 parse
# error) and result lines, running `lockstep device simulate` underneath in place of a chip.
#
# Environment: LOCKSTEP (the binary), STAND_IN_MACHINE (the machine to simulate),
# STAND_IN_STATE (a folder for the simulated run between the two commands), STAND_IN_LOG
# (each invocation's arguments are appended to it).
import json
import os
import shutil
import subprocess
import sys

lockstep = os.environ["LOCKSTEP"]
state = os.environ["STAND_IN_STATE"]
with open(os.environ["STAND_IN_LOG"], "a") as log:
    log.write(" ".join(sys.argv[1:]) + "\n")


def parse_error(message):
    print("error: " + message, file=sys.stderr)
    sys.exit(2)


def error(message):
    print("Error: " + message, file=sys.stderr)
    sys.exit(1)


def options(args, valued, usage):
    """Positionals and {option: [values]} from args; every option takes one value."""
    positional, values = [], {}
    i = 0
    while i < len(args):
        if args[i].startswith("-"):
            if args[i] not in valued or i + 1 >= len(args):
                parse_error("unexpected argument '%s' (%s)" % (args[i], usage))
            values.setdefault(args[i], []).append(args[i + 1])
            i += 2
        else:
            positional.append(args[i])
            i += 1
    return positional, values


def named_files(values, option):
    files = {}
    for value in values.get(option, []):
        name, sep, path = value.partition("=")
        if not sep or not name or not path:
            parse_error("invalid value '%s' for '%s <NAME=PATH>'" % (value, option))
        files[name] = path  # a name given twice: the last wins (17.1)
    return files


def host_run(args):
    usage = "host-run IMAGE BOOTLOADER CONFIGURATION CALL..."
    positional, values = options(args, {"--input", "--output", "--device"}, usage)
    if len(positional) < 4:
        parse_error("missing arguments (%s)" % usage)
    image, calls = positional[0], positional[3:]
    inputs, outputs = named_files(values, "--input"), named_files(values, "--output")
    info = json.loads(subprocess.run([lockstep, "device", "inspect", image, "--json"], check=True,
                                     capture_output=True, text=True).stdout)
    known = {c["name"]: c for c in info["host_calls"]}
    for call in calls:
        if call not in known:
            error("invalid device data: unknown host call " + call)
        if known[call]["output_bytes"] > 0 and call not in outputs:
            error('call "%s" produced output without --output %s=PATH' % (call, call))
    run_dir = os.path.join(state, "sim")
    shutil.rmtree(run_dir, ignore_errors=True)
    command = [lockstep, "device", "simulate", image, "--machine", os.environ["STAND_IN_MACHINE"], "-o", run_dir]
    for call in calls:
        command += ["--call", call]
    for name, path in inputs.items():
        command += ["--input", name + "=" + path]
    for name, path in outputs.items():
        command += ["--call-output", name + "=" + path]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        error("invalid device data: " + result.stderr.strip().removeprefix("error: "))
    print("calls=%d hostRun=PASS" % len(calls))


def profile_extract(args):
    usage = "profile-extract IMAGE DEVICE_OUTPUT -o PROFILE [--clock-hz HZ]"
    positional, values = options(args, {"-o", "--clock-hz"}, usage)
    if len(positional) != 2 or "-o" not in values:
        parse_error("missing arguments (%s)" % usage)
    image, raw, profile = positional[0], positional[1], values["-o"][-1]
    info = json.loads(subprocess.run([lockstep, "device", "inspect", image, "--json"], check=True,
                                     capture_output=True, text=True).stdout)
    if not any(b["name"] == "profile.cycles" and b["kind"] == "output" for b in info["bindings"]):
        error("application has no cycle profile binding")
    # The simulated run host-run made wrote what profile-extract makes of profile.cycles.
    shutil.copy(os.path.join(state, "sim", "profile.lsprof"), profile)
    print("package=%s deviceOutputBytes=%d tiles=%d profile=%s" % (image, os.path.getsize(raw), info["tiles"], profile))


if len(sys.argv) < 2:
    parse_error("a subcommand is required")
{"host-run": host_run, "profile-extract": profile_extract}.get(sys.argv[1], lambda _: parse_error(
    "unrecognized subcommand '%s'" % sys.argv[1]))(sys.argv[2:])
