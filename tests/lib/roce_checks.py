# SPDX-License-Identifier: BSD-3-Clause
"""Counted checks and the closing line that scripts/test and CI read: "N passed, M failed"."""
import shutil


class Checks:
    """check = Checks(); check(cond, "what"); ...; return check.finish(work, keep)."""

    def __init__(self, show_passes=False):
        self.passed = self.failed = 0
        self.show_passes = show_passes

    def __call__(self, cond, what, detail=""):
        """Count @cond; a failure prints @what and, if given, @detail (what was found)."""
        if cond:
            self.passed += 1
            if self.show_passes:
                print("PASS:", what)
        else:
            self.failed += 1
            print("FAIL:", what if detail == "" else "%s: %s" % (what, detail))
        return cond

    def finish(self, work=None, keep=False):
        """Keep or remove the work directory, print the closing line; the exit status."""
        if work and keep:
            print("kept %s" % work)
        elif work:
            shutil.rmtree(work, ignore_errors=True)
        print("%d passed, %d failed" % (self.passed, self.failed))
        return 1 if self.failed else 0
