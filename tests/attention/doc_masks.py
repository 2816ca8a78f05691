#!/usr/bin/env python3
"""doc_masks.py SHORTC [--update] DOC.md... — the `shortc mask` pictures quoted
in the docs are what `shortc mask` prints: every fenced block whose first line
is `$ shortc mask ARGS` must hold, after that line, the command's output (run
from the source root). --update rewrites the blocks instead (review the diff).
"""
import os
import re
import shlex
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BLOCK = re.compile(r"```\n\$ shortc mask ([^\n]*)\n(.*?)```", re.S)


def main():
    args = sys.argv[1:]
    update = "--update" in args
    args = [a for a in args if a != "--update"]
    shortc, docs = args[0], args[1:]
    bad = 0
    for doc in docs:
        text = open(doc, encoding="utf-8").read()

        def check(m):
            nonlocal bad
            out = subprocess.run([shortc, "mask"] + shlex.split(m.group(1)), cwd=ROOT, capture_output=True, text=True)
            if out.returncode != 0 or out.stdout != m.group(2):
                if not update:
                    print(f"FAIL {doc}: `shortc mask {m.group(1)}` prints something else{out.stderr and ': ' + out.stderr.strip()}")
                bad += 1
            return f"```\n$ shortc mask {m.group(1)}\n{out.stdout}```"

        new, n = BLOCK.subn(check, text)
        if update and new != text:
            open(doc, "w", encoding="utf-8").write(new)
        print(f"{doc}: {n} picture(s)")
    return 0 if update or not bad else 1


if __name__ == "__main__":
    sys.exit(main())
