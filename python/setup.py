"""Build hook of the sapsim package (metadata: pyproject.toml).

The package is pure Python over a C library loaded with ctypes (sapsim/_capi.py).
Building it puts that library inside the package: ``libsapsim.so`` (built by the
checkout's Makefile, with the CUDA backend when nvcc is found) and MuJoCo's
``libmujoco.so.*`` that it links, found beside it through its ``$ORIGIN`` rpath;
and the scenes of the tasks of ``sapsim.envs`` and ``sapsim.vector`` (ant, humanoid, cartpole, quadruped_roll).

Where the libraries come from: ``SAPSIM_LIB`` and ``SAPSIM_MUJOCO_LIB`` when set
(``make test`` sets both), otherwise ``make -C <checkout> build/libsapsim.so`` runs
in the checkout this folder belongs to.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def _libraries() -> list[str]:
    """Paths of libsapsim.so and MuJoCo's library, building the former if needed."""
    lib = os.environ.get("SAPSIM_LIB")
    if not lib:
        if not os.path.isfile(os.path.join(ROOT, "Makefile")):
            raise SystemExit(
                "sapsim: python/ is not inside a sapsim checkout, so libsapsim.so cannot be "
                "built; set SAPSIM_LIB (and SAPSIM_MUJOCO_LIB) to prebuilt libraries")
        print("sapsim: building libsapsim.so with make (CUDA backend when nvcc is found)")
        subprocess.check_call(["make", "-C", ROOT, "build/libsapsim.so"])
        lib = os.path.join(ROOT, "build", "libsapsim.so")
    mujoco = os.environ.get("SAPSIM_MUJOCO_LIB")
    if not mujoco:
        found = sorted(glob.glob(os.path.join(ROOT, "build", "mujoco-*", "lib", "libmujoco.so.*")))
        if not found:
            raise SystemExit("sapsim: MuJoCo's library was not found under build/mujoco-*/lib "
                             "(run 'make deps'), nor given by SAPSIM_MUJOCO_LIB")
        mujoco = found[-1]
    for path in (lib, mujoco):
        if not os.path.isfile(path):
            raise SystemExit(f"sapsim: library {path} does not exist")
    return [lib, mujoco]


class BuildWithLibrary(build_py):
    """build_py that also copies the C libraries into sapsim/_lib."""

    def run(self) -> None:
        super().run()
        dest = os.path.join(self.build_lib, "sapsim", "_lib")
        os.makedirs(dest, exist_ok=True)
        for path in _libraries():
            shutil.copy2(path, os.path.join(dest, os.path.basename(path)))
        # the scenes of sapsim.envs' tasks
        scenes = os.path.join(self.build_lib, "sapsim", "scenes")
        os.makedirs(scenes, exist_ok=True)
        for name in ("ant.xml", "humanoid.xml", "cartpole.xml", "quadruped_roll.xml"):
            shutil.copy2(os.path.join(ROOT, "scenes", name), os.path.join(scenes, name))


class BinaryDistribution(Distribution):
    """The wheel holds a shared library: tag it for the platform."""

    def has_ext_modules(self) -> bool:
        return True


setup(cmdclass={"build_py": BuildWithLibrary}, distclass=BinaryDistribution)
