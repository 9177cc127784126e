"""Copies the library built by `make` into the package, so that an
installed webtensor finds it without the source tree. The library is the
one WEBTENSOR_LIBRARY names, else the build folder's (WT_BUILD, default
build/). Without either the package is installed without it and loads
WEBTENSOR_LIBRARY or a system-wide libwebtensor.so at import."""
import os
import shutil

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))


def built_library():
    env = os.environ.get("WEBTENSOR_LIBRARY")
    if env:
        return env
    build = os.environ.get("WT_BUILD", "build")
    path = os.path.join(os.path.dirname(HERE), build, "libwebtensor.so")
    return path if os.path.exists(path) else None


class BuildWithLibrary(build_py):
    def run(self):
        super().run()
        lib = built_library()
        if not lib:
            self.warn("libwebtensor.so not found (run `make build` first, or set "
                      "WEBTENSOR_LIBRARY): the package will look for it at import")
            return
        dst = os.path.join(self.build_lib, "webtensor", "libwebtensor.so")
        # The real file, not the symlink chain of the build folder.
        shutil.copyfile(os.path.realpath(lib), dst)
        self.announce("bundled %s" % lib, level=2)


setup(cmdclass={"build_py": BuildWithLibrary})
