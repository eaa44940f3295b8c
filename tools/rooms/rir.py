"""Room impulse responses for a dataset build's acoustic condition (docs/dataset.md, "Rooms").

The build (core/construct/room.go) owns the presets; this script only simulates. It reads
one JSON object on stdin:

    {"fs": 24000, "dims": [x, y, z], "rt60": 0.45, "device": [x, y, z],
     "sources": [[x, y, z], ...]}

and writes one JSON object on stdout:

    {"simulator": "pyroomacoustics 0.10.1", "energy_absorption": a, "max_order": n,
     "rirs": [[...], ...], "rt60_measured": [...]}

with one impulse response per source, at the device, by the image source method in a
shoebox room whose uniform energy absorption and reflection order come from Sabine's
formula for the target RT60 (pyroomacoustics.inverse_sabine). Nothing is random: the
image source method is deterministic (use_rand_ism is off), so the same input gives the
same numbers. Errors go to stderr with exit status 2 (bad input) or 1.
"""

import json
import sys


def main():
    try:
        req = json.load(sys.stdin)
        fs = int(req["fs"])
        dims = [float(v) for v in req["dims"]]
        rt60 = float(req["rt60"])
        device = [float(v) for v in req["device"]]
        sources = [[float(v) for v in s] for s in req["sources"]]
    except (ValueError, KeyError, TypeError) as e:
        print(f"rooms: bad request on stdin: {e!r}", file=sys.stderr)
        return 2
    if fs <= 0 or len(dims) != 3 or len(device) != 3 or not sources or any(len(s) != 3 for s in sources):
        print("rooms: bad request: fs > 0, dims and device of 3 numbers, and 1 or more sources of 3 are needed", file=sys.stderr)
        return 2

    import numpy as np
    import pyroomacoustics as pra

    try:
        absorption, max_order = pra.inverse_sabine(rt60, dims)
        room = pra.ShoeBox(dims, fs=fs, materials=pra.Material(absorption), max_order=max_order)
        for s in sources:
            room.add_source(s)
        room.add_microphone(device)
        room.compute_rir()
    except ValueError as e:
        # A point outside the room, or an RT60 the room cannot have.
        print(f"rooms: pyroomacoustics refused the room: {e}", file=sys.stderr)
        return 2
    rirs = [np.asarray(room.rir[0][i], dtype=np.float64) for i in range(len(sources))]
    measured = [float(pra.experimental.measure_rt60(h, fs=fs)) for h in rirs]
    json.dump({
        "simulator": f"pyroomacoustics {pra.__version__}",
        "energy_absorption": float(absorption),
        "max_order": int(max_order),
        "rirs": [h.tolist() for h in rirs],
        "rt60_measured": measured,
    }, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
