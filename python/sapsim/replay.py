"""``python -m sapsim.replay SCENE TRAJ --video OUT.mp4``: render a trajectory that
``sapsim run SCENE --out TRAJ`` wrote, CSV or binary frames (``--format binary``,
docs/frames.md; ``Sim.run(frames=...)``), one world resampled to --fps in simulated time,
with MuJoCo's renderer (sapsim.render)."""

from __future__ import annotations

import argparse
import sys
from typing import Optional, Sequence

from .frames import FRAMES_MAGIC, read_frames
from .render import load_trajectory_csv, render_trajectory


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m sapsim.replay", description=__doc__.split("\n\n")[0])
    ap.add_argument("scene", help="the scene the trajectory was run on (MJCF or URDF)")
    ap.add_argument("trajectory", help="CSV or binary frames written by 'sapsim run SCENE --out FILE'")
    ap.add_argument("--video", required=True, help="output: .mp4 or .gif")
    ap.add_argument("--world", type=int, default=0, help="world to draw (default 0)")
    ap.add_argument("--fps", type=float, default=30.0, help="frames per simulated second (default 30)")
    ap.add_argument("--size", default="480x360", help="WIDTHxHEIGHT (default 480x360)")
    args = ap.parse_args(argv)
    try:
        w, h = (int(x) for x in args.size.lower().split("x"))
        with open(args.trajectory, "rb") as fh:
            binary = fh.read(8) == FRAMES_MAGIC
        if binary:
            frames = read_frames(args.trajectory)
            if not 0 <= args.world < frames["nworld"]:
                raise ValueError(f"world {args.world} out of range [0, {frames['nworld']})")
            times, qpos = frames["time"][:, args.world], frames["qpos"][:, args.world].astype(float)
        else:
            times, qpos = load_trajectory_csv(args.trajectory, args.world)
        out = render_trajectory(args.scene, qpos, args.video, fps=args.fps, times=times, width=w, height=h)
    except (OSError, ValueError, ImportError) as e:
        print(f"sapsim replay: {e}", file=sys.stderr)
        return 1
    print(f"sapsim replay: {out} ({len(qpos)} states of world {args.world})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
