#!/usr/bin/env python3
"""Writes a C header holding a text file as a string: embed_text.py NAME INPUT OUTPUT."""
import sys

name, src, dst = sys.argv[1:4]
text = open(src, encoding="utf-8").read()
with open(dst, "w", encoding="utf-8") as out:
    out.write("/* generated from %s by embed_text.py: do not edit */\n" % src.rsplit("/", 1)[-1])
    out.write("static const char %s[] =\n" % name)
    for line in text.splitlines(True):
        out.write('  "%s"\n' % line.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n"))
    out.write(";\n")
